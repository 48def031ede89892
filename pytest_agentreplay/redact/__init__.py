"""Secret scrubbing: nothing secret ever reaches a cassette.

Users commit cassettes to public repositories, so every write path runs two
independent defences:

1. :meth:`Scrubber.scrub` removes what is *known* to be secret or volatile, by
   name: credential headers (``Bearer sk-...`` → ``Bearer REDACTED``, the scheme
   is kept), organisation/workspace ids, cookies; query, fragment and form
   parameters such as ``key=`` or a SAS ``sig=``; JSON keys such as ``api_key``
   or ``client_secret`` at any depth — in request and response bodies and inside
   SSE ``data:`` (only the events that change are re-serialised, compactly; all
   others keep their exact bytes). Volatile headers (``date``, ``user-agent``,
   ``x-stainless-*``, rate-limit resets, ...) are dropped and the request ids the
   SDKs read are set to a stable placeholder, so re-recordings diff cleanly.
   Custom scrubbers run after the defaults.
2. :meth:`Scrubber.check` scans the final serialised text for what *looks*
   secret: known key shapes (``sk-ant-...``, ``sk-...``, ``AIza...``, JWTs, ...)
   and the exact values — plain, URL-encoded and base64, so Basic auth is
   caught — of the API-key environment variables in use. Anything found aborts
   the write with :class:`SecretLeakError`, which names where and what kind,
   never the value.

The tables of names (``SECRET_HEADERS``, ``SECRET_QUERY_PARAMS``,
``SECRET_BODY_KEYS``, ...) live in :mod:`.rules`. Scrubbing works on the cassette
model (:mod:`..cassettes.cassette`); the cassette writer calls it, never the reverse.
:class:`Scrubber` is in :mod:`.scrubber`, :class:`SecretLeakError` in :mod:`.errors`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .errors import Finding, SecretLeakError
    from .scrubber import CustomScrubber, Scrubber, default_scrubber

__all__ = [
    "CustomScrubber",
    "Finding",
    "Scrubber",
    "SecretLeakError",
    "default_scrubber",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".errors": ("Finding", "SecretLeakError"),
            ".scrubber": ("CustomScrubber", "Scrubber", "default_scrubber"),
        },
    )
