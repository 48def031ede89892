"""A URL as it may be shown: in a repr, a log line or a traceback.

A request's URL can carry a credential before it is scrubbed: ``user:password@`` in
its authority, ``?key=`` (Gemini's API key), a signed URL's ``sig=``. A repr reaches
logs and tracebacks that pytest's masked reports never see, so what shows a URL shows
this form of it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["bare_url"]


def bare_url(url: str) -> str:
    """``url`` without userinfo, query and fragment (``?…`` marks a dropped query)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    more = "?…" if parts.query or parts.fragment else ""
    return f"{parts.scheme}://{host}{parts.path}{more}"
