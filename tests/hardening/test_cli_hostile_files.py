"""Issue 27, items 8 to 11: every ``agentreplay`` command on files that are not cassettes.

``lint``, ``redact`` and ``inspect`` hung on a FIFO named ``*.yaml``; ``/dev/zero`` was
read whole until ``MemoryError``; an SSE event nesting 5,000 deep was a
``RecursionError``; ``redact`` on a full disk said ``OSError: [Errno 28] …
agentreplay: internal error``. Every command must give one line naming the file and
the reason, and its documented exit code, for any input: a special file, an endless
file, a huge file, deep nesting, a full or read-only disk. "Internal error" is kept
for bugs.

Every way a file enters the command is tried: named on the command line (each
command, ``diff`` on either side), found by walking a folder (``lint``, ``redact``),
and the output of ``convert -o`` and of a redirected standard output.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.reading import MAX_FILE_BYTES
from tests.cli._helpers import Result, stream_interaction

TIMEOUT = 120  # a hang fails the test instead of the run (not a speed bound)
COMMANDS = {
    "inspect": ["inspect", "{f}"],
    "inspect --json": ["inspect", "--json", "{f}"],
    "fold": ["fold", "{f}"],
    "lint": ["lint", "{f}"],
    "redact": ["redact", "{f}"],
    "redact --check": ["redact", "--check", "{f}"],
    "diff A": ["diff", "{f}", "{ok}"],
    "diff B": ["diff", "{ok}", "{f}"],
    "diff --all": ["diff", "--all", "{ok}", "{f}"],
    "convert": ["convert", "{f}", "--to", "vcrpy"],
    "serve": ["serve", "{f}"],
}


MEMORY = 1536 * 1024 * 1024  # bytes of address space each command may use


def _run(*args: str | Path) -> Result:
    """The command in a subprocess, with a hang guard and, where the system allows, a
    memory limit: without the fixes a command read ``/dev/zero`` until the memory ran
    out, and this machine is shared."""
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, str(MEMORY), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "PYTHONWARNINGS": "error"},
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


LIMITED = """
import runpy, sys
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
except (ImportError, ValueError, OSError):
    pass  # no address-space limit on this platform
sys.argv = ["agentreplay", *sys.argv[2:]]
runpy.run_module("pytest_agentreplay.cli", run_name="__main__", alter_sys=True)
"""


def _fifo(tmp: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    path = tmp / "pipe.yaml"
    os.mkfifo(path)
    return path


def _zero(tmp: Path) -> Path:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this platform")
    path = tmp / "zero.yaml"
    path.symlink_to("/dev/zero")
    return path


def _directory(tmp: Path) -> Path:
    path = tmp / "folder.yaml"
    path.mkdir()
    return path


def _huge(tmp: Path) -> Path:
    """A sparse file one byte over the cap: no disk used, nothing worth reading."""
    path = tmp / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    return path


SPECIAL: dict[str, tuple[Callable[[Path], Path], str]] = {
    "fifo": (_fifo, "is a named pipe (FIFO), not a cassette file"),
    "/dev/zero": (_zero, "is a character device, not a cassette file"),
    "a directory": (_directory, "is a directory, not a cassette file"),
    "over 1 GiB": (_huge, "bytes, over the 1,073,741,824 a cassette file may hold"),
}


def _ok(tmp: Path) -> Path:
    path = tmp / "ok.yaml"
    cassette_io.save(path, Cassette(interactions=[stream_interaction()]))
    return path


def _one_line_error(result: Result, path: Path, reason: str) -> None:
    assert result.code == 2, result.err
    assert "internal error" not in result.err
    assert "Traceback" not in result.err
    errors = [line for line in result.err.splitlines() if line.startswith("agentreplay:")]
    assert errors == [errors[0]]
    assert errors[0].startswith(f"agentreplay: {path}: ")
    assert reason in errors[0]


NAMED = [
    pytest.param(command, kind, id=f"{command}-{kind}")
    for kind in SPECIAL
    for command in COMMANDS
    # lint and redact walk a folder they are given (tested below)
    if not (kind == "a directory" and command.startswith(("lint", "redact")))
]


@pytest.mark.parametrize(("command", "kind"), NAMED)
def test_a_special_or_huge_file_named_on_the_command_line_is_one_line_and_exit_2(
    tmp_path: Path, command: str, kind: str
) -> None:
    make, reason = SPECIAL[kind]
    path, ok = make(tmp_path), _ok(tmp_path)
    args = [a.format(f=path, ok=ok) for a in COMMANDS[command]]
    _one_line_error(_run(*args), path, reason)


@pytest.mark.parametrize("command", ["lint", "redact", "redact --check"])
def test_a_folder_walk_leaves_special_files_out(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    for make, _ in SPECIAL.values():
        make(folder)
    ok = _ok(folder)
    result = _run(*command.split(), folder)
    assert result.code == 0, result.err
    assert "1 file" in result.out  # the cassette, and nothing else, was read
    assert str(ok.name) in result.out or command == "lint"


# --- deep nesting ---------------------------------------------------------------------


def _deep(tmp: Path, levels: int = 5000) -> Path:
    """A cassette one of whose SSE events carries JSON nesting ``levels`` deep."""
    path = tmp / "deep.yaml"
    shutil.copy(_ok(tmp), path)
    event = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}'
    deep = event[:-1] + ',"x":' + "[" * levels + "]" * levels + "}"
    text = path.read_text()
    first = text.index("content_block_delta, data: '") + len("content_block_delta, data: '")
    end = text.index("'}", first)
    path.write_text(text[:first] + deep + text[end:])
    return path


DEEP_EXPECTED = {  # command: (exit code, what it says about the event)
    "inspect": (0, "JSON nests deeper than 100 levels"),
    "inspect --json": (0, "JSON nests deeper than 100 levels"),
    "fold": (2, "JSON nests deeper than 100 levels"),
    "lint": (1, "JSON nests deeper than 100 levels"),
    "diff A": (1, "interaction(s) differ"),
    "diff B": (1, "interaction(s) differ"),
    "diff --all": (1, "interaction(s) differ"),
    "convert": (0, "event: content_block_delta"),
    "redact --check": (0, "clean"),
}


@pytest.mark.parametrize("command", DEEP_EXPECTED)
def test_json_nested_5000_deep_in_an_event_is_no_internal_error(
    tmp_path: Path, command: str
) -> None:
    path, ok = _deep(tmp_path), tmp_path / "ok.yaml"
    args = [a.format(f=path, ok=ok) for a in COMMANDS[command]]
    result = _run(*args)
    code, said = DEEP_EXPECTED[command]
    assert result.code == code, result.err
    assert "internal error" not in result.err
    assert "RecursionError" not in result.err + result.out
    assert said in result.out + result.err


# --- memory ---------------------------------------------------------------------------


def test_a_file_too_big_for_the_memory_left_is_one_line_naming_it(tmp_path: Path) -> None:
    """Under a 1 GiB address-space limit, a 700 MB file (under the 1 GiB cap) cannot be
    read and decoded: it is named, not an internal error (the old reader died here
    on /dev/zero too, read whole)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("limits the address space with setrlimit (Linux)")
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:
        handle.truncate(700 * 1024 * 1024)
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, str(1 << 30), "inspect", str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    result = Result(done.returncode, done.stdout, done.stderr)
    _one_line_error(result, path, "too big to process in the memory available")


# --- disks ----------------------------------------------------------------------------


def _dirty(tmp: Path) -> Path:
    """A cassette ``redact`` rewrites: a credential header no scrubbing has removed."""
    path = _ok(tmp)
    text = path.read_text().replace(
        "content-type: application/json", "authorization: Bearer abcdef0123456789secretvalue", 1
    )
    path.write_text(text)
    return path


def test_redact_on_a_full_disk_is_one_line_and_keeps_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentreplay.cassettes import atomic
    from tests.cli._helpers import cli

    path = _dirty(tmp_path)
    before = path.read_bytes()

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    result = cli(capsys, "redact", path)
    _one_line_error(result, path, "cannot write it: No space left on device")
    assert "the file was left as it was" in result.err
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.yaml"]


def _unshare() -> str:
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        pytest.skip("mounts a small file system with unshare (Linux)")
    probe = subprocess.run(
        [unshare, "-rm", "true"], capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"user and mount namespaces are not permitted here: {probe.stderr.strip()}")
    return unshare


DISK = """
set -e
mount -t tmpfs -o size=256k tmpfs "$DIR"
cp "$SRC" "$DIR/c.yaml"
cat "$DIR/c.yaml" > /dev/null
{prepare}
python -m pytest_agentreplay.cli {command} > "$OUT" 2> "$ERR" || echo $? > "$CODE"
sha256sum "$DIR/c.yaml" | cut -c1-64 > "$HASH"
ls -A "$DIR" > "$LIST"
"""
DISKS = {
    "full": 'dd if=/dev/zero of="$DIR/filler" bs=4k 2>/dev/null || true',
    "read-only": 'mount -o remount,ro "$DIR"',
}
WRITERS = {
    "redact": ('redact "$DIR/c.yaml"', "cannot write it"),
    "convert -o": ('convert "$DIR/c.yaml" --to vcrpy -o "$DIR/c.yaml"', "cannot write it"),
    "inspect > file": ('inspect "$DIR/c.yaml" > "$DIR/shown.txt"', "cannot write the output"),
}


ON_DISKS = [
    pytest.param(disk, writer, id=f"{disk}-{writer}")
    for writer in WRITERS
    for disk in DISKS
    # on a read-only disk the shell, not the command, fails to open the output
    if not (writer == "inspect > file" and disk == "read-only")
]


@pytest.mark.parametrize(("disk", "writer"), ON_DISKS)
def test_a_full_or_read_only_disk_is_one_line_and_the_file_is_kept(
    tmp_path: Path, disk: str, writer: str
) -> None:
    unshare = _unshare()
    source = _dirty(tmp_path)
    command, reason = WRITERS[writer]
    mounted = tmp_path / "disk"
    mounted.mkdir()
    files = {name: tmp_path / name for name in ("out", "err", "code", "hash", "list")}
    env = {
        **os.environ,
        "DIR": str(mounted),
        "SRC": str(source),
        **{name.upper(): str(path) for name, path in files.items()},
    }
    if writer == "inspect > file":
        command = command.replace('> "$DIR/shown.txt"', "")
        script = DISK.replace('> "$OUT"', '> "$DIR/shown.txt"')
    else:
        script = DISK
    script = script.format(prepare=DISKS[disk], command=command)
    done = subprocess.run(
        [unshare, "-rm", "sh", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    err = files["err"].read_text()
    code = int(files["code"].read_text()) if files["code"].exists() else 0
    assert code == 2, err
    assert "internal error" not in err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("agentreplay:")]
    assert len(lines) == 1, err
    assert reason in lines[0]
    assert files["hash"].read_text().strip() == _sha256(source)  # byte-identical
    left = set(files["list"].read_text().split()) - {"c.yaml", "filler", "shown.txt"}
    assert left == set()  # no temporary or lock file


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_convert_refuses_to_write_over_a_special_file(tmp_path: Path) -> None:
    """A named pipe here stands for a device: a convert without the check renamed its
    output over ``-o /dev/...`` (as root, a device node of the machine), so the test
    never aims at one."""
    ok = _ok(tmp_path)
    target = _fifo(tmp_path)
    result = _run("convert", ok, "--to", "vcrpy", "-o", target)
    _one_line_error(result, target, "is not a regular file")
    assert stat.S_ISFIFO(target.lstat().st_mode)  # not a file renamed over it


DEEP = "[" * 5000 + "]" * 5000
DEEP_FILES = {  # every format a command reads, with JSON nested 5,000 deep where it holds JSON
    "vcrpy.yaml": (
        'interactions:\n- request:\n    body: \'{"model":"m","x":' + DEEP + "}'\n"
        "    headers:\n      Content-Type:\n      - application/json\n    method: POST\n"
        "    uri: https://api.openai.com/v1/chat/completions\n  response:\n"
        '    body:\n      string: \'{"y":' + DEEP + "}'\n    headers:\n      Content-Type:\n"
        "      - application/json\n    status:\n      code: 200\n      message: OK\nversion: 1\n"
    ),
    "body.sse.txt": (
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        '"delta":{"type":"text_delta","text":"x"},"z":' + DEEP + "}\n\n"
    ),
    "snapshot.json": (
        '[{"request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages", '
        '"headers": {}, "body": ' + DEEP + '}, "response": {"status_code": 200, '
        '"headers": {}, "body": {}}}]'
    ),
}


@pytest.mark.parametrize(
    "command", ["inspect", "inspect --json", "lint", "fold", "diff --all", "convert"]
)
@pytest.mark.parametrize("name", DEEP_FILES)
def test_deep_json_in_every_format_is_no_internal_error(
    tmp_path: Path, name: str, command: str
) -> None:
    path, ok = tmp_path / name, _ok(tmp_path)
    path.write_text(DEEP_FILES[name])
    args = [a.format(f=path, ok=ok) for a in COMMANDS[command]]
    result = _run(*args)
    assert result.code in (0, 1, 2), result.err
    assert "internal error" not in result.err
    assert "RecursionError" not in result.out + result.err
    if result.code == 2:  # one line naming the file
        errors = [line for line in result.err.splitlines() if line.startswith("agentreplay:")]
        assert len(errors) == 1 and str(path) in errors[0]
