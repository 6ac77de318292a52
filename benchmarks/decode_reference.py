"""Decoding time at the projective-geometry paper's setting, beside its C++ reference.

``[FNNT22]`` is V. Feldman, J. Nelson, H. Nguyen, K. Talwar, *Private Frequency Estimation
via Projective Geometry*, ICML 2022 (arXiv:2203.00194).  Its experiments time the server's
full-domain decoding of n = 10^4 reports at k = 3,307,948 (= 149^3 - 1) and ε = 5 for its
C++ implementations of randomized response (RR), blocked Hadamard response (BHR), recursive
Hadamard response (RHR), hybrid PGR (HPGR, q = 3), PGR and PI-RAPPOR.

For each oracle of this project at that setting (GRR for RR, SS, BHR, RHR, PI-RAPPOR, and
PGR / HPGR when registered: they are looked up by name at run time), n users with values
drawn uniformly (fixed seed) are perturbed once (untimed), one small decode warms any JIT
up, then ``oracle.estimate(reports)`` (every value of the domain) is timed: the best of up
to 5 runs while they take under 2 s in all.  Beside it: the figure published in [FNNT22]
and the reference code re-measured on a 2-core machine like this one (a range over runs),
and the ratio reference ÷ ours (above 1: ours is faster).  An oracle whose reports at this
k do not fit the memory budget (:mod:`ldp.budget`) gets a row that says so.

Beside each decode, its *floor*: the bytes the decode must touch at least (the n reports
read once, ``report_bytes(n)``, and the k float64 estimates written once) over the memory
bandwidth of a streaming copy measured in the same run (:func:`bandwidth`), so the
distance to the machine's limit is visible for every oracle.

A second table times subset selection's decode at n = 1,000, k = 22,000, ε = 4 against the
decode it replaced (``previous_column_sums``: unpack the n x k bits, then sum; kept here
verbatim for the comparison), both on the same reports, checking the counts are equal.

``python -m benchmarks --only decode_reference [--quick]`` (about a minute; ``--quick``
times one run each and skips SS at k = 3,307,948, whose packed reports take 4.1 GB); the
tables also land in
``results/bench/decode_reference.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from benchmarks.kernel import machine
from benchmarks.oracles import RESULTS, markdown_table
from ldp import registry
from ldp.oracles import SS
from ldp.oracles.unary import CHUNK, column_sums
from ldp.validation import ParameterError

N, K, EPSILON = 10_000, 3_307_948, 5.0
SEED = 2022
PUBLISHED = "[FNNT22] (arXiv:2203.00194), its decoding times at n = 10^4, k = 3,307,948, ε = 5"
REMEASURED = "the same C++ code re-measured on a 2-core machine (range over runs)"

#: (our oracle, the reference's name, its published seconds, re-measured (low, high) s).
ROWS: tuple[tuple[str, str, float | None, tuple[float, float] | None], ...] = (
    ("GRR", "RR", 0.015, (0.021, 0.032)),
    ("SS", "-", None, None),
    ("BHR", "BHR", 0.64, (0.73, 0.95)),
    ("RHR", "RHR", 1.2, (1.3, 2.0)),
    ("HPGR", "HPGR (q = 3)", 5.9, (2.3, 2.8)),
    ("PGR", "PGR", 36.9, (11.9, 12.9)),
    ("PIRAPPOR", "PI-RAPPOR", 1894.0, None),
)
#: Extra parameters of the reference's variant (HPGR with q = 3), when the class has them.
VARIANTS = {"HPGR": {"q": 3}}


#: The array a streaming copy moves to measure the memory bandwidth: well beyond the caches.
STREAM_BYTES = 2**28


def bandwidth(runs: int = 3, size: int = STREAM_BYTES) -> float:
    """Bytes a second this machine moves in a streaming copy of ``size`` bytes (read and
    write both counted), the best of ``runs``."""
    source = np.ones(size // 8)
    target = np.empty_like(source)
    best, _ = best_time(lambda: np.copyto(target, source), runs, budget=float("inf"))
    return 2 * source.nbytes / best


def decode_bytes(report_bytes: int, k: int) -> int:
    """The least a full-domain decode touches: the reports read once and the k float64
    estimates written once."""
    return report_bytes + 8 * k


def _floor(touched: int, speed: float, ours: float) -> tuple[str, str]:
    """The floor's seconds and ours over it, as cells."""
    floor = touched / speed
    return _seconds(floor), f"{ours / floor:.3g}x"


def best_time(run: Callable[[], object], runs: int, budget: float = 2.0) -> tuple[float, int]:
    """The least wall time of ``run()`` over up to ``runs`` calls while under ``budget`` s."""
    times: list[float] = []
    while len(times) < runs and sum(times) < budget:
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times), len(times)


def build(name: str):
    """Our oracle ``name`` at (ε, k), or a string saying why there is none."""
    try:
        entry = registry.get(name, "oracle")
    except registry.RegistryError:
        return "not registered in this checkout"
    fields = {f.name for f in registry.parameters(entry.cls)}
    extra = {k: v for k, v in VARIANTS.get(name, {}).items() if k in fields}
    try:
        return entry.cls(epsilon=EPSILON, domain_size=K, **extra)
    except ParameterError as error:
        return f"does not fit at k = {K:,}: {error}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.3g} ms" if value < 1 else f"{value:.3g} s"


def _ratio(reference: float | None, ours: float) -> str:
    return "-" if reference is None else f"{reference / ours:,.3g}x"


def reference_rows(quick: bool, speed: float, seed: int = SEED) -> list[list[str]]:
    """One row per oracle: ours, its floor at ``speed`` bytes a second, the reference's
    published and re-measured, the ratios."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, K, size=N)
    cells = []
    for name, reference, published, remeasured in ROWS:
        low, high = remeasured if remeasured else (None, None)
        oracle = build(name)
        if isinstance(oracle, str):
            print(f"decode_reference: {name}: {oracle}")
            cells.append(
                [name, reference, "-", "-", "-", "-", _seconds(published), "-", "-", oracle]
            )
            continue
        if quick and name == "SS":  # 4.1 GB of packed reports at this k
            cells.append(
                [name, reference, "-", "-", "-", "-", _seconds(published), "-", "-", "--quick"]
            )
            continue
        try:
            reports = oracle.perturb(values, rng)
        except ParameterError as error:
            note = f"reports do not fit at k = {K:,}: {error}"
            print(f"decode_reference: {name}: {note}")
            cells.append([name, reference, "-", "-", "-", "-", _seconds(published), "-", "-", note])
            continue
        warm = values[:100]
        oracle.estimate(oracle.perturb(warm, rng))  # compile any JIT kernel, untimed
        ours, runs = best_time(lambda o=oracle, r=reports: o.estimate(r), 1 if quick else 5)
        remeasured_cell = "-" if low is None else f"{_seconds(low)} – {_seconds(high)}"
        ratio_remeasured = "-" if low is None else f"{low / ours:,.3g}–{high / ours:,.3g}x"
        floor, over = _floor(decode_bytes(oracle.report_bytes(N), K), speed, ours)
        cells.append(
            [
                name,
                reference,
                _seconds(ours),
                floor,
                over,
                str(runs),
                _seconds(published),
                remeasured_cell,
                f"{_ratio(published, ours)} / {ratio_remeasured}",
                repr(oracle),
            ]
        )
    return cells


def previous_column_sums(packed: np.ndarray, d: int) -> np.ndarray:
    """The decode SS used before: unpack a chunk of rows to n x d bits, then sum them."""
    rows = max(1, CHUNK // d)
    totals = np.zeros(d, dtype=np.int64)
    for start in range(0, packed.shape[0], rows):
        bits = np.unpackbits(packed[start : start + rows], axis=1, count=d)
        totals += bits.sum(axis=0, dtype=np.int64)
    return totals


def subset_rows(quick: bool, speed: float, seed: int = SEED) -> list[list[str]]:
    """SS's support counting at n = 1,000, k = 22,000, ε = 4: previous and now, same
    reports, and the floor (the packed reports read, k counts written) at ``speed``."""
    n, d = 1000, 22_000
    oracle = SS(epsilon=4.0, domain_size=d)
    rng = np.random.default_rng(seed)
    bits = oracle.perturb(rng.integers(0, d, n), rng).bits
    same = np.array_equal(previous_column_sums(bits, d), column_sums(bits, d))
    runs = 1 if quick else 10
    before, _ = best_time(lambda: previous_column_sums(bits, d), runs)
    now, count = best_time(lambda: column_sums(bits, d), runs)
    floor, over = _floor(decode_bytes(bits.nbytes, d), speed, now)
    return [
        [
            f"{n:,}",
            f"{d:,}",
            f"{oracle.omega}",
            _seconds(before),
            _seconds(now),
            floor,
            over,
            f"{before / now:.3g}x",
            str(count),
            "yes" if same else "NO",
        ]
    ]


def bench(quick: bool, peers: bool) -> None:
    """Print both tables and write them to ``results/bench/decode_reference.md``."""
    start = time.perf_counter()
    speed = bandwidth()
    first = markdown_table(
        [
            "oracle",
            "reference",
            "ours",
            "floor",
            "ours / floor",
            "runs",
            "published",
            "re-measured",
            "ratio (published / re-measured)",
            "note",
        ],
        reference_rows(quick, speed),
    )
    second = markdown_table(
        ["n", "k", "ω", "previous", "now", "floor", "now / floor", "ratio", "runs", "same counts"],
        subset_rows(quick, speed),
    )
    text = (
        f"Full-domain decode, n = {N:,}, k = {K:,}, ε = {EPSILON:g} (best of the runs); "
        f"floor: the reports read and the k estimates written at {speed / 1e9:.1f} GB/s, "
        "a streaming copy's bandwidth measured in this run.\n"
        f"published: {PUBLISHED}; re-measured: {REMEASURED}.\n\n{first}\n\n"
        f"SS decode (support counts), previous vs now, ε = 4:\n\n{second}\n\n"
        f"{machine()}; {time.perf_counter() - start:.0f} s in all."
    )
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / ("decode_reference-quick.md" if quick else "decode_reference.md")).write_text(
        text + "\n"
    )
