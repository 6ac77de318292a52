"""Audit every oracle of ldp at several ε and print the lower bounds as a Markdown table.

    python -m ldp.audit [--epsilons 0.5 2 6] [--trials 200000] [--alpha 0.01]
                        [--domain-size 4] [--seed 2024]

Each cell is the empirical lower bound of :func:`ldp.audit.lower_bound` between the inputs
0 and 1 (default events), next to the realised loss of the declared probabilities
(:func:`ldp.privacy.max_privacy_loss`) and the bound expected at these trials for the
mechanism's optimal event.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ldp.audit.auditor import lower_bound
from ldp.audit.bounds import expected_lower_bound
from ldp.audit.events import optimal_event_probabilities
from ldp.oracles import ORACLES
from ldp.privacy import max_privacy_loss


def table(epsilons, trials: int, alpha: float, domain_size: int, seed: int) -> str:
    """The Markdown table: one row per oracle and ε."""
    lines = [
        f"Audit of every oracle: inputs 0 and 1, d = {domain_size}, {trials} trials per input, "
        f"alpha = {alpha} (seed {seed}).",
        "",
        "| oracle | ε | declared loss | audit lower bound | expected (median) | best event |",
        "|---|---:|---:|---:|---:|---|",
    ]
    root = np.random.SeedSequence(seed)
    for name, cls in ORACLES.items():
        for epsilon, child in zip(epsilons, root.spawn(len(epsilons)), strict=True):
            oracle = cls(epsilon=epsilon, domain_size=domain_size)
            result = lower_bound(
                oracle, 0, 1, rng=np.random.default_rng(child), trials=trials, alpha=alpha
            )
            p, p_other = optimal_event_probabilities(oracle)
            expected = expected_lower_bound(
                p, p_other, trials, alpha=alpha, hypotheses=result.hypotheses
            )
            declared = max_privacy_loss(oracle, values=[0, 1])
            event = result.best.name if result.best else "-"
            lines.append(
                f"| {name} | {epsilon:g} | {declared:.4f} | {result.epsilon:.4f} | "
                f"{expected:.4f} | {event} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ldp.audit", description=__doc__.split("\n")[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 2.0, 6.0])
    parser.add_argument("--trials", type=int, default=200_000)
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--domain-size", type=int, default=4)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(table(args.epsilons, args.trials, args.alpha, args.domain_size, args.seed))
    print(f"\n({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
