"""Under pytest-xdist: the summary and the shared cassettes cover the whole run.

Workers send what each test did with its cassettes to the controller on the test's
teardown report; the controller merges them into its report and gives every worker
the run's ledger. The plugin registers these hooks only when xdist distributes
(see ``pytest_configure`` in :mod:`pytest_agentreplay.plugin`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from .state import LEDGER_KEY, TEST_STATE, RunState
from .summary import Report

__all__ = ["XdistController", "XdistWorker"]

_REPORT_ATTR = "agentreplay_uses"  # on a worker's teardown report, read by the controller


class XdistWorker:
    """On an xdist worker: what each test did with its cassette travels to the
    controller on the test's teardown report, as soon as the test ends, so a worker
    that crashes later loses nothing the summary already had."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Generator[None, Any, Any]:
        report = yield
        state = item.stash.get(TEST_STATE, None)
        if call.when == "teardown" and state is not None and (state.uses or state.unrecorded):
            sent = Report(uses=state.uses, unrecorded=state.unrecorded)
            setattr(report, _REPORT_ATTR, sent.to_json())
        return report


class XdistController:
    """On the controller of an xdist run: the workers share the run's ledger and send
    what their tests did with their cassettes, so the summary covers the run."""

    def __init__(self, run: RunState) -> None:
        self.run = run

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[LEDGER_KEY] = self.run.shared_ledger()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, _REPORT_ATTR, None)
        if data and getattr(report, "node", None) is not None:
            self.run.report.merge_json(data)
