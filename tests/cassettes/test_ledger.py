"""The run's ledger: what ``rewrite`` keeps of a cassette (issue 27: it compared the
file's mtime with the run's start, and a future mtime kept the old interactions)."""

from __future__ import annotations

from pathlib import Path

from pytest_agentreplay.cassettes.ledger import RunLedger


def test_a_shared_ledger_is_read_by_every_process_and_removed_at_the_end(tmp_path: Path) -> None:
    shared = tmp_path / "ledger"
    cassette = tmp_path / "c.yaml"
    one, two = RunLedger(str(shared)), RunLedger(str(shared))  # two xdist workers
    assert one.written(cassette) == set()
    one.add(cassette, ["a", "b"])
    two.add(cassette, ["c"])
    assert one.written(cassette) == two.written(cassette) == {"a", "b", "c"}
    assert RunLedger().written(cassette) == set()  # another run knows nothing of it
    one.remove()
    assert not shared.exists()


def test_a_link_and_its_target_are_one_cassette(tmp_path: Path) -> None:
    ledger = RunLedger()
    real = tmp_path / "real.yaml"
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    ledger.add(link, ["x"])
    assert ledger.written(real) == {"x"}
