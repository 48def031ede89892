"""``python -m pytest_agentreplay.cli``: the ``agentreplay`` command."""

from . import main

raise SystemExit(main())
