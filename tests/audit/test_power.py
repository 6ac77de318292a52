"""Planted leaks (:mod:`ldp.audit.plant`) and the power table of docs/privacy.md.

The planting is checked as a statistic: a leak at rate r alters a Binomial(n_v, r) number
of the reports of v and none of the other input's (tolerance 4.5 SE, a false alarm of
about 1e-5 per check).  The table is checked against the registry (every oracle has a
row) and, for two cheap cells, against fresh audits: the rate the table prints must still
be caught in at least NEEDED of AUDITS audits with new seeds.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ldp import registry
from ldp.audit import plant, power
from ldp.oracles import GRR, OLH, OUE

DOC = Path(__file__).resolve().parents[2] / "docs" / "privacy.md"
Z = 4.5


def _rows_changed(honest, leaked) -> np.ndarray:
    fields = honest if isinstance(honest, tuple) else (honest,)
    other = leaked if isinstance(leaked, tuple) else (leaked,)
    changed = np.zeros(len(np.asarray(fields[0])), dtype=bool)
    for a, b in zip(fields, other, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        if a.ndim and a.shape[0] == changed.shape[0]:
            diff = a != b
            changed |= diff.reshape(diff.shape[0], -1).any(axis=1) if diff.ndim > 1 else diff
    return changed


@pytest.mark.parametrize("leak", plant.LEAKS)
@pytest.mark.parametrize("cls", [GRR, OUE, OLH])
def test_a_leak_alters_its_rate_of_the_reports_of_v_and_nothing_else(cls, leak) -> None:
    oracle = cls(epsilon=1.0, domain_size=4)
    assert plant.applies(oracle, leak) is None  # every class applies to these three
    rate, n = 0.2, 20_000
    values = np.repeat([0, 1], n)
    honest = oracle.perturb(values, np.random.default_rng(3))
    leaked = plant.Planted(oracle, leak, rate).perturb(values, np.random.default_rng(3))
    changed = _rows_changed(honest, leaked)
    assert not changed[n:].any()  # the other input's reports are the honest ones
    # a leaked report may equal its honest one (the fixed report, a bit already set), so
    # the changed share is at most r, and at least r times the chance it differs
    share = changed[:n].mean()
    assert share <= rate + Z * np.sqrt(rate * (1 - rate) / n)
    assert share > 0.2 * rate


@pytest.mark.parametrize("leak", plant.LEAKS)
def test_a_leak_into_a_mean_protocol_alters_the_reports_of_its_float_input_only(leak) -> None:
    """PM audited at its ends -1 and 1 (where its loss reaches ε): every class applies
    (its grid is a declared support), and only the reports of -1 change."""
    pm = registry.get("PM", "mean").cls(epsilon=1.0)
    assert plant.applies(pm, leak, -1.0, 1.0) is None
    rate, n = 0.2, 20_000
    values = np.repeat([-1.0, 1.0], n)
    honest = pm.perturb(values, np.random.default_rng(3))
    leaked = plant.Planted(pm, leak, rate, -1.0, 1.0).perturb(values, np.random.default_rng(3))
    changed = _rows_changed(honest, leaked)
    assert not changed[n:].any()
    share = changed[:n].mean()
    assert 0.2 * rate < share <= rate + Z * np.sqrt(rate * (1 - rate) / n)


@pytest.mark.parametrize("leak", plant.LEAKS)
@pytest.mark.parametrize("name", ["PSFO", "SPLIT"])
def test_a_leak_into_a_set_protocol_alters_the_reports_of_its_set_only(name, leak) -> None:
    """A set protocol audited between the sets {0} and {1} (padded rows): every class
    applies (its reports have the inner oracle's support), and only the users holding
    exactly {0} have altered reports (SPLIT at l = 2: two reports a user)."""
    protocol = registry.get(name, "set").cls(epsilon=1.0, domain_size=4, ell=2)
    value, other = power.INPUTS["set"]
    assert plant.applies(protocol, leak, value, other) is None
    rate, n = 0.2, 20_000
    rows = np.concatenate([np.tile(value, (n, 1)), np.tile(other, (n, 1))])
    honest = protocol.perturb(rows, np.random.default_rng(3))
    planted = plant.Planted(protocol, leak, rate, value, other)
    changed = _rows_changed(honest, planted.perturb(rows, np.random.default_rng(3)))
    assert not changed[n:].any()
    share = changed[:n].mean()
    assert 0.2 * rate < share <= rate + Z * np.sqrt(rate * (1 - rate) / n)


def test_a_fixed_report_is_one_report_sent_at_its_rate() -> None:
    oracle = OLH(epsilon=1.0, domain_size=4)
    n, rate = 20_000, 0.1
    reports = plant.Planted(oracle, "fixed report", rate).perturb(
        np.zeros(n, dtype=np.int64), np.random.default_rng(4)
    )
    fixed = plant.Planted(oracle, "fixed report", rate)._fixed
    same = (reports.seeds == fixed.seeds[0]) & (reports.values == fixed.values[0])
    assert abs(same.mean() - rate) <= Z * np.sqrt(rate * (1 - rate) / n)


def test_the_canned_report_is_a_revealing_report_of_the_input() -> None:
    """The fixed report is the most revealing of the honest candidates: GRR at d = 4 sends
    v itself (p against q under v'), Duchi et al.'s input -1 sends -B.  The first candidate
    alone (what an unselected draw would send) is another value for some v: the selection
    is what makes the canned report a report of v."""
    grr = GRR(epsilon=1.0, domain_size=4)
    first = []
    for v in range(4):
        other = (v + 1) % 4
        assert int(np.asarray(plant.Planted(grr, "fixed report", 0.1, v, other)._fixed)[0]) == v
        first.append(int(np.asarray(plant._draw(grr, v, 1, 100))[0]))
    assert first != list(range(4)), first
    duchi = power.built("Duchi")
    canned = np.asarray(plant.Planted(duchi, "fixed report", 0.1, -1.0, 1.0)._fixed)
    assert canned.tolist() == [-duchi.bound]


def test_out_of_support_leaves_the_support_and_applies_only_where_one_is_declared() -> None:
    grr = GRR(epsilon=1.0, domain_size=4)
    reports = plant.Planted(grr, "out of support", 1.0).perturb(
        np.zeros(5, dtype=np.int64), np.random.default_rng(0)
    )
    assert (np.asarray(reports) < 0).all()
    assert plant.applies(grr, "out of support") is None
    hcms = registry.get("HCMS", "oracle").cls(epsilon=1.0, domain_size=4)
    assert plant.applies(hcms, "out of support") == "declares no support"
    she = registry.get("SHE", "oracle").cls(epsilon=1.0, domain_size=4)  # -1 is a count
    assert plant.applies(she, "out of support") == "every payload is in its support"


def test_the_bit_leaks_take_the_bits_the_inputs_agree_on() -> None:
    """GRR at d = 4: bit 1 of a report is set with 2q under both inputs (values 2 and 3),
    bit 0 differs (it separates 0 from 1): the biased bit is bit 1, forced to 1."""
    chosen, target = plant._leak_bits(GRR(epsilon=1.0, domain_size=4), 0, 1, 1)
    assert chosen.tolist() == [6] and target.tolist() == [1]  # bit 1 of byte 0, MSB first


def test_the_bit_choice_does_not_move_with_the_scouts_seed(monkeypatch) -> None:
    """PM's float64 reports have many mantissa bits that carry no signal: the biased bit
    is the first of them, set to 1, whatever seed the scouts are drawn from.  The former
    rule (the bit whose scouted frequencies differ least) picks another bit at each seed."""
    pm = power.built("PM")
    picks, former = set(), set()
    for shift in range(4):
        monkeypatch.setattr(plant, "PLANT_SEED", 20_260_101 + shift)
        chosen, target = plant._leak_bits(pm, -1.0, 1.0, 1)
        picks.add((int(chosen[0]), int(target[0])))
        mine, theirs = (
            plant.payload_bits(pm, plant._draw(pm, v, plant.SCOUT, seed)).mean(axis=0)
            for v, seed in ((-1.0, 1), (1.0, 2))
        )
        both = (mine + theirs) / 2
        varying = np.flatnonzero((both > 0) & (both < 1))
        former.add(int(varying[np.argmin(np.abs(mine - theirs)[varying])]))
    assert picks == {(0, 1)}
    assert len(former) > 1, former


def test_no_leak_no_alarm() -> None:
    """At rate 0 the planted mechanism is the honest one: never caught."""
    assert plant.caught(GRR(epsilon=1.0, domain_size=4), "bit pattern", 0.0, 3) == 0


def _table() -> dict[str, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split(power.BEGIN, 1)[1].split(power.END, 1)[0]
    rows = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 1 + len(plant.LEAKS) and not cells[0].startswith(("protocol", "---")):
            rows[cells[0]] = cells[1:]
    return rows


def test_the_power_table_has_every_registered_protocol_it_can_audit() -> None:
    """One report per user, or a heavy hitter's whole client: every such protocol."""
    rows = _table()
    covered = [n for kind in power.KINDS for n in registry.protocols(kind) if power.covered(n)]
    assert list(rows) == covered
    assert set(power.KINDS) == {"oracle", "mean", "set", "heavy_hitter"}
    assert {"PSFO", "SPLIT"} <= set(rows) and "SVSM" not in rows  # SVSM: two rounds
    assert set(registry.protocols("heavy_hitter")) <= set(rows)
    for cells in rows.values():
        for cell in cells:
            assert cell in ("n/a", "> 1") or float(cell) in power.RATES


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "leak"), [("GRR", "fixed report"), ("OUE", "biased bit"), ("PSFO", "fixed report")]
)
def test_the_tables_rate_is_caught_again_with_fresh_seeds(name: str, leak: str) -> None:
    rate = float(_table()[name][plant.LEAKS.index(leak)])
    value, other = power.INPUTS[registry.get(name).kind]
    found = plant.caught(power.built(name), leak, rate, power.AUDITS, 99, value, other)
    assert found >= power.NEEDED - 1  # one more miss than the table's rule: new seeds


def test_the_table_is_replaced_between_its_markers() -> None:
    document = f"intro\n{power.BEGIN}\nold\n{power.END}\noutro\n"
    out = power.replace_table(document, "| new |\n")
    assert out == f"intro\n{power.BEGIN}\n| new |\n{power.END}\noutro\n"
    with pytest.raises(ValueError, match="power table"):
        power.replace_table("no markers", "x")
    assert re.search("caught", power.__doc__)


def test_a_bad_leak_or_rate_is_refused_naming_it() -> None:
    from ldp.validation import ParameterError

    grr = GRR(epsilon=1.0, domain_size=4)
    with pytest.raises(ParameterError) as error:
        plant.Planted(grr, "no such leak", 0.1)
    assert error.value.name == "leak"
    with pytest.raises(ParameterError) as error:
        plant.Planted(grr, "biased bit", 1.5)
    assert error.value.name == "rate"
