"""A fake that serves a recording: each model call gets the next recorded answer.

:class:`TwinServer` answers a run's model calls, in order, from the interactions
of a cassette — as the client asks for them: a recorded stream as recorded
(re-chunked) or folded into its JSON twin (``codec.fold``); a recorded JSON body
as it is or rendered as the provider's stream. It logs
:class:`~..neutral.ModelCall` objects like a :class:`~..fakes.FakeModel`, so run
logs compare alike: :func:`..invariants.assert_stream_parity` uses it to prove
that a cassette recorded with streaming on also serves the non-streaming path.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from urllib.parse import urlsplit

from ..cassettes.cassette import Interaction, RecordedResponse
from ..cassettes.replay import playback_for, recorded_reply
from ..errors import CodecError
from ..neutral import Fault, ModelCall, Request
from ..providers import codec_for, detect
from ..providers.base import Codec, RenderContext
from ..providers.catalog import FALLBACK
from ..transport.answer import Plan, for_error, for_reply
from ..transport.chunking import ChunkingSpec, resolve_chunking
from ..transport.playback import Playback
from ..transport.router import HTTPRequest
from .call_log import CallLog
from .serving import Serving

__all__ = ["TwinServer"]


class TwinServer(Serving):
    """Serves the model calls of a recording in order, as the client asks: a recorded
    stream as recorded (re-chunked) or folded into its JSON twin; a recorded JSON body
    as it is or rendered as the provider's stream. Logs :class:`~..neutral.ModelCall`
    objects in the fake model's :class:`~.script.CallLog`, so run logs compare alike."""

    def __init__(self, interactions: Sequence[Interaction], *, chunking: ChunkingSpec = "event"):
        self.interactions = [i for i in interactions if _provider(i) is not None]
        self.chunker = resolve_chunking(chunking)
        self.problems: list[str] = []
        self._calls = CallLog()
        self._served = 0
        self._lock = threading.Lock()

    @property
    def log(self) -> list[ModelCall]:
        """Every finished call, in arrival order, with its outcome."""
        return self._calls.entries

    def claims(self, request: HTTPRequest) -> bool:
        return detect(request.method, request.path) is not None

    async def respond_async(self, request: HTTPRequest) -> Playback:
        return self.respond(request)

    def respond(self, request: HTTPRequest) -> Playback:
        provider = detect(request.method, request.path) or FALLBACK
        codec = codec_for(provider)
        with self._lock:
            number = self._served
            self._served += 1
        if number >= len(self.interactions):
            return self._refuse(
                codec,
                f"the run made model call #{number}, but the recording has "
                f"{len(self.interactions)}: {request.method} {request.url}",
            )
        try:
            parsed = self._parse(codec, request)
        except (ValueError, CodecError) as exc:
            return self._refuse(codec, f"model call #{number} is not a valid request: {exc}")
        return self._serve(number, codec, parsed, request)

    def _refuse(self, codec: Codec, problem: str) -> Playback:
        with self._lock:
            self.problems.append(problem)
        fault = Fault.http(500, f"pytest-agentreplay: {problem}")
        return for_error(codec, fault, RenderContext(), Plan())

    def _serve(self, number: int, codec: Codec, parsed: Request, request: HTTPRequest) -> Playback:
        interaction = self.interactions[number]
        recorded = interaction.response
        if recorded.is_stream and not parsed.stream:
            try:
                interaction = _folded(codec, interaction, number)
            except (ValueError, CodecError) as exc:
                return self._refuse(codec, str(exc))
        reply = recorded_reply(codec, recorded)
        index = self._calls.open(request, parsed)
        plan = Plan(
            chunker=self.chunker,
            on_end=lambda outcome, sent: self._calls.ended(index, outcome, sent, reply),
        )
        if not recorded.is_stream and parsed.stream and reply is not None:
            ctx = RenderContext(model=parsed.model or "fake-model", request=parsed)
            playback = for_reply(codec, reply, ctx, plan, streaming=True)
        else:
            playback = playback_for(
                interaction, method=request.method, path=request.path, fault=None, plan=plan
            )
        self._calls.answered(index, None if playback.before_headers else playback.status)
        return playback

    def verify(self) -> None:
        """Raise ``AssertionError`` naming what the run asked that the recording lacks."""
        if self.problems:
            raise AssertionError("assert_stream_parity: " + "\n".join(self.problems))


def _provider(interaction: Interaction) -> str | None:
    return detect(interaction.request.method, urlsplit(interaction.request.url).path)


def _folded(codec: Codec, interaction: Interaction, number: int) -> Interaction:
    """The non-streaming twin of a recorded stream: the body the provider would have
    returned without streaming, as the codec folds the events."""
    recorded = interaction.response
    folded = codec.fold_detailed(recorded.sse_events())
    # A recording whose last event lacks its blank line (recorded.tail) folds without
    # its terminal event, as the SDKs read it: still a complete answer.
    if recorded.end != "complete" or folded.error is not None:
        error = ", with an in-stream error" if folded.error else ""
        raise ValueError(
            f"recorded model call #{number} did not complete (ended {recorded.end!r}{error}); "
            f"parity needs recordings of complete responses"
        )
    headers = {k: v for k, v in recorded.headers.items() if "request-id" in k}
    response = RecordedResponse(
        status=recorded.status,
        headers={**headers, "content-type": codec.json_content_type},
        json=folded.body,
    )
    return Interaction(request=interaction.request, response=response)
