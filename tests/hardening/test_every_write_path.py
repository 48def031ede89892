"""Item 6: every path that writes a cassette filters it — recording (``once``),
appending (``new_episodes``), ``all``, ``rewrite``, ``agentreplay convert`` (to either
format), ``agentreplay redact``, the xdist merge that puts shared cassettes in
test order, and the public ``cassette.save`` called without a scrubber.

Each path is given the same request twice. First with secrets the rules know by name
(an ``x-api-key`` header, a ``?key=`` parameter, an ``api_key`` JSON key): the file is
written and holds none of them. Then with a canary that only the backstop can find
(an API-key environment variable's value in an unknown header): the write is refused
and the file on disk stays byte-identical.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import Cassette, Interaction
from pytest_agentreplay.cassettes.io import dumps
from pytest_agentreplay.cassettes.merge import fingerprint, order_blocks
from pytest_agentreplay.cassettes.session import CassetteSession
from pytest_agentreplay.redact import Scrubber, SecretLeakError
from pytest_agentreplay.transport.router import Router
from tests.cli._helpers import cli, json_interaction, save, stream_interaction

NAMED = {"x-api-key": f"named-{secrets.token_hex(12)}", "key": f"q{secrets.token_hex(12)}"}

Writer = Callable[[Path, Interaction, pytest.CaptureFixture[str]], bool]
"""Writes an interaction to the cassette at a path by one route; whether it wrote."""


def _secret_interaction(canary: str | None) -> Interaction:
    """A model call carrying the named secrets, and the canary if given."""
    headers = {"x-api-key": NAMED["x-api-key"]}
    if canary is not None:
        headers["x-upstream-note"] = canary
    call = stream_interaction(user="Weather in York?", headers=headers)
    body = {**(call.request.json_body or {}), "api_key": NAMED["x-api-key"]}
    request = call.request.replace(url=f"{call.request.url}?key={NAMED['key']}", json_body=body)
    return call.replace(request=request)


def _planted(path: Path, *interactions: Interaction) -> None:
    """Secrets put in a file by hand (``save`` would refuse them)."""
    path.write_text(dumps(Cassette(interactions=list(interactions))))


def _by_session(mode: str) -> Writer:
    """What a test recording in ``mode`` writes when it ends (``CassetteSession.finish``)."""

    def write(target: Path, interaction: Interaction, _: pytest.CaptureFixture[str]) -> bool:
        session = CassetteSession(
            path=target, record_mode=mode, router=Router(), scrubber=Scrubber()
        )
        assert session.recording
        session.add_recorded(interaction)
        try:
            return session.finish(failed=False).written
        except SecretLeakError:
            return False

    return write


def _by_convert(to: str) -> Writer:
    def write(target: Path, interaction: Interaction, capsys: pytest.CaptureFixture[str]) -> bool:
        source = target.with_name("source.yaml")
        _planted(source, interaction)
        return cli(capsys, "convert", source, "--to", to, "-o", target).code == 0

    return write


def _by_redact(target: Path, interaction: Interaction, capsys: pytest.CaptureFixture[str]) -> bool:
    """``agentreplay redact`` rewrites a file in place: the secrets are planted in it."""
    old = target.read_bytes()
    _planted(target, interaction)
    if cli(capsys, "redact", target).code == 0:
        return True
    target.write_bytes(old)  # what was refused is the planted text: put the old one back
    return False


def _by_merge(target: Path, interaction: Interaction, _: pytest.CaptureFixture[str]) -> bool:
    """After an xdist run the controller re-saves a shared cassette in test order: two
    blocks written in the wrong order (secrets planted in the first) are swapped."""
    old = target.read_bytes()
    planted = [interaction, json_interaction()]
    _planted(target, *planted)
    blocks = [(1, [fingerprint(planted[0])]), (0, [fingerprint(planted[1])])]
    try:
        return order_blocks(target, blocks, Scrubber())
    except SecretLeakError:
        target.write_bytes(old)
        return False


def _by_save(target: Path, interaction: Interaction, _: pytest.CaptureFixture[str]) -> bool:
    """The public low-level writer, called as a user would: no scrubber given."""
    try:
        cassette_io.save(target, Cassette(interactions=[interaction]))
    except SecretLeakError:
        return False
    return True


WRITERS: dict[str, Writer] = {
    "cassette.save": _by_save,
    "record-once": _by_session("once"),
    "append-new_episodes": _by_session("new_episodes"),
    "all": _by_session("all"),
    "rewrite": _by_session("rewrite"),
    "convert-agentreplay": _by_convert("agentreplay"),
    "convert-vcrpy": _by_convert("vcrpy"),
    "redact": _by_redact,
    "xdist-merge": _by_merge,
}


def _old_file(target: Path, path: str) -> bytes | None:
    """The cassette on disk before the write: none for ``once`` (it records only then)."""
    if path == "record-once":
        target.unlink(missing_ok=True)
        return None
    if not target.exists():
        save(target, json_interaction())
    return target.read_bytes()


@pytest.mark.parametrize("path", sorted(WRITERS))
def test_every_write_path_scrubs_and_the_backstop_refuses_what_is_left(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    path: str,
) -> None:
    write = WRITERS[path]
    target = tmp_path / "cassettes" / "c.yaml"
    target.parent.mkdir(parents=True)

    _old_file(target, path)
    assert write(target, _secret_interaction(None), capsys), f"{path} did not write"
    written = target.read_bytes()
    for value in NAMED.values():
        assert value.encode() not in written, f"{path} wrote a named secret"
    assert b"REDACTED" in written

    canary = f"ck-{secrets.token_urlsafe(30)}"
    monkeypatch.setenv("AR_CANARY_API_KEY", canary)
    old = _old_file(target, path)
    assert not write(target, _secret_interaction(canary), capsys), f"{path} wrote past the backstop"
    assert (target.read_bytes() if target.exists() else None) == old, f"{path} touched the old file"
    assert canary not in capsys.readouterr().err
    assert sorted(p.name for p in target.parent.iterdir() if p.name != "source.yaml") == (
        [] if old is None else ["c.yaml"]
    ), "no temp or lock file left"


def test_save_writes_as_given_only_when_told_to(tmp_path: Path) -> None:
    """``scrub=False`` is the explicit way to keep a key-shaped string on purpose."""
    target = tmp_path / "c.yaml"
    cassette_io.save(target, Cassette(interactions=[_secret_interaction(None)]), scrub=False)
    written = target.read_bytes()
    assert all(value.encode() in written for value in NAMED.values())
