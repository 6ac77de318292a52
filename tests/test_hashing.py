"""The seeded hash family of BLH/OLH/PEM (``ldp.hashing``): uniformity, collisions, kernels.

OLH's estimator is unbiased when, over a random seed s, H_s(x) is uniform on [0, g) and
two distinct keys collide with probability 1/g.  Both are tested with real statistics
(χ² and exact binomial tests at level ALPHA = 1e-4 per assertion, Bonferroni over the
keys or pairs each assertion checks), on the structured keys PEM queries: consecutive
integers, keys differing only in their top bit or in their last η bits, multi-word keys
differing in one word.  The numba and numpy support-counting paths must agree exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats

from ldp import hashing

ALPHA = 1e-4
TOP = 2**63
MAX64 = 2**64 - 1


def random_seeds(n: int, *key: int) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence(64, spawn_key=key))
    return rng.integers(0, MAX64, size=n, dtype=np.uint64, endpoint=True)


def words(*rows: tuple[int, ...]) -> np.ndarray:
    return np.array(rows, dtype=np.uint64)


# --- uniformity ---------------------------------------------------------------------------------
UNIFORM_KEYS = {
    "0": words((0,)),
    "1": words((1,)),
    "2^63": words((TOP,)),
    "2^64-1": words((MAX64,)),
    "3-word": words((0, 0, 7)),
    "3-word-max": words((MAX64, MAX64, MAX64)),
}


@pytest.mark.parametrize("g", [2, 7, 56, 1000])
@pytest.mark.parametrize("seeds", ["random", "consecutive"])
def test_hash_is_uniform_over_seeds(g: int, seeds: str) -> None:
    """H_s(x) over 200,000 seeds: χ² over the g cells for each key (α/6 each).

    Random seeds are what ``perturb`` draws; consecutive seeds 0, 1, 2, ... are a harder
    case for a weak mixer.
    """
    n = 200_000
    drawn = random_seeds(n, g) if seeds == "random" else np.arange(n, dtype=np.uint64)
    for label, key in UNIFORM_KEYS.items():
        hashed = hashing.hash_values(np.repeat(key, n, axis=0), drawn, g)
        assert hashed.min() >= 0 and hashed.max() < g
        counts = np.bincount(hashed, minlength=g)
        pvalue = stats.chisquare(counts).pvalue
        assert pvalue >= ALPHA / len(UNIFORM_KEYS), f"key {label}, g={g}: p = {pvalue:.2g}"


# --- collisions of structured pairs ------------------------------------------------------------
def _pairs() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    one = {
        "consecutive 0,1": (0, 1),
        "consecutive 41,42": (41, 42),
        "consecutive 2^32-1,2^32": (2**32 - 1, 2**32),
        "consecutive 2^64-2,2^64-1": (MAX64 - 1, MAX64),
        "top bit of 0": (0, TOP),
        "top bit of 12345": (12345, 12345 | TOP),
        "last 4 bits 0xABCDE0/0xABCDE7": (0xABCDE0, 0xABCDE7),
        "last 4 bits 0xABCDE0/0xABCDEF": (0xABCDE0, 0xABCDEF),
        "last 8 bits x00/xFF": (0x5A5A00, 0x5A5AFF),
        "last 8 bits x80/x81": (0x5A5A80, 0x5A5A81),
    }
    pairs = {label: (words((a,)), words((b,))) for label, (a, b) in one.items()}
    pairs |= {
        "2 words, first differs": (words((0, 9)), words((1, 9))),
        "2 words, last differs": (words((5, 0)), words((5, 1))),
        "2 words, top bit of first": (words((0, 9)), words((TOP, 9))),
        "3 words, middle differs": (words((3, 0, 3)), words((3, 1, 3))),
        "3 words, last by 2^63": (words((3, 3, 0)), words((3, 3, TOP))),
        "3 words, first differs": (words((0, MAX64, 2)), words((1, MAX64, 2))),
        # PEM's extension step: the same prefix with η = 4 new low bits
        "3 words, last 4 bits": (words((7, 7, 0x70)), words((7, 7, 0x7F))),
    }
    return pairs


PAIRS = _pairs()


@pytest.mark.parametrize("g", [2, 16, 56])
def test_structured_pairs_collide_with_probability_one_over_g(g: int) -> None:
    """#{s : H_s(x) = H_s(x')} ~ Binomial(N, 1/g): exact two-sided test per pair (α/m).

    N = 200,000 seeds resolves a relative deviation of about 3% at g = 16.
    """
    n = 200_000
    seeds = random_seeds(n, 1, g)
    for label, (x, y) in PAIRS.items():
        hx = hashing.hash_values(np.repeat(x, n, axis=0), seeds, g)
        hy = hashing.hash_values(np.repeat(y, n, axis=0), seeds, g)
        collisions = int(np.sum(hx == hy))
        pvalue = stats.binomtest(collisions, n, 1 / g).pvalue
        assert pvalue >= ALPHA / len(PAIRS), (
            f"{label}, g={g}: {collisions} collisions in {n}, expected {n / g:.0f}"
        )


def test_single_bit_flips_collide_with_probability_one_over_g() -> None:
    """Keys differing in exactly one bit, for each of the 64 positions (α/64 each, g = 16)."""
    n, g = 100_000, 16
    seeds = random_seeds(n, 2)
    base = np.full(n, 0x0123456789ABCDEF, dtype=np.uint64)
    h0 = hashing.hash_values(base, seeds, g)
    for bit in range(64):
        flipped = base ^ np.uint64(1 << bit)
        collisions = int(np.sum(hashing.hash_values(flipped, seeds, g) == h0))
        pvalue = stats.binomtest(collisions, n, 1 / g).pvalue
        assert pvalue >= ALPHA / 64, f"bit {bit}: {collisions} collisions, expected {n / g}"


# --- representation -----------------------------------------------------------------------------
def test_one_dimensional_keys_equal_single_word_rows() -> None:
    seeds = random_seeds(1000, 3)
    keys = random_seeds(1000, 4)
    for g in (2, 56, 2**31):
        np.testing.assert_array_equal(
            hashing.hash_values(keys, seeds, g), hashing.hash_values(keys[:, None], seeds, g)
        )
    signed = np.arange(1000, dtype=np.int64)
    np.testing.assert_array_equal(
        hashing.hash_values(signed, seeds, 7),
        hashing.hash_values(signed.astype(np.uint64)[:, None], seeds, 7),
    )


def test_largest_range_halves_the_next_one() -> None:
    """The reduction ⌊h g / 2^32⌋ at g = 2^31 is h >> 1, and at g = 2^30 it is h >> 2."""
    seeds = random_seeds(100, 5)
    largest = hashing.hash_values(np.zeros(100, dtype=np.uint64), seeds, hashing.MAX_RANGE)
    halved = hashing.hash_values(np.zeros(100, dtype=np.uint64), seeds, 2**30)
    np.testing.assert_array_equal(largest >> 1, halved)


def test_cell_bounds_agree_with_the_reduction() -> None:
    """The kernels' range test h in [low, low + width) is exactly ⌊h g / 2^32⌋ = y."""
    rng = np.random.default_rng(9)
    for g in (2, 3, 7, 56, 1000, 2**31):
        h = rng.integers(0, 2**32, size=20_000, dtype=np.uint64)
        y = (h * np.uint64(g)) >> np.uint64(32)
        low, width = hashing.cell_bounds(y, g)
        assert np.all((h - low) < width)
        other = (y + np.uint64(1)) % np.uint64(g)
        low, width = hashing.cell_bounds(other, g)
        assert not np.any((h - low) < width)


def test_bad_keys_are_rejected() -> None:
    seeds = np.zeros(2, dtype=np.uint64)
    with pytest.raises(TypeError, match="hash keys must be integers"):
        hashing.hash_values(np.array([1.0, 2.0]), seeds, 4)
    with pytest.raises(ValueError, match="non-negative"):
        hashing.hash_values(np.array([1, -2]), seeds, 4)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        hashing.hash_values(np.zeros((2, 1, 1), dtype=np.uint64), seeds, 4)
    with pytest.raises(ValueError, match=r"seeds must have shape \(3,\)"):
        hashing.hash_values(np.arange(3), seeds, 4)


# --- support counting: numba, numpy, and the definition -----------------------------------------
def support_case(n_words: int, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Users' seeds and reports, and candidate keys, some of them the users' own values."""
    rng = np.random.default_rng(np.random.SeedSequence(99, spawn_key=(n_words, g)))
    n, n_keys = 3000, 70
    seeds = rng.integers(0, MAX64, size=n, dtype=np.uint64, endpoint=True)
    keys = rng.integers(0, MAX64, size=(n_keys, n_words), dtype=np.uint64, endpoint=True)
    keys[:3] = 0
    keys[3, -1] = TOP
    owned = keys[rng.integers(0, n_keys, size=n)]
    reports = hashing.hash_values(owned, seeds, g)
    noise = rng.random(n) < 0.3
    reports[noise] = rng.integers(0, g, size=int(noise.sum()))
    if n_words == 1:
        keys = keys[:, 0].copy()
    return seeds, reports, keys


def support_by_definition(seeds, reports, keys, g) -> np.ndarray:
    """count[c] = #{i : H_{s_i}(x_c) = y_i}, one key at a time through hash_values."""
    rows = hashing.as_words(keys)
    return np.array(
        [
            np.sum(
                hashing.hash_values(np.repeat(row[None], seeds.size, axis=0), seeds, g) == reports
            )
            for row in rows
        ]
    )


@pytest.mark.parametrize("g", [2, 56, 2**31])
@pytest.mark.parametrize("n_words", [1, 2, 3])
def test_numba_and_numpy_support_counts_are_identical(n_words: int, g: int) -> None:
    seeds, reports, keys = support_case(n_words, g)
    reference = support_by_definition(seeds, reports, keys, g)
    fast = hashing.support_counts(seeds, reports, keys, g)
    plain = hashing.support_counts(seeds, reports, keys, g, use_numba=False)
    np.testing.assert_array_equal(plain, reference)
    np.testing.assert_array_equal(fast, reference)
    assert fast.dtype == plain.dtype == np.int64
    if g == 2:  # every user supports about half of the keys: the counts are not trivial
        assert 0.4 * seeds.size < reference.mean() < 0.6 * seeds.size


def test_support_counts_small_chunks_and_empty_inputs() -> None:
    seeds, reports, keys = support_case(2, 56)
    words2 = hashing.as_words(keys)
    np.testing.assert_array_equal(
        hashing._support_numpy(seeds, reports, words2, 56, chunk=97),
        hashing.support_counts(seeds, reports, keys, 56),
    )
    for use_numba in (True, False):
        empty_users = hashing.support_counts(seeds[:0], reports[:0], keys, 56, use_numba=use_numba)
        np.testing.assert_array_equal(empty_users, np.zeros(keys.shape[0], dtype=np.int64))
        no_keys = hashing.support_counts(seeds, reports, keys[:0], 56, use_numba=use_numba)
        assert no_keys.shape == (0,)


def test_numpy_path_without_numba_in_a_subprocess() -> None:
    """With LDP_NO_NUMBA=1 the module runs on numpy alone and gives the same counts."""
    script = textwrap.dedent(
        """
        import json, sys
        import numpy as np
        from ldp import hashing
        assert not hashing.HAVE_NUMBA
        data = json.load(sys.stdin)
        out = []
        for case in data:
            seeds = np.array(case["seeds"], dtype=np.uint64)
            reports = np.array(case["reports"], dtype=np.int64)
            keys = np.array(case["keys"], dtype=np.uint64)
            out.append(hashing.support_counts(seeds, reports, keys, case["g"]).tolist())
        print(json.dumps(out))
        """
    )
    cases, expected = [], []
    for n_words in (1, 2, 3):
        seeds, reports, keys = support_case(n_words, 56)
        seeds, reports = seeds[:500], reports[:500]
        cases.append(
            {"seeds": seeds.tolist(), "reports": reports.tolist(), "keys": keys.tolist(), "g": 56}
        )
        expected.append(hashing.support_counts(seeds, reports, keys, 56).tolist())
    env = dict(os.environ, LDP_NO_NUMBA="1")
    result = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected
