"""Run pytest on a generated user test file, the way a user of the plugin would.

``PRELUDE`` is the top of every generated test module: ``ask()`` through a real
anthropic client pointed at the loopback provider server (``AR_SERVER``),
``ask_raw()`` through plain httpx2, and ``report()``, which
appends what the ``agentreplay`` handle saw to a JSON-lines file (``AR_OUT``) so
the outer test can check it after the run.

Modules the inner runs import are imported here first: pytester forgets modules
first imported during an in-process run, and httpx2 maps exceptions by the
classes it saw first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic  # noqa: F401 - see the module docstring
import h11  # noqa: F401
import httpcore2  # noqa: F401
import openai  # noqa: F401
import pytest
import yaml

PRELUDE = '''
import json, os
import httpx2, pytest

URL = os.environ.get("AR_SERVER", "http://127.0.0.1:9")
KEY = os.environ.get("AR_KEY", "sk-test-key-0000")
CLIENTS = []


def client():
    import anthropic  # here, not at the top: xdist workers that only ask_raw() start faster

    sdk = anthropic.Anthropic(api_key=KEY, base_url=URL, max_retries=0)
    CLIENTS.append(sdk)
    return sdk


@pytest.fixture(autouse=True)
def _close_clients():
    """Close each test's clients: a pooled connection left to the garbage collector
    warns (ResourceWarning) in whichever test happens to run then."""
    yield
    while CLIENTS:
        CLIENTS.pop().close()


def ask_raw(prompt):
    """The same call without the SDK: plain httpx2 (cheap to import in xdist workers)."""
    body = {"model": "claude-test", "max_tokens": 64,
            "messages": [{"role": "user", "content": prompt}]}
    response = httpx2.post(URL + "/v1/messages", json=body, headers={"x-api-key": KEY})
    response.raise_for_status()
    return response.json()["content"][0]["text"]


def ask(prompt, stream=False, **extra):
    args = dict(model="claude-test", max_tokens=64,
                messages=[{"role": "user", "content": prompt}], **extra)
    if stream:
        with client().messages.stream(**args) as s:
            return s.get_final_message().content[0].text
    return client().messages.create(**args).content[0].text


def report(agentreplay, **extra):
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps({
            "mode": agentreplay.record_mode,
            "path": str(agentreplay.path),
            "sources": [c.source for c in agentreplay.calls],
            "unplayed": agentreplay.unplayed,
            **extra,
        }) + "\\n")
'''


@contextmanager
def environ(**values: str) -> Iterator[None]:
    """``os.environ`` with ``values`` set for the block (in-process runs read it)."""
    old = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run(pytester: pytest.Pytester, *args: str, **env: str) -> pytest.RunResult:
    """pytest in this process, with ``env`` set (``AR_OUT`` defaults to out.jsonl)."""
    env.setdefault("AR_OUT", str(pytester.path / "out.jsonl"))
    with environ(**env):
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def run_subprocess(pytester: pytest.Pytester, *args: str, **env: str) -> pytest.RunResult:
    """pytest in a fresh process (xdist, a process that dies), with ``env`` set.

    Only this plugin and xdist are loaded (not every installed pytest plugin): it
    halves the start-up of each xdist worker.
    """
    env.setdefault("AR_OUT", str(pytester.path / "out.jsonl"))
    env.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins = ("-p", "xdist.plugin", "-p", "pytest_agentreplay.plugin", "-p", "no:cacheprovider")
    with environ(**env):
        return pytester.runpytest_subprocess(*plugins, *args, timeout=60)


def results(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    """What the generated tests reported, in order; the file is emptied."""
    out = pytester.path / "out.jsonl"
    if not out.exists():
        return []
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    out.unlink()
    return lines


def cassette(pytester: pytest.Pytester, name: str, module: str = "test_user") -> Path:
    """The default cassette path of test ``name`` in ``module``."""
    return pytester.path / "cassettes" / module / f"{name}.yaml"


def interactions(path: Path) -> list[dict[str, Any]]:
    """The interactions of a cassette, read with PyYAML (not the plugin's loader)."""
    data = yaml.safe_load(path.read_text("utf-8"))
    assert data["version"] == 1
    return list(data["interactions"])


def texts(path: Path) -> list[str]:
    """The reply text of each (JSON, anthropic) interaction of a cassette."""
    return [i["response"]["json"]["content"][0]["text"] for i in interactions(path)]


def prompts(path: Path) -> list[str]:
    """The user prompt of each (anthropic) interaction of a cassette."""
    return [i["request"]["json"]["messages"][-1]["content"] for i in interactions(path)]
