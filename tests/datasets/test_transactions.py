"""Set-valued data: CSR invariants, the FIMI reader, the kosarak loader, the calibrated
surrogate and the synthetic generator with planted itemsets.

Statistical checks: every figure is compared with its target within Z = 6 standard errors
of its sampling noise (two-sided false-alarm rate 2e-9 per comparison; about 250
comparisons, so below 1e-6 per run), plus, for the surrogate's ranks 9-156, an allowance
of 2% of the target for the exponential-clock fit of the background weights (measured
bias: mean -0.16%, no rank beyond 1.5% at 4 x 990,002 users, docs in
``ldp.datasets.set_surrogates``). Each check is a function returning its failures, and
each is shown to fail on a planted deviation of about the smallest size it is meant to
catch.
"""

from __future__ import annotations

import gzip
import itertools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ldp.datasets import (
    DataFileError,
    Transactions,
    load_kosarak_sets,
    read_transactions,
    set_surrogates,
    synthetic_sets,
    transactions,
)
from ldp.datasets.surrogates import kosarak_supports
from ldp.datasets.transactions import planted_support
from ldp.validation import ParameterError

REPO = Path(__file__).resolve().parents[2]
#: Standard errors allowed between a figure and its target (false alarm 2e-9 per check).
Z = 6.0
#: Surrogate users in the statistical checks.
N = 100_000
#: Allowance for the background fit's bias, relative to the target (ranks 9-156).
FIT_ALLOWANCE = 0.02


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LDP_DATA_DIR", raising=False)


def _csr(sets: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in sets])]).astype(np.int64)
    items = np.array([i for s in sets for i in s], dtype=np.int64)
    return offsets, items


def _as_lists(data: Transactions) -> list[list[int]]:
    return [data.set_of(u).tolist() for u in range(data.n)]


# ------------------------------------------------------------------ CSR and validation
def test_views_of_a_small_population() -> None:
    data = Transactions.from_lists([[5, 1, 5], [], [2, 1], [1]], domain_size=6, name="toy")
    assert _as_lists(data) == [[1, 5], [], [1, 2], [1]]
    assert data.n == 4 and data.sizes.tolist() == [2, 0, 2, 1]
    assert data.offsets.dtype == np.int64 and data.items.dtype == np.int64
    assert data.users_of_items().tolist() == [0, 0, 2, 2, 3]
    assert data.item_counts().tolist() == [0, 3, 1, 0, 0, 1]
    assert data.top_items(3).tolist() == [1, 2, 5]  # ties (2 and 5 once each): by id
    ids, counts = data.top_items(10, with_counts=True)
    assert ids.tolist() == [1, 2, 5] and counts.tolist() == [3, 1, 1]  # held items only
    assert data.itemset_counts([(1, 2), (1,), (), (2, 5), [1, 1]]).tolist() == [1, 3, 4, 0, 3]
    assert data.notes == ("removed 1 repeated item(s) within users' sets",)
    assert repr(data) == (
        "Transactions(name='toy', n=4, domain_size=6, items=5, source='synthetic')"
    )
    with pytest.raises(ValueError, match="read-only"):
        data.items[0] = 3
    with pytest.raises(ParameterError, match="u must be <= 3"):
        data.set_of(4)


def test_take_subsets_reorders_and_repeats() -> None:
    data = Transactions.from_lists([[0], [1, 2], [], [3]], domain_size=4, params={"a": 1})
    assert _as_lists(data.take(np.array([3, 1, 1, 2]))) == [[3], [1, 2], [1, 2], []]
    assert _as_lists(data.take(np.array([True, False, False, True]))) == [[0], [3]]
    assert data.take(np.array([], dtype=np.int64)).n == 0
    assert data.take(np.array([1])).params == {"a": 1}
    with pytest.raises(ParameterError, match=r"users must lie in \[0, 4\), found 4"):
        data.take(np.array([0, 4]))
    with pytest.raises(ParameterError, match="boolean mask"):
        data.take(np.array([True]))


BAD_CSR = [
    ({"offsets": [1, 2], "items": [0, 1]}, ParameterError, r"offsets\[0\] must be 0"),
    ({"offsets": [0, 2, 1, 3], "items": [0, 1, 2]}, ParameterError, "non-decreasing"),
    ({"offsets": [0, 2], "items": [0, 1, 2]}, ParameterError, r"offsets\[-1\] must equal"),
    ({"offsets": [], "items": []}, ParameterError, "n \\+ 1 >= 1"),
    ({"offsets": [0, 2], "items": [0, 4]}, ParameterError, r"\[0, domain_size=4\), found 4"),
    ({"offsets": [0, 1, 2], "items": [0, -1]}, ParameterError, r"found -1 \(user 1\)"),
    ({"offsets": [0, 2], "items": [2, 1]}, ParameterError, "user 0 is not sorted ascending"),
    ({"offsets": [0, 1, 3], "items": [3, 2, 2]}, ParameterError, "user 1 repeats item 2"),
    ({"offsets": [0, 2], "items": [0.0, 1.0]}, TypeError, "items must be an array of integ"),
    ({"offsets": [[0, 1]], "items": [0]}, ParameterError, "offsets must be one-dimensional"),
    ({"offsets": [0, 1], "items": [0], "source": "real:x"}, ParameterError, "source must be"),
    ({"offsets": [0, 1], "items": [0], "domain_size": 0}, ParameterError, "domain_size must"),
    ({"offsets": [0, 1], "items": [0], "domain_size": 2.0}, TypeError, "domain_size must"),
]


@pytest.mark.parametrize(("fields", "error", "message"), BAD_CSR)
def test_each_broken_invariant_is_refused_by_name(fields: dict, error: type, message: str) -> None:
    arguments = {"domain_size": 4, **fields}
    for key in ("offsets", "items"):  # an empty list is an empty int64 array
        arguments[key] = np.array(fields[key], dtype=None if len(fields[key]) else np.int64)
    with pytest.raises(error, match=message):
        Transactions(**arguments)


def test_user_boundaries_may_step_down_and_empty_users_count() -> None:
    data = Transactions(
        offsets=np.array([0, 2, 2, 4, 4]), items=np.array([3, 5, 0, 5]), domain_size=6
    )
    assert data.sizes.tolist() == [2, 0, 2, 0] and data.itemset_counts([()]).tolist() == [4]


def test_from_lists_names_the_offending_user() -> None:
    with pytest.raises(ParameterError, match=r"sets\[1\] holds item 9"):
        Transactions.from_lists([[1], [2, 9]], domain_size=5)
    with pytest.raises(TypeError, match=r"sets\[0\] must hold integer"):
        Transactions.from_lists([[1.5]], domain_size=5)
    with pytest.raises(TypeError, match="string"):
        Transactions.from_lists(["12"], domain_size=5)
    with pytest.raises(ParameterError, match=r"itemsets\[1\] holds item 5"):
        Transactions.from_lists([[1]], domain_size=5).itemset_counts([(1,), (1, 5)])


def test_itemset_counts_match_brute_force() -> None:
    rng = np.random.default_rng(3)
    sets = [rng.choice(30, size=rng.integers(0, 9), replace=False).tolist() for _ in range(500)]
    data = Transactions.from_lists(sets, domain_size=30)
    itemsets = [
        (),
        (4,),
        *itertools.combinations(range(8), 2),
        *itertools.combinations(range(6), 3),
    ]
    itemsets += [tuple(rng.choice(30, size=4, replace=False)) for _ in range(50)]
    expected = [sum(set(q) <= set(s) for s in sets) for q in itemsets]
    assert data.itemset_counts(itemsets).tolist() == expected
    # batches of at most _BITMAP_ITEMS distinct items give the same counts
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(transactions, "_BITMAP_ITEMS", 5)
        assert data.itemset_counts(itemsets).tolist() == expected


# ---------------------------------------------------------------------------- reader
def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_reader_keeps_empty_lines_and_removes_repeats(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.dat", b"3 1 2\n\n7 7 1\r\n \t \n9\t4  \n")
    offsets, items, notes = read_transactions(path)
    assert offsets.tolist() == [0, 3, 3, 5, 5, 7]
    assert items.tolist() == [1, 2, 3, 1, 7, 4, 9]
    assert any("removed 1 repeated item(s) within 1 line(s)" in note for note in notes)
    assert any("2 empty line(s) kept as users with an empty set" in note for note in notes)
    # no newline after the last line: the same users; a trailing newline makes none
    same = read_transactions(_write(tmp_path / "u.dat", b"3 1 2\n\n7 7 1\r\n \t \n9\t4  "))
    assert same[0].tolist() == offsets.tolist() and same[1].tolist() == items.tolist()
    assert read_transactions(_write(tmp_path / "v.dat", b"\n"))[0].tolist() == [0, 0]
    assert read_transactions(_write(tmp_path / "w.dat", b"\n\n5"))[0].tolist() == [0, 0, 0, 1]


def test_reader_refuses_bad_lines_naming_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.dat", b"1 2\n3\n4 5x 6\n7,8\n")
    with pytest.raises(
        DataFileError,
        match=r"t\.dat, line 3: not a list of integer item ids "
        r"\('x' at byte 4 of '4 5x 6'\)",
    ) as raised:
        read_transactions(path)
    assert raised.value.line == 3 and raised.value.path == str(path)
    offsets, items, notes = read_transactions(path, on_bad_line="skip")
    assert offsets.tolist() == [0, 2, 3] and items.tolist() == [1, 2, 3]
    assert notes == [
        f"{path}: skipped 2 malformed line(s) (first: line 3: not a list of integer item "
        "ids ('x' at byte 4 of '4 5x 6'))"
    ]
    big = _write(tmp_path / "big.dat", b"2147483647\n1 2147483648\n" + b"9" * 40 + b"\n")
    with pytest.raises(DataFileError, match=r"line 2: item id 2147483648 is not below 2\*\*31"):
        read_transactions(big)
    offsets, items, notes = read_transactions(big, on_bad_line="skip")
    assert items.tolist() == [2**31 - 1] and "skipped 2 malformed" in notes[0]
    with pytest.raises(ParameterError, match="on_bad_line must be one of"):
        read_transactions(path, on_bad_line="ignore")


def test_reader_refuses_what_is_not_a_transaction_file(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no transactions found"):
        read_transactions(_write(tmp_path / "empty.dat", b""))
    with pytest.raises(DataFileError, match="no transactions found"):
        read_transactions(_write(tmp_path / "allbad.dat", b"a\nb\n"), on_bad_line="skip")
    with pytest.raises(DataFileError, match="not a text file"):
        read_transactions(_write(tmp_path / "x.png", b"\x89PNG\r\n\x1a\n\x00\x00"))
    with pytest.raises(DataFileError, match=r"line 2: longer than 1,048,576 bytes"):
        read_transactions(_write(tmp_path / "long.dat", b"1\n" + b"2 " * (1 << 19) + b"3\n"))
    with pytest.raises(FileNotFoundError):
        read_transactions(tmp_path / "missing.dat")


def test_reader_is_the_same_across_block_boundaries_and_gzip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(7)
    lines = [" ".join(map(str, rng.integers(0, 10**6, rng.integers(0, 12)))) for _ in range(3000)]
    text = ("\n".join(lines) + "\n").encode()
    path = _write(tmp_path / "t.dat", text)
    expected = Transactions.from_lists([map(int, line.split()) for line in lines], 10**6)
    whole = read_transactions(path)
    with gzip.open(tmp_path / "t.dat.gz", "wb") as handle:
        handle.write(text)
    monkeypatch.setattr(transactions, "_BLOCK_BYTES", 37)  # many blocks, cut mid-line
    for offsets, items, _ in (
        whole,
        read_transactions(path),
        read_transactions(tmp_path / "t.dat.gz"),
    ):
        assert offsets.tolist() == expected.offsets.tolist()
        assert items.tolist() == expected.items.tolist()
    # a line number far into the file, past many blocks
    _write(path, text + b"1 2\n5 - 6\n")
    with pytest.raises(DataFileError, match=r"line 3002: not a list"):
        read_transactions(path)


# --------------------------------------------------------------------------- loader
def test_load_kosarak_sets_from_a_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "kosarak.dat", b"1 3\n6\n\n11 6 6 3\n41270\n2 5\n")
    data = load_kosarak_sets(path=path)
    assert data.source == "real" and data.name == "kosarak"
    assert data.n == 6 and data.domain_size == 41_271  # max id + 1, at least kosarak's
    assert _as_lists(data) == [[1, 3], [6], [], [3, 6, 11], [41270], [2, 5]]
    assert data.params == {
        "source": "real",
        "path": str(path.resolve()),
        "n": 6,
        "seed": 0,
        "on_bad_line": "raise",
    }
    assert any("repeated" in note for note in data.notes)
    sub = load_kosarak_sets(path=path, n=3, seed=4)
    assert sub.n == 3 and sub.params["n"] == 3 and "subset of 3" in sub.notes[-1]
    kept = _as_lists(sub)
    rows = [row for row in _as_lists(data) if row in kept]
    assert rows == kept  # a subset, in file order
    assert _as_lists(load_kosarak_sets(path=path, n=3, seed=4)) == kept
    with pytest.raises(ParameterError, match="n must be <= 6"):
        load_kosarak_sets(path=path, n=7)
    with pytest.raises(FileNotFoundError):
        load_kosarak_sets(path=tmp_path / "nope.dat")
    with pytest.raises(ValueError, match="source='surrogate' and a path"):
        load_kosarak_sets(path=path, source="surrogate")
    with pytest.raises(ParameterError, match="source must be one of"):
        load_kosarak_sets(source="file")


def test_the_cache_is_used_and_a_corrupt_entry_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    first = load_kosarak_sets(n=3000, seed=2, cache_dir=directory)
    (entry,) = directory.iterdir()
    again = load_kosarak_sets(n=3000, seed=2, cache_dir=directory)
    assert np.array_equal(first.items, again.items) and first.params == again.params
    raw = bytearray(entry.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    entry.write_bytes(bytes(raw))
    with pytest.warns(RuntimeWarning, match="unreadable"):
        rebuilt = load_kosarak_sets(n=3000, seed=2, cache_dir=directory)
    assert np.array_equal(first.offsets, rebuilt.offsets)
    assert np.array_equal(first.items, rebuilt.items)
    assert sorted(p.suffix for p in directory.iterdir()) == [".npz"]  # no temporary left
    fresh = load_kosarak_sets(n=3000, seed=2, cache=False)
    assert np.array_equal(first.items, fresh.items)


# ------------------------------------------------------------------------- surrogate
def length_failures(data: Transactions) -> list[str]:
    """The length law against the embedded figures (b), within Z standard errors."""
    sizes, n = data.sizes, data.n
    failures = [f"a transaction of {sizes.max()} items"] if sizes.max() > 2500 else []
    figures = [(f"P(L = {k})", sizes == k, p) for k, p in set_surrogates.KOSARAK_LENGTH_PMF.items()]
    figures += [
        (f"P(L >= {k})", sizes >= k, p) for k, p in set_surrogates.KOSARAK_LENGTH_SURVIVAL.items()
    ]
    for label, event, target in figures:
        observed = event.mean()
        if abs(observed - target) > Z * np.sqrt(target * (1 - target) / n):
            failures.append(f"{label} = {observed:.5f}, target {target:.5f}")
    return failures


def support_failures(data: Transactions, ids: np.ndarray) -> list[str]:
    """Supports of ranks 1-156 against (a): each within Z SE (+ the fit allowance beyond 8),
    and the total of ranks 9-156 within Z SE of the per-user count (+ half the allowance)."""
    target = kosarak_supports()[:156]
    observed = data.item_counts()[ids[:156]] / data.n
    allowance = np.where(np.arange(156) < set_surrogates.HEAD, 0.0, FIT_ALLOWANCE)
    noise = Z * np.sqrt(target * (1 - target) / data.n)
    failures = [
        f"rank {r + 1}: support {observed[r]:.5f}, target {target[r]:.5f}"
        for r in np.flatnonzero(np.abs(observed - target) > noise + allowance * target)
    ]
    per_user = np.bincount(data.users_of_items()[np.isin(data.items, ids[8:156])], minlength=data.n)
    total = target[8:].sum()
    if abs(per_user.mean() - total) > Z * per_user.std() / np.sqrt(data.n) + 0.01 * total:
        failures.append(
            f"ranks 9-156 hold {per_user.mean():.4f} items per user, target {total:.4f}"
        )
    return failures


def lift_failures(data: Transactions, ids: np.ndarray) -> list[str]:
    """Head pair supports against lift x s_i x s_j of (a) and (c), each within Z SE."""
    support = kosarak_supports()
    pairs = list(set_surrogates.KOSARAK_HEAD_LIFTS.items())
    counts = data.itemset_counts([(ids[i - 1], ids[j - 1]) for (i, j), _ in pairs])
    failures = []
    for ((i, j), lift), count in zip(pairs, counts, strict=True):
        target = lift * support[i - 1] * support[j - 1]
        if abs(count / data.n - target) > Z * np.sqrt(target * (1 - target) / data.n):
            observed = count / data.n / (support[i - 1] * support[j - 1])
            failures.append(f"ranks ({i}, {j}): lift {observed:.3f}, target {lift}")
    return failures


def _surrogate(seed: int, model: set_surrogates.SetModel | None = None):
    offsets, items = set_surrogates.kosarak_sets_surrogate(
        N, np.random.default_rng(seed), model=model
    )
    data = Transactions(offsets=offsets, items=items, domain_size=41_271, source="surrogate")
    return data, set_surrogates.rank_ids(np.random.default_rng(seed))


@pytest.fixture(scope="module")
def surrogate() -> tuple[Transactions, np.ndarray]:
    return _surrogate(11)


def test_surrogate_shape_and_ids(surrogate) -> None:
    data, ids = surrogate
    assert data.n == N and data.domain_size == 41_271 and data.sizes.min() >= 1
    assert ids[:4].tolist() == [6, 3, 11, 1] and sorted(ids.tolist()) == list(range(1, 41_271))
    assert data.item_counts()[0] == 0  # id 0 unused
    assert data.top_items(4).tolist() == [6, 3, 11, 1]


def test_surrogate_length_law(surrogate) -> None:
    assert length_failures(surrogate[0]) == []


def test_surrogate_supports(surrogate) -> None:
    assert support_failures(*surrogate) == []


def test_surrogate_head_lifts(surrogate) -> None:
    assert lift_failures(*surrogate) == []


def test_surrogate_is_deterministic_for_a_seed(surrogate) -> None:
    offsets, items = set_surrogates.kosarak_sets_surrogate(2000, np.random.default_rng(5))
    again = set_surrogates.kosarak_sets_surrogate(2000, np.random.default_rng(5))
    other = set_surrogates.kosarak_sets_surrogate(2000, np.random.default_rng(6))
    assert np.array_equal(offsets, again[0]) and np.array_equal(items, again[1])
    assert not np.array_equal(items[:100], other[1][:100])
    first = load_kosarak_sets(n=2000, seed=3, cache=False)
    assert np.array_equal(first.items, load_kosarak_sets(n=2000, seed=3, cache=False).items)
    assert first.params == {"source": "surrogate", "n": 2000, "seed": 3, "model": 1}


def test_the_checks_catch_planted_deviations() -> None:
    """Each check fails on a surrogate built from a wrong figure, at about the smallest
    deviation it is meant to catch at N = 100,000 users."""
    # the length law: 0.01 of the mass moved from L = 2 to L = 1 (8.8 SE and 7.9 SE)
    pmf = set_surrogates.kosarak_length_pmf().copy()
    pmf[0] += 0.01
    pmf[1] -= 0.01
    wrong_length = _surrogate(12, set_surrogates.build_model(length_pmf=pmf))
    assert len(length_failures(wrong_length[0])) >= 2
    # the lifts: the pairs (5, 6), (5, 8) and (6, 8) at lift 1.4 instead of 2.1 / 2.1 / 6.3
    lifts = dict(set_surrogates.KOSARAK_HEAD_LIFTS) | {(5, 6): 1.4, (5, 8): 1.4, (6, 8): 1.4}
    wrong_lifts = _surrogate(13, set_surrogates.build_model(lifts=lifts))
    failed = lift_failures(*wrong_lifts)
    assert {line.split(":")[0] for line in failed} == {
        "ranks (5, 6)",
        "ranks (5, 8)",
        "ranks (6, 8)",
    }
    # the supports: ranks 9-20 made 15% more frequent
    supports = kosarak_supports()
    supports[8:20] *= 1.15
    wrong_supports = _surrogate(14, set_surrogates.build_model(supports=supports))
    failed = support_failures(*wrong_supports)
    assert len(failed) >= 6 and all(line.startswith(("rank", "ranks 9-156")) for line in failed)


def test_the_model_reproduces_its_figures_exactly() -> None:
    model = set_surrogates.kosarak_sets_model()
    pmf = model.length_pmf
    for k, p in set_surrogates.KOSARAK_LENGTH_PMF.items():
        assert pmf[k - 1] == pytest.approx(p, rel=5e-5)
    for k, p in set_surrogates.KOSARAK_LENGTH_SURVIVAL.items():
        assert pmf[k - 1 :].sum() == pytest.approx(p, rel=5e-5)
    # P(L) = sum_h P(h) P(L | h): the coupling keeps the length law
    assert model.head_count_pmf @ model.length_given_head == pytest.approx(pmf, abs=1e-12)
    assert model.mean_length == pytest.approx(8.010, abs=5e-4)
    # the probit's pair probabilities are lift x s_i x s_j
    a, r = model.thresholds, model.correlation
    pairs = model.pair_supports()
    for i, j in itertools.combinations(range(8), 2):
        exact = set_surrogates.bivariate_normal_cdf(a[i], a[j], r[i, j])
        assert exact == pytest.approx(pairs[i, j], rel=1e-9)
    assert np.linalg.eigvalsh(r)[0] > 0.2
    assert model.supports[:156] == pytest.approx(kosarak_supports()[:156], rel=1e-12)
    assert model.tail_scale == pytest.approx(0.980, abs=1e-3)


# ------------------------------------------------------------------------- synthetic
PLANTED = (((1, 2), 0.2), ((3, 4, 5), 0.1))


def support_check(data: Transactions, itemsets, targets) -> list[str]:
    counts = data.itemset_counts(itemsets)
    return [
        f"{itemset}: {count / data.n:.5f}, target {target:.5f}"
        for itemset, count, target in zip(itemsets, counts, targets, strict=True)
        if abs(count / data.n - target) > Z * np.sqrt(target * (1 - target) / data.n)
    ]


def test_synthetic_planted_supports_match_the_closed_form() -> None:
    data = synthetic_sets(n=200_000, seed=1)
    assert data.source == "synthetic" and data.domain_size == 1024
    assert data.params == {
        "n": 200_000,
        "domain_size": 1024,
        "mean_size": 8.0,
        "planted": [[[1, 2], 0.2], [[3, 4, 5], 0.1]],
        "zipf_s": 1.1,
        "seed": 1,
    }
    itemsets = [(1, 2), (3, 4, 5), (3, 4), (1, 3), (2, 4, 5), (0,), (1,), (0, 1, 2), (7, 9)]
    targets = [planted_support(itemset) for itemset in itemsets]
    assert targets[0] >= 0.2 and targets[1] >= 0.1
    assert support_check(data, itemsets, targets) == []
    # the check can fail: the planted probabilities alone (ignoring the background)
    assert len(support_check(data, itemsets[:2], [0.2, 0.1])) == 2
    # every item's count, against its closed form (chi-square-free: each within Z SE)
    items = list(range(0, 1024, 97))
    assert support_check(data, [(j,) for j in items], [planted_support((j,)) for j in items]) == []


def test_synthetic_edge_cases_and_validation() -> None:
    bare = synthetic_sets(n=50_000, mean_size=0.0, seed=2)  # planted itemsets only
    assert set(bare.sizes.tolist()) <= {0, 2, 3, 5}
    assert planted_support((1, 2), mean_size=0.0) == pytest.approx(0.2, abs=1e-15)
    assert planted_support((1, 3), mean_size=0.0) == pytest.approx(0.02, abs=1e-15)
    assert support_check(bare, [(1, 2), (1, 3)], [0.2, 0.02]) == []
    # changing mean_size keeps who holds which planted itemset (its own stream)
    planted_only = synthetic_sets(n=2000, seed=3, mean_size=0.0)
    with_background = synthetic_sets(n=2000, seed=3, mean_size=4.0)
    for u in range(planted_only.n):
        assert set(planted_only.set_of(u).tolist()) <= set(with_background.set_of(u).tolist())
    with pytest.raises(ParameterError, match=r"planted\[0\] holds item 1024"):
        synthetic_sets(n=10, planted=(((1, 1024), 0.5),))
    with pytest.raises(ParameterError, match="distinct"):
        synthetic_sets(n=10, planted=(((1, 1), 0.5),))
    with pytest.raises(ParameterError, match=r"planted\[0\] probability must lie in \[0, 1\]"):
        synthetic_sets(n=10, planted=(((1,), 1.5),))
    with pytest.raises(ParameterError, match=r"mean_size must .*>= 0, got -1.0"):
        synthetic_sets(n=10, mean_size=-1.0)
    with pytest.raises(TypeError, match="n must be an integer"):
        synthetic_sets(n=10.0)


# ------------------------------------------------------------------------------ docs
def test_the_docs_example_runs(tmp_path: Path) -> None:
    text = (REPO / "docs" / "datasets.md").read_text(encoding="utf-8")
    section = text[text.index("## Set-valued data") :]
    section = section[: section.find("\n## ", 1)] if "\n## " in section[1:] else section
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "the section shows an example"
    for code in blocks:
        script = tmp_path / "example.py"
        script.write_text(code, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-3000:]
