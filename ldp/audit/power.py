"""The audit's power: the smallest rate of each planted leak it catches, per protocol.

    python -m ldp.audit.power                  # every registered protocol it covers
    python -m ldp.audit.power --write docs/privacy.md   # replace the table in that file

For each registered oracle, mean protocol and set protocol with one collection of reports,
and each heavy hitter's whole client (:class:`ldp.audit.clients.WholeClient`), at the
command line's defaults (ε = 1, d = 4, inputs 0 and 1; a set protocol's sets {0} and {1};
a heavy hitter's k = 4, m = 8, values 0 and 255; the default audit) and each class of
:mod:`ldp.audit.plant`, the leak is planted into the real client at the rates of
:data:`RATES`; a rate is *caught* when the audit's bound
exceeds ε in at least :data:`NEEDED` of :data:`AUDITS` independent audits (a detection
rate of 0.9 or more, as a point estimate).  The cell is the smallest rate of the grid that
is caught, found by bisection over the grid (detection grows with the rate); "> 1" means
not even a leak in every report of the input is caught, and "n/a" that the class does not
apply (the reason is in the table's notes).

A cell measures the auditor *and* the leak: a small leak in a protocol far from its bound
may leave the privacy loss within ε (nothing to catch), while the same leak in a protocol
at its bound breaks it at once.  The table says how far the audit sees, not how harmful
each leak is.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ldp import registry
from ldp.audit.plant import LEAKS, applies, caught

#: The rates tried, largest first (half decades).
RATES = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001)
#: Audits per rate, and how many must exceed ε for the rate to count as caught.
AUDITS, NEEDED = 10, 9
#: The setting (the command line's defaults).
EPSILON, DOMAIN = 1.0, 4
#: Markers around the generated table in docs/privacy.md.
BEGIN, END = "<!-- power table: begin -->", "<!-- power table: end -->"


#: The audited pair of each kind: a mean protocol's ends, where its loss reaches ε; a set
#: protocol's sets {0} and {1} (rows padded with -1, :mod:`ldp.sets`), where it reaches ε
#: at the default padding length ℓ = 1.
INPUTS: dict[str, tuple[Any, Any]] = {
    "oracle": (0, 1),
    "mean": (-1.0, 1.0),
    "set": (np.array([0, -1]), np.array([1, -1])),
    "heavy_hitter": (0, 2**8 - 1),
}
#: A heavy hitter's parameters besides ε (audited as its whole client, over m-bit values:
#: the values 0 and 2^m - 1 differ in every bit, so in every prefix, segment and key).
HEAVY_HITTER: dict[str, int] = {"k": 4, "m": 8}


def is_caught(
    mechanism: Any, leak: str, rate: float, seed: int = 0, pair: tuple[Any, Any] = (0, 1)
) -> bool:
    """Whether ``leak`` at ``rate`` is caught in at least NEEDED of AUDITS audits (stopping
    as soon as the answer is known), auditing the inputs ``pair``."""
    hits = misses = 0
    value, other = pair
    for audit in range(AUDITS):
        if caught(mechanism, leak, rate, 1, seed=seed + 1000 * audit, value=value, other=other):
            hits += 1
        else:
            misses += 1
        if hits >= NEEDED or misses > AUDITS - NEEDED:
            break
    return hits >= NEEDED


def smallest_rate(
    mechanism: Any, leak: str, rates: Sequence[float] = RATES, pair: tuple[Any, Any] = (0, 1)
) -> float | None:
    """The smallest rate of ``rates`` (largest first) caught, by bisection; None if none."""
    low, high = 0, len(rates) - 1  # invariant: rates[< low] caught or low == 0
    best = None
    while low <= high:
        middle = (low + high) // 2
        if is_caught(mechanism, leak, rates[middle], pair=pair):
            best, low = rates[middle], middle + 1
        else:
            high = middle - 1
    return best


#: The kinds of registered protocol the table covers: those whose client sends one report
#: per user, and the heavy hitters as their whole clients (SVSM's two rounds are not).
KINDS = ("oracle", "mean", "set", "heavy_hitter")


def covered(name: str) -> bool:
    """Whether the table has a row for ``name``: an oracle, a mean protocol, a set
    protocol with one collection of reports (:class:`ldp.contract.SetOracleLike`), or a
    heavy hitter (:class:`ldp.audit.clients.WholeClient`)."""
    entry = registry.get(name)
    if entry.kind == "set":
        return hasattr(entry.cls, "perturb")
    return entry.kind in KINDS


def built(name: str) -> Any:
    """A registered protocol at the table's setting (a mean protocol has no domain; a
    heavy hitter is its whole client)."""
    entry = registry.get(name)
    if entry.kind == "mean":
        return entry.cls(epsilon=EPSILON)
    if entry.kind == "heavy_hitter":
        from ldp.audit.clients import WholeClient

        return WholeClient(entry.cls(epsilon=EPSILON, **HEAVY_HITTER))
    return entry.cls(epsilon=EPSILON, domain_size=DOMAIN)


def row(name: str) -> tuple[str, list[str], list[str]]:
    """A protocol's cells (one per leak class) and the notes of its n/a cells."""
    mechanism, pair = built(name), INPUTS[registry.get(name).kind]
    cells, notes = [], []
    for leak in LEAKS:
        why = applies(mechanism, leak, *pair)
        if why is not None:
            cells.append("n/a")
            notes.append(f"{name}, {leak}: {why}")
            continue
        found = smallest_rate(mechanism, leak, pair=pair)
        cells.append("> 1" if found is None else f"{found:g}")
    return name, cells, notes


def table(names: Sequence[str] | None = None, n_jobs: int = -1) -> str:
    """The power table (markdown) of ``names`` (default: every protocol :func:`covered`)."""
    from joblib import Parallel, delayed

    names = list(names or [n for kind in KINDS for n in registry.protocols(kind) if covered(n)])
    rows = Parallel(n_jobs=n_jobs)(delayed(row)(name) for name in names)
    lines = [
        f"| protocol (ε = {EPSILON:g}; oracles d = {DOMAIN}, inputs 0 and 1; mean protocols "
        f"inputs -1 and 1; set protocols d = {DOMAIN}, sets {{0}} and {{1}}; heavy hitters "
        f"k = {HEAVY_HITTER['k']}, m = {HEAVY_HITTER['m']}, whole clients, values 0 and "
        f"{INPUTS['heavy_hitter'][1]}) | " + " | ".join(LEAKS) + " |",
        "|---|" + "---:|" * len(LEAKS),
    ]
    notes = []
    for name, cells, why in rows:
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        notes += why
    text = "\n".join(lines) + "\n"
    if notes:
        text += "\nNot applicable: " + "; ".join(notes) + ".\n"
    return text


def replace_table(document: str, generated: str) -> str:
    """``document`` with the text between the markers replaced by ``generated``."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(document):
        raise ValueError(f"no {BEGIN} ... {END} block in the document")
    return pattern.sub(lambda _: f"{BEGIN}\n{generated}{END}", document)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ldp.audit.power", description=__doc__)
    parser.add_argument("names", nargs="*", help="registered protocols (default: all)")
    parser.add_argument("--write", metavar="FILE", help="replace the table in FILE")
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args(argv)
    text = table(args.names or None, args.n_jobs)
    if args.write:
        path = Path(args.write)
        path.write_text(replace_table(path.read_text(encoding="utf-8"), text), encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
