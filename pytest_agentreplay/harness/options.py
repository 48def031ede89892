"""Command-line options, ini keys and the marker: one place, one constant per choice list."""

from __future__ import annotations

import pytest

from ..cassettes.modes import RECORD_MODES

__all__ = ["MARKER_HELP", "RECORD_MODES", "add_options"]

MARKER_HELP = (
    "agentreplay(cassette=None, record_mode=None, match_on=None, allow_hosts=None, "
    "strict=None, block_loopback=None, guard_subprocesses=None, allow_incomplete=None, "
    "pace=None, and vcrpy's VCR() keys such as filter_headers): replay (or record) "
    "this test's provider traffic with pytest-agentreplay."
)


def add_options(parser: pytest.Parser) -> None:
    """Register every option in one ``agentreplay`` group, each ``--agentreplay-`` prefixed,
    and the ``agentreplay_*`` ini keys."""
    _add_command_line(
        parser.getgroup("agentreplay", "LLM agent record/replay (pytest-agentreplay)")
    )
    _add_ini(parser)


def _add_command_line(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--agentreplay-record-mode",
        choices=RECORD_MODES,
        default=None,
        help="Record mode for cassettes (default: the ini value, else 'none': replay only, "
        "no network).",
    )
    group.addoption(
        "--agentreplay-strict",
        action="store_true",
        default=None,
        help="Fail tests that leave recorded interactions unplayed.",
    )
    group.addoption(
        "--agentreplay-save-on-failure",
        action="store_true",
        default=None,
        help="Write recorded cassettes even when the test fails (by default an existing "
        "cassette is kept when its test fails).",
    )
    group.addoption(
        "--agentreplay-block-network",
        action="store_true",
        default=None,
        help="Block egress in every test, not only in tests that use agentreplay.",
    )


def _add_ini(parser: pytest.Parser) -> None:
    parser.addini("agentreplay_record_mode", "Default record mode.", default="none")
    parser.addini(
        "agentreplay_cassette_dir",
        "Cassette directory, relative to each test file's directory.",
        default="cassettes",
    )
    parser.addini(
        "agentreplay_allow_hosts",
        "Hosts that may be reached live during replay (besides loopback).",
        type="args",
        default=[],
    )
    parser.addini(
        "agentreplay_block_loopback",
        "Also block loopback addresses during replay.",
        type="bool",
        default=False,
    )
    parser.addini(
        "agentreplay_guard_subprocesses",
        "Start child processes of a replaying test with proxy variables that refuse "
        "every host the test may not reach.",
        type="bool",
        default=True,
    )
    parser.addini(
        "agentreplay_vcr",
        "When vcrpy records and replays requests / urllib3 / aiohttp in cassette tests: "
        "auto (when recording, or when one of them is imported before the test starts), "
        "always, never.",
        default="auto",
    )
    parser.addini(
        "agentreplay_block_network",
        "Block egress in every test, not only in tests that use agentreplay.",
        type="bool",
        default=False,
    )
