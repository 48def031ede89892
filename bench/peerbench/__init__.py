"""The peer benchmark of ``bench/peers.py``: its harness and one module per workload.

The harness: :mod:`.config` (what a run is), :mod:`.data` (the synthetic workloads'
data), :mod:`.stats`, :mod:`.contenders` with :mod:`.agentreplay`,
:mod:`.sdk_contenders` and :mod:`.registry` (the tools compared), :mod:`.consumers`
(how a stream is read), :mod:`.orchestrate` (the worker processes),
:mod:`.report`, :mod:`.tables` and :mod:`.targets` (the text report). The workloads:
:mod:`.w1_scaling`, :mod:`.w23_streams` (W2, W3), :mod:`.w4_pytest`, :mod:`.w5_fakes`,
:mod:`.w6_recording`; each runs its measurements in a worker and renders its own
tables.
"""
