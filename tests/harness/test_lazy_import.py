"""Installing the plugin costs other suites nothing: no heavy import at start-up."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

HEAVY = ("httpx", "httpx2", "yaml", "syrupy", "hypothesis", "pydantic", "anthropic", "openai")


def _modules_after(args: list[str], tmp_path: object) -> set[str]:
    """Run pytest in a fresh interpreter and list the top-level modules it imported."""
    probe = textwrap.dedent(f"""
        import sys, pytest
        code = pytest.main({args!r})
        tops = sorted({{m.split('.')[0] for m in sys.modules}})
        print('MODULES:' + ','.join(tops))
        print('EXIT:' + str(int(code)))
    """)
    # Other installed plugins (syrupy, hypothesis, anyio) would import themselves:
    # load ours alone, as `-p agentreplay` in a project that does not use us.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        check=False,
        env=env,
    )
    line = next(x for x in out.stdout.splitlines() if x.startswith("MODULES:"))
    assert "EXIT:0" in out.stdout.splitlines(), out.stdout[-2000:]  # the run itself passed
    return set(line.removeprefix("MODULES:").split(","))


def test_help_imports_nothing_heavy(tmp_path: object) -> None:
    mods = _modules_after(["-p", "agentreplay", "--help"], tmp_path)
    assert "pytest_agentreplay" in mods
    assert mods.isdisjoint(HEAVY), sorted(mods & set(HEAVY))


def test_a_suite_that_does_not_use_us_imports_nothing_heavy(tmp_path: object) -> None:
    from pathlib import Path

    Path(str(tmp_path), "test_plain.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    mods = _modules_after(["-q", "-p", "agentreplay", "-p", "no:cacheprovider"], tmp_path)
    assert "pytest_agentreplay" in mods
    assert mods.isdisjoint(HEAVY), sorted(mods & set(HEAVY))


def test_replaying_a_cassette_imports_no_yaml_no_pydantic_no_httpx2(tmp_path: object) -> None:
    """A cassette the plugin wrote is read by the canonical reader into the cassette
    model (plain classes): a replay-only run never pays for PyYAML (about 12 ms),
    pydantic (about 0.1 s with the collector's extra work; see bench/ W4) or httpx2.
    Hand-edited files still use PyYAML."""
    from pathlib import Path

    from pytest_agentreplay.cassettes import io as cassette
    from pytest_agentreplay.cassettes.cassette import (
        Cassette,
        Interaction,
        RecordedRequest,
        RecordedResponse,
    )

    url = "https://api.anthropic.com/v1/messages"
    recorded = Interaction(
        request=RecordedRequest(method="POST", url=url, json={"model": "m"}),
        response=RecordedResponse(status=200, json={"id": "msg_1", "note": "yes"}),
    )
    folder = Path(str(tmp_path))
    cassette.save(
        folder / "cassettes" / "test_replay" / "test_one.yaml", Cassette(interactions=[recorded])
    )
    (folder / "test_replay.py").write_text(
        "import httpx, pytest\n\n"
        "@pytest.mark.agentreplay\n"
        "def test_one():\n"
        f"    assert httpx.post({url!r}, json={{'model': 'm'}}).json()['note'] == 'yes'\n"
    )
    mods = _modules_after(["-q", "-p", "agentreplay", "-p", "no:cacheprovider"], tmp_path)
    assert {"pytest_agentreplay", "httpx"} <= mods  # the test did replay (EXIT:0)
    assert "yaml" not in mods
    assert "pydantic" not in mods
    assert "httpx2" not in mods  # patched when imported, not imported to be patched
    assert "asyncio" not in mods  # a sync client's replay never loads it (bench/ W4)


def test_httpx2_imported_during_a_test_is_intercepted(tmp_path: object) -> None:
    """The interceptor waits for httpx2 instead of importing it: a client module first
    imported inside a test (after the router is active) is patched on import, so its
    request is answered by the fake model and nothing goes out."""
    from pathlib import Path

    (Path(str(tmp_path)) / "test_late.py").write_text(
        "import sys\n"
        "from pytest_agentreplay import Reply\n\n"
        "def test_late_import(scripted_model):\n"
        "    assert 'httpx2' not in sys.modules\n"
        "    scripted_model.script(Reply.text('patched on import'))\n"
        "    import httpx2\n\n"
        "    body = {'model': 'm', 'max_tokens': 5,\n"
        "            'messages': [{'role': 'user', 'content': 'hi'}]}\n"
        "    with httpx2.Client() as client:\n"
        "        response = client.post('https://api.anthropic.com/v1/messages', json=body)\n"
        "    assert response.json()['content'][0]['text'] == 'patched on import'\n"
    )
    mods = _modules_after(["-q", "-p", "agentreplay", "-p", "no:cacheprovider"], tmp_path)
    assert "httpx2" in mods
