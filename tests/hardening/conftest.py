"""The canary the egress tests aim at: one listener per test module, on loopback or in
a network namespace of its own (``tests.hardening._canary``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hardening._canary import Canary, loopback_canary, netns_canary


@pytest.fixture(scope="module")
def canary(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Canary]:
    """The listener, proven reachable before any test of this module intercepts."""
    tmp = tmp_path_factory.mktemp("canary")
    if request.param == "loopback":
        with loopback_canary(tmp) as listener:
            listener.prove_reachable()
            yield listener
        return
    try:
        scope = netns_canary(tmp)
        listener = scope.__enter__()
    except PermissionError as exc:
        pytest.skip(f"no canary in a network namespace: {exc}")
    try:
        listener.prove_reachable()
        yield listener
    finally:
        scope.__exit__(None, None, None)
