"""Our empirical auditor (:mod:`ldp.audit`) pointed at the peers' own clients.

Each peer library runs in a private virtual environment (``.bench-venv-audit-*``, created
on first use like the benchmark's, with scipy added so that ``ldp.audit`` imports there);
this file, run there with ``--drive``, wraps each peer client's ``privatise`` as a
mechanism with ``perturb(values, rng)`` and audits it from *our* side: ``ldp`` is imported
through ``PYTHONPATH`` (the project root), never installed into the peer's environment,
and no peer is a dependency of the project.

For every client the table gives the ε it claims and the LDP-Auditor lower bound
(Arcolezi and Gambs, PETS 2024; Clopper-Pearson at α = 10^-3): a bound above the claim is
evidence, at that confidence, that the client is not ε-LDP.  Inputs are the first two
values of a d = 4 domain (Python ``int``; pure-ldp's default index map is ``x - 1``, so it
gets 1 and 2).  Events: report == v for categorical reports; bit v set / bit v' unset for
bit vectors; H_seed(v) = y ≠ H_seed(v') with the peer's own hash for local hashing; and
the generic :class:`ldp.audit.FeatureSearch` on every report.

    make audit-peers                       # or: python -m benchmarks.audit_peers
    python -m benchmarks.audit_peers --trials 50000 --figure /tmp/audit_peers.png
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
from pathlib import Path

from benchmarks.peers import Peer, PeerUnavailable, ensure_peer

ROOT = Path(__file__).resolve().parent.parent
MARKER = "AUDIT-RESULT "
D = 4


def _pure_ldp(version: str, venv: str) -> Peer:
    """A pure-ldp release in its own venv (xxhash < 4 and numpy < 2.3 are what it imports)."""
    return Peer(
        name=f"pure-ldp {version}",
        venv=ROOT / venv,
        requirements=(
            f"pure-ldp=={version}",
            "xxhash<4",
            "scikit-learn",
            "statsmodels",
            "numpy<2.3",
            "scipy",
        ),
        distribution="pure-ldp",
        module="pure_ldp.frequency_oracles",
    )


AUDIT_PEERS: dict[str, Peer] = {
    "pure-ldp 1.1.2": _pure_ldp("1.1.2", ".bench-venv-audit-pure-ldp-1.1.2"),
    "pure-ldp 1.2.0": _pure_ldp("1.2.0", ".bench-venv-audit-pure-ldp"),
    "multi-freq-ldpy 0.2.5": Peer(
        name="multi-freq-ldpy 0.2.5",
        venv=ROOT / ".bench-venv-audit-multi-freq",
        requirements=("multi-freq-ldpy==0.2.5", "xxhash<4", "scipy"),
        distribution="multi-freq-ldpy",
        module="multi_freq_ldpy.pure_frequency_oracles",
    ),
}

#: (peer, client, claimed ε) audited; RAPPOR's claim is its permanent response's
#: 2h ln((1 - f/2)/(f/2)) (Erlingsson et al., CCS 2014), h = 2 hash functions, f = 0.5.
CLIENTS: tuple[tuple[str, str, float], ...] = (
    ("pure-ldp 1.1.2", "SUE", 1.0),
    ("pure-ldp 1.1.2", "OUE", 1.0),
    ("pure-ldp 1.2.0", "GRR", 1.0),
    ("pure-ldp 1.2.0", "SUE", 1.0),
    ("pure-ldp 1.2.0", "OUE", 1.0),
    ("pure-ldp 1.2.0", "OLH", 1.0),
    ("pure-ldp 1.2.0", "HR", 1.0),
    ("pure-ldp 1.2.0", "RAPPOR", 4 * math.log(3)),
    ("pure-ldp 1.2.0", "CMS", 1.0),
    ("multi-freq-ldpy 0.2.5", "GRR", 1.0),
    ("multi-freq-ldpy 0.2.5", "SUE", 1.0),
    ("multi-freq-ldpy 0.2.5", "OUE", 1.0),
    ("multi-freq-ldpy 0.2.5", "BLH", 1.0),
    ("multi-freq-ldpy 0.2.5", "OLH", 1.0),
)


# ----------------------------------------------------------------- in the peer's venv
def _pure_ldp_client(name: str, epsilon: float):
    """(privatise(v) for v in {0, 1, ...}, report kind, hash(v, seed, g) or None)."""
    import xxhash
    from pure_ldp.frequency_oracles import direct_encoding as de
    from pure_ldp.frequency_oracles import local_hashing as lh
    from pure_ldp.frequency_oracles import unary_encoding as ue

    if name == "GRR":
        client = de.DEClient(epsilon=epsilon, d=D)
        return (lambda v: client.privatise(v + 1)), "categorical", None
    if name in ("SUE", "OUE"):
        client = ue.UEClient(epsilon=epsilon, d=D, use_oue=name == "OUE")
        return (lambda v: client.privatise(v + 1)), "bits", None
    if name == "OLH":
        client = lh.LHClient(epsilon=epsilon, d=D, use_olh=True)

        def hashed(v, seed):
            return xxhash.xxh32(str(v), seed=int(seed)).intdigest() % client.g

        return (lambda v: client.privatise(v + 1)), "hashed", (hashed, client.g)
    if name == "HR":
        from pure_ldp.frequency_oracles import hadamard_response as hr

        server = hr.HadamardResponseServer(epsilon, D)
        client = hr.HadamardResponseClient(epsilon, D, server.get_hash_funcs())
        return (lambda v: client.privatise(v + 1)), "other", None
    if name == "RAPPOR":
        from pure_ldp.frequency_oracles import rappor

        server = rappor.RAPPORServer(0.5, 64, 2, D, num_of_cohorts=1)
        client = rappor.RAPPORClient(0.5, 64, server.get_hash_funcs(), num_of_cohorts=1)
        return (lambda v: client.privatise(v + 1)), "other", None
    if name == "CMS":
        from pure_ldp.frequency_oracles import apple_cms

        server = apple_cms.CMSServer(epsilon, 4, 16)
        client = apple_cms.CMSClient(epsilon, server.get_hash_funcs(), 16)
        return (lambda v: client.privatise(v + 1)), "other", None
    raise ValueError(f"client must be a pure-ldp client we audit, got {name!r}")


def _multi_freq_client(name: str, epsilon: float):
    import xxhash
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, UE

    if name == "GRR":
        return (lambda v: GRR.GRR_Client(v, D, epsilon)), "categorical", None
    if name in ("SUE", "OUE"):
        return (lambda v: UE.UE_Client(v, D, epsilon, optimal=name == "OUE")), "bits", None
    if name in ("BLH", "OLH"):
        g = 2 if name == "BLH" else int(round(math.exp(epsilon))) + 1

        def hashed(v, seed):
            return xxhash.xxh32(str(v), seed=int(seed)).intdigest() % g

        privatise = lambda v: LH.LH_Client(v, D, epsilon, optimal=name == "OLH")  # noqa: E731
        return privatise, "hashed", (hashed, g)
    raise ValueError(f"client must be a multi-freq-ldpy client we audit, got {name!r}")


def _flatten(report):
    """One report as a flat list of numbers (vectors, tuples of vectors and scalars)."""
    import numpy as np

    if isinstance(report, tuple | list):
        return [x for part in report for x in _flatten(part)]
    return np.ravel(np.asarray(report)).tolist()


class PeerMechanism:
    """A peer's ``privatise`` as a mechanism ``ldp.audit`` accepts: ``perturb(values, rng)``.

    The peers draw from the global ``random`` and ``numpy.random`` states; they are seeded
    from ``rng`` on every call, so an audit is reproducible.
    """

    def __init__(self, privatise, kind: str):
        self.privatise, self.kind = privatise, kind

    def perturb(self, values, rng):
        import random

        import numpy as np

        np.random.seed(int(rng.integers(2**32)))  # noqa: NPY002 (the peers draw from it)
        random.seed(int(rng.integers(2**63)))
        rows = [_flatten(self.privatise(int(v))) for v in values]
        array = np.asarray(rows)
        if self.kind == "categorical":
            return array[:, 0].astype(np.int64)
        if self.kind == "hashed":  # (y, seed) -> two columns; seeds may exceed int64
            return array[:, 0].astype(np.int64), np.asarray(array[:, 1], dtype=np.uint64)
        return array.astype(np.int64) if np.all(np.mod(array, 1) == 0) else array


def _events(kind: str, hashing):
    import numpy as np

    from ldp.audit import Event, FeatureSearch
    from ldp.audit.events import categorical_events, unary_events

    if kind == "categorical":
        return [*categorical_events(0, 1), FeatureSearch()]
    if kind == "bits":
        return [*unary_events(0, 1), FeatureSearch()]
    if kind == "hashed":
        hashed, _ = hashing

        def separates(a, b):
            def test(reports):
                y, seeds = reports
                ha = np.array([hashed(a, s) for s in seeds])
                hb = np.array([hashed(b, s) for s in seeds])
                return (ha == y) & (hb != y)

            return test

        return [
            Event("H_seed(v) == y != H_seed(v')", separates(0, 1), +1),
            Event("H_seed(v') == y != H_seed(v)", separates(1, 0), -1),
            FeatureSearch(),
        ]
    return [FeatureSearch()]


def drive(request: dict) -> None:
    """In the peer's venv: audit each requested client, print one JSON line per client."""
    import numpy as np

    from ldp import audit

    for name, claimed in request["clients"]:
        epsilon = request["epsilon"]
        if request["peer"].startswith("pure-ldp"):
            privatise, kind, hashing = _pure_ldp_client(name, epsilon)
        else:
            privatise, kind, hashing = _multi_freq_client(name, epsilon)
        mechanism = PeerMechanism(privatise, kind)
        seed = np.random.SeedSequence(request["seed"], spawn_key=(len(name), int(claimed * 100)))
        result = audit.lower_bound(
            mechanism,
            0,
            1,
            rng=np.random.default_rng(seed),
            trials=request["trials"],
            alpha=request["alpha"],
            events=_events(kind, hashing),
        )
        row = {
            "peer": request["peer"],
            "client": name,
            "claimed": claimed,
            "lower_bound": float(result.epsilon),
            "event": result.best.name if result.best is not None else "",
        }
        print(MARKER + json.dumps(row), flush=True)


# ------------------------------------------------------------------------- host side
def run(trials: int, alpha: float, seed: int, install: bool = True) -> list[dict]:
    """Audit every client of :data:`CLIENTS` in its peer's environment."""
    rows: list[dict] = []
    for peer_name, peer in AUDIT_PEERS.items():
        wanted = [(c, e) for p, c, e in CLIENTS if p == peer_name]
        try:
            python = ensure_peer(peer, install=install)
        except PeerUnavailable as error:
            rows += [
                {"peer": peer_name, "client": c, "claimed": e, "error": str(error)}
                for c, e in wanted
            ]
            continue
        request = {
            "peer": peer_name,
            "clients": wanted,
            "epsilon": 1.0,
            "trials": trials,
            "alpha": alpha,
            "seed": seed,
        }
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        done = subprocess.run(
            [str(python), str(Path(__file__).resolve()), "--drive", json.dumps(request)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        found = [
            json.loads(line[len(MARKER) :])
            for line in done.stdout.splitlines()
            if line.startswith(MARKER)
        ]
        rows += found
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["failed"])[-1][:160]
            seen = {r["client"] for r in found}
            rows += [
                {"peer": peer_name, "client": c, "claimed": e, "error": reason}
                for c, e in wanted
                if c not in seen
            ]
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| peer | client | claimed ε | audit lower bound | verdict | best event |",
        "|---|---|---:|---:|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['peer']} | {r['client']} | {r['claimed']:.3f} | – | "
                f"not run: {r['error']} | |"
            )
            continue
        verdict = "**violates its claim**" if r["lower_bound"] > r["claimed"] else "consistent"
        lines.append(
            f"| {r['peer']} | {r['client']} | {r['claimed']:.3f} | "
            f"{r['lower_bound']:.3f} | {verdict} | {r['event']} |"
        )
    return "\n".join(lines)


def figure(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in rows if "error" not in r]
    fig, ax = plt.subplots(figsize=(9, 4.2))
    labels = [f"{r['peer']}\n{r['client']}" for r in done]
    x = range(len(done))
    ax.bar(x, [r["lower_bound"] for r in done], color="#7570b3", label="audit lower bound")
    ax.scatter(
        x,
        [r["claimed"] for r in done],
        color="black",
        marker="_",
        s=400,
        zorder=3,
        label="claimed ε",
    )
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("ε")
    ax.set_title("ldp.audit on the peers' clients (bar above the tick: claim violated)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=150)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    parser.add_argument("--trials", type=int, default=50_000, help="reports per input")
    parser.add_argument("--alpha", type=float, default=1e-3, help="false-alarm rate")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--figure", help="also draw the bound against the claim (PNG)")
    args = parser.parse_args(argv)
    if args.drive:
        drive(json.loads(args.drive))
        return
    rows = run(args.trials, args.alpha, args.seed)
    print(table(rows))
    if args.figure:
        figure(rows, Path(args.figure))
        print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
