"""Transport: hook every HTTP client, route each request to its handler, guard egress.

- :mod:`.router` decides who answers a request (a fake model, a cassette) or
  whether it may go out live; :func:`~.router.intercepting` activates a router.
- :mod:`.patch` hooks the client libraries (httpx, httpx2; aiohttp through
  :mod:`.aio`, its responses pulled from a playback by :mod:`.aio_stream`) and hands
  each request to the router; :mod:`.lazy_pool` and :mod:`.import_hook` keep that cheap.
- :mod:`.egress` stops every other connection at the socket;
  :mod:`.send_guard` judges what is sent (warm connections, proxies);
  :mod:`.children` gives child processes a refusing proxy.
- :mod:`.answer` turns a reply, a fault or recorded events into a
  :class:`~.playback.Playback` (events encoded by :mod:`.encode`);
  :class:`~.delivery.Delivery` plays it to the client chunk by chunk, cut by
  :mod:`.chunking`, waiting at gates (:mod:`.gate`).
- :mod:`.tee` passes a live body to the client while it is recorded.
"""
