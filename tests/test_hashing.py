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
    for g in (0, 2**31 + 1, 3.0):
        with pytest.raises(ValueError, match=r"^g must be an integer in \[1, 2\^31\]"):
            hashing.hash_values(np.arange(2), seeds, g)


# --- the definition in Python integers -----------------------------------------------------------
M64 = 2**64


def py_fmix64(h: int) -> int:
    h ^= h >> 33
    h = h * 0xFF51AFD7ED558CCD % M64
    h ^= h >> 33
    h = h * 0xC4CEB9FE1A85EC53 % M64
    return h ^ (h >> 33)


def py_hash(key: tuple[int, ...], seed: int, g: int) -> int:
    """H_s(x) from the module docstring's formulas, in Python's unbounded integers."""
    d = 0x9E3779B97F4A7C15
    for word in key:
        d = py_fmix64(d ^ word)
    a = py_fmix64(seed ^ 0xBF58476D1CE4E5B9) | 1
    b = py_fmix64(seed ^ 0x94D049BB133111EB)
    return ((a * d + b) % M64 >> 32) * g >> 32


@pytest.fixture(params=["serial", "parallel"])
def kernel(request, monkeypatch) -> str:
    """Run the compiled path serially (the small-work twin) or in parallel, whatever n·d is."""
    if not hashing.HAVE_NUMBA:
        pytest.fail("numba is a dependency: the compiled kernels must be tested")
    monkeypatch.setattr(hashing, "SERIAL_WORK", 2**62 if request.param == "serial" else 0)
    return request.param


@pytest.mark.parametrize("n_words", [1, 3])
def test_hash_values_equal_the_definition_in_python_integers(kernel, n_words: int) -> None:
    """The family's values, word for word as the docstring defines them (no numpy), in the
    compiled and the numpy path."""
    rng = np.random.default_rng(np.random.SeedSequence(5, spawn_key=(n_words,)))
    keys = rng.integers(0, MAX64, size=(300, n_words), dtype=np.uint64, endpoint=True)
    keys[0], keys[1] = 0, MAX64
    seeds = random_seeds(300, 6, n_words)
    seeds[:2] = [0, MAX64]
    for g in (1, 2, 3, 56, 2**31):
        expected = [
            py_hash(tuple(int(w) for w in key), int(seed), g)
            for key, seed in zip(keys, seeds, strict=True)
        ]
        for use_numba in (True, False):
            hashed = hashing.hash_values(keys, seeds, g, use_numba=use_numba)
            assert hashed.dtype == np.int64
            assert hashed.tolist() == expected, (g, use_numba)
    assert hashing.hash_values(keys[:0], seeds[:0], 5).shape == (0,)


# --- support counting: numba, numpy, and the definition -----------------------------------------
def support_case(
    n_words: int, g: int, n: int = 3000, n_keys: int = 70
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Users' seeds and reports, and candidate keys, some of them the users' own values."""
    rng = np.random.default_rng(np.random.SeedSequence(99, spawn_key=(n_words, g, n, n_keys)))
    seeds = rng.integers(0, MAX64, size=n, dtype=np.uint64, endpoint=True)
    keys = rng.integers(0, MAX64, size=(n_keys, n_words), dtype=np.uint64, endpoint=True)
    keys[: min(3, n_keys)] = 0
    keys[min(3, n_keys - 1), -1] = TOP
    owned = keys[rng.integers(0, n_keys, size=n)]
    reports = hashing.hash_values(owned, seeds, g)
    noise = rng.random(n) < 0.3
    reports[noise] = rng.integers(0, g, size=int(noise.sum()))
    reports[:2] = [0, g - 1][:n]  # the first and the last cell
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
        ],
        dtype=np.int64,
    ).reshape(rows.shape[0])


def assert_paths_agree(seeds, reports, keys, g) -> np.ndarray:
    """numba == numpy == the definition, int64, one count per key; returns the counts."""
    reference = support_by_definition(seeds, reports, keys, g)
    fast = hashing.support_counts(seeds, reports, keys, g)
    plain = hashing.support_counts(seeds, reports, keys, g, use_numba=False)
    np.testing.assert_array_equal(plain, reference)
    np.testing.assert_array_equal(fast, reference)
    assert fast.dtype == plain.dtype == np.int64
    assert fast.shape == (hashing.as_words(keys).shape[0],)
    return reference


@pytest.mark.parametrize("g", [2, 56, 2**31])
@pytest.mark.parametrize("n_words", [1, 2, 3])
def test_numba_and_numpy_support_counts_are_identical(kernel, n_words: int, g: int) -> None:
    seeds, reports, keys = support_case(n_words, g)
    reference = assert_paths_agree(seeds, reports, keys, g)
    if g == 2:  # every user supports about half of the keys: the counts are not trivial
        assert 0.4 * seeds.size < reference.mean() < 0.6 * seeds.size
    else:  # most keys are some users' values: they collect those users' support
        assert reference.max() > 2 * seeds.size / g


@pytest.mark.parametrize(
    ("n", "n_keys"),
    [
        (1, 1),  # one user, one candidate (padded to a pair inside)
        (5, 1),
        (hashing.TILE, 2),  # exactly one tile
        (hashing.TILE + 1, 3),  # a tile and one user; an odd number of candidates
        (3 * hashing.TILE - 7, 1),
        (70_001, 33),  # many tiles and blocks; n·d and n large enough for every thread
    ],
)
@pytest.mark.parametrize("g", [2, 2**31])
def test_support_counts_on_tile_and_block_edges(kernel, n: int, n_keys: int, g: int) -> None:
    for n_words in (1, 2):
        seeds, reports, keys = support_case(n_words, g, n=n, n_keys=n_keys)
        assert_paths_agree(seeds, reports, keys, g)


def py_fmix64_inverse(h: int) -> int:
    """fmix64^-1: x ^= x >> 33 is its own inverse, and odd multipliers invert mod 2^64."""
    h ^= h >> 33
    h = h * pow(0xC4CEB9FE1A85EC53, -1, M64) % M64
    h ^= h >> 33
    h = h * pow(0xFF51AFD7ED558CCD, -1, M64) % M64
    return h ^ (h >> 33)


@pytest.mark.parametrize("g", [2, 3, 7, 56, 1000, 2**31 - 1, 2**31])
def test_the_folded_test_is_exact_at_the_cell_edges(kernel, g: int) -> None:
    """Keys whose 64-bit value a·D + b lands just inside and just outside the user's cell.

    For user (a, b) and cell [low, low + width) of 32-bit hashes, the keys with
    a·D + b = low·2^32 - 1, low·2^32, (low + width)·2^32 - 1, (low + width)·2^32 (mod 2^64)
    are built by inverting D (a is odd; the digest of a one-word key is a bijection): the
    user supports exactly the middle two, in both paths, in the first and the last cell.
    """
    seeds = random_seeds(6, 7, g)
    reports = np.array([0, g - 1, 0, g - 1, 1 % g, g // 2], dtype=np.int64)
    a, b = hashing.user_functions(seeds)
    low, width = hashing.cell_bounds(reports, g)
    for i in range(seeds.size):
        a_inverse = pow(int(a[i]), -1, M64)
        start, stop = int(low[i]) << 32, int(low[i] + width[i]) << 32
        targets = [(start - 1) % M64, start, stop - 1, stop % M64]
        digests = [(x - int(b[i])) * a_inverse % M64 for x in targets]
        keys = np.array(
            [py_fmix64_inverse(d) ^ 0x9E3779B97F4A7C15 for d in digests], dtype=np.uint64
        )
        np.testing.assert_array_equal(hashing.digest(keys), np.array(digests, dtype=np.uint64))
        for use_numba in (True, False):
            counts = hashing.support_counts(
                seeds[i : i + 1], reports[i : i + 1], keys, g, use_numba=use_numba
            )
            assert counts.tolist() == [0, 1, 1, 0], (g, i, use_numba)
    keys = np.arange(40, dtype=np.uint64)
    assert_paths_agree(seeds, reports, keys, g)


def test_support_counts_small_chunks_and_empty_inputs(kernel) -> None:
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
        assert no_keys.shape == (0,) and no_keys.dtype == np.int64
        neither = hashing.support_counts(seeds[:0], reports[:0], keys[:0], 56, use_numba=use_numba)
        assert neither.shape == (0,)


def test_bad_support_inputs_are_rejected() -> None:
    seeds, reports, keys = support_case(1, 8, n=10, n_keys=4)
    for g in (1, 0, -3, 2**31 + 1, 2.0, True, None):
        with pytest.raises(ValueError, match="^g must be an integer in"):
            hashing.support_counts(seeds, reports, keys, g)
    for bad in (-1, 8):
        wrong = reports.copy()
        wrong[3] = bad
        with pytest.raises(ValueError, match=r"^reports must lie in \[0, 8\)"):
            hashing.support_counts(seeds, wrong, keys, 8)
    with pytest.raises(ValueError, match="^seeds and reports must be 1-D"):
        hashing.support_counts(seeds, reports[:-1], keys, 8)
    assert hashing.support_counts(seeds, reports, keys, np.int64(8)).shape == (4,)


def test_kernel_memory_does_not_grow_with_users_times_candidates() -> None:
    """In a fresh process: 2^17 users x 2^13 candidates (an n x d bool array: 1 GiB).

    The peak RSS the call adds must stay under 64 MiB: the users' terms (24 bytes a user,
    3 MiB here), the digests and the counts are all the kernel allocates.
    """
    script = textwrap.dedent(
        """
        import resource
        import numpy as np
        from ldp import hashing
        n, d = 2**17, 2**13
        rng = np.random.default_rng(3)
        seeds = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        reports = rng.integers(0, 5, size=n)
        keys = np.arange(d, dtype=np.uint64)
        hashing.support_counts(seeds[:2**10], reports[:2**10], keys, 5)  # load the kernels
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        counts = hashing.support_counts(seeds, reports, keys, 5)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert counts.shape == (d,) and counts.sum() > 0
        print((after - before) * 1024)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    added = int(done.stdout.strip().splitlines()[-1])
    assert added < 64 * 2**20, f"the call added {added / 2**20:.0f} MiB of peak RSS"


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


@pytest.mark.parametrize(("given", "expected"), [(None, "passive"), ("active", "active")])
def test_openmp_workers_sleep_unless_told_otherwise(given: str | None, expected: str) -> None:
    """Importing the module asks OpenMP for sleeping idle workers; an explicit choice wins."""
    env = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    script = "import os, ldp.hashing; print(os.environ['OMP_WAIT_POLICY'])"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


@pytest.mark.parametrize("rows, g", [(300, 8), (3000, 56)])  # 19 KiB: by key; 1.3 MiB: by row
def test_table_lookup_kernels_give_the_numpy_sums(rows: int, g: int) -> None:
    """Both numba kernels of ``table_lookup`` (the table's size picks one) equal the numpy
    path's sums exactly, and the size rule picks the one named."""
    rng = np.random.default_rng(11)
    table = rng.integers(0, 1000, (rows, g)).astype(np.int64)
    seeds = rng.integers(0, 2**63, rows, dtype=np.uint64)
    keys = np.arange(700, dtype=np.int64)
    expected = hashing.table_lookup(table, seeds, keys, use_numba=False)
    assert np.array_equal(hashing.table_lookup(table, seeds, keys), expected)
    assert (table.nbytes > hashing.LOOKUP_CACHE_BYTES) == (rows == 3000)
    if hashing.HAVE_NUMBA:
        a, b = hashing.user_functions(seeds)
        digests = hashing.digest(hashing.as_words(keys))
        for kernel in (hashing._lookup_kernel, hashing._lookup_rows_kernel):
            assert np.array_equal(kernel(table, a, b, digests, np.uint64(g)), expected)
