"""Issue 18, item 19: writing a recorded stream costs a small multiple of its size.

Recording a 50 MB SSE body peaked at 1.3 GB RSS: on top of the recorded events, the
writer re-checked the cassette through a dict per event, verified the text by
loading a second model of it and comparing two JSON strings of the whole cassette,
copied the text once more to add its final newline, and fingerprinted the
interaction through one more JSON text of it. Then events were re-checked, verified
and fingerprinted one at a time (4.8 times the body in RSS, the writer's share 2.8).
Now the text itself is never held: it goes to the temporary file a batch of events
at a time, each piece scanned before it is written, the split-key scan reads each
key's text a window at a time, and the file is verified by reading it back line by
line. The figure for real processes (RSS, 50 MB) is ``bench/record_memory.py``; this
guards the writer with tracemalloc on a 2 MB body.
"""

from __future__ import annotations

import gc
import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.cassette import Interaction, RecordedRequest
from pytest_agentreplay.cassettes.from_wire import response_from_wire
from pytest_agentreplay.cassettes.io import load
from pytest_agentreplay.cassettes.merge import fingerprint
from pytest_agentreplay.cassettes.write import write_recorded
from pytest_agentreplay.redact import Scrubber

BODY_BYTES = 2_000_000
LIMIT = 1.5
"""Peak Python allocations of the write, above what the recording holds, in units of
the body: 8.2 at first, 2.8 with events handled one at a time, 1.2 with the text
streamed (0.7 once the scanner's patterns are compiled)."""


def _stream() -> bytes:
    """An Anthropic-shaped stream of about ``BODY_BYTES``, in 150-byte deltas."""
    events, size, i = [], 0, 0
    while size < BODY_BYTES:
        text = f"w{i} " * 10
        delta = {"type": "content_block_delta", "index": 0, "delta": {"text": text}}
        event = f"event: content_block_delta\ndata: {json.dumps(delta)}\n\n".encode()
        events.append(event)
        size, i = size + len(event), i + 1
    return b"".join(events)


def test_writing_a_recorded_stream_peaks_under_one_and_a_half_times_its_size(
    tmp_path: Path,
) -> None:
    body = _stream()
    headers = [("content-type", "text/event-stream")]
    request = RecordedRequest(method="POST", url="https://api.anthropic.com/v1/messages")
    interaction = Interaction(request=request, response=response_from_wire(200, headers, body))
    path, scrubber = tmp_path / "big.yaml", Scrubber()
    gc.collect()
    tracemalloc.start()
    try:
        held, _ = tracemalloc.get_traced_memory()
        write_recorded(path, [interaction], scrubber, replace_old=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    ratio = (peak - held) / len(body)
    assert ratio < LIMIT, f"the write peaked at {ratio:.1f}x the body"
    [written] = load(path).interactions
    assert written.response.events == interaction.response.events


@pytest.mark.parametrize(
    "body",
    [
        b"data: a\n\n",
        b': PROCESSING\n\nevent: x\nid: 7\nretry: 9\ndata: {"events": []}\n\ndata: b',
        b'data: ["agentreplay-events-"]\n\ndata: \xc3\xa9\n\n',
    ],
    ids=["one", "fields-and-tail", "lookalikes"],
)
def test_the_fingerprint_of_a_stream_is_the_digest_of_its_whole_json(body: bytes) -> None:
    """Hashed one event at a time, the digest is the one of the interaction's JSON text
    (xdist workers and the controller compare them)."""
    headers = [("content-type", "text/event-stream"), ("x-note", '"events": []')]
    request = RecordedRequest(method="POST", url="https://a.test/v1", json_body={"events": []})
    interaction = Interaction(request=request, response=response_from_wire(200, headers, body))
    text = json.dumps(interaction.to_data(), sort_keys=True)
    assert fingerprint(interaction) == hashlib.sha256(text.encode()).hexdigest()[:32]
