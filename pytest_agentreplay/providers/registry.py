"""The codec of each provider, built once on first use.

The catalog (:mod:`.catalog`) names the module and class of each provider's codec; a
codec is imported only when it is first asked for, so that replaying a cassette, which
needs none, never imports one (codecs build the pydantic reply model).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .catalog import facts

if TYPE_CHECKING:
    from ..neutral import Provider
    from .base import Codec

__all__ = ["codec_for"]

_CODECS: dict[Provider, Codec] = {}


def codec_for(provider: Provider) -> Codec:
    """The codec of ``provider``; raises ``KeyError`` listing the known ones."""
    codec = _CODECS.get(provider)
    if codec is None:
        module_name, class_name = facts(provider).codec  # each imported on first use
        module = importlib.import_module(module_name, __package__)
        codec = _CODECS[provider] = getattr(module, class_name)()
    return codec
