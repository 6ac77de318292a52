"""Heavy-hitter benchmark: PEM, SPM, MCM at paper scale, and PEM against pure-ldp's (issue 4).

Two tables:

1. **Paper scale** (sampled engine): one trial each of PEM (its optimizer's configuration),
   SPM and MCM in their improved and original variants, on the exponential data set with
   n = 10^6, m = 64, ε = 2, k = 16, query limit 2^20.  Seconds (best of several while
   cheap, :func:`benchmarks.peers.best_of`), F1 of the first run, and memory: each row runs
   in a fresh subprocess that reports its ``ru_maxrss`` and, from one extra untimed run
   under :mod:`tracemalloc`, the peak of the memory the run itself allocated.
2. **Against pure-ldp's PEM** on the same data: the project's Zipf data set (s = 1.1,
   distinct random m-bit values) at (n, m) = (10^5, 32), (10^5, 16) and (10^6, 32),
   ε = 4, k = 16, up to 10 runs per row.  pure-ldp runs its ``PEMClient``/``PEMServer``
   with its count-mean sketch oracle (``CMSClient``/``CMSServer``) in its own environment
   (:mod:`benchmarks.peers`); ``ldp`` runs PEM with the same shape (γ, η, kept
   candidates) through the reports engine (the real per-user protocol) and, for
   reference, the sampled engine, and also at the optimizer's default configuration.

Run it as ``python -m benchmarks --only heavy_hitters [--quick]``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from benchmarks import peers as peer_envs
from benchmarks.oracles import RESULTS, _number, _users, _versions, markdown_table, publish
from benchmarks.peers import RESULT_MARKER, Peer, PeerUnavailable, best_of

PURE_LDP = next(peer for peer in peer_envs.PEERS if peer.name == "pure-ldp")

#: Paper-scale rows: (protocol, variant or None for PEM).
PAPER_PROTOCOLS: tuple[tuple[str, str | None], ...] = (
    ("PEM", None),
    ("SPM", "improved"),
    ("SPM", "original"),
    ("MCM", "improved"),
    ("MCM", "original"),
)


@dataclass(frozen=True)
class Workload:
    """What to run.  The defaults are the issue's workload; ``quick()`` a smoke check."""

    k: int = 16
    query_limit: int = 2**20
    # --- table 1: paper scale, sampled engine
    paper_dataset: str = "exponential"
    paper_n: int = 10**6
    paper_m: int = 64
    paper_epsilon: float = 2.0
    # --- table 2: against pure-ldp's PEM
    #: the side-by-side points: (n users, m bits)
    peer_points: tuple[tuple[int, int], ...] = ((10**5, 32), (10**5, 16), (10**6, 32))
    peer_epsilon: float = 4.0
    zipf_exponent: float = 1.1
    #: PEM's shape per m for pure-ldp and for ldp's "same shape" rows: (γ, η).  pure-ldp's
    #: ``start_length`` is γ and ``fragment_length`` η; (m - γ) must be a multiple of η.
    shapes: dict[int, tuple[int, int]] = field(default_factory=lambda: {32: (4, 7), 16: (4, 6)})
    #: pure-ldp's count-mean sketches: (hash functions k, width m), one row each
    sketches: tuple[tuple[int, int], ...] = ((32, 1024), (64, 2048))
    runs: int = 10  #: runs per row of table 2 ...
    peer_budget_s: float = 120.0  #: ... but a peer row starts no run after this long
    ldp_budget_s: float = 60.0  #: ... nor does an ldp row
    data_seed: int = 2018
    mechanism_seed: int = 1
    peers: tuple[Peer, ...] = (PURE_LDP,)
    install_peers: bool = True
    #: table 1 rows in fresh subprocesses (memory per row); False runs them in-process
    isolate: bool = True

    def __post_init__(self) -> None:
        for _, m in self.peer_points:
            gamma, eta = self.shapes[m]
            if (m - gamma) % eta:  # pure-ldp's last prefixes would be longer than m
                raise ValueError(f"shapes[{m}]: m - gamma must be a multiple of eta")

    @classmethod
    def quick(cls, **changes) -> Workload:
        """Small n, two runs a row; the peer only if its environment exists already."""
        base = cls(
            paper_n=10**5,
            peer_points=((2_000, 16),),
            sketches=((32, 1024),),
            runs=2,
            peer_budget_s=5.0,
            ldp_budget_s=5.0,
            install_peers=False,
        )
        return replace(base, **changes)


@dataclass
class PaperRow:
    """One protocol at paper scale."""

    protocol: str
    variant: str | None
    seconds: float | None = None
    runs: int = 0
    f1: float | None = None
    queries: int | None = None
    peak_mb: float | None = None
    delta_mb: float | None = None
    traced_mb: float | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return self.protocol if self.variant is None else f"{self.protocol} ({self.variant})"


@dataclass
class PeerRow:
    """One implementation and configuration on the side-by-side workload at one m."""

    implementation: str
    m: int
    config: str
    seconds: list[float] = field(default_factory=list)
    f1: list[float] = field(default_factory=list)
    ratio: float | None = None  #: mean seconds ÷ ldp reports at the same shape
    note: str = ""
    role: str = ""  #: "peer", "ours" (the reference row), or "" (other ldp rows)
    n: int = 0  #: users

    @property
    def mean_s(self) -> float | None:
        return statistics.fmean(self.seconds) if self.seconds else None

    @property
    def mean_f1(self) -> float | None:
        return statistics.fmean(self.f1) if self.f1 else None

    @property
    def std_f1(self) -> float | None:
        return statistics.stdev(self.f1) if len(self.f1) > 1 else None


def _progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


# --- table 1: paper scale ------------------------------------------------------------------


def make_protocol(name: str, variant: str | None, epsilon: float, k: int, m: int, **options):
    from ldp.heavy_hitters import PROTOCOLS

    if variant is not None:
        options["variant"] = variant
    return PROTOCOLS[name](epsilon=epsilon, k=k, m=m, **options)


def measure_paper(spec: dict) -> dict:
    """Time one protocol on the paper-scale data (sampled engine); memory as the doc says."""
    from ldp.datasets import load
    from ldp.metrics import f1

    data = load(spec["dataset"], n=spec["n"], m=spec["m"], seed=spec["data_seed"])
    data.histogram()  # cached on the dataset: part of loading, not of the run
    truth = data.top_k(spec["k"])
    protocol = make_protocol(
        spec["protocol"],
        spec["variant"],
        spec["epsilon"],
        spec["k"],
        spec["m"],
        query_limit=spec["query_limit"],
    )
    rng = np.random.default_rng(np.random.SeedSequence(spec["seed"]))
    protocol.run(data, rng)  # warm-up: first-call costs, compiled kernels

    def run():
        t0 = time.perf_counter()
        result = protocol.run(data, rng)
        return 0.0, time.perf_counter() - t0, result

    start_kib = peer_envs.peer_rss_kib()
    timed = best_of(run)
    result = timed.pop("first")
    peak_kib = peer_envs.peer_rss_kib()
    tracemalloc.start()
    protocol.run(data, rng)
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "seconds": timed["estimate_s"],
        "runs": timed["repeats"],
        "f1": f1(truth, result.identified),
        "queries": int(result.diagnostics.get("oracle_queries", 0)) or None,
        "start_kib": start_kib,
        "peak_kib": peak_kib,
        "traced_bytes": traced,
    }


def _run_ldp_row(spec: dict, isolate: bool, timeout: float = 900.0) -> dict:
    if not isolate:
        return measure_paper(spec)
    command = [sys.executable, "-m", "benchmarks.heavy_hitters", "--row", json.dumps(spec)]
    return peer_envs.run_subprocess(command, timeout)


def paper_rows(work: Workload) -> list[PaperRow]:
    rows = []
    for name, variant in PAPER_PROTOCOLS:
        row = PaperRow(name, variant)
        spec = {
            "protocol": name,
            "variant": variant,
            "dataset": work.paper_dataset,
            "n": work.paper_n,
            "m": work.paper_m,
            "epsilon": work.paper_epsilon,
            "k": work.k,
            "query_limit": work.query_limit,
            "data_seed": work.data_seed,
            "seed": work.mechanism_seed,
        }
        try:
            result = _run_ldp_row(spec, work.isolate)
        except RuntimeError as error:
            row.note = f"failed: {error}"
        else:
            row.seconds, row.runs, row.f1 = result["seconds"], result["runs"], result["f1"]
            row.queries = result["queries"]
            row.peak_mb = result["peak_kib"] / 1024
            row.delta_mb = (result["peak_kib"] - result["start_kib"]) / 1024
            row.traced_mb = result["traced_bytes"] / 2**20
        seconds = "-" if row.seconds is None else f"{row.seconds:.3g} s"
        _progress(f"{row.label:16s} n={work.paper_n:,d} {seconds} {row.note}")
        rows.append(row)
    return rows


# --- table 2: against pure-ldp ---------------------------------------------------------------


def side_data(work: Workload, n: int, m: int):
    """The side-by-side data set: n users, m bits (the project's Zipf loader, s = zipf_exponent)."""
    from ldp.datasets import load

    return load("zipf", n=n, m=m, s=work.zipf_exponent, seed=work.data_seed)


def _shape_note(config) -> str:
    etas = ",".join(str(e) for e in config.etas)
    kept = sorted(set(config.candidate_sizes))
    kept_text = str(kept[0]) if len(kept) == 1 else "/".join(map(str, config.candidate_sizes))
    return f"γ={config.gamma} η={etas} g={config.g} keep {kept_text}, {config.queries:,d} queries"


def ldp_side_rows(work: Workload, data, n: int, m: int) -> list[PeerRow]:
    """ldp's PEM at the peer's shape and at the optimizer's default, both engines."""
    from ldp.datasets import Dataset
    from ldp.heavy_hitters import PEM
    from ldp.metrics import f1

    gamma, eta = work.shapes[m]
    options = {"epsilon": work.peer_epsilon, "k": work.k, "m": m}
    configs = {
        "same shape": PEM(**options, gamma=gamma, eta=eta),
        f"optimizer, limit 2^{work.query_limit.bit_length() - 1}": PEM(
            **options, query_limit=work.query_limit, n_hint=n
        ),
    }
    truth = data.top_k(work.k)
    warm = Dataset(name="warm-up", values=data.values[:2_000], m=m, source="synthetic")
    rows = []
    for engine in ("reports", "sampled"):
        for label, pem in configs.items():
            same = label == "same shape"
            row = PeerRow(
                f"ldp PEM {engine}",
                m,
                f"{label}: {_shape_note(pem.config)}",
                role="ours" if same and engine == "reports" else "",
                n=n,
            )
            rng = np.random.default_rng(np.random.SeedSequence(work.mechanism_seed, spawn_key=(m,)))
            pem.run(warm, rng, engine=engine)  # warm-up: compiled kernels, first calls
            started = time.perf_counter()
            while len(row.seconds) < work.runs and (
                not row.seconds or time.perf_counter() - started < work.ldp_budget_s
            ):
                t0 = time.perf_counter()
                result = pem.run(data, rng, engine=engine)
                row.seconds.append(time.perf_counter() - t0)
                row.f1.append(f1(truth, result.identified))
            _progress(
                f"{row.implementation:16s} n={n:,d} m={m} {row.mean_s:.3g} s/run, "
                f"F1 {row.mean_f1:.3f}"
            )
            rows.append(row)
    return rows


def _drive_pure_ldp(spec: dict) -> dict:
    """pure-ldp's PEM with its CMS oracle, ``spec['runs']`` runs (inside the peer's env).

    Per run: fresh client and server, ``privatise`` then ``aggregate`` per user (no reports
    held), ``find_heavy_hitters(k)``.  Values become m-character bit strings (pure-ldp's
    default binary alphabet; the sketch hashes the prefix strings) before the timing.
    """
    import random

    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
    from pure_ldp.heavy_hitters.prefix_extending import PEMClient, PEMServer

    m, epsilon = spec["m"], spec["epsilon"]
    strings = [format(int(value), f"0{m}b") for value in np.load(spec["values"])]
    hashes, width = spec["sketch"]

    def run(users: list[str], seed: int) -> tuple[float, list[int]]:
        random.seed(seed)
        np.random.seed(seed)  # noqa: NPY002 - pure-ldp draws from the global generators
        t0 = time.perf_counter()
        server_oracle = CMSServer(epsilon, hashes, width)
        client_oracle = CMSClient(epsilon, server_oracle.get_hash_funcs(), width)
        client = PEMClient(epsilon, spec["gamma"], m, spec["eta"], fo_client=client_oracle)
        server = PEMServer(epsilon, spec["gamma"], m, spec["eta"], fo_server=server_oracle)
        for user in users:
            server.aggregate(client.privatise(user))
        found, _ = server.find_heavy_hitters(k=spec["k"])
        return time.perf_counter() - t0, [int(bits, 2) for bits in found]

    run(strings[:100], spec["seed"] + 10**6)  # warm-up
    seconds, identified = [], []
    started = time.perf_counter()
    while len(seconds) < spec["runs"] and (
        not seconds or time.perf_counter() - started < spec["budget_s"]
    ):
        took, found = run(strings, spec["seed"] + len(seconds))
        seconds.append(took)
        identified.append(found)
    from importlib.metadata import version

    return {"seconds": seconds, "identified": identified, "version": version("pure-ldp")}


def peer_side_rows(work: Workload, data, n: int, m: int, scratch: Path) -> list[PeerRow]:
    """pure-ldp's PEM, one row per sketch size, or a row saying why it did not run."""
    from ldp.metrics import f1

    gamma, eta = work.shapes[m]
    truth = data.top_k(work.k)
    values_path = scratch / f"zipf-n{n}-m{m}.npy"
    np.save(values_path, np.asarray(data.values))
    rows = []
    for peer in work.peers:
        try:
            python = peer_envs.ensure_peer(peer, install=work.install_peers)
        except PeerUnavailable as error:
            rows.append(PeerRow(peer.name, m, "-", note=str(error), role="peer", n=n))
            _progress(f"{peer.name:16s} n={n:,d} m={m} {error}")
            continue
        for hashes, width in work.sketches:
            config = (
                f"CMS k={hashes} w={width}, γ={gamma} η={eta} g={(m - gamma) // eta} keep {work.k}"
            )
            row = PeerRow(f"{peer.name} PEM", m, config, role="peer", n=n)
            spec = {
                "m": m,
                "epsilon": work.peer_epsilon,
                "k": work.k,
                "gamma": gamma,
                "eta": eta,
                "sketch": [hashes, width],
                "runs": work.runs,
                "budget_s": work.peer_budget_s,
                "seed": work.mechanism_seed,
                "values": str(values_path),
            }
            command = [
                str(python),
                "-m",
                "benchmarks.heavy_hitters",
                "--drive-pure-ldp",
                json.dumps(spec),
            ]
            try:
                result = peer_envs.run_subprocess(command, 4 * work.peer_budget_s + 300)
            except RuntimeError as error:
                row.note = f"failed: {error}"
            else:
                row.seconds = result["seconds"]
                row.f1 = [
                    f1(truth, np.asarray(found, dtype=np.uint64)) for found in result["identified"]
                ]
                row.note = f"pure-ldp {result['version']}"
                _progress(
                    f"{row.implementation:16s} n={n:,d} m={m} {row.mean_s:.3g} s/run, "
                    f"F1 {row.mean_f1:.3f}"
                )
            rows.append(row)
    return rows


def fill_ratios(rows: Sequence[PeerRow]) -> None:
    """ratio = mean seconds ÷ the mean of ldp's reports engine at the same shape, n and m."""
    reference = {(r.n, r.m): r.mean_s for r in rows if r.role == "ours" and r.mean_s}
    for row in rows:
        if (row.n, row.m) in reference and row.mean_s is not None:
            row.ratio = row.mean_s / reference[row.n, row.m]


# --- the tables ------------------------------------------------------------------------------

PAPER_COLUMNS = (
    "implementation",
    "protocol",
    "n",
    "seconds",
    "runs",
    "F1",
    "oracle queries",
    "peak RSS MB",
    "Δ MB",
    "traced peak MB",
    "note",
)
SIDE_COLUMNS = (
    "implementation",
    "n",
    "m",
    "runs",
    "mean s",
    "x ldp reports",
    "F1 mean",
    "F1 std",
    "note",
)


def paper_cells(row: PaperRow, work: Workload) -> list[str]:
    return [
        "ldp sampled",
        row.label,
        _users(work.paper_n),
        _number(row.seconds),
        str(row.runs) if row.runs else "-",
        _number(row.f1),
        "-" if row.queries is None else f"{row.queries:,d}",
        _number(row.peak_mb, 4),
        _number(row.delta_mb, 4),
        _number(row.traced_mb),
        row.note,
    ]


def side_cells(row: PeerRow) -> list[str]:
    note = row.config if not row.note else f"{row.config}; {row.note}"
    return [
        row.implementation,
        _users(row.n) if row.n else "-",
        str(row.m),
        str(len(row.seconds)) if row.seconds else "-",
        _number(row.mean_s),
        _number(row.ratio),
        _number(row.mean_f1),
        _number(row.std_f1, 2),
        note,
    ]


def targets(work: Workload, paper: Sequence[PaperRow], side: Sequence[PeerRow]) -> list[list[str]]:
    """The issue's targets: what was measured, and whether it is met."""
    lines = []
    for row in paper:
        if row.protocol == "PEM" and row.seconds is not None:
            lines.append(
                [
                    f"one PEM trial at paper scale (sampled, n = {_users(work.paper_n)}, "
                    f"m = {work.paper_m}) well under a second",
                    f"{row.seconds:.3g} s",
                    "yes" if row.seconds < 0.5 else ("under 1 s" if row.seconds < 1 else "NO"),
                ]
            )
    ours = {(row.n, row.m): row for row in side if row.role == "ours" and row.mean_s}
    for row in side:
        if row.role != "peer" or row.mean_s is None or (row.n, row.m) not in ours:
            continue
        base = ours[row.n, row.m]
        at = f"n = {_users(row.n)}, m = {row.m}"
        speedup = row.mean_s / base.mean_s
        lines.append(
            [
                f"{at}: ldp reports engine (same shape) faster than {row.implementation}"
                f" ({row.config.split(',')[0]})",
                f"{speedup:,.1f}x ({row.mean_s:.3g} s vs {base.mean_s:.3g} s a run)",
                "yes" if speedup > 1 else "NO",
            ]
        )
        lines.append(
            [
                f"{at}: ... and at least as accurate (mean F1 over "
                f"{len(base.f1)} vs {len(row.f1)} runs)",
                f"F1 {base.mean_f1:.3f} vs {row.mean_f1:.3f}",
                "yes" if base.mean_f1 >= row.mean_f1 else "NO",
            ]
        )
    return lines


def render(
    work: Workload,
    paper: Sequence[PaperRow],
    side: Sequence[PeerRow],
    elapsed_s: float,
    load: tuple,
    peer_version: str | None,
) -> str:
    points = ", ".join(f"(n = {_users(n)}, m = {m})" for n, m in work.peer_points)
    text = [
        "# Heavy hitters: PEM, SPM and MCM at paper scale; PEM against pure-ldp's",
        "",
        f"Run: {time.strftime('%Y-%m-%d %H:%M')}, {elapsed_s:.0f} s in all; "
        f"load average {load[0]:.2f} at the start, {load[1]:.2f} at the end; "
        + _versions(work, [])
        + (f"; peer: pure-ldp {peer_version}" if peer_version else "")
        + ".",
        "",
        f"## Paper scale: {work.paper_dataset} data, n = {_users(work.paper_n)}, "
        f"m = {work.paper_m}, ε = {work.paper_epsilon:g}, k = {work.k}, query limit "
        f"2^{work.query_limit.bit_length() - 1}, sampled engine",
        "",
        markdown_table(PAPER_COLUMNS, (paper_cells(row, work) for row in paper)),
        "",
        f"## Against pure-ldp's PEM: Zipf(s = {work.zipf_exponent:g}) at {points}, "
        f"ε = {work.peer_epsilon:g}, k = {work.k}",
        "",
        markdown_table(SIDE_COLUMNS, (side_cells(row) for row in side)),
        "",
        "## The issue's targets",
        "",
        markdown_table(("target", "measured", "met"), targets(work, paper, side)),
        "",
        "## Columns",
        "",
        "- Paper scale: **seconds** is one `run(dataset, rng)` (sampled engine) timed inside",
        "  the row's own fresh process after a warm-up run, the best of **runs** (repeated",
        f"  while the runs took under {peer_envs.CHEAP_SECONDS:g} s in all, at most "
        f"{peer_envs.CHEAP_REPEATS}); **F1** is the first timed run's.",
        "  **peak RSS MB** is that process's `ru_maxrss` (interpreter, numpy, numba, the data",
        "  set); **Δ MB** the peak minus the high-water mark before the timed runs (0 when",
        "  loading the data set used more than the runs); **traced peak MB** the",
        "  `tracemalloc` peak of one more run (what the run allocates, numpy arrays",
        "  included).",
        "- Side by side: **mean s** is the mean wall time of a run (pure-ldp: new client and",
        "  server, `privatise` + `aggregate` per user, `find_heavy_hitters`; ldp:",
        "  `PEM.run(dataset, rng, engine)`), data preparation excluded; **x ldp reports**",
        "  that mean ÷ the mean of ldp's reports engine at pure-ldp's shape; **F1**",
        f"  mean and standard deviation over the runs (up to {work.runs}; a peer row starts",
        f"  no run after {work.peer_budget_s:g} s, an ldp row none after {work.ldp_budget_s:g} s).",
        "",
    ]
    return "\n".join(text)


def run(work: Workload, output: Path | None = None):
    """Run the benchmark, print its tables, write them to ``output`` (if given)."""
    started, load_start = time.perf_counter(), os.getloadavg()[0]
    paper = paper_rows(work)
    side: list[PeerRow] = []
    with tempfile.TemporaryDirectory(prefix="ldp-bench-hh-") as scratch:
        for n, m in work.peer_points:
            data = side_data(work, n, m)
            side += peer_side_rows(work, data, n, m, Path(scratch))
            side += ldp_side_rows(work, data, n, m)
    fill_ratios(side)
    version = next((row.note.split()[-1] for row in side if row.note.startswith("pure-ldp ")), None)
    elapsed = time.perf_counter() - started
    text = render(work, paper, side, elapsed, (load_start, os.getloadavg()[0]), version)
    publish(text, output)
    return paper, side, text


def bench(quick: bool, peers: bool) -> None:
    """The ``heavy_hitters`` entry of ``python -m benchmarks``: run(quick, peers)."""
    work = Workload.quick() if quick else Workload()
    if not peers:
        work = replace(work, peers=())
    run(work, RESULTS / ("heavy_hitters-quick.md" if quick else "heavy_hitters.md"))


def main(argv: Sequence[str] | None = None) -> None:
    """``--row JSON`` (one isolated paper-scale row) or ``--drive-pure-ldp JSON`` (internal)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] not in ("--row", "--drive-pure-ldp"):
        sys.exit("usage: python -m benchmarks --only heavy_hitters [--quick]")
    spec = json.loads(args[1])
    result = measure_paper(spec) if args[0] == "--row" else _drive_pure_ldp(spec)
    print(RESULT_MARKER + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
