"""The old module names stay importable for users' code: ``pytest_agentreplay.model``
(now :mod:`pytest_agentreplay.neutral`) and ``pytest_agentreplay.cassettes.model``
(now :mod:`pytest_agentreplay.cassettes.cassette`) give the same objects, every
public name of the new module and nothing else."""

from __future__ import annotations

import importlib

import pytest

ALIASES = [
    ("pytest_agentreplay.model", "pytest_agentreplay.neutral"),
    ("pytest_agentreplay.cassettes.model", "pytest_agentreplay.cassettes.cassette"),
]


@pytest.mark.parametrize(("old", "new"), ALIASES)
def test_an_old_module_name_gives_the_new_modules_objects(old: str, new: str) -> None:
    alias, target = importlib.import_module(old), importlib.import_module(new)
    assert sorted(alias.__all__) == sorted(target.__all__)
    for name in target.__all__:
        assert getattr(alias, name) is getattr(target, name), name


def test_the_documented_old_imports_work() -> None:
    from pytest_agentreplay.cassettes.model import Interaction, RecordedRequest
    from pytest_agentreplay.model import Reply, Request

    assert Reply.text("Hi").parts[0].text == "Hi"
    assert Request.__name__ == "Request"
    assert (
        Interaction.__module__
        == RecordedRequest.__module__
        == ("pytest_agentreplay.cassettes.cassette")
    )
