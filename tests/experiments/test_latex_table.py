"""``summarize --format latex``: a table a paper can paste, checked by its structure (no
TeX is needed): balanced environments, booktabs rules, caption and label, the same
number of cells in every row, display names, mean ± SE to the SE's two digits, and the
constant columns moved into the caption."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from experiments.tables import export, latex_table


def stats_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "protocol.name": ["OLH", "OLH", "GRR", "GRR"],
            "epsilon": [1.0, 2.0, 1.0, 2.0],
            "dataset.name": ["zipf"] * 4,
            "metric": ["sq_error_n"] * 4,
            "trials": [20] * 4,
            "mean": [0.0123456, 0.0045678, 0.25, 0.125],
            "std": [0.001, 0.0004, 0.02, 0.01],
            "se": [0.000223, 0.0000894, 0.00447, 0.00224],
            "ci95_low": [0.0119, 0.0044, 0.24, 0.12],
            "ci95_high": [0.0128, 0.0047, 0.26, 0.13],
            "analytic": [0.0122, 0.0046, np.nan, 0.126],
        }
    )


def structure(text: str) -> dict:
    lines = text.splitlines()
    body = [line for line in lines if line.endswith(r"\\") and "&" in line]
    return {
        "begins": re.findall(r"\\begin\{(\w+)\}", text),
        "ends": re.findall(r"\\end\{(\w+)\}", text),
        "cells": {line.count("&") for line in body},
        "columns": len(re.search(r"\\begin\{tabular\}\{(\w+)\}", text).group(1)),
        "rows": len(body),
    }


def test_the_latex_table_is_a_paper_table() -> None:
    text = latex_table(stats_frame(), caption="", label="tab:demo")
    found = structure(text)
    assert found["begins"] == ["table", "tabular"] and found["ends"] == ["tabular", "table"]
    assert found["cells"] == {found["columns"] - 1} and found["rows"] == 5  # header + 4
    for rule in (r"\toprule", r"\midrule", r"\bottomrule", r"\label{tab:demo}", r"\caption{"):
        assert text.count(rule) == 1, rule
    # display names; constant columns (data set, metric, trials) in the caption only
    assert r"$\varepsilon$" in text and "Protocol" in text and "GRR" in text
    caption = re.search(r"\\caption\{(.*)\}", text).group(1)
    assert "Data set = zipf" in caption and r"Metric = MSE$/n$" in caption
    assert "Trials = 20" in caption
    header = next(line for line in text.splitlines() if "Protocol" in line)
    assert "Data set" not in header and "Trials" not in header
    # mean ± SE to the SE's two significant digits; the closed form to the same places
    assert r"$0.01235 \pm 0.00022$" in text and r"$0.2500 \pm 0.0045$" in text
    assert "0.01220" in text and "--" in text  # GRR at ε = 1 has no closed form


def test_a_caption_given_is_kept_and_text_is_escaped() -> None:
    frame = stats_frame().assign(**{"protocol.name": ["my_proto"] * 4})
    text = export(frame, "latex", caption=r"Errors at $n = 10^5$.", label="tab:x")
    assert r"\caption{Errors at $n = 10^5$" in text and r"my\_proto" in text


def test_csv_and_markdown_keep_the_raw_columns() -> None:
    frame = stats_frame()
    assert export(frame, "csv").splitlines()[0] == ",".join(frame.columns)
    assert "ci95_low" in export(frame, "markdown").splitlines()[0]
