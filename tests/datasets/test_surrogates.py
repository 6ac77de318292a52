"""Each surrogate's figures against the real-data targets of issue 3, within stated tolerances.

Tolerances: z = 3.89 standard deviations (two-sided false-failure rate 1e-4) of the
sampling noise of each figure under the multinomial draw, plus, for figures read off the
sorted counts (the k-th frequency, top-16 share), an allowance of 3% of the target for
order-statistic effects between neighbouring ranks (documented in docs/datasets.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ldp.datasets import describe, load, surrogates
from ldp.datasets.summary import prefix_table

Z = 3.89


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    directory = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("LDP_DATA_DIR", raising=False)
        return {name: load(name, cache_dir=directory) for name in ("kosarak", "aol", "url")}


def _close(observed: float, target: float, n: int, order_allowance: float = 0.0) -> bool:
    sd = np.sqrt(target * (1 - target) / n)
    return abs(observed - target) <= Z * sd + order_allowance * target


def test_aol_figures(built: dict) -> None:
    data = built["aol"]
    fig = describe(data)
    target = surrogates.AOL_FIGURES
    assert data.source == "surrogate" and data.m == 48 and data.text
    assert data.n == target["users"] == 657_427
    assert data.format(data.top_k(1)[0]) == "'-     '"
    assert _close(fig["top1_share"], target["top1"], data.n)
    assert _close(fig["top16_share"], target["top16"], data.n, 0.03)
    assert _close(fig["f16"], target["f16"], data.n, 0.03)
    assert _close(fig["f32"], target["f32"], data.n, 0.03)
    # distinct: E = 121,003 with sd ~ 200; 1% covers 6 sd.
    assert abs(fig["distinct"] - target["distinct"]) <= 0.01 * target["distinct"]
    # slope: 0.857 on the model's expectations; sampling moves it by ~0.003.
    assert abs(fig["zipf_slope"] - target["slope_1000"]) <= 0.02


def test_aol_values_look_like_query_prefixes(built: dict) -> None:
    values, counts = built["aol"].histogram()
    raw = [int(v).to_bytes(6, "big") for v in values[:5000]]
    assert all(r.decode("ascii").isprintable() for r in raw)
    www = np.array([r.startswith(b"www.") for r in raw])
    assert 0.1 < counts[:5000][www].sum() / counts[:5000].sum() < 0.4
    # Shared prefixes: far fewer distinct 2-byte prefixes than values.
    assert len({r[:2] for r in raw}) < len(raw) / 5


def test_kosarak_named_items_and_supports(built: dict) -> None:
    data = built["kosarak"]
    fig = surrogates.KOSARAK_FIGURES
    factors = surrogates.KOSARAK_RULE_FACTORS["random"]
    assert data.n == fig["transactions"] == 990_002 and data.m == 32
    assert data.n_distinct <= fig["items"]
    assert data.top_k(4).tolist() == [6, 3, 11, 1]
    shares = data.frequencies(np.array([6, 3, 11, 1], dtype=np.uint64))
    for share, (item, support) in zip(shares, fig["named_supports"].items(), strict=True):
        assert _close(share, support / fig["transactions"] * factors[item], data.n)
    # Implied supports of the 16th and 32nd items (share / measured factor).
    counts = data.histogram()[1]
    for k, support in ((16, fig["support_16"]), (32, fig["support_32"])):
        assert _close(counts[k - 1] / data.n, support * factors["mid"], data.n, 0.03)


def test_kosarak_support_model_anchors() -> None:
    support = surrogates.kosarak_supports()
    fig = surrogates.KOSARAK_FIGURES
    assert support[:4] * fig["transactions"] == pytest.approx([601_374, 450_031, 364_065, 197_522])
    assert support[15] == pytest.approx(0.0325) and support[31] == pytest.approx(0.0185)
    assert (support >= 0.005).sum() == 156
    assert support.sum() == pytest.approx(fig["mean_length"])
    assert np.all(np.diff(support) <= 0)
    for rule in ("random", "first"):
        _, p = surrogates.kosarak_probabilities(rule)
        assert p.sum() == pytest.approx(1.0) and np.all(p > 0)


def test_url_figures(built: dict) -> None:
    data = built["url"]
    fig = describe(data)
    assert data.n == 1_200_000 and data.m == 160 and data.values.dtype == np.dtype("S20")
    # E = 27,040 distinct sites (sd ~ 100): within 2% of the paper's 27 thousand.
    assert abs(fig["distinct"] - 27_000) <= 0.02 * 27_000
    names = [v.decode("ascii") for v in data.top_k(2000)]
    assert all(len(n) == 20 or n == n.rstrip() for n in names)
    assert all(n.strip().replace(".", "").replace("-", "").isalnum() for n in names)
    assert sum("." in n for n in names) > 0.95 * len(names)  # long names lose their TLD
    assert sum(n.strip().endswith(".com") for n in names) > 0.5 * len(names)


def test_url_head_offset_q() -> None:
    """(rank + q)^-s, the Zipf-Mandelbrot knob of the URL head (docs/datasets.md, url-like)."""
    ranks = np.arange(1, 81)
    assert np.array_equal(
        surrogates.zipf_by_rank(ranks, 1.338, 0.0), ranks**-1.338 / (ranks**-1.338).sum()
    )
    w = (ranks + 10.0) ** -1.5
    assert np.allclose(surrogates.zipf_by_rank(ranks, 1.5, 10.0), w / w.sum(), rtol=1e-12)
    for bad in (-0.5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="^q must be"):
            surrogates.zipf_by_rank(ranks, 1.5, bad)
        with pytest.raises(ValueError, match="^q must be"):
            load("url", q=bad, n=10, top=10, cache=False)
    # The calibration: q = 0 gives the documented 1.338; every (q, s) keeps 27,000 distinct.
    assert surrogates.url_exponent(0.0) == pytest.approx(surrogates.URL_ZIPF_EXPONENT, abs=5e-4)
    p = surrogates.zipf_by_rank(np.arange(1, 80_001), surrogates.url_exponent(10.0), 10.0)
    assert -np.expm1(-1.2e6 * p).sum() == pytest.approx(27_000, rel=1e-5)


def test_url_q_draws_the_flatter_head() -> None:
    """q = 0 is today's surrogate bit for bit; q > 0 keeps the names, moves the counts."""
    zipf = load("url", n=200_000, top=5000, seed=2, cache=False)
    same = load("url", n=200_000, top=5000, seed=2, q=0.0, cache=False)
    assert np.array_equal(zipf.values, same.values)
    flat = load("url", n=200_000, top=5000, seed=2, q=10.0, s=1.5, cache=False)
    # Same name at rank 1 (its count beats rank 2's by ~4.7 sd at q = 10, n = 200,000).
    assert flat.top_k(1)[0] == zipf.top_k(1)[0]
    # The five largest counts against (r + 10)^-1.5 over 5,000 ranks: each within
    # z = 3.89 sd (+3% for neighbouring ranks swapping in the sorted counts).
    p = surrogates.zipf_by_rank(np.arange(1, 5001), 1.5, 10.0)
    _, counts = flat.histogram()
    for observed, target in zip(counts[:5] / flat.n, p[:5], strict=True):
        assert _close(observed, target, flat.n, 0.03)
    assert not _close(zipf.histogram()[1][0] / zipf.n, p[0], zipf.n, 0.03)


def test_surrogates_reproducible_from_seed(tmp_path: Path) -> None:
    a = load("kosarak", n=10_000, seed=5, cache_dir=tmp_path)
    b = load("kosarak", n=10_000, seed=5, cache=False)
    assert np.array_equal(a.values, b.values)
    c = load("kosarak", n=10_000, seed=6, cache_dir=tmp_path)
    assert not np.array_equal(a.values, c.values)
    first = load("kosarak", n=10_000, item_rule="first", cache=False)
    assert first.top_k(1)[0] == 11  # item 11 opens 29% of transactions


def test_aol_model_calibration() -> None:
    p = surrogates.aol_probabilities()
    n = surrogates.AOL_FIGURES["users"]
    assert p.sum() == pytest.approx(1.0)
    assert p[0] == pytest.approx(0.0285) and p[:16].sum() == pytest.approx(0.128)
    assert p[15] == pytest.approx(0.00344) and p[31] == pytest.approx(0.00189)
    assert (1 - np.exp(-n * p)).sum() == pytest.approx(121_000, rel=0.002)


# --- AOL prefix table (issue 10): the surrogate's prefixes rank as the real release's ----------
# Tolerances. PEM at m = 48 keeps 16 candidates at 15, 26 and 37 bits, so there the set of
# top-16 values whose prefix ranks beyond 16 must be the real one exactly. Elsewhere the
# ranks are a fit, not a draw, so the bound is on the fit: up to 37 bits the mean
# |log2(rank / real rank)| over the 16 values is at most 0.4 (ranks within ~1.3x on
# average; seeds 0-2 give 0.08-0.35) and every rank within a factor 2^1.5 = 2.8 (seeds
# 0-2: at most 2^1.42). At 40 and 44 bits, mean 0.75 and factor 8 (seeds 0-2: 0.29-0.70,
# at most 2^2.66): the fit's last byte also sets the 36- and 37-bit ranks, weighted for PEM,
# and the real ranks there hinge on near-ties among 5-byte prefixes of 0.3-0.8% each.
# Shares of one prefix are multinomial: z = 3.89 sd plus a model allowance, 5% of the
# target for www. at 32 bits (placed by expected mass) and 15% for the largest prefix at
# 36 and 37 bits (www. + a-o, www. + a-g: the generator's letter frequencies, not fitted;
# seeds 0-2 give 7.4-8.9% against 7.9% at 37 bits).


def _sd_close(observed: float, target: float, n: int, allowance: float) -> bool:
    return abs(observed - target) <= Z * np.sqrt(target * (1 - target) / n) + allowance * target


def test_aol_prefix_ranks_match_the_real_release(built: dict) -> None:
    data = built["aol"]
    rows = {row["bits"]: row for row in prefix_table(*data.histogram(), data.m)}
    assert sorted(rows) == sorted(surrogates.AOL_PREFIX_TABLE)
    for bits, (*_, real) in surrogates.AOL_PREFIX_TABLE.items():
        ours = np.array(rows[bits]["ranks"])
        gap = np.abs(np.log2(ours / np.array(real)))
        mean, most = (0.4, 1.5) if bits <= 37 else (0.75, 3.0)
        assert gap.mean() <= mean and gap.max() <= most, (bits, ours.tolist(), real)
        if bits in (15, 26, 37):
            assert (ours > 16).tolist() == [r > 16 for r in real], (bits, ours.tolist())


def test_aol_www_share_and_prefix_shares(built: dict) -> None:
    data = built["aol"]
    rows = {row["bits"]: row for row in prefix_table(*data.histogram(), data.m)}
    values, counts = data.histogram()
    www = int.from_bytes(b"www.", "big")
    share = counts[(values >> np.uint64(16)) == www].sum() / data.n
    assert rows[32]["top1"] == pytest.approx(share)  # www. is the largest 32-bit prefix
    assert _sd_close(share, 0.2051, data.n, 0.05)
    for bits in (36, 37):
        assert _sd_close(rows[bits]["top1"], surrogates.AOL_PREFIX_TABLE[bits][1], data.n, 0.15)
    assert rows[48]["distinct"] == describe(data)["distinct"]


def test_prefix_table_against_a_direct_count() -> None:
    texts = [b"www.ab", b"www.ac", b"-     ", b"wa    ", b"xyz   "]
    counts = np.array([5, 4, 3, 2, 1])
    values = np.array([int.from_bytes(t, "big") for t in texts], dtype=np.uint64)
    rows = {row["bits"]: row for row in prefix_table(values, counts, 48, bits=(8, 32, 44, 48))}
    # 8 bits: 'w' 11, '-' 3, 'x' 1.
    assert rows[8]["distinct"] == 3 and rows[8]["top1"] == pytest.approx(11 / 15)
    assert rows[8]["ranks"] == [1, 1, 2, 1, 3]
    # 32 bits: 'www.' 9, '-   ' 3, 'wa  ' 2, 'xyz ' 1.
    assert rows[32]["ranks"] == [1, 1, 2, 3, 4] and rows[32]["distinct"] == 4
    # 44 bits: 'www.a' + high nibble of 'b'/'c' (both 6): shared.
    assert rows[44]["ranks"] == [1, 1, 2, 3, 4]
    assert rows[48]["ranks"] == [1, 2, 3, 4, 5] and rows[48]["top16"] == pytest.approx(1.0)
    assert rows[48]["p16"] == 0.0
