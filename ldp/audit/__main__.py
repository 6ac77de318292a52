"""Audit protocols from the command line.

    python -m ldp.audit                         # every registered protocol: a table,
                                                # exit 0 when every claim holds
    python -m ldp.audit OLH epsilon=2 domain_size=8 g=5
    python -m ldp.audit PEM epsilon=2 k=4 m=8     # a heavy hitter's whole client
    python -m ldp.audit my_package.module:MyOracle epsilon=1 domain_size=4
    python -m ldp.audit --table > table.md      # the ε_lower/ε table of docs/privacy.md

A protocol is named as registered (:mod:`ldp.registry`, plug-ins included) or as
``module:Class`` (any class with ``perturb(values, rng)`` and an ``epsilon`` attribute,
the claim); ``key=value`` arguments are its parameters.  ``epsilon`` and ``domain_size``
default to 1 and 4 when the constructor takes them and they are not given, and the output
says so.  Each audit runs :func:`ldp.audit.lower_bound` at its defaults between the inputs
0 and 1 (a registered mean protocol's -1 and 1; a set protocol's sets {0} and {1}, rows
padded with -1; :data:`ldp.audit.power.INPUTS`); the verdict is "holds" when the lower
bound is at most the claimed ε and "FAILS" otherwise.  A heavy hitter is audited as its
whole client (:class:`ldp.audit.clients.WholeClient`: the group and every report a user
sends, as one report) between the values 0 and 2^m - 1, with ``k`` and ``m`` 4 and 8 when
not given.

Exit status: 0 every claim holds; 1 a claim FAILS (a measured violation: at confidence
1 - alpha the protocol is not ε-LDP); 2 a usage or input error, reported in one line on
stderr (an unknown protocol, a bad parameter or option, a class without ``perturb`` or
``epsilon``, a ``perturb`` that raises or returns no report per value).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ldp import registry
from ldp.audit.auditor import TRIALS, lower_bound
from ldp.audit.bounds import check_level
from ldp.audit.power import HEAVY_HITTER, INPUTS, KINDS, covered
from ldp.contract import HasPrivacyRatio
from ldp.validation import check_int

#: The ε of the table in docs/privacy.md.
TABLE_EPSILONS = (0.5, 1.0, 2.0, 4.0)
#: Its domain size and seed.
TABLE_DOMAIN, TABLE_SEED = 4, 2024
#: The parameters a protocol gets when the command line does not give them.
DEFAULTS: dict[str, Any] = {"epsilon": 1.0, "domain_size": 4}
#: ... a heavy hitter (audited as its whole client, over m-bit values).
HEAVY_HITTER_DEFAULTS: dict[str, Any] = {"epsilon": 1.0, **HEAVY_HITTER}


def protocol_class(name: str) -> type:
    """A registered protocol's class (one the power table covers: an oracle, a mean
    protocol, a set protocol with one collection of reports), or ``module:Class``."""
    if ":" in name:
        module, _, attribute = name.partition(":")
        try:
            return getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as error:
            raise ValueError(f"cannot import {name!r}: {error}") from error
    entry = registry.get(name)
    if entry.kind == "heavy_hitter":
        return entry.cls
    if not covered(entry.name):
        known = ", ".join(n for kind in KINDS for n in registry.protocols(kind) if covered(n))
        raise LookupError(
            f"{entry.name} is a {entry.kind.replace('_', '-')} protocol, whose reports come "
            f"from several rounds; the audit takes one report per user: {known}"
        )
    return entry.cls


def audited_pair(name: str, protocol: Any = None) -> tuple[Any, Any]:
    """The inputs a protocol is audited between: its kind's pair (:data:`INPUTS`), a heavy
    hitter's 0 and 2^m - 1 (``protocol``: its whole client), or 0 and 1 for a class given
    as ``module:Class``."""
    if ":" in name:
        return 0, 1
    entry = registry.get(name)
    if entry.kind == "heavy_hitter":
        return 0, 2**protocol.protocol.m - 1
    return INPUTS[entry.kind]


def parameters(pairs: Sequence[str], defaults: dict[str, Any] = DEFAULTS) -> dict[str, Any]:
    """``key=value`` pairs over ``defaults``, values read as Python literals (else strings)."""
    out: dict[str, Any] = dict(defaults)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"parameters are key=value, got {pair!r}")
        try:
            out[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[key] = text
    return out


def defaults_for(
    cls: type, given: dict[str, Any], defaults: dict[str, Any] = DEFAULTS
) -> dict[str, Any]:
    """The ``defaults`` not in ``given`` that ``cls``'s constructor accepts."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # a builtin without a signature: inject nothing
        return {}
    kinds = {p.kind for p in signature.parameters.values()}
    takes_any = inspect.Parameter.VAR_KEYWORD in kinds
    return {
        key: value
        for key, value in defaults.items()
        if key not in given and (takes_any or key in signature.parameters)
    }


def build(cls: type, pairs: Sequence[str]) -> tuple[Any, dict[str, Any]]:
    """``cls`` built from ``key=value`` pairs; also the defaults it was given.  A heavy
    hitter comes back as its whole client (:class:`~ldp.audit.clients.WholeClient`)."""
    from ldp.audit.clients import WholeClient

    given = parameters(pairs, defaults={})
    heavy = any(entry.cls is cls for entry in registry.protocols("heavy_hitter").values())
    injected = defaults_for(cls, given, HEAVY_HITTER_DEFAULTS if heavy else DEFAULTS)
    built = cls(**injected, **given)
    return (WholeClient(built) if heavy else built), injected


def check_mechanism(name: str, protocol: Any) -> None:
    """Refuse (ValueError) a protocol the audit cannot run or judge."""
    if not callable(getattr(protocol, "perturb", None)):
        raise ValueError(f"{name} has no perturb(values, rng) method")
    claim = getattr(protocol, "epsilon", None)
    if isinstance(claim, bool) or not isinstance(claim, int | float | np.floating):
        raise ValueError(f"{name} has no real-valued epsilon attribute (the claim to audit)")
    if not (math.isfinite(claim) and claim > 0):
        raise ValueError(f"{name}'s epsilon must be positive and finite, got {claim}")


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (``error: ...``) and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        print(f"error: {message} (python -m ldp.audit --help)", file=sys.stderr)
        raise SystemExit(2)


def declared_loss(protocol: Any, pair: tuple[Any, Any] = (0, 1)) -> float | None:
    """The realised loss of the declared likelihood between the inputs ``pair`` (a set
    protocol's: ln of its ``privacy_ratio``, over every pair of sets); None if undeclared."""
    from ldp.privacy import max_privacy_loss

    if np.ndim(pair[0]) == 1:
        return math.log(protocol.privacy_ratio()) if isinstance(protocol, HasPrivacyRatio) else None
    try:
        return max_privacy_loss(protocol, values=list(pair))
    except (TypeError, ValueError, AttributeError):
        return None


def audit_row(
    name: str,
    protocol: Any,
    seed: Any,
    alpha: float,
    trials: int,
    pair: tuple[Any, Any] = (0, 1),
) -> dict:
    """One audit of ``protocol`` between the inputs ``pair``: claimed ε, bound, verdict."""
    value, other = pair
    result = lower_bound(
        protocol, value, other, rng=np.random.default_rng(seed), alpha=alpha, trials=trials
    )
    claim = float(protocol.epsilon)
    return {
        "name": name,
        "claim": claim,
        "loss": declared_loss(protocol, pair),
        "result": result,
        "holds": result.holds(claim),
    }


def verdict_table(rows: list[dict]) -> str:
    """Markdown: protocol, claimed ε, declared loss, lower bound, verdict, best event."""
    lines = [
        "| protocol | claimed ε | declared loss | lower bound | verdict | best event |",
        "|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        result, loss = row["result"], row["loss"]
        best = result.best.name if result.best else "-"
        if result.law is not None and not result.law.holds:
            w = result.law.worst
            best = f"law off its declaration in ({w.low:.6g}, {w.high:.6g}] at t = {w.t:g}"
        lines.append(
            f"| {row['name']} | {row['claim']:g} | {'-' if loss is None else f'{loss:.4f}'} | "
            f"{result.epsilon:.4f} | {'holds' if row['holds'] else 'FAILS'} | {best} |"
        )
    return "\n".join(lines)


def tightness_table(
    epsilons: Sequence[float] = TABLE_EPSILONS,
    domain_size: int = TABLE_DOMAIN,
    seed: int = TABLE_SEED,
    trials: int = TRIALS,
    alpha: float = 0.01,
    names: Sequence[str] | None = None,
) -> str:
    """ε_lower/ε of the default audit of every registered oracle (docs/privacy.md), or of
    ``names`` only (each row's seeds come from its name, so a row is the same either way).

    A cell is the bound over ε; where the declared loss of one report is below ε (THE,
    RAPPOR's ε₁), the bound over that loss follows in parentheses.  The last column is
    the reports per input at which the protocol's optimal event reaches 0.9 ε at every ε
    of the table, in median (``audit_event_probabilities``; "-" when it declares none).
    """
    from ldp.audit.bounds import trials_needed
    from ldp.audit.events import optimal_event_probabilities

    header = " | ".join(f"ε = {e:g}" for e in epsilons)
    lines = [
        f"Default audit (inputs 0 and 1, d = {domain_size}, {trials} reports per input, "
        f"alpha = {alpha}, seed {seed}): lower bound / ε.",
        "",
        f"| protocol | {header} | reports for 0.9 ε |",
        "|---|" + "---:|" * len(epsilons) + "---:|",
    ]
    for name, entry in registry.protocols("oracle").items():
        if names is not None and name not in names:
            continue
        cells, needed = [], []
        for epsilon, child in zip(
            epsilons,
            np.random.SeedSequence([seed, *name.encode()]).spawn(len(epsilons)),
            strict=True,
        ):
            protocol = entry.cls(epsilon=epsilon, domain_size=domain_size)
            row = audit_row(name, protocol, child, alpha, trials)
            ratio = row["result"].epsilon / epsilon
            loss = row["loss"]
            cell = f"{ratio:.3f}"
            if loss is not None and loss < epsilon * (1 - 1e-9):
                cell += f" ({row['result'].epsilon / loss:.3f})"
            cells.append(cell)
            try:
                p, p_other = optimal_event_probabilities(protocol)
            except TypeError:
                needed = None
            if needed is not None:
                target = 0.9 * math.log(p / p_other)
                hypotheses = row["result"].hypotheses
                needed.append(trials_needed(p, p_other, target, alpha=alpha, hypotheses=hypotheses))
        size = "-" if not needed else f"{max(needed):,}"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {size} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """The command line; returns the exit status (0: every claim holds, 1: one fails,
    2: a usage or input error, printed in one line).  ``prog``: the name its usage shows."""
    parser = _Parser(prog=prog or "python -m ldp.audit", description=__doc__.split("\n")[0])
    parser.add_argument("protocol", nargs="?", help="registered name or module:Class")
    parser.add_argument("params", nargs="*", help="key=value parameters of the protocol")
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--trials", type=int, default=TRIALS)
    parser.add_argument("--seed", type=int, default=TABLE_SEED)
    parser.add_argument("--table", action="store_true", help="print the docs' ε_lower/ε table")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # --help (0) or a usage error (2), already printed
        return int(exit.code or 0)
    try:
        trials = check_int(args.trials, "--trials", minimum=2)
        alpha = check_level(args.alpha, "--alpha")
        if args.table:
            print(tightness_table(trials=trials, alpha=alpha, seed=args.seed))
            return 0
        if args.protocol is None:
            chosen = []
            for kind in KINDS:
                for name, entry in registry.protocols(kind).items():
                    if covered(name):
                        protocol, injected = build(entry.cls, args.params)
                        chosen.append((name, protocol, injected))
        else:
            protocol, injected = build(protocol_class(args.protocol), args.params)
            chosen = [(args.protocol, protocol, injected)]
        for name, protocol, _ in chosen:
            check_mechanism(name, protocol)
    except (ValueError, TypeError, LookupError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    seeds = np.random.SeedSequence(args.seed).spawn(len(chosen))
    rows = []
    for (name, protocol, _), seed in zip(chosen, seeds, strict=True):
        try:
            pair = audited_pair(name, protocol)
            rows.append(audit_row(name, protocol, seed, alpha, trials, pair))
        except Exception as error:  # the mechanism's own failure is an input error, not a verdict
            print(f"error: auditing {name}: {_one_line(error)}", file=sys.stderr)
            return 2
    print(
        f"Audit between the inputs 0 and 1 (mean protocols -1 and 1, set protocols the sets "
        f"{{0}} and {{1}}, heavy hitters' whole clients 0 and 2^m - 1): {trials} reports per "
        "input, "
        f"alpha = {alpha} (a bound above the claim is a false alarm w.p. <= alpha)."
    )
    injected = {", ".join(f"{k}={v!r}" for k, v in extra.items()) for _, _, extra in chosen}
    injected.discard("")
    if injected:
        print(f"Parameters not given, set to their defaults: {'; '.join(sorted(injected))}.")
    print()
    print(verdict_table(rows))
    failed = [row["name"] for row in rows if not row["holds"]]
    if failed:
        print(f"\nε-LDP claim FAILS at confidence {1 - alpha:g}: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
