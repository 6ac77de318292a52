"""No import cycle among the modules of ``ldp``.

Static analysis with ``ast``: every ``import ldp.x`` / ``from ldp.x import y`` statement is
an edge from the importing module to the imported one.  ``from ldp.pkg import name`` where
``name`` is a submodule is an edge to that submodule too; importing a submodule also runs
its packages' ``__init__``; a package whose ``__init__`` calls
``registry.discover(__name__)`` imports every module in it.  Imports inside functions count
as well: deferring an import hides a cycle from the interpreter, not from the design (two
modules that each need the other are one module, or share a third).  Imports under
``if TYPE_CHECKING:`` never run and do not count.  The graph must be acyclic.
"""

from __future__ import annotations

import ast
from pathlib import Path

import ldp

ROOT = Path(ldp.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _resolve(module: str, level: int, current: str, is_package: bool) -> str:
    if level == 0:
        return module
    base = current.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports_of(name: str) -> set[str]:
    """The ldp modules ``name`` imports at module level (with the packages on their path)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for statement in _statements(tree):
        if isinstance(statement, ast.Import):
            found |= {alias.name for alias in statement.names}
        elif isinstance(statement, ast.ImportFrom):
            target = _resolve(
                statement.module or "", statement.level, name, path.name == "__init__.py"
            )
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in statement.names}
        elif _discovers_itself(statement):
            found |= {m for m in MODULES if m.startswith(name + ".") and path.name == "__init__.py"}
    edges = set()
    for target in found:
        parts = target.split(".")
        for end in range(1, len(parts) + 1):  # importing a.b.c runs a, a.b and a.b.c
            prefix = ".".join(parts[:end])
            if prefix in MODULES and prefix != name and not name.startswith(prefix + "."):
                edges.add(prefix)
    return edges


def _statements(tree: ast.Module):
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


def _discovers_itself(node: ast.AST) -> bool:
    """``discover(__name__)`` (any spelling of the callee): imports the whole package."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    callee = (
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    )
    first = node.args[0]
    return callee == "discover" and isinstance(first, ast.Name) and first.id == "__name__"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def find_cycles() -> list[list[str]]:
    """Every elementary cycle's strongly connected component (Tarjan), as sorted names."""
    graph = {name: imports_of(name) for name in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
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

    for name in graph:
        if name not in index:
            visit(name)
    return components


def test_the_analysis_sees_imports() -> None:
    assert "ldp.validation" in imports_of("ldp.oracles.base")
    assert "ldp.oracles" in imports_of("ldp.heavy_hitters.base")  # the package's __init__ runs
    assert "ldp.oracles.flh" in imports_of("ldp.oracles")  # registry.discover(__name__)


def test_no_import_cycle_among_ldp_modules() -> None:
    cycles = find_cycles()
    assert not cycles, "import cycles:\n" + "\n".join(
        " <-> ".join(component) for component in cycles
    )
