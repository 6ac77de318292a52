"""``REPRODUCTION.md``: each checked claim of the papers beside our number and a verdict."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from experiments import columns as col
from experiments.figures.spec import BY_CONSTRUCTION, ClaimCheck, FigureSpec
from experiments.results import EXPERIMENT_DIR

VERDICT_MARK = {
    "reproduced": "reproduced",
    "partly": "partly reproduced",
    "differs": "differs",
    "not measurable": "not measurable",
    "calibrated": "calibrated",
    "identity": "identity",
}
#: The report's columns; the last four are read back from the right (verdict first).
COLUMNS = (
    "source",
    "paper says",
    "we measure",
    "tolerance",
    "detects",
    "verdict",
    "cause",
    "figure",
)
CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def paper_trials(experiment: str) -> int:
    """The trials per setting of an experiment's config (its ``n_trials``, else the root
    config's): what its figure's verdicts need."""
    from omegaconf import OmegaConf

    for path in (EXPERIMENT_DIR / f"{experiment}.yaml", CONF_DIR / "config.yaml"):
        value = OmegaConf.load(path).get("n_trials")
        if value is not None:
            return int(value)
    raise ValueError(f"{experiment}: no n_trials in its config or conf/config.yaml")


@dataclass(frozen=True)
class Judged:
    """A claim with the trials its verdict rests on and the trials it needs."""

    claim: ClaimCheck
    trials: int  #: the fewest trials of any setting of the figure's table
    needed: int  #: the experiment config's n_trials (the paper-scale run)


def collect(figures: Sequence[tuple[FigureSpec, pd.DataFrame]]) -> list[tuple[FigureSpec, Judged]]:
    """Every claim of every drawn figure that declares ``claims``, with its trials."""
    found = []
    for spec, table in figures:
        if spec.claims is None:
            continue
        trials, needed = _trials(spec, table)
        found += [(spec, Judged(claim, trials, needed)) for claim in spec.claims(table)]
    return found


def _trials(spec: FigureSpec, table: pd.DataFrame) -> tuple[int, int]:
    """(trials, needed) of the figure's experiment furthest below its own ``n_trials``: each
    experiment is held to its own config (a figure may mix 3-trial and 10-trial configs);
    with every one at its own, the fewest trials of any setting, twice (what every verdict
    rests on at least, not provisional)."""
    if not len(table):
        return 0, max(paper_trials(name) for name in spec.experiments)
    per = (
        table.groupby([col.EXPERIMENT, col.CONFIG_HASH])[col.TRIAL].nunique().groupby(level=0).min()
    )
    pairs = [(int(per[name]), paper_trials(name)) for name in spec.experiments if name in per]
    if not pairs:
        return 0, max(paper_trials(name) for name in spec.experiments)
    short = [pair for pair in pairs if pair[0] < pair[1]]
    if short:
        return min(short, key=lambda pair: pair[0] / pair[1])
    fewest = min(t for t, _ in pairs)
    return fewest, fewest


def verdict_text(judged: Judged) -> str:
    """The verdict cell: the verdict and the trials it needs, provisional below them."""
    mark = VERDICT_MARK[judged.claim.verdict]
    if judged.trials < judged.needed:
        return f"{mark}, provisional: {judged.trials} of the ≥ {judged.needed} trials it needs"
    return f"{mark} (≥ {judged.needed} trials)"


#: The power a "reproduced" row is expected to have: a deviation of at most this share of
#: its quantity, or this many standard errors, changes its verdict.
BAR_RELATIVE, BAR_SE = 0.10, 6.0


def detects_text(claim: ClaimCheck) -> str:
    """The detects cell; a reproduced row weaker than the bar says so."""
    found = claim.detection
    text = found.text()
    if claim.verdict == "reproduced" and not found.within(BAR_RELATIVE, BAR_SE):
        text += f"; below the bar of {100 * BAR_RELATIVE:g}% or {BAR_SE:g} SE"
    return text


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def existing_rows(path: Path) -> dict[str, list[str]]:
    """The claim rows of an existing report, by figure name (the row's figure link)."""
    if not path.exists():
        return {}
    rows: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        link = re.search(r"\(figures/([^)/]+)\.png\) \|$", line)
        if line.startswith("| ") and link:
            rows.setdefault(link.group(1), []).append(line)
    return rows


def _row(spec: FigureSpec, judged: Judged | ClaimCheck) -> str:
    if isinstance(judged, ClaimCheck):  # no trial counts known: the verdict alone
        judged = Judged(judged, 0, 0)
    claim = judged.claim
    cells = (
        claim.source,
        claim.paper,
        claim.ours,
        claim.tolerance,
        detects_text(claim),
        verdict_text(judged),
        claim.cause or "-",
        f"[{spec.name}](figures/{spec.name}.png)",
    )
    return "| " + " | ".join(_cell(x) for x in cells) + " |"


def _verdict(row: str) -> str:
    # cells from the right: "", figure, cause, verdict
    mark = re.split(r"(?<!\\)\|", row)[-4].strip()
    longest_first = sorted(VERDICT_MARK.items(), key=lambda item: -len(item[1]))
    return next((v for v, text in longest_first if mark.startswith(text)), "differs")


def write_report(
    path: Path,
    claims: Sequence[tuple[FigureSpec, Judged | ClaimCheck]],
    *,
    quick: bool,
    order: Sequence[str] | None = None,
) -> Path:
    """Write the report as a Markdown table, one row per claim; return its path.

    With ``order`` (every figure's name, in gallery order) the report is updated, not
    replaced: the rows of a figure with no claims here are kept as the file has them.
    """
    fresh: dict[str, list[str]] = {}
    for spec, claim in claims:
        fresh.setdefault(spec.name, []).append(_row(spec, claim))
    if order is not None:
        kept = existing_rows(path)
        rows = [row for name in order for row in fresh.get(name) or kept.get(name, [])]
    else:
        rows = [row for block in fresh.values() for row in block]
    counts = pd.Series([_verdict(row) for row in rows], dtype=object).value_counts()
    checked = [v for v in VERDICT_MARK if v not in BY_CONSTRUCTION]
    apart = sum(int(counts.get(v, 0)) for v in BY_CONSTRUCTION)
    summary = (
        ", ".join(f"{counts.get(v, 0)} {VERDICT_MARK[v]}" for v in checked)
        + f"; counted apart, {apart} true by construction: "
        + ", ".join(f"{counts.get(v, 0)} {VERDICT_MARK[v]}" for v in BY_CONSTRUCTION)
    )
    lines = [
        "# Reproduction report",
        "",
        f"Generated by `python -m experiments.figures{' --quick' if quick else ''}` on "
        f"{_dt.date.today().isoformat()}"
        + (" in quick mode (few trials: not the paper's precision)." if quick else ".")
        + " Each row is a quantitative claim of the papers, the number our harness measures "
        "for it (from the figure's results table), and a verdict. Figures: "
        "[figures/index.md](figures/index.md).",
        "",
        f"**Summary:** {len(rows)} claims: {summary}. Of the reproduced rows, "
        f"{sum('below the bar' in row for row in rows)} detect less than the bar of "
        f"{100 * BAR_RELATIVE:g}% of their quantity or {BAR_SE:g} SE (their detects cell says "
        "so).",
        "",
        "A claim is *reproduced* when every part of the paper's sentence holds within the "
        "tolerance its row states (and why: our standard error, the digits the paper "
        "prints, or a quoted reading of a qualitative word), *partly reproduced* when one "
        "part holds and another does not (its cause in the row), *differs* when none "
        "holds, and *not measurable* when a part cannot be measured from our runs. A "
        "statement true by construction reads *identity* (exact arithmetic) or *calibrated* "
        "(a statistic of a surrogate data set tuned to that very number) and is counted "
        "apart. Each tolerance is a declared object that writes its own sentence; the "
        "verdict is computed from it, never typed. *Detects* is the row's power: the "
        "smallest deviation of its measured quantity (all values scaled, one value scaled, "
        "or a shift in standard errors) that changes its verdict, found by re-running the "
        "row's own check on the mutated values. Each verdict states the trials per setting "
        "it needs (the experiment config's n_trials); one measured on fewer is marked "
        "provisional.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
        *rows,
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
