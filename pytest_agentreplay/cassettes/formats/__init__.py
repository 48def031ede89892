"""Other tools' cassette formats, converted to cassette data when a file is read.

* :mod:`.vcrpy.format`: vcrpy / pytest-recording YAML — read (stock PyYAML output,
  crewAI's, pydantic-ai's ``parsed_body``) and written (``agentreplay convert
  --to vcrpy``), and vcrpy's own request / response objects for the bridge that
  records non-httpx clients;
* :mod:`.http_snapshot`: the JSON arrays the anthropic SDK's tests keep;
* :mod:`.raw_sse`: a bare event-stream body (SDK fixtures), no HTTP metadata;
* :mod:`.detect`: which of these (or ours) a file is.

Files are never modified on disk. Each reader returns plain data in our layout,
which :mod:`..io` turns into the model; shape problems raise
:class:`~.shape.ShapeError` with the path of the offending field *in the source
file*, so the error can point at its line.
"""

from __future__ import annotations

__all__: list[str] = []
