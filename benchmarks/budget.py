"""What every budgeted operation really costs per unit it counts.

Each protocol checks a call against the budget (:mod:`ldp.budget`) with an estimate of
its largest arrays (bytes) and of its work (elementary operations), before it starts.  An
estimate is only as good as its unit: a check that counts 32 bytes a value while the call
takes 200 lets a call through that needs six times the budget, and an operation that
takes 40 ns makes the default 2^34 operations a quarter of an hour, not "about a minute".

Here each budgeted site of the library (every function that calls ``check_memory``,
``check_operations``, ``check_rounds`` or ``check_query_limit``) is exercised by one or
more cases: a call of realistic size, run once under :func:`ldp.budget.recorded` and
timed, then once more (fresh objects) under ``tracemalloc``.  The table puts beside what
the site counted the call's measured peak (its ratio to the count: below 1 the estimate
is an upper bound, as promised) and its seconds (nanoseconds per counted operation, and
what the default operation budget would then take).

``python -m benchmarks --only budget`` prints the table; ``python -m benchmarks.budget
--write docs/limits.md`` replaces the generated table there (between its markers);
``--smoke`` runs every case at a tiny size (what the test suite does, to check that every
site has a case).
"""

from __future__ import annotations

import argparse
import ast
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldp import budget

REPO = Path(__file__).resolve().parent.parent
#: The packages whose budget checks the table covers.
ROOTS = ("ldp", "experiments")
#: The functions of :mod:`ldp.budget` a site calls.
CHECKS = frozenset({"check_memory", "check_operations", "check_rounds", "check_query_limit"})
#: Calls shorter than this are their fixed costs: no rate per operation is read from them.
OVERHEAD_SECONDS = 0.5
BEGIN, END = "<!-- budget-costs: begin -->", "<!-- budget-costs: end -->"


def budget_sites(roots: Iterable[Path], base: Path = REPO) -> set[str]:
    """Every ``module:qualified name`` of a function that calls one of :data:`CHECKS`
    (as ``budget.check_...`` or a bare name), read from the source (:mod:`ast`); the
    functions of ``ldp/budget.py`` itself are left out (they are the checks)."""
    found: set[str] = set()
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            module = ".".join(path.relative_to(base).with_suffix("").parts)
            if module.endswith(".__init__"):
                module = module.removesuffix(".__init__")
            if module == "ldp.budget":
                continue
            _visit(ast.parse(path.read_text(encoding="utf-8")), module, [], found)
    return found


def _visit(node: ast.AST, module: str, scope: list[str], found: set[str]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            _visit(child, module, [*scope, child.name], found)  # its __qualname__'s parts
            continue
        if isinstance(child, ast.Call):
            func = child.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in CHECKS and scope:
                found.add(f"{module}:{'.'.join(scope)}")
        _visit(child, module, scope, found)


@dataclass(frozen=True)
class Case:
    """One budgeted call: ``prepare(smoke)`` builds its inputs (not timed) and returns the
    call to measure."""

    label: str
    prepare: Callable[[bool], Callable[[], object]]


@dataclass(frozen=True)
class Measured:
    """A case's charges (by site and kind, the largest of each) and its measured cost."""

    case: str
    charges: dict[tuple[str, str], budget.Charge]
    seconds: float
    peak_bytes: int


def clear_caches() -> None:
    """Empty every ``functools`` cache of the library, as in a fresh process: a cached
    result would skip the call's checks and work (the shuffle bounds are cached)."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "ldp" or name.startswith("ldp.")):
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and hasattr(value, "cache_info"):
                value.cache_clear()


def traced_peak(call: Callable[[], object]) -> int:
    """The peak bytes ``call`` allocates while it runs, numpy's arrays included."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(case: Case, smoke: bool = False, traced: bool = True) -> Measured:
    """The case's call once timed under :func:`ldp.budget.recorded`, once under tracemalloc
    (unless ``traced`` is False: the peak is then 0), each from empty caches
    (:func:`clear_caches`) and fresh inputs."""
    clear_caches()
    call = case.prepare(smoke)
    if not smoke:  # a steady heap for the timing; a smoke run reads the charges only
        gc.collect()
    with budget.recorded() as charges:
        started = time.perf_counter()
        call()
        seconds = time.perf_counter() - started
    peak = 0
    if traced:
        clear_caches()
        call = case.prepare(smoke)
        gc.collect()
        peak = traced_peak(call)
    largest: dict[tuple[str, str], budget.Charge] = {}
    for charge in charges:
        key = (charge.site, charge.kind)
        if key not in largest or charge.amount > largest[key].amount:
            largest[key] = charge
    return Measured(case.label, largest, seconds, peak)


# ----------------------------------------------------------------------------- the cases
def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _values(n: int, d: int, seed: int = 1) -> np.ndarray:
    return _rng(seed).integers(0, d, size=n)


def _oracle(name: str, **params):
    from ldp import registry

    return registry.get(name).cls(**params)


def _perturb(name: str, d: int = 1024, **params) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        oracle = _oracle(name, epsilon=1.0, domain_size=d, **params)
        values = _values(2_000 if smoke else 200_000, d)
        return lambda: oracle.perturb(values, _rng())

    return Case(f"{name}.perturb, n = 2·10^5, d = {d}", prepare)


def _reports(name: str, n: int, d: int, **params):
    oracle = _oracle(name, epsilon=1.0, domain_size=d, **params)
    return oracle, oracle.perturb(_values(n, d), _rng())


def _full_domain_estimate(smoke: bool) -> Callable[[], object]:
    d = 2**12 if smoke else 2**22
    oracle, reports = _reports("GRR", 10_000, d)
    return lambda: oracle.estimate(reports)


def _probabilities(name: str, d: int, seeds: int = 0) -> Case:
    """``report_probabilities(3)``; a hashed oracle's for ``seeds`` seeds (its rows)."""

    def prepare(smoke: bool) -> Callable[[], object]:
        oracle = _oracle(name, epsilon=1.0, domain_size=64 if smoke else d)
        if not seeds:
            return lambda: oracle.report_probabilities(3)
        drawn = _rng().integers(0, 2**63, size=16 if smoke else seeds, dtype=np.uint64)
        return lambda: oracle.report_probabilities(3, drawn)

    rows = f", {seeds} seeds" if seeds else ""
    return Case(f"{name}.report_probabilities, d = {d}{rows}", prepare)


def _log_likelihoods(name: str, n: int, d: int, **params) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        oracle, reports = _reports(name, 200 if smoke else n, 64 if smoke else d, **params)
        return lambda: oracle.log_likelihoods(reports)

    return Case(f"{name}.log_likelihoods, n = {n}, d = {d}", prepare)


def _estimate(name: str, n: int, d: int, candidates: int, **params) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        size = min(candidates, 64) if smoke else candidates
        oracle, reports = _reports(name, 500 if smoke else n, d, **params)
        chosen = np.arange(size)
        return lambda: oracle.estimate(reports, chosen)

    return Case(f"{name}.estimate, n = {n}, {candidates} candidates of d = {d}", prepare)


def _construct(label: str, build: Callable[[bool], object]) -> Case:
    return Case(label, lambda smoke: lambda: build(smoke))


def _rounds(name: str, n: int, tau: int, d: int = 64) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        oracle = _oracle(name, epsilon=1.0, domain_size=d)
        rounds = 4 if smoke else tau
        values = _rng(2).integers(0, d, size=(10 if smoke else n, rounds))
        return lambda: oracle.perturb_rounds(values, _rng())

    return Case(f"{name}.perturb_rounds, {n} users x {tau} rounds", prepare)


def _sequence(name: str, n: int, tau: int, d: int) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        oracle = _oracle(name, epsilon=1.0, domain_size=d)
        users = 50 if smoke else n
        rounds = oracle.perturb_rounds(_rng(2).integers(0, d, size=(users, tau)), _rng())
        return lambda: oracle.sequence_log_likelihoods(rounds)

    return Case(f"{name}.sequence_log_likelihoods, {n} users x {tau} rounds, d = {d}", prepare)


def _hcms_simulate(smoke: bool) -> Callable[[], object]:
    oracle = _oracle("HCMS", epsilon=1.0, domain_size=1024)
    counts = np.bincount(_values(1_000 if smoke else 2_000_000, 1024), minlength=1024)
    return lambda: oracle.simulate(counts, _rng())


def _flh_moments(smoke: bool) -> Callable[[], object]:
    oracle = _oracle("FLH", epsilon=1.0, domain_size=4096, k_prime=100 if smoke else 1000)
    pool = oracle.draw_pool(_rng()) if hasattr(oracle, "draw_pool") else None
    counts = np.bincount(_values(10_000, 200), minlength=4096)  # 200 values held
    candidates = np.arange(64 if smoke else 1024)
    return lambda: oracle.conditional_moments(pool, counts, candidates)


def _ss_simulate(smoke: bool) -> Callable[[], object]:
    d = 256 if smoke else 2**16
    oracle = _oracle("SS", epsilon=1.0, domain_size=d)
    counts = np.bincount(_values(100_000, d), minlength=d)
    return lambda: oracle.simulate(counts, _rng(), candidates=np.arange(min(d, 1024)))


def _rappor_solver(smoke: bool) -> Callable[[], object]:
    d = 32 if smoke else 1000
    oracle = _oracle("RAPPOR", epsilon=1.0, domain_size=d)
    return lambda: oracle._solver


def _shuffle(method: str) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        from ldp.theory import shuffle

        n = 10**3 if smoke else 10**7
        return lambda: shuffle.shuffle_epsilon(1.0, n, 1e-6, method)

    return Case(f"shuffle_epsilon, {method}, ε0 = 1, n = 10^7", prepare)


def _sum_bits(smoke: bool) -> Callable[[], object]:
    from ldp.io import rappor as files
    from ldp.oracles.rappor.protocol import RapporReports

    m, k = (8, 16) if smoke else (256, 1024)
    n = 1_000 if smoke else 200_000
    rng = _rng()
    bits = rng.integers(0, 2, size=(n, k), dtype=np.uint8)
    reports = RapporReports(rng.integers(0, m, size=n), np.packbits(bits, axis=1), k)
    return lambda: files.sum_bits(reports, m)


def _mean(name: str, method: str) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        protocol = _oracle(name, epsilon=1.0)
        values = _rng(3).uniform(-1, 1, size=2_000 if smoke else 1_000_000)
        if method == "variance":
            return lambda: protocol.variance(values)
        return lambda: getattr(protocol, method)(values, _rng())

    return Case(f"{name}.{method}, n = 10^6", prepare)


def _heavy(name: str, engine: str, n: int = 200_000, **params) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        from ldp.datasets import load

        data = load("zipf", n=2_000 if smoke else n, m=32, seed=1)
        # built in the call: its query limit is checked at construction
        return lambda: _oracle(name, epsilon=2.0, k=16, m=32, **params).run(
            data, _rng(), engine=engine
        )

    extra = ", ".join(f"{key} = {value}" for key, value in params.items())
    return Case(
        f"{name}.run ({engine}{', ' + extra if extra else ''}), n = {n:.0e}, m = 32", prepare
    )


def _sets(name: str, engine: str, n: int = 200_000, width: int = 8, **params) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        step = 1024 // width
        size = (2_000 if smoke else n, width)
        rows = np.arange(width) * step + _rng(4).integers(0, step, size=size)
        protocol = _oracle(name, epsilon=1.0, domain_size=1024, **params)
        return lambda: protocol.top_items(rows, 16, _rng(), engine=engine)

    extra = "".join(f", {key} = {value}" for key, value in params.items())
    return Case(f"{name}.top_items ({engine}{extra}), n = {n:.0e}, {width} items a set", prepare)


def _preflight(field: str) -> Case:
    def prepare(smoke: bool) -> Callable[[], object]:
        from experiments.preflight import check_cost
        from ldp.datasets import load

        size = 10_000 if smoke else 4_000_000
        dataset: dict[str, object] = {"name": "zipf"}
        options: dict[str, object] = {}
        if field == "n":
            dataset["n"] = size
            work = lambda: load("zipf", n=size, m=32, seed=1)  # noqa: E731
        elif field == "support":
            dataset["support"] = size
            work = lambda: load("zipf", n=1000, m=32, support=size, seed=1)  # noqa: E731
        else:
            options["domain_size"] = size
            oracle, reports = _reports("GRR", 10_000, size)
            work = lambda: oracle.estimate(reports)  # noqa: E731
        config = {"n_trials": 1, "dataset": dataset, "options": options}

        def call() -> object:
            check_cost([config])
            return work()

        return call

    what = {"n": "dataset.n", "support": "dataset.support", "domain": "options.domain_size"}
    return Case(f"a run's {what[field]} (data set built, or a full estimate)", prepare)


def cases() -> list[Case]:
    """Every case; each budgeted site has at least one (checked by the test suite)."""
    from ldp import registry

    oracles = [name for name in registry.protocols("oracle") if name != "RAPPOR"]
    return [
        *(_perturb(name) for name in oracles),
        _perturb("RAPPOR", d=1024),
        Case("GRR.estimate over the whole domain, d = 2^22", _full_domain_estimate),
        _probabilities("SUE", 2**20),
        _probabilities("GRR", 2**20),
        _probabilities("OLH", 2**16, seeds=100_000),
        _probabilities("PIRAPPOR", 1024),
        _log_likelihoods("GRR", 10_000, 1024),
        _log_likelihoods("SUE", 10_000, 1024),
        _log_likelihoods("SHE", 10_000, 1024),
        _log_likelihoods("RAPPOR", 10_000, 1024),
        _log_likelihoods("CMS", 10_000, 1024),
        _log_likelihoods("OLH", 10_000, 1024),
        _log_likelihoods("dBitFlip", 10_000, 1024),
        _estimate("OLH", 100_000, 2**20, 10_000),
        _estimate("FLH", 100_000, 2**20, 100_000),
        _estimate("CMS", 100_000, 2**20, 100_000),
        _estimate("HCMS", 100_000, 2**20, 100_000),
        _estimate("PIRAPPOR", 100_000, 2**20, 10_000),
        _estimate("RAPPOR", 20_000, 1000, 1000),
        _construct(
            "FLH(ε = 4, k' = 10^4): its k' x g table",
            lambda smoke: _oracle(
                "FLH", epsilon=4.0, domain_size=100, k_prime=100 if smoke else 10_000
            ),
        ),
        _construct(
            "CMS(k = 1024, m = 2^16): the sketch",
            lambda smoke: _oracle(
                "CMS", epsilon=1.0, domain_size=100, k=64 if smoke else 1024, m=2**16
            ),
        ),
        _construct(
            "HR(d = 2^22): the order-K transform",
            lambda smoke: _oracle(
                "HR", epsilon=1.0, domain_size=2**10 if smoke else 2**22
            ).estimate(np.zeros(10, dtype=np.int64), np.arange(4)),
        ),
        _construct(
            "PGR(d = 10^6): the decoder's setup",
            lambda smoke: _oracle("PGR", epsilon=1.0, domain_size=10**3 if smoke else 10**6),
        ),
        Case("HCMS.simulate, n = 2·10^6", _hcms_simulate),
        Case("FLH.conditional_moments, 1024 candidates, 200 values held, k' = 1000", _flh_moments),
        Case("SS.simulate over 1024 candidates, d = 2^16", _ss_simulate),
        Case("RAPPOR's least-squares map, d = 1000", _rappor_solver),
        _rounds("LGRR", 1000, 2000),
        _rounds("LOLOHA", 1000, 2000),
        _rounds("dBitFlip", 1000, 2000),
        _sequence("LOUE", 10_000, 10, 256),
        _sequence("LGRR", 10_000, 10, 256),
        _sequence("LOLOHA", 10_000, 10, 256),
        _shuffle("fmt_numerical"),
        _shuffle("variation_ratio"),
        Case("RAPPOR files: sum_bits, 2·10^5 reports, m = 256, k = 1024", _sum_bits),
        *(_mean(name, method) for name in ("PM",) for method in ("perturb", "simulate")),
        _mean("Hybrid", "variance"),
        _heavy("PEM", "reports", n=50_000),
        _heavy("MCM", "reports", block_encoding="channels"),
        _heavy("SPM", "reports"),
        _heavy("TreeHist", "reports"),
        _heavy("SFP", "reports"),
        _sets("PSFO", "reports"),
        _sets("PSFO", "sampled", ell=4),
        _sets("SPLIT", "reports", ell=4),
        _preflight("n"),
        _preflight("support"),
        _preflight("domain"),
    ]


# ----------------------------------------------------------------------------- the table
def _si(seconds: float) -> str:
    if seconds >= 60:
        return f"{seconds / 60:.2g} min"
    return f"{seconds:.2g} s"


def _largest(result: Measured, kind: str) -> float:
    return max((c.amount for (_, k), c in result.charges.items() if k == kind), default=0.0)


def rows(results: Sequence[Measured]) -> list[list[str]]:
    """One row per case: the sites it charged, the largest memory and operation counts
    of its checks, and what the call measured beside them."""
    out = []
    for result in results:
        if not result.charges:  # a call no check counts (GRR's perturb: its input's size)
            continue
        sites = sorted({site.split(":", 1)[1] for site, _ in result.charges})
        memory, operations = _largest(result, "memory"), _largest(result, "operations")
        row = [result.case, ", ".join(f"`{site}`" for site in sites)]
        if memory:
            ratio = result.peak_bytes / memory
            row += [
                budget.format_bytes(memory),
                budget.format_bytes(result.peak_bytes),
                f"{ratio:.2g}",
            ]
        else:
            row += ["–", budget.format_bytes(result.peak_bytes), "–"]
        if operations and result.seconds >= OVERHEAD_SECONDS:
            per_op = result.seconds / operations
            row += [
                f"{operations:.3g}",
                f"{result.seconds:.3g}",
                f"{1e9 * per_op:.2g}",
                _si(per_op * budget.DEFAULT_OPERATIONS),
            ]
        elif operations:  # a call this short is its fixed costs, not its counted work
            row += [f"{operations:.3g}", f"{result.seconds:.3g}", "–", "–"]
        else:
            row += ["–", f"{result.seconds:.3g}", "–", "–"]
        out.append(row)
    return out


def markdown(table: list[list[str]]) -> str:
    head = [
        "call",
        "budgeted at",
        "bytes counted",
        "peak measured",
        "peak ÷ count",
        "operations counted",
        "seconds",
        "ns an operation",
        "2^34 operations take",
    ]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table]
    return "\n".join(lines)


def replace_between_markers(text: str, table: str) -> str:
    """``text`` with the lines between :data:`BEGIN` and :data:`END` replaced by ``table``."""
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + table + "\n" + text[stop:]


def run(smoke: bool = False, only: Sequence[str] = (), traced: bool = True) -> list[Measured]:
    """Every case (or those whose label holds a word of ``only``), measured."""
    chosen = [c for c in cases() if not only or any(word in c.label for word in only)]
    results, failed = [], []
    for case in chosen:
        try:
            results.append(measure(case, smoke, traced))
        except Exception as error:  # every case is tried; the failures are raised together
            failed.append(f"{case.label}: {type(error).__name__}: {error}")
            print(f"  failed   {failed[-1]}", flush=True)
            continue
        print(f"  {results[-1].seconds:7.2f} s  {case.label}", flush=True)
    if failed:
        raise RuntimeError("cases failed:\n" + "\n".join(failed))
    return results


def bench(quick: bool, peers: bool) -> None:  # noqa: ARG001 - the benchmarks' signature
    print(markdown(rows(run(smoke=quick))))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.budget", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="every case at a tiny size")
    parser.add_argument("--write", type=Path, help="replace the generated table in this file")
    parser.add_argument("--only", action="append", default=[], help="cases whose label has it")
    args = parser.parse_args(argv)
    if args.write and (args.only or args.smoke):
        parser.error("--write takes the whole table at full size: drop --only and --smoke")
    table = markdown(rows(run(smoke=args.smoke, only=args.only)))
    if args.write:
        args.write.write_text(
            replace_between_markers(args.write.read_text(encoding="utf-8"), table),
            encoding="utf-8",
        )
    else:
        print(table)


if __name__ == "__main__":
    main()
