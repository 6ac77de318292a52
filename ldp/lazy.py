"""A module imported on first use: scipy's stats and optimize cost about a second to import,
and the command line (composing, checking, storing) never calls them.

``stats = lazy_module("scipy.stats")`` binds a name whose first attribute read imports
the module (later reads are a dictionary lookup in ``sys.modules``).  A test imports
:mod:`experiments.run` in a fresh process and checks that scipy is not loaded.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module ``name`` until an attribute is read."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"LazyModule({self._name!r})"


def lazy_module(name: str) -> LazyModule:
    """``name`` imported when one of its attributes is first read."""
    return LazyModule(name)


__all__ = ["LazyModule", "lazy_module"]
