"""google/rappor's five files: byte-exact round trips, refusals that name the line, the bit
order, and the end-to-end decode (files -> estimates within their standard errors).

``data/rappor/`` is a hand-written, noise-free collection (its README says what it holds).
Statistical assertions at ALPHA = 1e-4 (Bonferroni over the values each one checks), fixed
seeds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ldp.io import rappor as rio
from ldp.oracles.rappor import RapporReports
from ldp.oracles.rappor.google import collect, google_rappor

DATA = Path(__file__).parent / "data" / "rappor"
ALPHA = 1e-4
TRUTH = {"alpha": 8000, "beta": 5000, "gamma": 3500, "delta": 2000, "eps": 1500}
ABSENT = [f"other{i}" for i in range(15)]


def z_critical(alpha: float, count: int) -> float:
    """Two-sided normal cut-off at level alpha, Bonferroni over ``count`` values."""
    return float(stats.norm.isf(alpha / (2 * count)))


# --- the hand-written fixture -------------------------------------------------------------
@pytest.fixture
def params() -> rio.RapporParams:
    return rio.read_params(DATA / "params.csv")


def test_fixture_reads_as_written(params) -> None:
    assert params == rio.RapporParams(k=8, h=2, m=2, p=0.0, q=1.0, f=0.0)
    table = rio.read_reports(DATA / "reports.csv", params)
    assert table.clients == ("1", "2", "3", "4", "5")
    assert table.irr.cohorts.tolist() == [0, 1, 1, 0, 0]
    # "00101000" is bits 5 and 3 (the first character is bit 7): 2^5 + 2^3
    assert table.irr.as_integers().tolist() == [40, 66, 136, 6, 40]
    assert np.array_equal(table.bloom.bits, table.irr.bits)  # no noise
    assert rio.read_candidates(DATA / "candidates.txt") == ["banana", "mango", "fig", "lemon"]
    counts = rio.read_counts(DATA / "counts.csv", params)
    assert counts.reports.tolist() == [3, 2]
    assert counts.ones[0].tolist() == [0, 1, 1, 2, 0, 2, 0, 0]  # bit 0 first


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("params.csv", "params"),
        ("reports.csv", "reports"),
        ("candidates.txt", "candidates"),
        ("map.csv", "map"),
        ("counts.csv", "counts"),
    ],
)
def test_every_fixture_file_round_trips_byte_for_byte(name, kind, params, tmp_path) -> None:
    source, copy = DATA / name, tmp_path / name
    read, write = {
        "params": (rio.read_params, rio.write_params),
        "reports": (lambda p: rio.read_reports(p, params), rio.write_reports),
        "candidates": (rio.read_candidates, rio.write_candidates),
        "map": (lambda p: rio.read_candidate_map(p, params), rio.write_candidate_map),
        "counts": (lambda p: rio.read_counts(p, params), rio.write_counts),
    }[kind]
    write(copy, read(source))
    assert copy.read_bytes() == source.read_bytes()


def test_the_tools_reproduce_the_hand_written_map_and_counts(tmp_path) -> None:
    """hash-candidates and sum-bits write, from the fixture's candidates and reports, the
    very bytes of its hand-written map and counts (Bloom positions, 1-based offsets, bit
    order and CRLF line ends all agree)."""
    common = ["--params", str(DATA / "params.csv")]
    assert rio.main(["hash-candidates", *common, "--candidates", str(DATA / "candidates.txt"),
                     "--out", str(tmp_path / "map.csv")]) == 0  # fmt: skip
    assert rio.main(["sum-bits", *common, "--reports", str(DATA / "reports.csv"),
                     "--out", str(tmp_path / "counts.csv")]) == 0  # fmt: skip
    for name in ("map.csv", "counts.csv"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes()


@pytest.mark.parametrize("source", ["reports", "counts"])
def test_fixture_decodes_to_its_true_counts(source) -> None:
    """No noise, and every true value sets 2 distinct bits per cohort: least squares gives
    the counts exactly; the absent candidates are not selected and say why they have no SE."""
    inputs = (
        {"reports": DATA / "reports.csv", "candidates": DATA / "candidates.txt"}
        if source == "reports"
        else {"counts": DATA / "counts.csv", "candidate_map_file": DATA / "map.csv"}
    )
    with pytest.raises(ValueError, match="allow_no_noise=True"):
        rio.decode_files(DATA / "params.csv", **inputs)
    results = rio.decode_files(DATA / "params.csv", **inputs, allow_no_noise=True)
    assert results["string"].tolist()[:2] == ["banana", "mango"]
    np.testing.assert_allclose(results["estimate"][:2], [3.0, 2.0], atol=1e-9)
    np.testing.assert_allclose(results["proportion"][:2], [0.6, 0.4], atol=1e-9)
    absent = results.iloc[2:]
    assert not absent["selected"].any() and absent["std_error"].isna().all()
    assert (absent["note"] == rio.NOT_SELECTED).all()
    assert results.attrs["epsilon_one"] == np.inf and results.attrs["n"] == 5


# --- refusals ----------------------------------------------------------------------------
BAD = [
    ("params.csv", "k,h,m,p,q\n8,2,2,0.0,1.0\n", 1, "(header)"),
    ("params.csv", "k,h,m,p,q,f\n8,2,2,0.0,1.5,0.0\n", 2, "q"),
    ("params.csv", "k,h,m,p,q,f\n8,two,2,0.0,1.0,0.0\n", 2, "h"),
    ("reports.csv", "client,cohort,irr\n", 1, "(header)"),
    ("reports.csv", "client,cohort,bloom,prr,irr\n1,0,,,0010100\n", 2, "irr"),
    ("reports.csv", "client,cohort,bloom,prr,irr\n1,0,,,00101000\n2,2,,,00101000\n", 3, "cohort"),
    ("reports.csv", "client,cohort,bloom,prr,irr\n1,-1,,,00101000\n", 2, "cohort"),
    ("reports.csv", "client,cohort,bloom,prr,irr\n1,0,,,0010100x\n", 2, "irr"),
    (
        "reports.csv",
        "client,cohort,bloom,prr,irr\n1,0,,,00101000\n2,0,00101000,,00101000\n",
        2,
        "bloom",
    ),  # fmt: skip
    ("reports.csv", "client,cohort,bloom,prr,irr\n1,0,00101000\n", 2, "(line)"),
    ("candidates.txt", "banana\n mango\n", 2, "candidate"),
    ("candidates.txt", "banana\nmango\nbanana\n", 3, "candidate"),
    ("map.csv", "banana,4,6,12,16\nmango,3,2,10,17\n", 2, "position 4"),
    ("map.csv", "banana,4,6,12\n", 1, "(line)"),
    ("counts.csv", "3,0,1,1,2,0,2,0,0\n2,0,1,0,1,0,0,1,3\n", 2, "bit 7"),
    ("counts.csv", "3,0,1,1,2,0,2,0,0\n", 2, "(line)"),
]


@pytest.mark.parametrize(("name", "text", "line", "field"), BAD)
def test_a_bad_file_names_its_file_line_and_field(name, text, line, field, params, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    read = {
        "params.csv": rio.read_params,
        "reports.csv": lambda p: rio.read_reports(p, params),
        "candidates.txt": rio.read_candidates,
        "map.csv": lambda p: rio.read_candidate_map(p, params),
        "counts.csv": lambda p: rio.read_counts(p, params),
    }[name]
    with pytest.raises(rio.RapporFileError) as caught:
        read(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), line, field)
    assert str(error).startswith(f"{path}, line {line}, field {field}: ")


def test_the_command_reports_a_bad_file_and_fails(tmp_path, capsys) -> None:
    bad = tmp_path / "reports.csv"
    shutil.copy(DATA / "reports.csv", bad)
    bad.write_bytes(bad.read_bytes().replace(b"1,0,00101000", b"1,7,00101000", 1))
    code = rio.main(["decode", "--params", str(DATA / "params.csv"), "--reports", str(bad),
                     "--candidates", str(DATA / "candidates.txt"), "--allow-no-noise"])  # fmt: skip
    assert code == 1
    assert f"{bad}, line 2, field cohort: 7 is not in [0, m = 2)" in capsys.readouterr().err


# --- Google's clients, written, read back and decoded ---------------------------------------
@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> tuple[Path, rio.RapporParams, RapporReports]:
    """20,000 Google Python clients (k = 32, m = 32, f = 0.25, p = 0.25, q = 0.75) report one
    of 5 strings; written with the bloom and prr columns, as the reference's simulator does."""
    folder = tmp_path_factory.mktemp("rappor")
    params = rio.RapporParams(k=32, h=2, m=32, p=0.25, q=0.75, f=0.25)
    oracle = params.oracle()
    values = [v.encode() for v, c in TRUTH.items() for _ in range(c)]
    irr, clients = collect(oracle, values, np.random.default_rng(20261126))
    blooms = [c.bloom(v) for c, v in zip(clients, values, strict=True)]
    prrs = [c.permanent(v) for c, v in zip(clients, values, strict=True)]

    def as_reports(integers: list[int]) -> RapporReports:
        return RapporReports.from_integers(irr.cohorts, np.array(integers), 32)

    table = rio.ReportsTable(
        tuple(str(i) for i in range(1, len(values) + 1)), irr, as_reports(blooms), as_reports(prrs)
    )
    rio.write_params(folder / "params.csv", params)
    rio.write_reports(folder / "reports.csv", table)
    rio.write_candidates(folder / "candidates.txt", list(TRUTH) + ABSENT)
    return folder, params, irr


def test_written_reports_read_back_identically(collection, tmp_path) -> None:
    folder, params, irr = collection
    table = rio.read_reports(folder / "reports.csv", params)
    assert np.array_equal(table.irr.bits, irr.bits)
    assert np.array_equal(table.irr.cohorts, irr.cohorts)
    # the strings are the reference client's bit_string: bit k-1 first, as format(x, "032b")
    first = (folder / "reports.csv").read_text().splitlines()[1].split(",")
    assert first[4] == format(int(irr.as_integers()[0]), "032b")
    rio.write_reports(tmp_path / "again.csv", table)
    assert (tmp_path / "again.csv").read_bytes() == (folder / "reports.csv").read_bytes()
    for write, read, name in [
        (rio.write_counts, lambda p: rio.read_counts(p, params), "counts.csv"),
        (rio.write_candidate_map, lambda p: rio.read_candidate_map(p, params), "map.csv"),
    ]:
        data = (
            rio.sum_bits(table.irr, params.m)
            if name == "counts.csv"
            else rio.candidate_map(list(TRUTH), params)
        )
        write(tmp_path / name, data)
        write(tmp_path / f"2{name}", read(tmp_path / name))
        assert (tmp_path / f"2{name}").read_bytes() == (tmp_path / name).read_bytes()


def _z_scores(results) -> np.ndarray:
    rows = results.set_index("string").loc[list(TRUTH)]
    return ((rows["estimate"] - np.array(list(TRUTH.values()))) / rows["std_error"]).to_numpy()


def test_files_decode_to_the_true_counts_within_their_standard_errors(collection) -> None:
    folder, _, _ = collection
    results = rio.decode_files(
        folder / "params.csv", folder / "reports.csv", folder / "candidates.txt"
    )
    detected = set(results.loc[results["detected"], "string"])
    assert detected >= set(TRUTH)  # (absent ones may be detected at the decoder's α = 0.05)
    assert np.abs(_z_scores(results)).max() < z_critical(ALPHA, len(TRUTH))


def test_the_command_writes_the_results_table(collection, tmp_path) -> None:
    folder, _, _ = collection
    out = tmp_path / "results.csv"
    code = rio.main(["decode", "--params", str(folder / "params.csv"), "--reports",
                     str(folder / "reports.csv"), "--candidates", str(folder / "candidates.txt"),
                     "--out", str(out)])  # fmt: skip
    assert code == 0
    lines = out.read_text().splitlines()
    assert lines[0] == (
        "string,estimate,std_error,proportion,prop_std_error,prop_low_95,prop_high_95,"
        "selected,detected,note"
    )
    assert len(lines) == 1 + len(TRUTH) + len(ABSENT)


def test_reading_bits_least_significant_first_does_not_recover_the_counts(
    collection, tmp_path
) -> None:
    """The bit-order trap: the same reports with each bit string reversed (what a reader
    taking the first character as bit 0 sees) decode without error but far from the truth,
    so the decode test above would fail with the wrong order."""
    folder, _, _ = collection
    lines = (folder / "reports.csv").read_text().splitlines()
    flipped = [lines[0]] + [",".join([*r.split(",")[:4], r.split(",")[4][::-1]]) for r in lines[1:]]
    (tmp_path / "reports.csv").write_text("\n".join(flipped) + "\n")
    results = rio.decode_files(
        folder / "params.csv", tmp_path / "reports.csv", folder / "candidates.txt"
    )
    z = _z_scores(results)
    assert not (np.abs(z) < z_critical(ALPHA, len(TRUTH))).all(), z
    assert not set(results.loc[results["detected"], "string"]) >= set(TRUTH)


def test_the_decoder_uses_the_clients_realised_f(collection) -> None:
    folder, params, _ = collection
    results = rio.decode_files(folder / "params.csv", folder / "reports.csv",
                               folder / "candidates.txt", client="cpp")  # fmt: skip
    assert results.attrs["f"] == 32 / 128 == params.f  # f = 1/4 is realised exactly by both
    assert google_rappor(f=0.3, client="cpp").f_realised == 38 / 128


def test_google_s_quoted_headers_are_read(tmp_path) -> None:
    """Google's analysis app ships its params file as R's write.csv writes it."""
    path = tmp_path / "params.csv"
    path.write_text('"k","h","m","p","q","f"\n32,2,32,0.25,0.75,0.25\n')
    assert rio.read_params(path) == rio.RapporParams(k=32, h=2, m=32, p=0.25, q=0.75, f=0.25)
    path.write_text('"k","h","m","p","q"\n32,2,32,0.25,0.75\n')  # a wrong header still fails
    with pytest.raises(rio.RapporFileError, match="header"):
        rio.read_params(path)


def test_r_s_createmap_form_reads_as_the_same_bloom_bits(tmp_path) -> None:
    """R's map: distinct sorted positions, rows padded with empty fields, quoted names.
    ``mango`` hashes twice to bit 1 in cohort 1 (position 10); repeating it sets the same
    bits as the reference's full row."""
    params = rio.RapporParams(k=8, h=2, m=2, p=0.0, q=1.0, f=0.0)
    full, sparse = tmp_path / "full.csv", tmp_path / "r.csv"
    full.write_text("banana,4,6,12,16\nmango,2,3,10,10\n")
    sparse.write_text('"banana",4,6,12,16\n"mango",2,3,10,\n')
    a, b = rio.read_candidate_map(full, params), rio.read_candidate_map(sparse, params)
    assert a.candidates == b.candidates == ("banana", "mango")
    np.testing.assert_array_equal(a.positions, b.positions)
    for text, why in (
        ('"mango",10,2,3,\n', "distinct and sorted"),
        ('"mango",2,3,,\n', "cohort 1 has 0 positions"),
        ('"mango",2,3,4,10,\n', "6 fields, expected 1 \\+ m h = 5"),
        ('"mango",2,3,4,\n', "cohort 0 has 3 positions"),
        ("mango,2,3,10\n", "fields, expected"),  # short without padding: the reference's
    ):
        sparse.write_text(text)
        with pytest.raises(rio.RapporFileError, match=why):
            rio.read_candidate_map(sparse, params)


def test_hash_and_sum_take_google_s_interface() -> None:
    """``hash_candidates.py params.csv < candidates > map`` and ``sum_bits.py params.csv <
    reports > counts``: the same bytes as the fixture's files, through standard input and
    output; the parameters file given twice (or not at all) is a usage error."""
    import subprocess
    import sys

    data = DATA
    for command, source, expected in (
        ("hash-candidates", "candidates.txt", "map.csv"),
        ("sum-bits", "reports.csv", "counts.csv"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "ldp.io.rappor", command, str(data / "params.csv")],
            input=(data / source).read_bytes(),
            capture_output=True,
            check=True,
        )
        assert done.stdout == (data / expected).read_bytes(), command
    twice = [sys.executable, "-m", "ldp.io.rappor", "sum-bits", str(data / "params.csv")]
    twice += ["--params", str(data / "params.csv")]
    refused = subprocess.run(twice, capture_output=True, text=True)
    assert refused.returncode == 2 and "give the parameters file once" in refused.stderr
