"""``agentreplay fold``: the final JSON of a streamed interaction, as the provider would
have returned it without streaming."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..redact.scrubber import default_scrubber
from .analysis import Source, View, read_source, selected, views
from .common import EXIT_OK, Output, reading
from .errors import CLIError
from .options import FORMATS, add_interaction, exit_codes

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay fold``."""
    parser.description = (
        "Fold the events of a streamed model call (Anthropic Messages, OpenAI Chat "
        "Completions, OpenAI Responses) into the JSON body the provider returns without "
        "streaming, as the SDK's accumulator builds it, and print it. For a model call "
        "that did not stream, its JSON body is printed. A warning on stderr says when the "
        "stream did not reach its terminal event. " + FORMATS
    )
    parser.epilog = exit_codes("the body was printed", "(not used by this command)")
    parser.add_argument("path", metavar="PATH", help="the cassette file")
    add_interaction(
        parser,
        "the interaction to fold",
        " (default: the only streamed model call; required when there are several)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="treat events of unknown types as errors instead of skipping them",
    )


def _fold_target(source: Source, index: int | None) -> View:
    items = views(source.cassette, strict=False)
    if index is not None:
        item = selected(source, index)[0]
        if item.provider is None:
            request = item.interaction.request
            raise CLIError(
                source.path,
                f"interaction #{index} ({request.method} {request.url}) is not a model call "
                "of a known provider (Anthropic Messages, OpenAI Chat Completions or Responses)",
            )
        return item
    streams = [i for i in items if i.provider is not None and i.streaming]
    if len(streams) == 1:
        return streams[0]
    if not streams:
        raise CLIError(source.path, "holds no streamed model call to fold")
    numbers = ", ".join(f"#{i.index}" for i in streams)
    raise CLIError(
        source.path,
        f"holds {len(streams)} streamed model calls ({numbers}): pick one with --interaction N",
    )


def run(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay fold PATH [--interaction N]``."""
    output.mask = default_scrubber().mask
    with reading(args.path):
        return _fold(args, output)


def _fold(args: argparse.Namespace, output: Output) -> int:
    source = read_source(args.path)
    item = _fold_target(source, args.interaction)
    if item.streaming:
        codec = item.codec
        assert codec is not None
        try:
            folded = codec.fold_detailed(item.response.sse_events(), strict=args.strict)
        except (ValueError, TypeError, KeyError) as exc:
            raise CLIError(source.path, f"interaction #{item.index}: {exc}") from None
        body: Any = folded.body
        if item.response.tail is not None:
            output.note(f"warning: interaction #{item.index}: {item.ending()}; folded without it")
        elif not folded.complete and item.response.end != "complete":
            output.note(
                f"warning: interaction #{item.index}: {item.ending()}, no terminal event; "
                "body is partial, with no stop reason"
            )
        elif not folded.complete:
            output.note(f"warning: interaction #{item.index}: no terminal event; body is partial")
    else:
        body = item.response.json_body
        if body is None:
            raise CLIError(source.path, f"interaction #{item.index} has no JSON body to show")
    output.print(json.dumps(body, indent=2, ensure_ascii=False))
    return EXIT_OK
