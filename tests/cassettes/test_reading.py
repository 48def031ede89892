"""A cassette file's bytes: a regular file of bounded size, or an error saying what the
path is (issue 27: a FIFO hung every reader, ``/dev/zero`` was read until
``MemoryError``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.errors import UnreadableFileError
from pytest_agentreplay.cassettes.io import CassetteFormatError, load
from pytest_agentreplay.cassettes.reading import read_file


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"x" * 3_000_000)
    assert read_file(path) == b"x" * 3_000_000


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    with pytest.raises(UnreadableFileError, match=r"is a named pipe \(FIFO\), not a cassette"):
        read_file(path)
    with pytest.raises(CassetteFormatError, match="named pipe"):  # replay says so too
        load(path)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this platform")
def test_an_endless_device_is_refused_unread() -> None:
    with pytest.raises(UnreadableFileError, match="is a character device"):
        read_file("/dev/zero")


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"x" * 101)
    with pytest.raises(UnreadableFileError, match="is 101 bytes, over the 100"):
        read_file(path, limit=100)
    assert read_file(path, limit=101) == b"x" * 101


def test_a_directory_and_a_missing_file_say_what_they_are(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFileError, match="is a directory"):
        read_file(tmp_path)
    with pytest.raises(UnreadableFileError, match="no such file or directory"):
        read_file(tmp_path / "missing.yaml")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_the_writer_never_replaces_a_special_file(tmp_path: Path) -> None:
    """Through a link too: as root, a rename over ``/dev/zero`` replaced the device."""
    from pytest_agentreplay.cassettes.atomic import atomic_write
    from pytest_agentreplay.cassettes.errors import NotAFileError

    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)
    link = tmp_path / "link.yaml"
    link.symlink_to(pipe)
    for target in (pipe, link):
        with pytest.raises(NotAFileError, match="not a regular file"):
            atomic_write(target, b"interactions: []\n")
    assert pipe.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.yaml", "pipe.yaml"]
