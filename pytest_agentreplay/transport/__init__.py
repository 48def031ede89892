"""Transport: hook every HTTP client, route each request to its handler, guard egress.

:mod:`.router` decides who answers a request (a fake model, a cassette) or whether
it may go out live, and installs the hooks into the client libraries; :mod:`.egress`
stops everything else at the socket. :mod:`.answer` turns a reply, a fault or
recorded events into a :class:`~.playback.Playback` (events encoded by
:mod:`.encode`), which a :class:`~.delivery.Delivery` plays to the client chunk by
chunk, cut by :mod:`.chunking`, waiting at gates (:mod:`.gate`); :mod:`.tee` passes a
live body to the client while it is recorded.
"""
