"""One reading of a multipart content type's boundary, for matching and for scrubbing.

The two used to parse it with two regexes: the scrubber allowed spaces around ``=``
and took any content type mentioning ``multipart/``, matching did neither. A body the
scrubber redacted by its parts was then matched as bytes, and an upload (whose
boundary the client draws at random) never matched its recording; both also took an
``xboundary=`` parameter's value for the boundary.
"""

from __future__ import annotations

import pytest

from pytest_agentreplay.cassettes.multipart import multipart_boundary, multipart_parts
from pytest_agentreplay.redact.bodies import scrub_multipart
from pytest_agentreplay.redact.rules import Rules

RULES = Rules.build(
    placeholder="REDACTED", extra_headers=(), extra_query_params=(), extra_body_keys=()
)

CONTENT_TYPES = {
    "multipart/form-data; boundary=b0und": b"b0und",
    'multipart/form-data; boundary="b0und"': b"b0und",
    "multipart/form-data; boundary = b0und": b"b0und",
    "multipart/form-data;boundary= b0und ;charset=utf-8": b"b0und",
    "Multipart/Form-Data; charset=utf-8; BOUNDARY=b0und": b"b0und",
    "multipart/form-data; xboundary=other; boundary=b0und": b"b0und",
    "multipart/form-data; boundary=b0und, multipart/form-data": b"b0und",  # joined twice
    'application/json; profile="multipart/form-data; boundary=b0und"': None,
    "text/plain; boundary=b0und": None,
    "multipart/form-data": None,
}


def _upload(boundary: str, key: str) -> bytes:
    return (
        f'--{boundary}\r\nContent-Disposition: form-data; name="api_key"\r\n\r\n{key}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
        f"--{boundary}--\r\n"
    ).encode()


@pytest.mark.parametrize(("content_type", "boundary"), CONTENT_TYPES.items())
def test_the_boundary_of_a_content_type(content_type: str, boundary: bytes | None) -> None:
    assert multipart_boundary(content_type) == boundary


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_matching_reads_parts_exactly_where_the_scrubber_redacts_them(content_type: str) -> None:
    body = _upload("b0und", "sk-secret-value")
    scrubbed = scrub_multipart(body, content_type, RULES)
    parts = multipart_parts(scrubbed, content_type)
    assert (scrubbed != body) == (parts is not None)
    if parts is not None:
        assert [p["content"] for p in parts["parts"]] == ["REDACTED", "batch"]


def test_an_upload_with_spaces_in_its_content_type_matches_its_scrubbed_recording() -> None:
    """The live request (a fresh boundary) and the recording (scrubbed on write) have the
    same parts once the live one is scrubbed as matching scrubs it."""
    recorded = scrub_multipart(
        _upload("rec0rded", "sk-a"), "multipart/form-data; boundary = rec0rded", RULES
    )
    live = scrub_multipart(_upload("l1ve", "sk-b"), "multipart/form-data; boundary = l1ve", RULES)
    assert recorded != live
    assert multipart_parts(recorded, "multipart/form-data; boundary = rec0rded") == multipart_parts(
        live, "multipart/form-data; boundary = l1ve"
    )
