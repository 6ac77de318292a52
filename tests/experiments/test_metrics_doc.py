"""docs/metrics.md lists every metric a trial writes.

The metric names are read from the source of the trial kinds (``experiments/kinds``,
``experiments/trials.py``): the first argument of each ``Measurement(...)``, a string or
an f-string whose fields become ``<...>`` (``diag.{name}`` is ``diag.<...>``, documented
as ``diag.<name>`` or with its own examples).  A name the code writes that the document
never shows in backquotes is a failure; the planted check shows the collector finds one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted((REPO / "experiments" / "kinds").glob("*.py")) + [
    REPO / "experiments" / "trials.py"
]
DOC = REPO / "docs" / "metrics.md"


def metric_names(source: str) -> set[str]:
    """The first argument of each Measurement(...) call: literal, or f-string as a pattern."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Measurement":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
            elif isinstance(first, ast.JoinedStr):
                names.add(
                    "".join(
                        part.value if isinstance(part, ast.Constant) else "<...>"
                        for part in first.values
                    )
                )
            elif first is not None:
                names.add(f"<expression {ast.unparse(first)}>")
    return names


def documented(name: str, text: str) -> bool:
    """A literal name in backquotes; a pattern's fixed parts, in order, in one backquoted
    span (``diag.<...>`` matches `diag.<name>` or `diag.rounds`)."""
    spans = re.findall(r"`([^`]+)`", text)
    if "<...>" not in name:
        return name in spans or any(name in re.split(r"[ ,]+", s) for s in spans)
    pieces = [re.escape(p) for p in name.split("<...>")]
    pattern = re.compile(".+".join(pieces) if pieces[-1] else ".+".join(pieces[:-1]) + ".+")
    return any(pattern.fullmatch(s) for s in spans)


def test_every_metric_a_trial_writes_is_in_the_metrics_document() -> None:
    text = DOC.read_text(encoding="utf-8")
    written = set().union(*(metric_names(p.read_text(encoding="utf-8")) for p in SOURCES))
    assert len(written) >= 30, sorted(written)  # the collector reads the kinds
    missing = sorted(name for name in written if not documented(name, text))
    assert not missing, f"docs/metrics.md does not list {missing}"


def test_the_collector_and_the_check_catch_a_new_metric() -> None:
    planted = 'rows.append(Measurement("brand_new_metric", 1.0))\nMeasurement(f"x.{k}", 2.0)'
    assert metric_names(planted) == {"brand_new_metric", "x.<...>"}
    assert not documented("brand_new_metric", "`f1` and `ncr`")
    assert documented("x.<...>", "the rows `x.<name>`") and documented("f1", "`f1`, `ncr`")
