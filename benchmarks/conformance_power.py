"""The conformance suite's power, measured: planted errors in copies of built-in oracles.

``ldp.testing.check_oracle`` states that, at its default :class:`~ldp.testing.Settings`, it
catches a 2% error in a declared variance and a 1% bias of the estimates with probability
at least 0.9.  This measures it.  For GRR, OUE and OLH (ε = 1, d = 8, the context of
``tests/test_conformance.py``) and ``--seeds`` independent root seeds each, the suite's
statistical checks (``unbiased``, ``variance``, ``sampled_moments``, ``engines_agree``:
the only ones either error can reach) run on three versions of the class:

* ``honest``: the built-in class (a failure is a false alarm);
* ``variance``: ``variance()`` × 1.02, so ``variances()`` (which calls it) too;
* ``bias``: every estimate × 0.99, in both engines (``estimate``, ``estimate_aggregate``,
  ``simulate``, ``simulate_candidates``).

The power is the fraction of seeds on which some check fails, with its binomial standard
error; the checks that failed are counted too.  The plants change no random draw (the
shrunk estimates are the honest ones × 0.99, draw for draw), so the three versions would
draw the same numbers on one seed; each seed's samples are drawn once, by the honest class,
and every version's checks read them (``--no-share`` draws them three times, identically,
at three times the cost).  ``--time`` instead prints the CPU time of
the whole oracle battery per protocol (``tests/test_conformance.py``'s context and
settings), the figure behind the suite's speed.

    python -m benchmarks.conformance_power --seeds 20
    python -m benchmarks.conformance_power --time GRR OUE OLH FLH HR SS
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import time
from collections import Counter

import numpy as np

from ldp import testing
from ldp.oracles import GRR, OLH, OUE
from ldp.testing import CheckSkipped, Settings, oracle_checks

#: The checks a planted variance or bias error can reach (the others are deterministic or
#: audit perturb's privacy, which neither error touches).
STATISTICAL = ("unbiased", "variance", "sampled_moments", "engines_agree")
CONTEXT = {"epsilon": 1.0, "domain_size": 8}
#: The relative errors planted.
VARIANCE_ERROR = 0.02
BIAS = 0.01
ROOT = 20240601


class _VarianceHigh:
    """Declares ``variance()`` 2% above the truth (``variances()`` calls it)."""

    def variance(self, n_users, true_count=0):
        return super().variance(n_users, true_count) * (1 + VARIANCE_ERROR)


class _Shrunk:
    """Every estimate 1% low, in both engines."""

    def estimate(self, reports, candidates=None):
        return super().estimate(reports, candidates) * (1 - BIAS)

    def estimate_aggregate(self, statistic, n_users):
        return super().estimate_aggregate(statistic, n_users) * (1 - BIAS)

    def simulate(self, true_counts, rng, candidates=None):
        return super().simulate(true_counts, rng, candidates) * (1 - BIAS)

    def simulate_candidates(self, values, counts, candidates, rng):
        return super().simulate_candidates(values, counts, candidates, rng) * (1 - BIAS)


# Module-level classes, so that the pickling round trip finds them by name.
class GRRVarianceHigh(_VarianceHigh, GRR):
    """GRR declaring a variance 2% too high."""


class OUEVarianceHigh(_VarianceHigh, OUE):
    """OUE declaring a variance 2% too high."""


class OLHVarianceHigh(_VarianceHigh, OLH):
    """OLH declaring a variance 2% too high."""


class GRRShrunk(_Shrunk, GRR):
    """GRR whose estimates, in both engines, are 1% low."""


class OUEShrunk(_Shrunk, OUE):
    """OUE whose estimates, in both engines, are 1% low."""


class OLHShrunk(_Shrunk, OLH):
    """OLH whose estimates, in both engines, are 1% low."""


#: oracle -> {variant: class}
VARIANTS = {
    "GRR": {"honest": GRR, "variance": GRRVarianceHigh, "bias": GRRShrunk},
    "OUE": {"honest": OUE, "variance": OUEVarianceHigh, "bias": OUEShrunk},
    "OLH": {"honest": OLH, "variance": OLHVarianceHigh, "bias": OLHShrunk},
}


def seeds(count: int, root: int = ROOT) -> list[int]:
    """``count`` distinct root seeds for ``Settings(seed=...)``, from one SeedSequence."""
    return [int(s) for s in np.random.SeedSequence(root).generate_state(count, dtype=np.uint32)]


def failures(cls: type, settings: Settings, checks=STATISTICAL) -> list[str]:
    """The names of the checks in ``checks`` that ``cls`` fails (all of them are run)."""
    failed = []
    for check in oracle_checks(cls, settings, **CONTEXT):
        if check.name not in checks:
            continue
        try:
            check.run()
        except CheckSkipped:
            continue
        except AssertionError:
            failed.append(check.name)
    return failed


@contextlib.contextmanager
def shared_draws():
    """Within it, the suite's two samplers draw each (honest class, stream, runs) once and
    give a planted version the honest draws (× 0.99 for a shrunk one): what it would draw.
    Use one context per seed (it keeps every sample drawn inside it)."""
    originals = testing._reports_estimates, testing._sampled_estimates
    memo: dict = {}

    def sharing(original):
        def draw(oracle, counts, rng, repetitions):
            honest = next(k for k in type(oracle).__mro__ if k in (GRR, OUE, OLH))
            state = json.dumps(rng.bit_generator.state, sort_keys=True, default=str)
            key = (original.__name__, honest, state, repetitions, counts.tobytes())
            if key not in memo:
                memo[key] = original(honest(**CONTEXT), counts, rng, repetitions)
            return memo[key] * ((1 - BIAS) if isinstance(oracle, _Shrunk) else 1.0)

        return draw

    testing._reports_estimates, testing._sampled_estimates = map(sharing, originals)
    try:
        yield
    finally:
        testing._reports_estimates, testing._sampled_estimates = originals


def measure(count: int, oracles=tuple(VARIANTS), share: bool = True) -> list[dict]:
    """One row per (oracle, variant): seeds caught, power, its SE, the checks that failed."""
    results: dict = {}
    for name in oracles:
        for seed in seeds(count):
            with shared_draws() if share else contextlib.nullcontext():
                for variant, cls in VARIANTS[name].items():
                    results.setdefault((name, variant), []).append(
                        failures(cls, Settings(seed=seed))
                    )
    rows = []
    for (name, variant), runs in results.items():
        caught = sum(bool(failed) for failed in runs)
        rate = caught / count
        rows.append(
            {
                "oracle": name,
                "variant": variant,
                "caught": caught,
                "seeds": count,
                "rate": rate,
                "se": math.sqrt(rate * (1 - rate) / count),
                "by": dict(Counter(name for failed in runs for name in failed)),
            }
        )
        print(_row(rows[-1]), flush=True)
    return rows


def _row(row: dict) -> str:
    by = ", ".join(f"{k} {v}" for k, v in sorted(row["by"].items())) or "-"
    return (
        f"| {row['oracle']} | {row['variant']} | {row['caught']}/{row['seeds']} | "
        f"{row['rate']:.2f} ± {row['se']:.2f} | {by} |"
    )


def suite_time(names: list[str]) -> float:
    """CPU seconds of the whole oracle battery per protocol, as tests/test_conformance.py
    runs it (its context, quick parameters and, where it has them, per-protocol settings)."""
    from ldp import registry
    from tests import test_conformance as suite

    total = 0.0
    for name in names:
        entry = registry.protocols()[name]
        settings = getattr(suite, "ORACLE_SETTINGS", {}).get(name)
        start = time.process_time()
        for check in oracle_checks(
            entry.cls, settings, **suite.ORACLE_CONTEXT, **suite.QUICK_PARAMETERS.get(name, {})
        ):
            try:
                check.run()
            except CheckSkipped:
                continue  # a check the protocol declares inapplicable: nothing to count
        took = time.process_time() - start
        total += took
        print(f"{name:10s} {took:7.2f} s", flush=True)
    print(f"total {total:.2f} s CPU over {len(names)} oracles")
    return total


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="independent seeds per variant")
    parser.add_argument("--oracles", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--no-share", action="store_true", help="each version draws its own")
    parser.add_argument("--time", nargs="*", metavar="NAME", help="time the battery instead")
    args = parser.parse_args(argv)
    if args.time is not None:
        from ldp import registry

        names = args.time or [n for n, e in registry.protocols().items() if e.kind == "oracle"]
        suite_time(names)
        return
    print("| oracle | planted | caught | power ± SE | failing checks |")
    print("|---|---|---|---|---|")
    measure(args.seeds, args.oracles, share=not args.no_share)


if __name__ == "__main__":
    main()
