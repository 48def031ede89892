"""The formats the codecs speak, and what a request in any other format looks like.

A fake model on a served host that receives a request no codec speaks (Cohere's
``POST /v2/chat``, Ollama's native ``/api/chat``, an embeddings call) cannot answer
it; the test fails, and :func:`unspoken` says why in terms a user can act on: which
formats are spoken, which one this request looks like, and, where there is one, the
way to reach the same provider in a spoken format (many serve an OpenAI-compatible
endpoint; Anthropic models on Vertex AI speak Anthropic Messages). Pure functions of
the method, path and body: no codec is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .catalog import CATALOG, gemini_method

__all__ = ["SPOKEN", "looks_like", "unspoken"]

SPOKEN: tuple[tuple[str, str], ...] = tuple((e.title, e.endpoint) for e in CATALOG.values())
"""Each wire format a fake speaks, with the endpoint that selects it (from the catalog)."""

_OPENAI_COMPATIBLE = "it also serves OpenAI Chat Completions at {url}: point the client there"


@dataclass(frozen=True)
class _Lookalike:
    name: str
    test: Callable[[str, list[str], Any], bool]
    hint: str = ""


def _tail(*ends: str) -> Callable[[str, list[str], Any], bool]:
    """A path ending in one of ``ends`` (each a ``/``-separated suffix)."""
    wanted = [e.strip("/").split("/") for e in ends]
    return lambda method, segments, body: any(segments[-len(w) :] == w for w in wanted)


def _gemini(*methods: str) -> Callable[[str, list[str], Any], bool]:
    def test(method: str, segments: list[str], body: Any) -> bool:
        found = gemini_method("/".join(segments))
        return found is not None and found[1] in methods

    return test


def _has(key: str) -> Callable[[str, list[str], Any], bool]:
    return lambda method, segments, body: isinstance(body, dict) and key in body


def _all(*tests: Callable[[str, list[str], Any], bool]) -> Callable[[str, list[str], Any], bool]:
    return lambda method, segments, body: all(t(method, segments, body) for t in tests)


_LOOKALIKES: tuple[_Lookalike, ...] = (
    _Lookalike(
        "Cohere Chat (v2)",
        _tail("v2/chat"),
        _OPENAI_COMPATIBLE.format(url="https://api.cohere.ai/compatibility/v1"),
    ),
    _Lookalike("Cohere Chat (v1)", _all(_tail("v1/chat"), _has("message"))),
    _Lookalike("Cohere Embed / Rerank", _tail("v1/embed", "v2/embed", "v1/rerank", "v2/rerank")),
    _Lookalike(
        "Ollama's native API",
        _tail("api/chat", "api/generate"),
        _OPENAI_COMPATIBLE.format(url="http://localhost:11434/v1"),
    ),
    _Lookalike("Ollama embeddings", _tail("api/embed", "api/embeddings")),
    _Lookalike(
        "Amazon Bedrock Runtime (InvokeModel / Converse)",
        _tail("invoke", "invoke-with-response-stream", "converse", "converse-stream"),
    ),
    _Lookalike(
        "an Anthropic or partner model on Vertex AI (rawPredict)",
        _gemini("rawPredict", "streamRawPredict"),
        "its body is Anthropic Messages: serve(url, provider='anthropic')",
    ),
    _Lookalike("Gemini embeddings", _gemini("embedContent", "batchEmbedContents")),
    _Lookalike("Gemini batch generation", _gemini("batchGenerateContent")),
    _Lookalike("Vertex AI prediction", _gemini("predict", "predictLongRunning")),
    _Lookalike("the Gemini Interactions API", _tail("interactions")),
    _Lookalike("Anthropic token counting", _tail("v1/messages/count_tokens")),
    _Lookalike("Anthropic Message Batches", _tail("v1/messages/batches")),
    _Lookalike("Anthropic Text Completions (legacy)", _tail("v1/complete")),
    _Lookalike("OpenAI Responses token counting", _tail("responses/input_tokens")),
    _Lookalike("Mistral fill-in-the-middle", _tail("fim/completions")),
    _Lookalike("Mistral Agents", _tail("agents/completions")),
    _Lookalike("OpenAI Completions (legacy: a prompt in, text out)", _tail("completions")),
    _Lookalike("an embeddings call", _tail("embeddings")),
    _Lookalike(
        "Hugging Face Text Generation Inference (native)",
        _tail("generate", "generate_stream"),
        _OPENAI_COMPATIBLE.format(url="<your TGI server>/v1"),
    ),
    _Lookalike("a model list", _tail("models")),
    _Lookalike("a Gemini request body on a path that names no model method", _has("contents")),
    _Lookalike("a chat request (`messages`) on a path no codec knows", _has("messages")),
    _Lookalike("a completion request (`prompt`) on a path no codec knows", _has("prompt")),
)


def looks_like(method: str, path: str, body: Any) -> tuple[str, str] | None:
    """``(name, hint)`` of the known format ``method path`` (and ``body``, the parsed
    JSON if any) looks like; ``None`` when it looks like none."""
    segments = [s for s in path.split("?", 1)[0].split("/") if s]
    for lookalike in _LOOKALIKES:
        if segments and lookalike.test(method.upper(), segments, body):
            return lookalike.name, lookalike.hint
    return None


def unspoken(method: str, path: str, body: Any) -> str:
    """Why a fake cannot answer ``method path``: what it looks like, what is spoken."""
    spoken = "; ".join(f"{name} ({endpoint})" for name, endpoint in SPOKEN)
    found = looks_like(method, path, body)
    if found is None:
        what = f"{method} {path} is not a model call in any format it speaks"
    else:
        name, hint = found
        what = f"{method} {path} looks like {name}, which no codec speaks"
        if hint:
            what += f" ({hint})"
    return f"{what}. The fake speaks {spoken}"
