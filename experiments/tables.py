"""Results tables as text: the names and cell formats every command-line tool shares.

:data:`META_COLUMNS` are the columns of a results row that are not a setting's parameters;
:data:`SHORT` and :func:`short_name` give a column its display name (``protocol``, ``eps``,
``d``); :func:`number` writes one cell; :func:`export` writes a whole table as aligned
text, CSV, Markdown or LaTeX.  :mod:`experiments.summarize`, :mod:`experiments.select` and
:mod:`experiments.plot` read them from here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: Columns that are not parameters of a setting.
META_COLUMNS = (
    "experiment",
    "config_hash",
    "trial",
    "metric",
    "item",
    "value",
    "analytic",
    "data_source",
    "n",
    "wall_time",
    "ldp_version",
    "numpy_version",
    "git_commit",
    "plugin",
    "plugin_version",
    "code_digest",
    "streams",
)
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


def export(frame: pd.DataFrame, fmt: str) -> str:
    """A statistics table as text, CSV, Markdown (GitHub pipes) or LaTeX (booktabs)."""
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
        align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in header)
        body = [" & ".join(_latex_cell(c) for c in line) + r" \\" for line in cells]
        return "\n".join(
            [
                rf"\begin{{tabular}}{{{align}}}",
                r"\toprule",
                " & ".join(_latex_cell(c) for c in header) + r" \\",
                r"\midrule",
                *body,
                r"\bottomrule",
                r"\end{tabular}",
            ]
        )
    raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")


def _markdown_cell(text: str) -> str:
    return str(text).replace("|", "\\|")


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"}
_LATEX_SPECIAL.update(
    {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}
)


def _latex_cell(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in str(text))
