"""The API reference of ``ldp``, built with pdoc: ``python -m experiments.apidocs [OUT]``.

Every public module of ``ldp`` (no name part starting with ``_``) gets a page, its numpydoc
docstrings rendered as Markdown, under ``OUT`` (default ``.cache/api``; ``make docs``).  The
build is *clean* when

* pdoc warns of nothing but its one known limitation: it evaluates the string
  annotations of a generated ``__init__`` (a dataclass's, a NamedTuple's) in the wrong
  namespace, which is forgiven when the class's own annotations resolve, and
* every dotted ``ldp.…`` name a docstring writes as code (in backticks, or in a role such
  as ``:func:``, Sphinx's ``~`` shortening included) resolves to a documented object,
  i.e. pdoc turned it into a link.

Otherwise the problems are printed, one a line, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
import typing
import warnings
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

#: A name written as code that pdoc could not link: ``<code>ldp.x.y</code>`` (a resolved
#: one is ``<code><a href=...>ldp.x.y</a></code>``); ``{package}`` is the package's name.
UNRESOLVED = r"<code>~?({package}(?:\.\w+)+)(?:\(\))?</code>"
#: Sphinx's ``:role:`~a.b.c``` (show only ``c``), which pdoc does not know: the ``~`` is
#: dropped before pdoc reads the role, so the reference resolves (shown in full).
SHORTENED_ROLE = re.compile(r"(:(?:py:)?[a-z]+:`)~")
#: pdoc's warning for an annotation it cannot evaluate, naming the function.
ANNOTATION = re.compile(r"^Error parsing type annotation .* for ([\w.]+)\.__init__\. ")


def public_modules(package: str = "ldp") -> list[str]:
    """``package`` and every submodule whose dotted name has no part starting with ``_``."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def _is_generated_init(message: str) -> bool:
    """Whether ``message`` is pdoc's annotation warning for a generated ``__init__`` whose
    class's own annotations do resolve.

    A dataclass or NamedTuple's ``__init__`` carries its fields' annotations as strings
    (``from __future__ import annotations``), which pdoc evaluates in the class's module;
    a field inherited from a base in another module names things that module never
    imported.  The fields are documented either way: only when the class's annotations do
    not resolve, each in the module that wrote it (:func:`typing.get_type_hints`), is the
    warning a real broken reference.
    """
    match = ANNOTATION.match(message)
    if match is None:
        return False
    module_name, _, class_name = match.group(1).rpartition(".")
    try:
        owner = getattr(importlib.import_module(module_name), class_name)
        typing.get_type_hints(owner)
    except Exception:  # any failure: the annotation is broken where it was written
        return False
    return isinstance(owner, type)


def _specs(modules: Sequence[str]) -> list[str]:
    """``modules`` less those pdoc already adds for a package listed before them."""
    from pdoc.extract import walk_specs

    specs: list[str] = []
    covered: set[str] = set()
    for name in modules:
        if name not in covered:
            specs.append(name)
            covered.update(walk_specs([name]))
    return specs


def unresolved_references(out: Path, package: str = "ldp") -> list[str]:
    """``page: name`` for every ``<package>.…`` name written as code that pdoc did not link."""
    pattern = re.compile(UNRESOLVED.format(package=re.escape(package)))
    problems = []
    for page in sorted(out.rglob("*.html")):
        for name in sorted(set(pattern.findall(page.read_text(encoding="utf-8")))):
            problems.append(f"{page.relative_to(out)}: unresolved reference {name}")
    return problems


def build(out: Path, package: str = "ldp") -> list[str]:
    """Render ``package``'s reference into ``out``; the problems found (empty: clean)."""
    import pdoc
    import pdoc.docstrings
    import pdoc.render

    rst = pdoc.docstrings.rst

    def rst_with_shortened_roles(contents: str, source_file: Path | None) -> str:
        return rst(SHORTENED_ROLE.sub(r"\1", contents), source_file)

    pdoc.render.configure(docformat="numpy", search=True, show_source=False)
    with (
        warnings.catch_warnings(record=True) as caught,
        mock.patch.object(pdoc.docstrings, "rst", rst_with_shortened_roles),
    ):
        warnings.simplefilter("always")
        pdoc.pdoc(*_specs(public_modules(package)), output_directory=out)
    problems = [
        f"pdoc: {warning.message}"
        for warning in caught
        if not _is_generated_init(str(warning.message))
    ]
    return list(dict.fromkeys(problems)) + unresolved_references(out, package)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m experiments.apidocs", description=__doc__.splitlines()[0]
    )
    parser.add_argument("out", nargs="?", default=".cache/api", help="default: .cache/api")
    args = parser.parse_args(argv)
    out = Path(args.out)
    problems = build(out)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"API reference: {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
