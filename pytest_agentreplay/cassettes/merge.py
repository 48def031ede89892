"""Merging what several tests recorded into one cassette, deterministically.

Each test appends its new interactions to its cassette as one contiguous *block*,
named by the interactions' fingerprints. Tests that share a cassette and run on
several xdist workers append their blocks in whatever order the workers finish;
:func:`order_blocks` puts them back in collection order at the end of the run,
so the file is the one a serial run writes.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from pathlib import Path

from ..redact.scrubber import Scrubber
from . import io as cassette_io
from .cassette import Cassette, Interaction
from .normal import without_events

__all__ = ["fingerprint", "order_blocks"]


def fingerprint(interaction: Interaction) -> str:
    """A digest of everything stored for ``interaction``: equal for equal interactions,
    whichever process computes it (how xdist workers name what they wrote).

    It is the digest of ``json.dumps(interaction.to_data(), sort_keys=True)``, hashed
    one event at a time: that text of a 50 MB stream, and a dict per event to make
    it, were the largest share of recording's peak memory (issue 18).
    """
    events = interaction.response.events
    if events is None:
        text = json.dumps(interaction.to_data(), sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
    mark = f"agentreplay-events-{uuid.uuid4().hex}"  # unguessable: appears nowhere else
    shell = interaction.replace(response=without_events(interaction.response))
    data = shell.to_data()
    data["response"]["events"] = [mark]
    before, after = json.dumps(data, sort_keys=True).split(f'["{mark}"]')
    digest = hashlib.sha256(before.encode("utf-8") + b"[")
    for index, event in enumerate(events):
        text = json.dumps(event.to_data(), sort_keys=True)
        digest.update((", " + text if index else text).encode("utf-8"))
    digest.update(b"]" + after.encode("utf-8"))
    return digest.hexdigest()[:32]


def order_blocks(
    path: Path, blocks: Sequence[tuple[int, Sequence[str]]], scrubber: Scrubber
) -> bool:
    """Put the interactions several tests wrote into one cassette in test order.

    Tests recording into a shared cassette on several xdist workers append their
    interactions (a *block* each, named by fingerprints) in whatever order the
    workers finish. At the end of the run the controller calls this with each
    block's position in the collected tests: blocks found in the file are sorted
    by it — the file a serial run would have written — after the interactions no
    block claims (those that were there before). Returns whether the file changed.
    """
    with cassette_io.locked(path):
        if not path.exists():
            return False
        old = cassette_io.load(path).interactions
        prints = [fingerprint(i) for i in old]
        found = _find_blocks(prints, blocks)
        claimed = {i for _, start, size in found for i in range(start, start + size)}
        ordered = [i for n, i in enumerate(old) if n not in claimed]
        for _, start, size in sorted(found):
            ordered.extend(old[start : start + size])
        if [fingerprint(i) for i in ordered] == prints:
            return False
        cassette_io.save(path, Cassette(interactions=ordered), scrubber=scrubber)
        return True


def _find_blocks(
    prints: list[str], blocks: Sequence[tuple[int, Sequence[str]]]
) -> list[tuple[int, int, int]]:
    """``(order, start, size)`` of each block found contiguous in ``prints``, unclaimed.

    Candidate starts are looked up by the block's first fingerprint, so the cost is
    the size of the blocks, not the file's length times their number.
    """
    starts: dict[str, list[int]] = {}
    for position, digest in enumerate(prints):
        starts.setdefault(digest, []).append(position)
    taken: set[int] = set()
    found = []
    for order, block in blocks:
        size = len(block)
        for start in starts.get(block[0], []) if block else []:
            span = range(start, start + size)
            if taken.isdisjoint(span) and prints[start : start + size] == list(block):
                taken.update(span)
                found.append((order, start, size))
                break
    return found
