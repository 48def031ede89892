"""``python -m pytest_agentreplay.cli``: the ``agentreplay`` command."""

from .app import main

raise SystemExit(main())
