"""Saving: scrub → dump → check → verify → atomic replace; crashes never corrupt the
old file; permissions kept; concurrent writers under ``locked()`` never collide."""

from __future__ import annotations

import copy
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_agentreplay.cassettes import atomic as _files
from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import CassetteFormatError, dumps, load, locked, save
from tests.cassettes.test_cassette_format import EXPECTED, _example

ROOT = Path(__file__).resolve().parents[2]


def _cassette(n: int = 1, tag: str = "x") -> Cassette:
    return Cassette(
        interactions=[
            Interaction(
                request=RecordedRequest(method="POST", url=f"https://x.invalid/{tag}/{i}"),
                response=RecordedResponse(status=200, json={"n": i, "tag": tag}),
            )
            for i in range(n)
        ]
    )


def _leftovers(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def test_save_writes_the_canonical_text_and_creates_directories(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "c.yaml"
    save(path, _example())
    assert path.read_text("utf-8") == EXPECTED
    assert load(path) == _example()
    assert _leftovers(path) == []


def test_re_saving_an_unchanged_cassette_changes_no_byte(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXPECTED)
    save(path, load(path))
    assert path.read_text() == EXPECTED


def test_existing_permissions_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXPECTED)
    path.chmod(0o640)
    save(path, _cassette())
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_new_file_gets_the_umask_default(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        save(tmp_path / "c.yaml", _cassette())
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "c.yaml").stat().st_mode) == 0o640


def test_a_symlinked_cassette_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(EXPECTED)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    save(link, _cassette())
    assert link.is_symlink()
    assert load(real) == _cassette()


def test_an_exception_mid_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXPECTED)

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space"):
        save(path, _cassette())
    assert path.read_text() == EXPECTED
    assert _leftovers(path) == []


def test_keyboard_interrupt_mid_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXPECTED)

    def interrupted(src: str, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_files.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save(path, _cassette())
    assert path.read_text() == EXPECTED
    assert _leftovers(path) == []


_CHILD = """
import os, sys, time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from pytest_agentreplay.cassettes import atomic as _files
from pytest_agentreplay.cassettes.io import save
from pytest_agentreplay.cassettes.cassette import (
    Cassette, Interaction, RecordedRequest, RecordedResponse,
)

path, how = Path(sys.argv[1]), sys.argv[2]
real_fsync = os.fsync

def dying_fsync(fd):
    os.write(fd, b"garbage that must never be seen under the final name")
    if how == "exit":
        os._exit(3)
    print("writing", flush=True)
    time.sleep(60)

_files.os.fsync = dying_fsync
request = RecordedRequest(method="GET", url="https://x.invalid/new")
response = RecordedResponse(status=200)
save(path, Cassette(interactions=[Interaction(request=request, response=response)]))
"""


def _child(path: Path, how: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), how],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("how", ["exit", "sigkill"])
def test_a_process_killed_mid_save_leaves_the_old_file_byte_identical(
    tmp_path: Path, how: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(EXPECTED.encode())
    with _child(path, how) as child:
        if how == "sigkill":
            assert child.stdout is not None
            assert child.stdout.readline() == "writing\n"
            child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == (3 if how == "exit" else -signal.SIGKILL)
    assert path.read_bytes() == EXPECTED.encode()
    (leftover,) = _leftovers(path)
    assert leftover.startswith(f".c.yaml.{child.pid}.agentreplay-")
    assert leftover.endswith(".tmp")

    # The next save sweeps the dead process's temp file once it is stale.
    stale = time.time() - 3600
    os.utime(path.parent / leftover, (stale, stale))
    save(path, _cassette())
    assert _leftovers(path) == []
    assert load(path) == _cassette()


def test_a_fresh_temp_file_of_a_live_process_is_not_swept(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    busy = tmp_path / f".c.yaml.{os.getpid()}.agentreplay-abc.tmp"
    busy.write_text("in flight")
    old = time.time() - 3600
    os.utime(busy, (old, old))
    save(path, _cassette())
    assert busy.exists()


class _RecordingScrubber:
    def __init__(self, *, leak: bool = False) -> None:
        self.calls: list[str] = []
        self.leak = leak

    def scrub(self, cassette: Cassette) -> Cassette:
        self.calls.append("scrub")
        scrubbed = copy.deepcopy(cassette)
        scrubbed.interactions[0].request.headers["authorization"] = "[REDACTED]"
        return scrubbed

    def check(self, text: str, path: Path) -> None:
        self.calls.append("check")
        assert "[REDACTED]" in text
        if self.leak:
            raise RuntimeError(f"a secret survived in {path.name}")


def test_scrub_then_check_then_write(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    original = _cassette()
    scrubber = _RecordingScrubber()
    save(path, original, scrubber=scrubber)
    assert scrubber.calls == ["scrub", "check"]
    assert load(path).interactions[0].request.headers == {"authorization": "[REDACTED]"}
    assert original.interactions[0].request.headers == {}


def test_a_failed_check_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXPECTED)
    with pytest.raises(RuntimeError, match="secret survived"):
        save(path, _cassette(), scrubber=_RecordingScrubber(leak=True))
    assert path.read_text() == EXPECTED
    assert _leftovers(path) == []


def test_text_that_would_not_load_back_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXPECTED)
    real = cassette_io.iter_interactions

    def wrong(*args: Any) -> Iterator[str]:
        return (piece.replace("status: 200", "status: 201") for piece in real(*args))

    monkeypatch.setattr(cassette_io, "iter_interactions", wrong)
    with pytest.raises(CassetteFormatError, match="would not load back"):
        save(path, _cassette())
    assert path.read_text() == EXPECTED


def test_an_invalid_mutation_is_caught_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    cassette = _cassette()
    cassette.interactions[0].response.status = 9999
    with pytest.raises(CassetteFormatError) as info:
        save(path, cassette)
    assert info.value.field == "interactions[0].response.status"
    assert not path.exists()


# --- locked() ---------------------------------------------------------------------------


_WRITER = """
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from pytest_agentreplay.cassettes.io import load, locked, save
from pytest_agentreplay.cassettes.cassette import (
    Cassette, Interaction, RecordedRequest, RecordedResponse,
)

path, tag, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for n in range(rounds):
    with locked(path):
        cassette = load(path) if path.exists() else Cassette()
        request = RecordedRequest(method="GET", url=f"https://x.invalid/{tag}/{n}")
        response = RecordedResponse(status=200)
        cassette.interactions.append(Interaction(request=request, response=response))
        save(path, cassette)
"""


def test_four_processes_merging_under_the_lock_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rounds = 8
    children = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), f"w{i}", str(rounds)], env=env)
        for i in range(4)
    ]
    assert [child.wait(timeout=120) for child in children] == [0, 0, 0, 0]
    urls = sorted(i.request.url for i in load(path).interactions)
    assert urls == sorted(f"https://x.invalid/w{i}/{n}" for i in range(4) for n in range(rounds))
    assert _leftovers(path) == []  # no temp files, and the lock file is gone


@pytest.mark.parametrize("polled", [False, True], ids=["flock", "polled"])
def test_the_lock_excludes_a_second_holder_until_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, polled: bool
) -> None:
    if polled:
        monkeypatch.setattr(_files, "fcntl", None)
    path = tmp_path / "c.yaml"
    order: list[str] = []
    entered = threading.Event()

    def second() -> None:
        entered.wait(5)
        with locked(path):
            order.append("second")

    thread = threading.Thread(target=second)
    thread.start()
    with locked(path):
        assert (tmp_path / "c.yaml.lock").exists()
        entered.set()
        time.sleep(0.2)
        order.append("first")
    thread.join(5)
    assert order == ["first", "second"]
    assert not (tmp_path / "c.yaml.lock").exists()


def test_dumps_of_save_are_the_same_text(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    save(path, _cassette(3))
    assert path.read_text() == dumps(_cassette(3))


def test_a_nan_in_a_body_does_not_block_saving(tmp_path: Path) -> None:
    cassette = _cassette()
    cassette.interactions[0].response.json_body = {"score": float("nan")}
    save(tmp_path / "c.yaml", cassette)
    assert "score: .nan" in (tmp_path / "c.yaml").read_text()


def test_a_large_stream_saves_and_loads_back(tmp_path: Path) -> None:
    from pytest_agentreplay.cassettes.cassette import RecordedEvent

    events = [
        RecordedEvent(t=i / 1000, event="delta", data=f'{{"i":{i}}}' * 8) for i in range(20_000)
    ]
    cassette = Cassette(
        interactions=[
            Interaction(
                request=RecordedRequest(method="POST", url="https://x.invalid/"),
                response=RecordedResponse(status=200, events=events),
            )
        ]
    )
    path = tmp_path / "big.yaml"
    save(path, cassette)
    assert path.stat().st_size > 1024 * 1024  # past the libyaml verification threshold
    assert load(path) == cassette
