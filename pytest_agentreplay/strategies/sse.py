"""The ``sse_streams()`` strategy: SSE bodies written every way the standard allows.

Each generated :class:`SSEStream` pairs a body with the events a spec-exact
decoder must dispatch from it. The body is written line by line here, not by
:func:`..sse.encode`, so it holds what real servers send and
the encoder never writes: mixed CR / LF / CRLF line ends, ``data:`` with and
without the space, fields in any order, ``id`` lines that persist, ``retry``
lines valid and not, unknown fields, comments, blocks that dispatch nothing and
a leading BOM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn, SearchStrategy

from ..sse import SSEEvent

__all__ = ["LINE_ENDS", "SSEStream", "sse_streams"]

LINE_ENDS = ("\n", "\r\n", "\r")
_BOM = b"\xef\xbb\xbf"
# A line of an event stream holds anything but CR and LF (and lone surrogates,
# which UTF-8 cannot carry).
_LINE_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)
_ID_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x00"), max_size=8)
_DATA_LINE = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)
# Data with LFs is drawn on purpose: an LF in random text is too rare to test
# multi-line data (several ``data:`` lines joined with LF).
_DATA = _DATA_LINE | st.lists(_DATA_LINE, min_size=2, max_size=4).map("\n".join)
# Field names a decoder must ignore; none is a real field (names are case-sensitive).
_UNKNOWN = st.sampled_from(["foo", "Data", "ID", "event ", "x-retry", "dat"])


@dataclass(frozen=True)
class SSEStream:
    """An SSE body and the events a spec-exact decoder dispatches from it.

    ``events`` include the comments seen before each event (decode with
    ``keep_comments=True`` to compare them; without it, comments are ``()``).
    The body always ends with the blank line that dispatches its last event.
    """

    events: tuple[SSEEvent, ...]
    body: bytes
    line_ends: tuple[str, ...] = field(default=("\n",), compare=False)

    @property
    def text(self) -> str:
        """The body as text (a leading BOM kept)."""
        return self.body.decode("utf-8")


@dataclass
class _Writer:
    """Lines of the body in progress, and the decoder state the expected events need."""

    line_end: SearchStrategy[str]
    draw: DrawFn
    lines: list[str] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)
    last_id: str = ""
    comments: list[str | None] = field(default_factory=list)

    def line(self, text: str) -> None:
        end = self.draw(self.line_end)
        if not text and end == "\n" and self.ends and self.ends[-1] == "\r":
            end = "\r"  # a blank LF line after a CR would read as one CRLF line end
        self.lines.append(text)
        self.ends.append(end)

    def body(self, bom: bool) -> bytes:
        text = "".join(line + end for line, end in zip(self.lines, self.ends, strict=True))
        return (_BOM if bom else b"") + text.encode("utf-8")


def _comment(draw: DrawFn) -> tuple[str, str]:
    """A comment line and the comment text a decoder keeps from it."""
    text = draw(_LINE_TEXT)
    if draw(st.booleans()) or text.startswith(" "):
        return ": " + text, text
    return ":" + text, text


def _field(name: str, value: str, draw: DrawFn) -> str:
    """``name: value``, ``name:value`` (the same unless value starts with a space) or,
    for an empty ``data``, the bare name (a field with an empty value). One choice,
    shrinking to the canonical ``name: value``."""
    styles = 3 if not value and name == "data" else 2
    style = draw(st.integers(0, styles - 1))
    if style == 2:
        return name
    if style == 1 and not value.startswith(" "):
        return f"{name}:{value}"
    return f"{name}: {value}"


def _extras(
    draw: DrawFn, *, comments: bool, noise: bool
) -> tuple[list[tuple[str, str | None]], int | None]:
    """The non-data lines of one block (each with the comment a decoder keeps from
    it, if it is one), and the retry value they set."""
    extra: list[tuple[str, str | None]] = []
    if comments:
        extra.extend(_comment(draw) for _ in range(draw(st.integers(0, 2))))
    retry = draw(st.none() | st.integers(0, 10**6))
    if retry is not None:
        extra.append((_field("retry", str(retry), draw), None))
    if noise and draw(st.booleans()):
        bad = draw(st.sampled_from(["", "1.5", "-1", "9x", " 7"]))
        extra.append((_field("retry", bad, draw), None))
    if noise and draw(st.booleans()):
        extra.append((_field(draw(_UNKNOWN), draw(_LINE_TEXT), draw), None))
    return extra, retry


def _block(
    draw: DrawFn, w: _Writer, data: SearchStrategy[str], *, comments: bool, noise: bool
) -> SSEEvent:
    """Write one event's lines, in a drawn order, and return the event they dispatch."""
    value = draw(data)
    lines: list[tuple[str, str | None]] = [
        (_field("data", line, draw), None) for line in value.split("\n")
    ]
    name = draw(st.none() | _LINE_TEXT)
    extra, retry = _extras(draw, comments=comments, noise=noise)
    if name is not None:
        extra.append((_field("event", name, draw), None))
    if draw(st.booleans()):
        w.last_id = draw(_ID_TEXT)
        extra.append((_field("id", w.last_id, draw), None))
    data_count = len(lines)
    lines.extend(extra)
    data_slots = iter(range(data_count))  # data lines keep their order
    for slot in draw(st.permutations(range(len(lines)))):
        line, kept = lines[next(data_slots) if slot < data_count else slot]
        w.line(line)
        if kept is not None:
            w.comments.append(kept)
    w.line("")
    event = SSEEvent(
        data=value, event=name or None, id=w.last_id, retry=retry, comments=tuple(w.comments)
    )
    w.comments.clear()
    return event


def _nothing_block(draw: DrawFn, w: _Writer, *, comments: bool) -> None:
    """A block that dispatches nothing: a blank line, or fields with no data. Its
    comments and ``id`` still count (they carry over to the next event), and so does
    the blank line closing a block with a comment (``None`` among the comments)."""
    commented = comments and draw(st.booleans())
    if commented:
        line, kept = _comment(draw)
        w.line(line)
        w.comments.append(kept)
    if draw(st.booleans()):
        w.line(_field("event", draw(_LINE_TEXT), draw))
    if draw(st.booleans()):
        w.last_id = draw(_ID_TEXT)
        w.line(_field("id", w.last_id, draw))
    w.line("")
    if commented:
        w.comments.append(None)


@st.composite
def _streams(
    draw: DrawFn,
    *,
    data: SearchStrategy[str],
    min_events: int,
    max_events: int,
    line_ends: tuple[str, ...],
    bom: bool | None,
    comments: bool,
    noise: bool,
) -> SSEStream:
    mixed = draw(st.booleans()) if len(line_ends) > 1 else False
    fixed = draw(st.sampled_from(line_ends))
    chosen = line_ends if mixed else (fixed,)
    w = _Writer(line_end=st.sampled_from(chosen), draw=draw)
    events: list[SSEEvent] = []
    for _ in range(draw(st.integers(min_events, max_events))):
        if noise and draw(st.integers(0, 3)) == 3:
            _nothing_block(draw, w, comments=comments)
        events.append(_block(draw, w, data, comments=comments, noise=noise))
    with_bom = draw(st.booleans()) if bom is None else bom
    return SSEStream(events=tuple(events), body=w.body(with_bom), line_ends=chosen)


def sse_streams(
    *,
    data: SearchStrategy[str] | None = None,
    min_events: int = 0,
    max_events: int = 6,
    line_ends: tuple[str, ...] = LINE_ENDS,
    bom: bool | None = None,
    comments: bool = True,
    noise: bool = True,
) -> SearchStrategy[SSEStream]:
    """SSE bodies, each with the events a spec-exact decoder dispatches from it.

    Generates ``min_events`` to ``max_events`` events whose ``data`` comes from
    ``data`` (default: any text without CR; an LF becomes several ``data:``
    lines), with or without an event name, ``id`` lines (which persist into the
    events that follow), valid ``retry`` lines, and comments. Line ends are drawn
    from ``line_ends`` — one kind for the whole stream, or mixed line by line. A
    leading UTF-8 BOM is added when ``bom`` is true (``None``: either). With
    ``noise``, blocks also hold what a decoder must ignore: unknown fields,
    invalid ``retry`` values, blank lines and blocks with no data (whose ``id``
    and comments still count).

    Shrinks toward fewer events, shorter data, LF line ends, no BOM, no comments
    and no noise: a failing decoder is shown the smallest stream it gets wrong.
    """
    if min_events < 0 or max_events < min_events:
        raise ValueError(f"need 0 <= min_events <= max_events, got {min_events}, {max_events}")
    bad = [end for end in line_ends if end not in LINE_ENDS]
    if not line_ends or bad:
        raise ValueError(f"line_ends must be some of {LINE_ENDS!r}, got {line_ends!r}")
    return _streams(
        data=_DATA if data is None else data,
        min_events=min_events,
        max_events=max_events,
        line_ends=tuple(line_ends),
        bom=bom,
        comments=comments,
        noise=noise,
    )
