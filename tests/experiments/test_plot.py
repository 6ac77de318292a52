"""``experiments.plot`` and ``summarize --where/--by/--format``: any results, any plug-in.

A tiny sweep (GRR and OLH, and a toy plug-in oracle registered in the test, on 400 users
at two values of ε) is run into a temporary results directory; the plot's points are the
trials' mean and standard error, its curve the protocol's own variance, and the plug-in is
drawn like a built-in protocol.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from matplotlib import colors as mcolors
from scipy import stats

from experiments import plot as plotting
from experiments import summarize
from experiments.run import run_settings
from experiments.select import SelectionError, apply_where, load_results, parse_where
from ldp.oracles import OUE

from .conftest import TINY


@dataclass(frozen=True, kw_only=True)
class Toy(OUE):
    """A plug-in oracle of the test: OUE under another name, no colour of its own."""

    name = "Toy"


@pytest.fixture
def sweep(settings_of, results_dir, register_protocol):
    register_protocol(Toy)
    settings = [
        setting
        for protocol in ("grr", "olh", "toy")
        for epsilon in (1, 3)
        for setting in settings_of(
            f"protocol={protocol}", f"epsilon={epsilon}", *TINY, "n_trials=6", "n_jobs=1"
        )
    ]
    run_settings(settings)
    return results_dir


def test_points_are_the_trials_mean_and_standard_error(sweep):
    table = load_results(sweep)
    found = plotting.points(table, x="epsilon", y="sq_error_n", hue="protocol.name")
    assert len(found) == 6 and set(found["trials"]) == {6}
    rows = table[(table["metric"] == "sq_error_n") & (table["protocol.name"] == "Toy")]
    mine = rows[rows["epsilon"] == 3.0]["value"]
    point = found[(found["protocol.name"] == "Toy") & (found["epsilon"] == 3.0)].iloc[0]
    assert point["mean"] == pytest.approx(mine.mean())
    assert point["se"] == pytest.approx(mine.std(ddof=1) / math.sqrt(6))
    wide = plotting.points(table, x="epsilon", y="sq_error_n", hue="protocol.name", errorbar="ci95")
    ratio = wide["half"] / wide["se"]
    assert np.allclose(ratio, stats.t.ppf(0.975, 5))


def test_a_point_never_pools_settings(sweep):
    table = load_results(sweep)
    with pytest.raises(SelectionError, match="differ in protocol.name.*--where protocol.name="):
        plotting.points(table, x="epsilon", y="sq_error_n")


def test_filters_and_their_errors(sweep):
    table = load_results(sweep)
    kept = apply_where(table, ["protocol=olh,Toy", "epsilon>=2"])
    assert set(kept["protocol.name"]) == {"OLH", "Toy"} and set(kept["epsilon"]) == {3.0}
    assert set(apply_where(table, ["eps!=3"])["epsilon"]) == {1.0}
    assert set(apply_where(table, ["domain_size<9"])["options.domain_size"]) == {8}
    with pytest.raises(SelectionError, match=r"no column 'colour'; known: .*protocol\.name"):
        apply_where(table, ["colour=red"])
    with pytest.raises(SelectionError, match="epsilon is numeric, got 'high'"):
        apply_where(table, ["epsilon>=high"])
    with pytest.raises(SelectionError, match="expected KEY=a,b"):
        parse_where("epsilon")
    with pytest.raises(SelectionError, match="protocol.name is not numeric"):
        apply_where(table, ["protocol>1"])


def test_the_analytical_curve_is_the_protocols_own_variance(sweep):
    """The curve on a fine ε grid passes through the recorded exact expectations."""
    figure = plotting.plot(
        sweep, x="epsilon", y="mse", hue="protocol", where=["protocol=Toy"], logy=False
    )
    (ax,) = figure.axes
    (curve,) = [line for line in ax.get_lines() if len(line.get_xdata()) == plotting.CURVE_POINTS]
    table = load_results(sweep)
    rows = table[(table["metric"] == "sq_error_n") & (table["protocol.name"] == "Toy")]
    for epsilon, analytic in rows.groupby("epsilon")["analytic"].first().items():
        assert np.interp(epsilon, curve.get_xdata(), curve.get_ydata()) == pytest.approx(
            analytic, rel=1e-9
        )
    # OUE's Table 1 entry 4e^ε/(e^ε-1)^2 at ε = 2 (every tracked value absent: c = 0)
    assert np.interp(2.0, curve.get_xdata(), curve.get_ydata()) == pytest.approx(
        4 * math.e**2 / (math.e**2 - 1) ** 2, rel=1e-3
    )


def test_a_variance_that_fails_is_reported_not_swallowed(sweep, monkeypatch):
    def broken(self, n, frequency):
        raise ArithmeticError("no closed form at this epsilon")

    monkeypatch.setattr(Toy, "variance", broken)
    table = load_results(sweep)
    rows = table[(table["metric"] == "sq_error_n") & (table["protocol.name"] == "Toy")]
    with pytest.warns(RuntimeWarning, match="Toy: its variance failed .ArithmeticError: no clo"):
        assert plotting.variance_curve(rows, np.linspace(1, 3, 5)) is None


def test_a_plugin_is_drawn_like_a_built_in(sweep, tmp_path):
    out = tmp_path / "fig.png"
    figure = plotting.plot(sweep, x="epsilon", y="sq_error_n", hue="protocol", out=out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert {"GRR", "OLH", "Toy"} <= set(labels)
    colours = {}
    for line in figure.axes[0].get_lines():
        if len(line.get_xdata()) == plotting.CURVE_POINTS:
            colours[mcolors.to_hex(line.get_color())] = True
    assert len(colours) == 3  # three curves, three colours (the plug-in's from the palette)
    again = plotting.protocol_color("Toy")
    assert again == plotting.protocol_color("Toy")  # stable
    assert plotting.protocol_color("NotInstalledHere") in [
        tuple(c) for c in plotting.sns.color_palette(plotting.FALLBACK_PALETTE, 10)
    ]


def test_log_scales_are_automatic(sweep):
    assert plotting.auto_log(np.array([1e-3, 1.0])) and not plotting.auto_log(np.array([1, 50]))
    assert not plotting.auto_log(np.array([-1.0, 1e3]))
    figure = plotting.plot(sweep, x="epsilon", y="sq_error_n", hue="protocol", col="protocol")
    assert len(figure.axes) == 3
    assert figure.axes[0].get_xscale() == "linear"


def test_the_command_line(sweep, tmp_path, capsys):
    out = tmp_path / "cli.pdf"
    code = plotting.main(
        [str(sweep), "--x", "epsilon", "--y", "mse", "--hue", "protocol", "--where",
         "protocol=OLH,Toy", "--where", "epsilon>=1", "--ci95", "--out", str(out)]
    )  # fmt: skip
    assert code == 0 and out.read_bytes()[:4] == b"%PDF"
    assert capsys.readouterr().out.strip() == str(out)
    assert plotting.main([str(sweep / "custom"), "--x", "eps", "--y", "nothing"]) == 2
    assert "no metric 'nothing'" in capsys.readouterr().err
    assert plotting.main([str(tmp_path / "absent"), "--x", "eps", "--y", "mse"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: results directory '{tmp_path / 'absent'}' does not exist"


# ------------------------------------------------------------------------- summarize
def test_summarize_exports_se_and_ci(sweep, tmp_path, capsys):
    args = ["custom", "--results-dir", str(sweep), "--metric", "sq_error_n"]
    out = tmp_path / "stats.csv"
    assert summarize.main([*args, "--by", "protocol", "--by", "eps", "--out", str(out)]) == 0
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["protocol.name", "epsilon", "metric", *summarize.STAT_COLUMNS]
    assert len(frame) == 6 and set(frame["trials"]) == {6}
    row = frame.iloc[0]
    assert row["se"] == pytest.approx(row["std"] / math.sqrt(6))
    half = stats.t.ppf(0.975, 5) * row["se"]
    assert (row["ci95_low"], row["ci95_high"]) == pytest.approx(
        (row["mean"] - half, row["mean"] + half)
    )
    capsys.readouterr()
    assert summarize.main([*args, "--where", "protocol=Toy", "--format", "markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[0]
        == "| epsilon | metric | trials | mean | std | se | ci95_low | ci95_high | analytic |"
    )
    assert len(lines) == 4 and lines[1].startswith("| ---: | --- |")
    assert summarize.main([*args, "--where", "protocol=Toy", "--format", "latex"]) == 0
    latex = capsys.readouterr().out
    assert latex.startswith(r"\begin{table}[t]") and r"\label{tab:custom}" in latex
    assert r"MSE$/n$" in latex and r"\pm" in latex and r"\toprule" in latex
    assert summarize.main([*args, "--by", "eps", "--format", "csv"]) == 2
    assert "differ in protocol.name" in capsys.readouterr().err


def test_summarize_keeps_its_compact_table_and_filters_it(sweep, capsys):
    assert summarize.main(["custom", "--results-dir", str(sweep), "--where", "protocol=grr"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("custom: 2 settings") and "protocol=GRR" in out[1]
    assert summarize.main(["x", "--results-dir", str(sweep / "missing")]) == 1
    assert "results directory" in capsys.readouterr().err


def test_results_of_another_seeding_scheme_are_never_pooled_or_merged(sweep):
    """Rows recorded before the per-protocol streams (no ``streams`` value) beside today's:
    summarize shows them as rows of their own, plot refuses to pool them."""
    table = load_results(sweep)
    grr = table[table["protocol.name"] == "GRR"]
    old = grr.assign(config_hash=grr["config_hash"].str[::-1], streams=np.nan)
    both = pd.concat([grr, old], ignore_index=True)
    summary = summarize.summarize(both, metrics=["sq_error_n"])
    assert "streams" in summary.columns and len(summary) == 4
    with pytest.raises(SelectionError, match="differ in streams"):
        plotting.points(both, x="epsilon", y="sq_error_n")


def test_several_metrics_side_by_side(sweep):
    """``--y mse,adversary_success``: one panel column per metric, each its own axis."""
    figure = plotting.plot(sweep, x="epsilon", y="mse,adversary_success", hue="protocol")
    left, right = figure.axes
    assert (left.get_ylabel(), right.get_ylabel()) == (
        "MSE$/n$ (sq_error_n)",
        "adversary success (adversary_success)",
    )
    table = load_results(sweep)
    rows = table[(table["metric"] == "adversary_success") & (table["protocol.name"] == "GRR")]
    assert rows["value"].between(0, 1).all() and np.isfinite(rows["analytic"]).all()
    drawn = np.concatenate(
        [line.get_ydata() for line in right.get_lines() if len(line.get_xdata()) == 2]
    )
    for value in rows.groupby("epsilon")["value"].mean():
        assert np.isclose(drawn, value).any()  # GRR's exact value is a point of the right panel
    assert right.get_yscale() == "linear"
    with pytest.raises(SelectionError, match="drop --col"):
        plotting.plot(sweep, x="epsilon", y="mse,adversary_success", col="protocol")


def test_series_are_dodged_with_their_own_markers_and_the_blind_guess_is_drawn():
    """Equal means stay visible (each series its own marker, shifted a little along x),
    the y axis names the metric, and an adversary panel draws π_max dotted."""
    rows = []
    for name in ("GRR", "OUE"):
        for eps in (1.0, 2.0):
            for trial in range(3):
                for metric, value in (("adversary_success", 0.6), ("adversary_baseline", 0.5)):
                    rows.append(
                        {
                            "protocol.name": name,
                            "epsilon": eps,
                            "metric": metric,
                            "value": value + 0.001 * trial,
                            "analytic": float("nan"),
                            "item": float("nan"),
                            "trial": trial,
                            "config_hash": f"{name}{eps}",
                        }
                    )
    table = pd.DataFrame(rows)
    figure = plotting.plot(table, x="epsilon", y="adversary_success", hue="protocol")
    ax = figure.axes[0]
    lines = [line for line in ax.lines if line.get_marker() in plotting.MARKERS]
    markers = {line.get_marker() for line in lines}
    assert len(markers) == 2
    xs = [tuple(np.round(line.get_xdata(), 6)) for line in lines]
    assert len(set(xs)) == 2 and all(x not in ((1.0, 2.0),) for x in xs)
    assert any(line.get_linestyle() == ":" and line.get_ydata()[0] == 0.501 for line in ax.lines)
    assert ax.get_ylabel() == "adversary success (adversary_success)"
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert plotting.BASELINE_LABEL in labels
