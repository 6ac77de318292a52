"""Results tables as text: the names and cell formats every command-line tool shares.

:data:`META_COLUMNS` are the columns of a results row that are not a setting's parameters;
:data:`SHORT` and :func:`short_name` give a column its display name (``protocol``, ``eps``,
``d``); :func:`number` writes one cell; :func:`export` writes a whole table as aligned
text, CSV, Markdown or LaTeX.  :mod:`experiments.summarize`, :mod:`experiments.select` and
:mod:`experiments.plot` read them from here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from experiments import columns as col

#: Columns that are not parameters of a setting.
META_COLUMNS = col.META
#: Short names for the common parameter columns.
SHORT = {
    "protocol.name": "protocol",
    "dataset.name": "dataset",
    "epsilon": "eps",
    "options.domain_size": "d",
    "data_source": "data",
}


def short_name(column: str, taken: Sequence[str] = ()) -> str:
    """A column's display name: :data:`SHORT`, else the part after the group's dot
    (``protocol.eta`` -> ``eta``) unless another column would get the same name."""
    if column in SHORT:
        return SHORT[column]
    tail = column.rsplit(".", 1)[-1]
    clash = sum(c.rsplit(".", 1)[-1] == tail for c in taken) > 1
    return column if clash else tail


def number(value: object) -> str:
    """A cell as text: integers without a decimal point, other numbers to 4 digits."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "-"
    if isinstance(value, bool | np.bool_):
        return str(bool(value)).lower()
    if isinstance(value, int | float):
        if float(value).is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}"
    return str(value)


FORMATS = ("text", "csv", "markdown", "latex")


def export(frame: pd.DataFrame, fmt: str, *, caption: str = "", label: str = "") -> str:
    """A statistics table as text, CSV, Markdown (GitHub pipes) or a LaTeX table for a
    paper (:func:`latex_table`, with ``caption`` and ``label``); CSV and Markdown keep
    every column as computed."""
    if fmt == "csv":
        return frame.to_csv(index=False, lineterminator="\n")
    header = list(frame.columns)
    cells = [[number(v) for v in record] for record in frame.itertuples(index=False)]
    if fmt == "text":
        return frame.assign(**{c: frame[c].map(number) for c in header}).to_string(index=False)
    if fmt == "markdown":
        numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in header]
        rule = ["---:" if n else "---" for n in numeric]
        lines = [header, rule, *cells]
        return "\n".join("| " + " | ".join(map(_markdown_cell, line)) + " |" for line in lines)
    if fmt == "latex":
        return latex_table(frame, caption=caption, label=label)
    raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")


#: Display names of the metrics a paper table shows most (others: their name, escaped).
METRIC_NAMES = {
    "f1": "F1",
    "ncr": "NCR",
    "sq_error": "squared count error",
    "sq_error_n": r"MSE$/n$",
    "sq_error_f": "MSE of frequencies",
    "error_n": r"bias$/n$",
    "adversary_success": "adversary success",
    "server_seconds": "server seconds",
}
#: Display names of parameter columns in a paper table.
LATEX_COLUMNS = {
    "protocol.name": "Protocol",
    "dataset.name": "Data set",
    "epsilon": r"$\varepsilon$",
    "options.domain_size": "$d$",
    "k": "$k$",
    "dataset.n": "$n$",
    "dataset.m": "$m$",
    "metric": "Metric",
    "item": "Rank",
    "trials": "Trials",
}
#: Statistics columns the paper table folds into "mean ± SE" (or leaves out).
_FOLDED = ("mean", "se", "std", "ci95_low", "ci95_high", "analytic")


def _decimals(se: float, mean: float) -> int:
    """Decimals that show the standard error to two significant digits (the mean's four
    significant digits when there is none)."""
    reference = se if np.isfinite(se) and se > 0 else abs(mean) / 100 if mean else 1.0
    return int(min(12, max(0, 1 - math.floor(math.log10(reference)))))


def _latex_number(value: float, decimals: int) -> str:
    return "--" if not np.isfinite(value) else f"{value:.{decimals}f}"


def _latex_value(column: str, value: object) -> str:
    """A cell of a parameter column: protocols by their registered label, metrics by
    :data:`METRIC_NAMES`, numbers as :func:`number` writes them; text escaped."""
    if column == "metric" and str(value) in METRIC_NAMES:
        return METRIC_NAMES[str(value)]
    if column == "protocol.name":
        from ldp import registry

        try:
            return _latex_cell(registry.get(str(value)).label)
        except registry.RegistryError:
            pass
    return _latex_cell(number(value))


def latex_table(frame: pd.DataFrame, *, caption: str = "", label: str = "") -> str:
    """A statistics table (:func:`experiments.summarize.statistics`) as a LaTeX ``table``
    for a paper: booktabs rules, the caption and label, display names of protocols,
    metrics and parameters, each mean with its standard error (``$0.912 \\pm 0.003$``, to
    the decimals of the SE's two significant digits) and the closed form beside it where
    one exists; a column with one value throughout moves into the caption.  Needs
    ``\\usepackage{booktabs}``."""
    stats = [c for c in _FOLDED if c in frame.columns]
    parameters = [c for c in frame.columns if c not in stats]
    constant = [c for c in parameters if frame[c].nunique(dropna=False) <= 1 and len(frame) > 1]
    shown = [c for c in parameters if c not in constant]
    analytic = "analytic" in frame.columns and frame["analytic"].notna().any()
    header = [LATEX_COLUMNS.get(c, _latex_cell(short_name(c, parameters))) for c in shown]
    header += [r"mean $\pm$ SE"] + (["closed form"] if analytic else [])
    rows = []
    for record in frame.to_dict("records"):
        mean, se = float(record.get("mean", math.nan)), float(record.get("se", math.nan))
        places = _decimals(se, mean)
        cells = [_latex_value(c, record[c]) for c in shown]
        value = _latex_number(mean, places)
        cells.append(f"${value} \\pm {_latex_number(se, places)}$" if np.isfinite(se) else value)
        if analytic:
            cells.append(_latex_number(float(record["analytic"]), places))
        rows.append(" & ".join(cells) + r" \\")
    fixed = [
        f"{LATEX_COLUMNS.get(c, _latex_cell(short_name(c, parameters)))} = "
        f"{_latex_value(c, frame[c].iloc[0])}"
        for c in constant
    ]
    words = caption.strip() or "Mean over the trials with its standard error"
    words = _latex_cell(words) if not caption else words
    if fixed:
        words = f"{words.rstrip('.')}; {', '.join(fixed)}."
    elif not words.endswith("."):
        words += "."
    align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in shown) + (
        "rr" if analytic else "r"
    )
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{words}}}",
        *([rf"\label{{{label}}}"] if label else []),
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
        *rows,
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
    ]
    return "\n".join(lines)


def _markdown_cell(text: str) -> str:
    return str(text).replace("|", "\\|")


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"}
_LATEX_SPECIAL.update(
    {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}
)


def _latex_cell(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in str(text))
