"""The architecture as a test: layers, and no import cycle, across ``ldp``, ``experiments``
and ``benchmarks``.

Static analysis with ``ast`` over the source files: every ``import a.b`` / ``from a.b import
c`` statement is an edge from the importing module to the imported one.  ``from a.pkg import
name`` where ``name`` is a submodule is an edge to that submodule too; importing a submodule
also runs its packages' ``__init__``; a package whose ``__init__`` calls
``registry.discover(__name__)`` or walks ``pkgutil.iter_modules(__path__)`` imports every
module in it.  Imports inside functions count as well: deferring an import hides a cycle
from the interpreter, not from the design (two modules that each need the other are one
module, or share a third).  Imports under ``if TYPE_CHECKING:`` never run and do not count.

Two rules, as import-linter's ``layers`` contract states them:

* the layers, top to bottom, are :data:`LAYERS`: ``benchmarks``; the drawing code
  (``experiments.figures`` and the ad-hoc plot command ``experiments.plot``, which draws in
  the figures' theme); the rest of ``experiments`` (the runner, the results store, the
  command-line tools); ``ldp``.  A module may import its own layer or one below, never one
  above (so ``ldp`` imports neither ``experiments`` nor ``benchmarks``);
* the module graph is acyclic.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("ldp", "experiments", "benchmarks")

#: Top to bottom; a module belongs to the first layer naming it or a package above it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("benchmarks",),
    ("experiments.figures", "experiments.plot"),
    ("experiments",),
    ("ldp",),
)

Graph = Mapping[str, set[str]]


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(path): path
    for package in PACKAGES
    for path in sorted((REPO / package).rglob("*.py"))
    if "__pycache__" not in path.parts
}


def _resolve(module: str, level: int, current: str, is_package: bool) -> str:
    if level == 0:
        return module
    base = current.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports_of(name: str) -> set[str]:
    """The repository's modules ``name`` imports (with the packages on their path)."""
    path = MODULES[name]
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for statement in _statements(tree):
        if isinstance(statement, ast.Import):
            found |= {alias.name for alias in statement.names}
        elif isinstance(statement, ast.ImportFrom):
            target = _resolve(statement.module or "", statement.level, name, is_package)
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in statement.names}
        elif is_package and _imports_its_modules(statement):
            found |= {m for m in MODULES if m.startswith(name + ".")}
    edges = set()
    for target in found:
        parts = target.split(".")
        for end in range(1, len(parts) + 1):  # importing a.b.c runs a, a.b and a.b.c
            prefix = ".".join(parts[:end])
            if prefix in MODULES and prefix != name and not name.startswith(prefix + "."):
                edges.add(prefix)
    return edges


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every import statement and call of the module, skipping ``if TYPE_CHECKING:``."""
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending += node.orelse
            continue
        if isinstance(node, ast.Import | ast.ImportFrom | ast.Call):
            yield node
        pending += list(ast.iter_child_nodes(node))


def _imports_its_modules(node: ast.AST) -> bool:
    """``discover(__name__)`` or ``iter_modules(__path__)`` (any spelling of the callee)."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    callee = (
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    )
    first = node.args[0]
    return isinstance(first, ast.Name) and (callee, first.id) in {
        ("discover", "__name__"),
        ("iter_modules", "__path__"),
    }


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@functools.cache
def import_graph() -> dict[str, set[str]]:
    return {name: imports_of(name) for name in MODULES}


def find_cycles(graph: Graph) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(components)


def layer_of(name: str) -> int:
    """The index in :data:`LAYERS` of the module's layer (0 is the top)."""
    for rank, layer in enumerate(LAYERS):
        if any(name == top or name.startswith(top + ".") for top in layer):
            return rank
    raise ValueError(f"{name} belongs to no layer of {LAYERS}")


def upward_imports(graph: Graph) -> list[tuple[str, str]]:
    """Every edge (importer, imported) from a lower layer to a higher one."""
    return sorted(
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if layer_of(target) < layer_of(name)
    )


def test_the_analysis_sees_imports() -> None:
    assert "ldp.validation" in imports_of("ldp.oracles.base")
    assert "ldp.oracles" in imports_of("ldp.heavy_hitters.base")  # the package's __init__ runs
    assert "ldp.oracles.flh" in imports_of("ldp.oracles")  # registry.discover(__name__)
    assert "ldp.registry" in imports_of("experiments.run")  # an import inside a function
    assert "experiments.figures.fig_pem_fig2" in imports_of("experiments.figures")  # pkgutil
    assert "experiments.execute" in imports_of("benchmarks.harness")


def test_every_module_has_a_layer() -> None:
    assert {layer_of(name) for name in MODULES} == set(range(len(LAYERS)))


def test_the_checks_can_fail() -> None:
    """A planted cycle and a planted upward import are caught."""
    planted = {
        "ldp.a": {"ldp.b"},
        "ldp.b": {"ldp.c"},
        "ldp.c": {"ldp.a"},
        "experiments.x": {"ldp.a", "experiments.figures.y"},
        "experiments.figures.y": {"experiments.x"},
    }
    assert find_cycles(planted) == [
        ["experiments.figures.y", "experiments.x"],
        ["ldp.a", "ldp.b", "ldp.c"],
    ]
    assert upward_imports(planted) == [("experiments.x", "experiments.figures.y")]
    assert upward_imports({"experiments.run": {"experiments.plot"}}) == [
        ("experiments.run", "experiments.plot")
    ]
    assert upward_imports({"ldp.metrics": {"benchmarks.harness"}}) == [
        ("ldp.metrics", "benchmarks.harness")
    ]
    with pytest.raises(ValueError, match="no layer"):
        layer_of("notebooks.helper")


def test_no_import_cycle() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(
        " <-> ".join(component) for component in cycles
    )


def test_no_layer_imports_a_higher_one() -> None:
    upward = upward_imports(import_graph())
    assert not upward, f"imports up the layers {LAYERS}:\n" + "\n".join(
        f"{name} imports {target}" for name, target in upward
    )


#: Costly libraries the command line's own work (composing, checking, storing) never calls:
#: scipy's stats and optimize took about a second to import in every process of a run.
DEFERRED = ("scipy.stats", "scipy.optimize", "scipy.linalg", "scipy.sparse", "scipy.special")


def _loaded_after(statement: str) -> set[str]:
    import subprocess
    import sys

    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    return set(done.stdout.split())


def test_the_command_line_imports_no_scipy_submodule_until_used() -> None:
    """A fresh ``import experiments.run`` (what every run, worker and CLI test starts with)
    loads none of :data:`DEFERRED`; reading a deferred name loads it (the check can fail)."""
    loaded = _loaded_after("import experiments.run")
    assert not loaded & set(DEFERRED), sorted(loaded & set(DEFERRED))
    used = _loaded_after(
        "import experiments.run\nfrom ldp.theory import numeric\nnumeric.HM_THRESHOLD"
    )
    assert "scipy.optimize" in used
