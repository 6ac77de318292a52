"""Which code computes a setting's rows: the modules, their per-file digests and one digest.

A setting's rows depend on more than its config: the protocol's class (and every class of
its method resolution order), the oracle a heavy hitter composes when the config names one,
the trial kind's module and the data loaders all compute them.  :func:`code_modules` lists
those modules for a config, following imports transitively, and :func:`code_digest` hashes
their source: the SHA-256 over the sorted pairs (module name, SHA-256 of the file's bytes).
The digest is a part of the setting's key (:func:`experiments.settings.setting_key`), so an
edit to any of these files, in a checkout or in an installed plug-in, makes the setting
another one whose trials are computed afresh, while an edit elsewhere (another protocol's
module, the docs, the figures) re-keys nothing.

Imports are followed as written: ``import a.b`` is the module ``a.b``; ``from a import X``
is the module ``a.X`` if there is one, else the module that defines ``X`` (a class's or a
function's ``__module__``), so ``from ldp.oracles import GRR`` reaches GRR's own module and
not every oracle the package ``__init__`` re-exports.  Only modules of ``ldp``,
``experiments`` and the plug-in's own top-level package are followed.  The dispatcher
:mod:`experiments.trials` is hashed but only its kind's module of
:mod:`experiments.kinds` is followed from it, and the imports inside a protocol's audit
hooks (:data:`AUDIT_HOOKS`) are not followed: no trial calls them.

Everything is cached per process (:func:`clear_cache` empties the caches).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Packages whose modules are followed and hashed, besides a plug-in's own.
PROJECT_PACKAGES = ("ldp", "experiments")
#: The module that dispatches to a trial kind's module (followed only to that kind's).
TRIALS_MODULE = "experiments.trials"
KINDS_PACKAGE = "experiments.kinds"
#: The protocol methods only the auditor calls (:mod:`ldp.audit`, the contract's optional
#: hooks): what they import builds the auditor's events, never a trial's rows, so it is
#: not followed from them, and an edit to the auditor re-keys no setting.
AUDIT_HOOKS = frozenset(
    {"audit_events", "audit_features", "audit_event_probabilities", "in_support"}
)


def clear_cache() -> None:
    """Forget every digest and import graph computed in this process (after an edit)."""
    _origin.cache_clear()
    _located.cache_clear()
    _bindings.cache_clear()
    _file_digest.cache_clear()
    _imports_of.cache_clear()
    _closure.cache_clear()


@functools.cache
def _origin(module: str) -> str | None:
    """The source file of ``module`` (None for a namespace package or a missing one),
    found on disk: neither the module nor its parent packages are imported."""
    loaded = sys.modules.get(module)
    path = getattr(loaded, "__file__", None) if loaded is not None else None
    if path is None:
        path = _located(module)[0]
    if path is None or not path.endswith(".py"):
        return None
    return path


@functools.cache
def _located(module: str) -> tuple[str | None, tuple[str, ...]]:
    """(source file or None, the directories of its submodules) of ``module``, from the
    top-level package's spec (which imports nothing) down the directories; ``(None, ())``
    when there is no such module."""
    top, _, rest = module.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None, ()
    if spec is None:
        return None, ()
    path = spec.origin if spec.has_location else None
    places = tuple(spec.submodule_search_locations or ())
    for part in rest.split(".") if rest else ():
        path, found = None, ()
        for place in places:
            package, single = Path(place) / part, Path(place) / f"{part}.py"
            if (package / "__init__.py").is_file():
                path, found = str(package / "__init__.py"), (str(package),)
                break
            if single.is_file():
                path, found = str(single), ()
                break
            if package.is_dir():  # a namespace package
                found = (str(package),)
                break
        else:
            return None, ()
        places = found
    return path, places


def source_bytes(module: str) -> bytes:
    """The bytes of ``module``'s source file (empty when it has none)."""
    path = _origin(module)
    if path is None:
        return b""
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


@functools.cache
def _file_digest(module: str) -> str:
    return hashlib.sha256(source_bytes(module)).hexdigest()


def _is_module(name: str) -> bool:
    return name in sys.modules or _located(name) != (None, ())


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` in ``module`` names, relative levels resolved."""
    base = node.module or ""
    if not node.level:
        return base
    path = _origin(module) or ""
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    parts = package.split(".")
    anchor = ".".join(parts[: len(parts) - node.level + 1])
    return f"{anchor}.{base}" if base else anchor


def _top_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """A module's statements that run at import, inside ``if`` and ``try`` blocks too."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.Try):
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                yield from _top_level(block)
            for handler in getattr(node, "handlers", []):
                yield from _top_level(handler.body)


@functools.cache
def _bindings(module: str) -> dict[str, tuple[str, str | None]]:
    """The names ``module`` binds at import: name -> (module, None) where it defines the
    name or binds a module to it, (module, original name) where it imports the name."""
    source = source_bytes(module)
    try:
        tree = ast.parse(source) if source else None
    except SyntaxError:
        tree = None
    names: dict[str, tuple[str, str | None]] = {}
    for node in _top_level(tree.body if tree else []):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = (module, None)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names[leaf.id] = (module, None)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = (alias.name, None)
                else:
                    top = alias.name.split(".")[0]
                    names[top] = (top, None)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = (base, alias.name)
    return names


def _defining_module(package: str, name: str, packages: tuple[str, ...]) -> str:
    """The module ``from package import name`` reaches: the submodule ``package.name``,
    else the module that defines the name, following the imports that re-export it
    (read from the sources, nothing imported), else ``package`` itself.  Only modules of
    ``packages`` are resolved (another package's names are never followed)."""
    seen: set[tuple[str, str]] = set()
    while _followed(package, packages) and (package, name) not in seen:
        seen.add((package, name))
        if _is_module(f"{package}.{name}"):
            return f"{package}.{name}"
        owner, original = _bindings(package).get(name, (package, None))
        if original is None:
            return owner
        package, name = owner, original
    return package


@functools.cache
def _imports_of(module: str, packages: tuple[str, ...]) -> tuple[str, ...]:
    """The modules ``module``'s source imports (anywhere in it), resolved as above."""
    source = source_bytes(module)
    if not source:
        return ()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    found: list[str] = []
    for node in _outside_audit_hooks(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            for alias in node.names:
                if alias.name == "*":
                    found.append(base)
                else:
                    found.append(_defining_module(base, alias.name, packages))
    return tuple(dict.fromkeys(found))


def _outside_audit_hooks(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those inside a function named in :data:`AUDIT_HOOKS`."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in AUDIT_HOOKS:
            continue
        found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _followed(module: str, packages: tuple[str, ...]) -> bool:
    return module.split(".")[0] in packages


@functools.cache
def _closure(roots: tuple[str, ...], packages: tuple[str, ...], kind: str) -> tuple[str, ...]:
    """``roots`` and every module of ``packages`` they import, transitively."""
    seen: set[str] = set()
    todo = [root for root in roots if _followed(root, packages)]
    while todo:
        module = todo.pop()
        if module in seen or _origin(module) is None:
            continue
        seen.add(module)
        for target in _imports_of(module, packages):
            if not _followed(target, packages) or target in seen:
                continue
            if module == TRIALS_MODULE and target.startswith(f"{KINDS_PACKAGE}."):
                if target != f"{KINDS_PACKAGE}.{kind}":
                    continue
            todo.append(target)
    return tuple(sorted(seen))


def _classes(protocol: dict[str, Any]) -> list[type]:
    """The protocol classes a config node uses: its own, any protocol it names in a
    parameter (a heavy hitter's ``oracle``) and, for the frontier, every oracle."""
    from experiments.schema import FRONTIER_PROTOCOL
    from ldp import registry

    names = [protocol.get("name"), *(v for k, v in protocol.items() if k != "name")]
    if protocol.get("kind") == FRONTIER_PROTOCOL["kind"]:
        names += list(registry.protocols("oracle"))
    found: list[type] = []
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            continue
        try:
            found.append(registry.get(name).cls)
        except registry.RegistryError:
            continue
    return found


def code_modules(config: dict[str, Any]) -> tuple[str, ...]:
    """The modules whose source computes the rows of a setting with this config."""
    protocol = config["protocol"]
    kind = str(protocol.get("kind", ""))
    roots = [TRIALS_MODULE, f"{KINDS_PACKAGE}.{kind}"]
    packages = set(PROJECT_PACKAGES)
    for cls in _classes(protocol):
        for base in inspect.getmro(cls):
            module = getattr(base, "__module__", "") or ""
            if base is object or module == "builtins":
                continue
            roots.append(module)
        packages.add(cls.__module__.split(".")[0])  # a plug-in's own package
    return _closure(tuple(dict.fromkeys(roots)), tuple(sorted(packages)), kind)


def file_digests(modules: Iterable[str]) -> dict[str, str]:
    """SHA-256 of each module's source file, by module name."""
    return {module: _file_digest(module) for module in sorted(modules)}


def combine(files: dict[str, str]) -> str:
    """One digest of (module name, file digest) pairs: 16 hex digits."""
    total = hashlib.sha256()
    for module in sorted(files):
        total.update(module.encode() + b"\0" + files[module].encode() + b"\n")
    return total.hexdigest()[:16]


def code_digest(config: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The digest of the code that computes a setting's rows and its per-file digests."""
    files = file_digests(code_modules(config))
    return combine(files), files


def module_path(module: str) -> str:
    """A module as a file name for people: ``ldp/oracles/grr.py``."""
    path = _origin(module) or ""
    tail = "/__init__.py" if path.endswith("__init__.py") else ".py"
    return module.replace(".", "/") + tail


def changed_files(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The modules (as file names) edited, added or dropped between two per-file digests."""
    names = set(before) | set(after)
    return sorted(module_path(m) for m in names if before.get(m) != after.get(m))
