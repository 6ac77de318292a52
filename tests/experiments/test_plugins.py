"""A protocol from another installed package runs in the harness by name, like a built-in one.

The test writes a tiny plug-in distribution into a temporary folder: a module with a
frequency oracle of its own (the unary-encoding family of USENIX'17 Sec. 4.3 with the keep
probability p as a parameter) and a ``.dist-info`` folder declaring it in the entry-point
group ``ldp.protocols``.  With that folder on ``PYTHONPATH``, ``importlib.metadata`` finds
the entry point exactly as it finds an installed package's, so a fresh
``python -m experiments.run`` process lists the protocol, checks its parameter, runs a
sweep with it beside OLH, and the oracle figure draws it with its own closed form.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from experiments.figures import fig_oracle_variance
from experiments.store import ResultsStore
from ldp import registry

from .conftest import REPO

PLUGIN = '''
"""A plug-in oracle: unary encoding with the keep probability p as a parameter."""

import math
from dataclasses import dataclass

from ldp.oracles import OUE
from ldp.registry import register
from ldp.validation import check_real


@register(label="UE(p)", color="#000000", order=75)
@dataclass(frozen=True, kw_only=True)
class UEp(OUE):
    """USENIX'17 Sec. 4.3's family: keep a 1 w.p. p, q = p / (p + (1 - p) e^eps)."""

    name = "UEp"
    p: float = 0.5

    def __post_init__(self):
        super().__post_init__()
        check_real(self.p, "p", minimum=0, maximum=1, open_minimum=True, open_maximum=True)

    @property
    def p_star(self):
        return self.p

    @property
    def q_star(self):
        return self.p / (self.p + (1 - self.p) * math.exp(self.epsilon))
'''

ENTRY_POINTS = """
[ldp.protocols]
uep = plugged_ldp
"""


@pytest.fixture
def plugin_site(tmp_path: Path) -> Path:
    """A folder holding the plug-in module and its distribution metadata."""
    site = tmp_path / "site"
    (site / "plugged_ldp-0.1.dist-info").mkdir(parents=True)
    (site / "plugged_ldp.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "plugged_ldp-0.1.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugged-ldp\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


def _run(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    return subprocess.run(
        [sys.executable, "-m", "experiments.run", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "HYDRA_FULL_ERROR": "0"},
    )


def test_the_entry_point_registers_the_plugin(plugin_site, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_site))
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_LOADED", False)
    entry = registry.get("uep")
    assert entry.kind == "oracle" and entry.label == "UE(p)"
    assert entry.source == "plugin:plugged-ldp"
    assert [spec.name for spec in registry.parameters(entry.cls)] == ["p"]
    order = list(registry.protocols("oracle"))
    assert order.index("OLH") < order.index("UEp")  # legend position 75, after OLH (70)


def test_a_broken_plugin_warns_and_the_built_ins_still_load(tmp_path, monkeypatch):
    site = tmp_path / "broken"
    (site / "broken_ldp-0.1.dist-info").mkdir(parents=True)
    (site / "broken_ldp.py").write_text("raise ImportError('no such dependency')\n")
    info = site / "broken_ldp-0.1.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-ldp\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ldp.protocols]\nbroken = broken_ldp\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_LOADED", False)
    with pytest.warns(RuntimeWarning, match="plug-in 'broken'.*no such dependency"):
        names = registry.protocols()
    assert "OLH" in names and "PEM" in names


@pytest.mark.slow
def test_the_harness_runs_the_plugin_beside_olh_and_draws_it(plugin_site, tmp_path, monkeypatch):
    listed = _run(plugin_site, "--help")
    assert listed.returncode == 0 and "uep        p=0.5  [plugin:plugged-ldp]" in listed.stdout

    bad = _run(plugin_site, "protocol=uep", "protocol.p=1.5", "dataset=point")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith("error: protocol.p: must lie in (0, 1)")

    results = tmp_path / "results"
    common = (
        "dataset=point",
        "dataset.n=3000",
        "options.domain_size=16",
        "options.track=absent",
        "n_trials=20",
        "n_jobs=1",
        "progress=false",
        "name=plugin",
        f"results_dir={results}",
    )
    swept = _run(plugin_site, "-m", "protocol=uep,olh", "epsilon=1,3", *common)
    assert swept.returncode == 0, swept.stderr[-2000:]
    # the plug-in's own parameter, set on the command line like any built-in one's
    tuned = _run(plugin_site, "protocol=uep", "protocol.p=0.3", "epsilon=1", *common)
    assert tuned.returncode == 0, tuned.stderr[-2000:]
    table, corrupt = ResultsStore(results, "plugin").load()
    assert not corrupt
    assert set(table["protocol.name"]) == {"UEp", "OLH"}
    assert set(table.loc[table["protocol.name"] == "UEp", "protocol.p"].dropna()) == {0.3}
    # the recorded analytic value is the plug-in's own variance (pure framework, p, q)
    rows = table[(table["metric"] == "sq_error_n") & table["item"].isna()]
    mine = rows[(rows["protocol.p"] == 0.3) & np.isclose(rows["epsilon"], 1.0)]
    q = 0.3 / (0.3 + 0.7 * np.e)
    assert mine["analytic"].iloc[0] == pytest.approx(q * (1 - q) / (0.3 - q) ** 2)

    monkeypatch.syspath_prepend(str(plugin_site))  # this process draws with the plug-in too
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_LOADED", False)
    figure = fig_oracle_variance.draw(
        table[table["protocol.p"].isna() | (table["protocol.p"] == 0.3)]
    )
    path = tmp_path / "plugin.png"
    figure.savefig(path)
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    # the plug-in's two values of p are two lines, never one pooling them
    assert {"UE(p) (p=0.3)", "UE(p) (p=default)", "OLH"} <= set(labels)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
