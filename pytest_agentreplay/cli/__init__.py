"""The ``agentreplay`` command: see, check and fix cassettes without writing code.

``agentreplay inspect | lint | fold | redact | convert | diff | import-trace | serve``;
``agentreplay COMMAND --help`` describes each. :func:`main` runs it (the console script and
``python -m pytest_agentreplay.cli``); :func:`build_parser` is its argument parser.
Each subcommand is whole in the module of its name, its options beside its work;
:mod:`.app` assembles them.

Exit codes, for every subcommand: 0 success (clean), 1 findings (``lint``
problems, ``diff`` differences, ``redact --check`` changes, a secret that stopped
a write), 2 bad input (a file that does not load or is no regular file of bounded
size, a wrong option) or a file that cannot be written (a full or read-only disk),
reported as one line ``agentreplay: <file>: <reason>`` on stderr. "Internal error"
is kept for bugs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .app import build_parser, main

__all__ = ["build_parser", "main"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(__name__, {".app": ("build_parser", "main")})
