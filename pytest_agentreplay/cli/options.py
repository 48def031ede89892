"""What the subcommands' argument parsers share: the help layout, the exit-code epilog,
the formats paragraph and the ``--interaction`` option.

Each subcommand defines its own parser in its module (``configure``); this module is
standard library only, so that ``agentreplay --help`` stays fast.
"""

from __future__ import annotations

import argparse
import textwrap

__all__ = ["FORMATS", "HelpFormatter", "add_interaction", "exit_codes"]

_BAD_INPUT = (
    "bad input: a file that does not exist, does not load or is not a regular file of at "
    "most 1 GiB, or a wrong option; or a file that cannot be written (a full or read-only "
    "disk); one line 'agentreplay: <file>: <reason>' on stderr"
)

FORMATS = (
    "Reads agentreplay cassettes, vcrpy / pytest-recording YAML (including pydantic-ai's "
    "and crewAI's serializers), the anthropic SDK's http-snapshot JSON and bare "
    "event-stream bodies."
)
"""The sentence of each reading subcommand's description that says what it reads."""


class HelpFormatter(argparse.HelpFormatter):
    """Wraps one-line paragraphs to the terminal; keeps multi-line ones (lists) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            p
            if "\n" in p
            else textwrap.fill(p, width, initial_indent=indent, subsequent_indent=indent)
            for p in paragraphs
        )


def exit_codes(ok: str, findings: str) -> str:
    """The ``exit codes:`` epilog: what 0 and 1 mean for a command (2 is always bad input)."""
    lines = [
        textwrap.fill(f"{code}  {text}", 79, initial_indent="  ", subsequent_indent=" " * 5)
        for code, text in (("0", ok), ("1", findings), ("2", _BAD_INPUT))
    ]
    return "exit codes:\n" + "\n".join(lines)


def _index(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an interaction number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"interaction numbers start at 0, got {value}")
    return value


def add_interaction(parser: argparse.ArgumentParser, what: str, default: str = "") -> None:
    """``-i N`` / ``--interaction N``: one interaction of the file, numbered from 0."""
    parser.add_argument(
        "-i",
        "--interaction",
        metavar="N",
        type=_index,
        help=f"{what}, numbered from 0 in file order{default}",
    )
