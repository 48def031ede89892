"""The checks every request parser makes on a body it did not write, in one place.

A request body comes from the agent under test (or from a cassette someone edited):
anything can be in it. Each parser walks it with a :class:`Fields` of its provider,
whose checks return the value with the type the parser needs or raise a
:class:`~..errors.CodecError` naming the field path (``messages[2].content[0].type``)
and what was there instead (``must be a string, got int``; ``null`` for a JSON null).
Before issue 28 each of the four parsers carried its own copy of these checks, and
their messages had drifted apart (``got NoneType`` in one, ``got null`` in another).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import CodecError

__all__ = ["Fields", "join", "type_name"]


def type_name(value: Any) -> str:
    """What a value is, for a message: ``null`` for a JSON null, else its type's name."""
    return "null" if value is None else type(value).__name__


def join(path: str, key: str | int) -> str:
    """The path of ``key`` inside ``path``: ``join("tools[0]", "name")`` is
    ``tools[0].name``, ``join("messages", 2)`` is ``messages[2]``, ``join("", "model")``
    is ``model``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class Fields:
    """Type checks for one provider's request bodies; every failure names its field."""

    def __init__(self, provider: str) -> None:
        self.provider = provider

    def fail(self, message: str, path: str) -> CodecError:
        """The error for the field at ``path`` (the body itself when ``path`` is empty)."""
        return CodecError(message, provider=self.provider, field=path or None)

    def obj(self, value: Any, path: str, *, what: str = "an object") -> Mapping[str, Any]:
        """``value``, which must be a JSON object (``what`` says which, in the message:
        ``"a JSON schema object"``)."""
        # a parsed body's objects are dicts: the abstract check (a few times slower)
        # only for anything else
        if type(value) is not dict and not isinstance(value, Mapping):
            raise self.fail(f"must be {what}, got {type_name(value)}", path)
        return value

    def items(
        self, value: Any, path: str, *, required: bool = True, what: str = "a list"
    ) -> list[Any]:
        """``value``, which must be a list; a missing one (``None``) is empty unless
        ``required``."""
        if value is None and not required:
            return []
        if not isinstance(value, list):
            raise self.fail(f"must be {what}, got {type_name(value)}", path)
        return value

    def text(self, value: Any, path: str) -> str:
        """``value``, which must be a string."""
        if not isinstance(value, str):
            raise self.fail(f"must be a string, got {type_name(value)}", path)
        return value

    def name(self, value: Any, path: str) -> str:
        """``value``, which must be a string that is not empty (a tool's name)."""
        text = self.text(value, path)
        if not text:
            raise self.fail("must not be empty", path)
        return text

    def optional_text(self, value: Any, path: str) -> str | None:
        """``value``, a string or missing (``None``)."""
        return None if value is None else self.text(value, path)

    def flag(self, value: Any, path: str) -> bool:
        """``value``, a boolean or missing (``False``)."""
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.fail(f"must be a boolean, got {type_name(value)}", path)
        return value

    def key(self, obj: Mapping[str, Any], key: str, path: str) -> str:
        """``obj[key]``, which must be a string (its field is ``path.key``, spelled out
        only when it is wrong: bodies are checked on every call a fake answers)."""
        value = obj.get(key)
        if isinstance(value, str):
            return value
        raise self.fail(f"must be a string, got {type_name(value)}", join(path, key))

    def optional_key(self, obj: Mapping[str, Any], key: str, path: str) -> str | None:
        """``obj[key]``, a string or missing."""
        value = obj.get(key)
        return None if value is None else self.key(obj, key, path)
