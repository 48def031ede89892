"""The web sources a reply cites, read from either provider's reply.

Anthropic attaches ``citations`` to the text blocks they support (a provider-side web
search's ``web_search_result_location``); OpenAI Chat attaches ``url_citation``
annotations to the message, spans counted in its content, and streams them as an
``annotations`` delta (a field the SDK's delta type does not declare: it arrives as
plain dicts). Both become :class:`~.events.Citation` s with a span in the reply's
joined text, so a streamed and a non-streamed reply cite alike. A citation without a
URL (Anthropic's document citations) is not a web source, and is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .events import Citation


def anthropic_citations(content: Iterable[Any]) -> list[Citation]:
    """The web citations of an Anthropic message's text blocks, each spanning its
    block in the joined text of the blocks."""
    cited: list[Citation] = []
    offset = 0
    for block in content:
        if block.type != "text":
            continue
        end = offset + len(block.text)
        for citation in block.citations or ():
            url = getattr(citation, "url", None)
            if url:
                title = getattr(citation, "title", None) or ""
                quoted = getattr(citation, "cited_text", None) or ""
                cited.append(Citation(url, title, quoted, offset, end))
        offset = end
    return cited


def openai_citations(annotations: Iterable[Any] | None, text: str) -> list[Citation]:
    """The ``url_citation`` annotations of an OpenAI Chat message (SDK objects or, from
    a stream, dicts); a span that does not fit ``text`` covers all of it."""
    cited: list[Citation] = []
    for note in annotations or ():
        if _field(note, "type") != "url_citation":
            continue
        source = _field(note, "url_citation")
        url = _field(source, "url")
        if not isinstance(url, str) or not url:
            continue
        start, end = _field(source, "start_index"), _field(source, "end_index")
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(text)):
            start, end = 0, len(text)
        cited.append(Citation(url, str(_field(source, "title") or ""), "", start, end))
    return cited


def _field(value: Any, name: str) -> Any:
    """A field of an SDK object or of a dict; ``None`` when absent."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)
