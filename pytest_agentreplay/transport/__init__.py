"""Transport: hook every HTTP client, route each request to its handler, guard egress.

:mod:`.router` decides who answers a request (a fake model, a cassette) or whether
it may go out live; :mod:`.patch` installs the hooks into the client libraries;
:mod:`.egress` stops everything else at the socket. :mod:`.answer` turns a reply,
a fault or recorded events into a :class:`~.playback.Playback`, which
:mod:`.playback` delivers to the client chunk by chunk, as :mod:`.chunking` cuts it.
"""
