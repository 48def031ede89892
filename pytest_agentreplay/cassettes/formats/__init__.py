"""Other tools' cassette formats: one home per format, converted to cassette data when
a file is read.

* :mod:`.vcrpy`: vcrpy / pytest-recording — its YAML read (stock PyYAML output,
  crewAI's, pydantic-ai's ``parsed_body``) and written (``agentreplay convert --to
  vcrpy``), vcrpy's own request / response objects, the bridge that records
  non-httpx clients through vcrpy, and vcrpy's filters;
* :mod:`.http_snapshot`: the JSON arrays the anthropic SDK's tests keep;
* :mod:`.raw_sse`: a bare event-stream body (SDK fixtures), no HTTP metadata;
* :mod:`.detect`: which of these (or ours) a file is, asking each home, and the home
  of a file's format;
* :mod:`.shape`: the helpers every reader checks a source file's fields with.

Files are never modified on disk. Each reader returns plain data in our layout,
which :mod:`..io` turns into the model; shape problems raise
:class:`~.errors.ShapeError` with the path of the offending field *in the source
file*, so the error can point at its line.
"""

from __future__ import annotations

__all__: list[str] = []
