"""What the pytest plugin runs on: its options, settings, run state and report.

:mod:`.options` registers the command-line options and ini keys; :mod:`.settings`
holds the session's settings (changed by the configure hook) and resolves each
test's; :mod:`.state` is the run state (one object for the session, one per test);
:mod:`.scopes` opens a test's router, cassette and fake models; :mod:`.marker`
gives the marker's fixture to the tests that need it; :mod:`.paths` names cassette
files; :mod:`.summary` builds the terminal summary, merged across xdist workers by
:mod:`.xdist`; :mod:`.report_mask` masks secrets in failure reports.
"""
