"""One ``ast.parse`` at a time in this process, on the CPython releases whose AST
constructor shares one recursion counter between threads: before 3.11.8 (3.10 is
taken as affected) and 3.12 before 3.12.2.

There, a garbage collection inside ``ast.parse`` can run a finalizer that hands the
GIL to another thread; if that thread parses too, the first parse ends with
``SystemError: AST constructor recursion depth mismatch`` (CPython gh-106905). pytest
parses source to show a failure, and Python 3.11 parses a line to underline it in any
traceback, so a nested pytest run reporting an expected failure while another thread
of the suite formats a traceback can end in an INTERNALERROR. It did, once in a CI
run on 3.11.7. The lock is re-entrant: a finalizer run by a collection in the parsing
thread may parse again.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from typing import Any

AFFECTED = sys.version_info < (3, 11, 8) or (3, 12) <= sys.version_info < (3, 12, 2)


def install() -> None:
    """Serialize ``ast.parse`` if this interpreter has the race; once per process."""
    if not AFFECTED or getattr(ast.parse, "serialized", False):
        return
    parse = ast.parse
    lock = threading.RLock()

    @functools.wraps(parse)
    def serialized(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return parse(*args, **kwargs)

    serialized.serialized = True  # type: ignore[attr-defined]
    ast.parse = serialized
