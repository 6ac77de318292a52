"""Hostile inputs are refused at the door: a named error, no overflow, no huge allocation.

Each test feeds one input that used to end in a raw traceback (``OverflowError``, numpy's
``AxisError``, "setting an array element with a sequence"), in an allocation of gigabytes,
or in an error that blamed a parameter the caller never gave, and checks the refusal names
the right file field or parameter.  No statistics: every assertion is exact, except the
audit of dBitFlip's rounds, whose lower bound is a 1 - 1e-4 confidence bound (false alarm
rate 1e-4 at most).
"""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ldp import audit, budget
from ldp.heavy_hitters.pem import ASSUMED, PEM
from ldp.io import rappor as rio
from ldp.oracles import GRR, HR, OLH, OUE, PGR
from ldp.oracles.dbitflip import MAX_BUCKETS, DBitFlip
from ldp.oracles.loloha import LOLOHA, MAX_DEFAULT_EPSILON
from ldp.oracles.rappor import RAPPOR, RapporReports
from ldp.reports import bare
from ldp.theory import pem as pem_theory
from ldp.validation import ParameterError, check_int_sequence

PARAMS = "k,h,m,p,q,f\n8,2,4,0.5,0.75,0.5\n"
HEADER = "client,cohort,bloom,prr,irr\n"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8", newline="")
    return path


@pytest.fixture
def params(tmp_path) -> rio.RapporParams:
    return rio.read_params(_write(tmp_path / "params.csv", PARAMS))


# --- RAPPOR files ---------------------------------------------------------------------------
@pytest.mark.parametrize("cohort", ["12345678901234567890", "1" * 30, "4"])
def test_a_cohort_beyond_m_or_int64_is_refused_naming_the_cohort(cohort, params, tmp_path):
    path = _write(tmp_path / "reports.csv", f"{HEADER}1,0,,,00000001\n2,{cohort},,,00000001\n")
    with pytest.raises(rio.RapporFileError, match=r"is not in \[0, m = 4\)") as caught:
        rio.read_reports(path, params)
    assert (caught.value.line, caught.value.field) == (3, "cohort")


def test_a_ten_megabyte_cohort_is_refused_before_numpy_widens_every_row(params, tmp_path):
    """One 2 MB cohort among 20 rows: numpy's fixed-width strings would take 20 x 8 MB."""
    rows = "".join(f"{i},0,,,00000001\n" for i in range(20))
    path = _write(tmp_path / "reports.csv", f"{HEADER}x,{'7' * 2_000_000},,,00000001\n{rows}")
    tracemalloc.start()
    try:
        with pytest.raises(rio.RapporFileError) as caught:
            rio.read_reports(path, params)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.field == "cohort"
    assert peak < 40 * 2**20  # the file's text a few times over, not 160 MB
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ("1" + "0" * 30 + ",0,0,0,0,0,0,0,0", "reports"),
        ("5,9223372036854775808,0,0,0,0,0,0,0", "bit 0"),
    ],
)
def test_a_count_beyond_int64_is_refused_naming_its_field(row, field, params, tmp_path):
    zeros = "0," * 8 + "0\n"
    path = _write(tmp_path / "counts.csv", row + "\n" + zeros * 3)
    with pytest.raises(rio.RapporFileError, match="exceeds 9223372036854775807") as caught:
        rio.read_counts(path, params)
    assert (caught.value.line, caught.value.field) == (1, field)


def test_parameters_are_refused_above_int64_and_m_above_two_to_the_32(tmp_path):
    big_k = _write(tmp_path / "k.csv", f"k,h,m,p,q,f\n{10**30},2,4,0.5,0.75,0.5\n")
    with pytest.raises(rio.RapporFileError) as caught:
        rio.read_params(big_k)
    assert caught.value.field == "k"
    big_m = _write(tmp_path / "m.csv", f"k,h,m,p,q,f\n8,2,{2**32 + 1},0.5,0.75,0.5\n")
    with pytest.raises(rio.RapporFileError, match="4 bytes") as caught:
        rio.read_params(big_m)
    assert caught.value.field == "m"
    assert (
        rio.read_params(_write(tmp_path / "ok.csv", "k,h,m,p,q,f\n8,2,4294967296,0.5,0.75,0.5\n")).m
        == 2**32
    )


def test_sum_bits_checks_the_counters_against_the_budget_before_reading(tmp_path, capsys):
    """k = m = 2^20 with no reports at all used to try to allocate 8 TiB."""
    params = _write(tmp_path / "params.csv", "k,h,m,p,q,f\n1048576,2,1048576,0.5,0.75,0.5\n")
    reports = _write(tmp_path / "reports.csv", HEADER)
    code = rio.main(["sum-bits", "--params", str(params), "--reports", str(reports),
                     "--out", str(tmp_path / "out.csv")])  # fmt: skip
    assert code == 1
    message = capsys.readouterr().err
    assert f"{params}, line 2, field m:" in message and "memory budget" in message
    assert not (tmp_path / "out.csv").exists()
    empty = RapporReports(np.zeros(0, np.int64), np.zeros((0, 2**17), np.uint8), 2**20)
    with pytest.raises(ParameterError) as caught:
        rio.sum_bits(empty, 2**20)
    assert caught.value.name == "m"


def test_the_counts_reader_checks_the_budget_and_a_raised_budget_lets_it_through(params, tmp_path):
    counts = _write(tmp_path / "counts.csv", ("0," * 8 + "0\n") * 4)
    with budget.limits(memory_bytes=16 * 4 * 8 - 1), pytest.raises(rio.RapporFileError) as caught:
        rio.read_counts(counts, params)
    assert (caught.value.line, caught.value.field) == (1, "k")
    with budget.limits(memory_bytes=16 * 4 * 8):
        assert rio.read_counts(counts, params).reports.tolist() == [0, 0, 0, 0]


def test_hash_candidates_refuses_more_hashes_than_md5_gives_and_an_oversized_m(tmp_path, capsys):
    candidates = _write(tmp_path / "candidates.txt", "a\nb\n")
    for text, field in [("8,20,4", "h"), ("8,2,100000000", "m")]:
        params = _write(tmp_path / "params.csv", f"k,h,m,p,q,f\n{text},0.5,0.75,0.5\n")
        code = rio.main(["hash-candidates", "--params", str(params), "--candidates",
                         str(candidates), "--out", str(tmp_path / "map.csv")])  # fmt: skip
        assert code == 1
        assert f"{params}, line 2, field {field}:" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["params header", "reports header", "probability", "candidate"])
def test_an_echoed_field_is_cut_to_a_short_prefix(kind, params, tmp_path):
    huge = "x" * 10_000_000
    path, read = {
        "params header": (f"{huge}\n", rio.read_params),
        "reports header": (f"{huge}\n", lambda p: rio.read_reports(p, params)),
        "probability": (f"k,h,m,p,q,f\n8,2,4,{'9' * 10_000_000},0.75,0.5\n", rio.read_params),
        "candidate": (f"a\n {huge}\n", rio.read_candidates),
    }[kind]
    with pytest.raises(rio.RapporFileError) as caught:
        read(_write(tmp_path / "file.csv", path))
    assert len(str(caught.value)) < 400
    assert "10,000,000 characters" in str(caught.value) or "10,000,001" in str(caught.value)


# --- errors that named the wrong parameter -------------------------------------------------
def test_rappor_s_table_of_the_domain_blames_m_not_candidates():
    oracle = RAPPOR(epsilon=2.0, domain_size=1000, m=2**20)
    with pytest.raises(ParameterError) as caught:
        oracle.perturb(np.array([1, 2]), np.random.default_rng(0))
    assert caught.value.name == "m" and caught.value.value == 2**20


def test_loloha_s_default_g_beyond_the_hash_range_blames_epsilon():
    with pytest.raises(ParameterError) as caught:
        LOLOHA(epsilon=50.0, domain_size=100)
    assert caught.value.name == "epsilon" and caught.value.value == 50.0
    assert LOLOHA(epsilon=MAX_DEFAULT_EPSILON, domain_size=100).g <= 2**31  # the edge fits
    with pytest.raises(ParameterError) as caught:
        LOLOHA(epsilon=math.nextafter(MAX_DEFAULT_EPSILON, 100), domain_size=100)
    assert caught.value.name == "epsilon"


def test_pem_s_planning_size_is_named_n_hint():
    with pytest.raises(ParameterError) as caught:
        PEM(epsilon=2.0, k=4, m=16, n_hint=0)
    assert caught.value.name == "n_hint"
    with pytest.raises(TypeError, match="n_hint"):
        PEM(epsilon=2.0, k=4, m=16, n_hint=1.5)


@pytest.mark.parametrize("assumed", [1.5, 2**62, None, {"zipf": 1}])
def test_pem_refuses_an_assumed_distribution_of_the_wrong_kind(assumed):
    with pytest.raises(TypeError, match="assumed"):
        PEM(epsilon=2.0, k=4, m=16, assumed=assumed)


@pytest.mark.parametrize(
    "assumed", ["zipfx", [0.5, 0.5, 0.5], [0.5, math.nan, 0.1, 0.1], [[0.5] * 4]]
)
def test_pem_refuses_an_assumed_distribution_out_of_range(assumed):
    with pytest.raises(ParameterError) as caught:
        PEM(epsilon=2.0, k=4, m=16, assumed=assumed)
    assert caught.value.name == "assumed"


def test_pem_s_named_distributions_are_the_optimizer_s():
    for name in ASSUMED:
        assert pem_theory.assumed_frequencies(name).shape[0] > 0
        PEM(epsilon=2.0, k=4, m=16, assumed=name)
    with pytest.raises(ValueError):
        pem_theory.assumed_frequencies("not-a-shape")


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"etas": 5}, "etas"),
        ({"etas": "88"}, "etas"),
        ({"etas": (8, 8), "gamma": 0, "fractions": 3}, "fractions"),
        ({"etas": (8, 8), "gamma": 0, "candidate_sizes": 4}, "candidate_sizes"),
    ],
)
def test_pem_s_step_sequences_are_refused_by_name(options, name):
    with pytest.raises(TypeError, match=name):
        PEM(epsilon=2.0, k=4, m=16, **options)


def test_pem_accepts_step_sequences_as_lists():
    pem = PEM(epsilon=2.0, k=4, m=16, etas=[8, 8], gamma=0, fractions=[0.5, 0.5])
    assert pem.config.etas == (8, 8) and pem.etas == (8, 8)


@pytest.mark.parametrize("oracle", [GRR, HR, PGR])
@pytest.mark.parametrize("other", [OUE, OLH])
def test_another_protocol_s_reports_are_refused_naming_reports(oracle, other):
    """Stamped, the reports are refused by their maker; bare (read back from a file), by
    their type."""
    reports = other(epsilon=1.0, domain_size=8).perturb(np.arange(8), np.random.default_rng(0))
    with pytest.raises(ParameterError, match=f"made by {other.__name__}") as caught:
        oracle(epsilon=1.0, domain_size=8).estimate(reports)
    assert caught.value.name == "reports"
    with pytest.raises(ParameterError, match="numpy array of integers") as caught:
        oracle(epsilon=1.0, domain_size=8).estimate(bare(reports))
    assert caught.value.name == "reports"
    assert caught.value.value == type(reports).__name__


def test_check_int_sequence_names_the_parameter():
    assert check_int_sequence(np.array([2, 3]), "etas", minimum=1) == (2, 3)
    with pytest.raises(TypeError, match="etas"):
        check_int_sequence(5, "etas", minimum=1)
    with pytest.raises(ParameterError) as caught:
        check_int_sequence([2, 0], "etas", minimum=1)
    assert caught.value.name == "etas"
    with pytest.raises(ParameterError):
        check_int_sequence([], "etas", minimum=1)


# --- dBitFlip -------------------------------------------------------------------------------
def test_dbitflip_s_domain_is_capped_where_its_variance_stays_finite():
    with pytest.raises(ParameterError) as caught:
        DBitFlip(epsilon=1.0, domain_size=2**1000)
    assert caught.value.name == "domain_size" and "2^62" in caught.value.allowed
    with pytest.raises(ParameterError):
        DBitFlip(epsilon=1.0, domain_size=MAX_BUCKETS + 1)
    edge = DBitFlip(epsilon=1e-6, domain_size=MAX_BUCKETS)  # the smallest ε, the most users
    assert math.isfinite(edge.variance(2**63 - 1))
    assert math.isfinite(DBitFlip(epsilon=1.0, domain_size=MAX_BUCKETS).variance(10**7))


def test_dbitflip_s_rounds_are_one_report_replayed_for_the_auditor():
    oracle = DBitFlip(epsilon=1.0, domain_size=4, d=2)
    rounds = oracle.rounds(3)
    assert rounds.epsilon == oracle.epsilon and rounds.tau == 3
    rng = np.random.default_rng(1)
    sequences = rounds.perturb(np.array([0, 1, 2, 3] * 50), rng)
    assert sequences.shape == (200, 2 + 3 * 2)
    supports = oracle.round_supports(sequences, 0)
    assert supports.shape == (200, 3)
    assert np.all(supports == supports[:, :1])  # a replay supports a value in every round or none
    buckets, bits = sequences[:, :2], sequences[:, 2:4].astype(bool)
    assert np.array_equal(supports[:, 0], ((buckets == 0) & bits).any(axis=1))
    result = audit.lower_bound(rounds, 0, 1, rng=rng, trials=4000, max_trials=4000)
    assert result.epsilon <= oracle.epsilon
