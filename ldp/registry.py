"""The registry of every protocol: its name, kind, class and display defaults.

A protocol module registers its class with :func:`register`; everything that needs to
know which protocols exist (the harness's configs and schema, the figures' colours and
legend order, the listing of ``python -m experiments.run --help``) reads :func:`protocols`
instead of keeping a table of its own.  A protocol's parameters, their types and their
ranges are declared once, on the class: its dataclass fields say the names, types and
defaults (:func:`parameters`), and its ``__post_init__`` checks the ranges.

Protocols from other installed packages join through the entry-point group
``ldp.protocols`` (see ``docs/new-protocol.md``): each entry point names a module (whose
import registers its classes) or a class (registered as it is).  They are loaded the
first time :func:`protocols` is called, exactly like the built-in ones.

>>> from ldp import registry
>>> registry.get("OLH").kind, registry.get("PEM").kind
('oracle', 'heavy_hitter')
>>> [p.name for p in registry.parameters(registry.get("OLH").cls)]
['g']

This module knows nothing of Hydra, files or plotting: colours are hex strings.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import inspect
import pkgutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

Kind = Literal["oracle", "heavy_hitter", "mean", "set"]
KINDS: tuple[str, ...] = ("oracle", "heavy_hitter", "mean", "set")
#: The entry-point group through which other packages add protocols.
ENTRY_POINT_GROUP = "ldp.protocols"
#: The parameters every protocol of a kind receives from its caller (the harness sets
#: them from ``epsilon``, ``k`` and the data), so they are not protocol parameters.
CONTEXT: dict[str, tuple[str, ...]] = {
    "oracle": ("epsilon", "domain_size"),
    "heavy_hitter": ("epsilon", "k", "m"),
    "mean": ("epsilon",),
    "set": ("epsilon", "domain_size"),
}
#: The packages whose modules are imported (so that they register) before any lookup.
BUILT_IN_PACKAGES = ("ldp.oracles", "ldp.heavy_hitters", "ldp.numeric", "ldp.sets")

T = TypeVar("T", bound=type)


@dataclass(frozen=True)
class Protocol:
    """One registered protocol.

    Attributes
    ----------
    name : str
        The name used in configs, result tables and legends (the paper's acronym).
    kind : {"oracle", "heavy_hitter", "mean", "set"}
        A frequency oracle (built with ``epsilon``, ``domain_size``), a heavy-hitter
        protocol (built with ``epsilon``, ``k``, ``m``), a mean-estimation protocol for
        values in [-1, 1] (built with ``epsilon``; :mod:`ldp.numeric`) or a protocol over
        users' item sets (built with ``epsilon``, ``domain_size``; :mod:`ldp.sets`).
    cls : type
        The class; its dataclass fields are the protocol's parameters.
    label : str
        Default legend text.
    color : str or None
        Default colour as a hex string (None: the figures pick one).
    order : float
        Position in legends (lower first).
    source : str
        Where it comes from: the defining module, or ``plugin:<distribution>``.
    """

    name: str
    kind: str
    cls: type
    label: str
    color: str | None
    order: float
    source: str


class RegistryError(ValueError):
    """A protocol cannot be registered or found; the message names it."""


_REGISTRY: dict[str, Protocol] = {}
_LOADED = False


def register(
    cls: T | None = None,
    *,
    name: str | None = None,
    kind: str | None = None,
    label: str | None = None,
    color: str | None = None,
    order: float = 1000.0,
) -> T | Callable[[T], T]:
    """Register a protocol class; usable as ``@register`` or ``@register(color=...)``.

    Parameters
    ----------
    cls : type
        The protocol class (a dataclass).
    name : str, optional
        The registry name; default the class's ``name`` attribute, else its ``__name__``.
    kind : {"oracle", "heavy_hitter", "mean", "set"}, optional
        Default: ``"heavy_hitter"`` if the class has a ``run`` method, else ``"oracle"``.
    label, color, order :
        Display defaults (legend text, hex colour, legend position).

    Returns
    -------
    type
        The class, unchanged (so the decorator can stack with ``@dataclass``).
    """

    def decorate(target: T) -> T:
        display = {"name": name, "kind": kind, "label": label, "color": color, "order": order}
        _add(target, **display)
        target.__ldp_registration__ = display  # lets a plug-in module be re-read
        return target

    return decorate(cls) if cls is not None else decorate


def _check_overrides(cls: type, name: str) -> None:
    """Refuse a public method that drops a parameter of the method it overrides.

    The harness and the conformance suite call a protocol through its bases' signatures
    (``variances(true_counts, candidates)``): an override without ``candidates`` would
    fail there, or worse, be skipped by a caller that probes it.
    """
    for attr, value in vars(cls).items():
        if attr.startswith("_") or not inspect.isfunction(value):
            continue
        for base in cls.__mro__[1:]:
            inherited = vars(base).get(attr)
            if inherited is None:
                continue
            if not inspect.isfunction(inherited):
                break
            mine = inspect.signature(value).parameters
            if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in mine.values()):
                break
            dropped = [p for p in inspect.signature(inherited).parameters if p not in mine]
            if dropped:
                raise RegistryError(
                    f"{name}.{attr} overrides {base.__name__}.{attr} without its "
                    f"parameter(s) {dropped}: keep the base's signature"
                )
            break


def _add(
    cls: type,
    *,
    name: str | None = None,
    kind: str | None = None,
    label: str | None = None,
    color: str | None = None,
    order: float = 1000.0,
) -> Protocol:
    if not isinstance(cls, type) or not dataclasses.is_dataclass(cls):
        raise RegistryError(f"a protocol must be a dataclass type, got {cls!r}")
    name = name or getattr(cls, "name", None) or cls.__name__
    if not isinstance(name, str) or not name.isidentifier():
        raise RegistryError(f"protocol name must be an identifier, got {name!r}")
    kind = kind or ("heavy_hitter" if callable(getattr(cls, "run", None)) else "oracle")
    if kind not in KINDS:
        raise RegistryError(f"kind of {name} must be one of {KINDS}, got {kind!r}")
    missing = [c for c in CONTEXT[kind] if c not in {f.name for f in dataclasses.fields(cls)}]
    if missing:
        raise RegistryError(f"{name}: a {kind} class needs the fields {missing}")
    _check_overrides(cls, name)
    entry = Protocol(
        name=name,
        kind=kind,
        cls=cls,
        label=label or name,
        color=color,
        order=float(order),
        source=cls.__module__,
    )
    previous = _REGISTRY.get(name.upper())
    if previous is not None and previous.cls is not cls:
        if (previous.cls.__module__, previous.cls.__qualname__) != (
            cls.__module__,
            cls.__qualname__,
        ):
            raise RegistryError(
                f"protocol name {name!r} is taken by {previous.cls.__module__}."
                f"{previous.cls.__qualname__}"
            )
    _REGISTRY[name.upper()] = entry
    return entry


def discover(package: str) -> None:
    """Import every module of ``package`` so that the protocols in them register."""
    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(module.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")


def defined_in(package: str) -> dict[str, type]:
    """The classes registered by the modules of ``package``, by name, in legend order.

    Only what is already imported counts (call :func:`discover` first); plug-ins are not
    loaded, so a package can use this while it is being imported.
    """
    inside = [p for p in _REGISTRY.values() if (p.cls.__module__ + ".").startswith(package + ".")]
    return {p.name: p.cls for p in sorted(inside, key=lambda p: (p.order, p.name))}


def _load_plugins() -> None:
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        distribution = getattr(entry_point.dist, "name", None) or entry_point.value
        before = set(_REGISTRY)
        try:
            target = entry_point.load()
            if isinstance(target, type):  # a class: registered as it is
                classes = {target: getattr(target, "__ldp_registration__", {})}
            else:  # a module: the classes it registered (even if it was imported before)
                classes = {
                    value: value.__ldp_registration__
                    for value in vars(target).values()
                    if isinstance(value, type)
                    and value.__module__ == target.__name__
                    and "__ldp_registration__" in vars(value)
                }
            for cls, display in classes.items():
                if not any(p.cls is cls for p in _REGISTRY.values()):
                    _add(cls, **display)
        except Exception as error:  # a broken plug-in must not break the built-in protocols
            warnings.warn(
                f"ldp plug-in {entry_point.name!r} ({entry_point.value}) failed to load: "
                f"{type(error).__name__}: {error}",
                RuntimeWarning,
                stacklevel=3,
            )
            continue
        for key in set(_REGISTRY) - before:  # what this entry point added
            _REGISTRY[key] = dataclasses.replace(_REGISTRY[key], source=f"plugin:{distribution}")


def load() -> None:
    """Import the built-in protocol packages and the plug-ins (once)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for package in BUILT_IN_PACKAGES:
        discover(package)
    _load_plugins()


def protocols(kind: str | None = None) -> dict[str, Protocol]:
    """Every registered protocol (of one kind, if given), by name, in legend order."""
    load()
    if kind is not None and kind not in KINDS:
        raise RegistryError(f"kind must be one of {KINDS}, got {kind!r}")
    chosen = [p for p in _REGISTRY.values() if kind is None or p.kind == kind]
    return {p.name: p for p in sorted(chosen, key=lambda p: (p.order, p.name))}


def get(name: str, kind: str | None = None) -> Protocol:
    """The protocol called ``name`` (case-insensitive); RegistryError naming the known ones."""
    load()
    entry = _REGISTRY.get(str(name).upper())
    if entry is None or (kind is not None and entry.kind != kind):
        known = ", ".join(protocols(kind))
        what = "protocol" if kind is None else kind.replace("_", "-")
        raise RegistryError(f"unknown {what} {name!r}; known: {known}")
    return entry


def resolve(value: object, kind: str) -> type:
    """A protocol class given as a class or by its registered name (e.g. ``oracle="OLH"``)."""
    if isinstance(value, str):
        return get(value, kind).cls
    if isinstance(value, type):
        return value
    raise TypeError(f"expected a {kind} class or its name, got {type(value).__name__}")


def parameters(cls: type) -> list[dataclasses.Field]:
    """The protocol's own parameters: its init fields minus what the caller supplies.

    ``epsilon`` and ``domain_size`` (oracles), ``epsilon``, ``k`` and ``m`` (heavy
    hitters) or ``epsilon`` (means) are set by whoever runs the protocol; every other init
    field is a parameter, with the type and default the class declares.
    """
    kind = next((p.kind for p in _REGISTRY.values() if p.cls is cls), None)
    context = CONTEXT[kind] if kind else CONTEXT["oracle"] + CONTEXT["heavy_hitter"]
    return [f for f in dataclasses.fields(cls) if f.init and f.name not in context]
