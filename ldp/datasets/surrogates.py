"""Calibrated surrogates of the real data sets: the default when no real file is configured.

Each surrogate is a rank-frequency model fitted to published or measured summary figures
of the real data (cited below), with procedurally generated values; users are one
multinomial draw over the ranks. No real value list is embedded: the item ids, queries
and domain names are synthetic; only the summary numbers below come from the real data.

Sources of the figures
    * kosarak: the FIMI repository's ``kosarak.dat`` (990,002 transactions over 41,270
      items, average length 8.1). Supports of items 6, 3, 11 and 1, of the 16th and 32nd
      most common items and the count of items with support >= 0.5% (156): Apriori output
      on the full file (``shared/data/kosarak-frequent-items-minsup0.005.dat``). Per-user
      factors: measured on the first 36,682 transactions of the file
      (``shared/data/kosarak-first-36682-transactions.dat``).
    * aol: the authors' release of the AOL log as 6-byte first queries (657,427 users),
      as measured for issue 3: top-1 2.85% (the placeholder query ``-``), top-16 12.8%,
      16th 0.344%, 32nd 0.189%, Zipf slope 0.86 over the top 1,000, ~121,000 distinct.
    * url: the PEM paper, Section VI-A: the 80 thousand most visited sites (Quantcast),
      1.2 million visits, 27 thousand distinct URLs of 20 bytes.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from ldp.datasets import names

__all__ = [
    "AOL_FIGURES",
    "KOSARAK_FIGURES",
    "URL_FIGURES",
    "URL_ZIPF_EXPONENT",
    "aol_probabilities",
    "aol_surrogate",
    "kosarak_supports",
    "kosarak_probabilities",
    "kosarak_surrogate",
    "url_surrogate",
    "zipf_by_rank",
]

# ------------------------------------------------------------------------------ kosarak
KOSARAK_FIGURES = {
    "transactions": 990_002,
    "items": 41_270,
    "mean_length": 8.1,  # FIMI; 8.02 on the 36,682-transaction prefix
    # item id -> transactions containing it (the four the issue names, from the full file)
    "named_supports": {6: 601_374, 3: 450_031, 11: 364_065, 1: 197_522},
    "support_16": 0.0325,  # 16th most common item: 3.25% of transactions
    "support_32": 0.0185,  # 32nd: 1.85%
    "support_156": 0.005,  # 156 items have support >= 0.5%
}
#: Per-user share / support of an item, measured on the 36,682-transaction prefix.
#: "random": E[1/|T| ; i in T] / P(i in T), the chance a transaction holding i hands over
#: i when one of its items is drawn uniformly; "first": P(i is first | i in T).
#: Keys: the four named items, then "mid" = support-weighted mean over ranks 5..156.
KOSARAK_RULE_FACTORS = {
    "random": {6: 0.2604, 3: 0.3194, 11: 0.1886, 1: 0.2482, "mid": 0.1215},
    "first": {6: 0.2325, 3: 0.1267, 11: 0.7892, 1: 0.3599, "mid": 0.1062},
}


def kosarak_supports() -> np.ndarray:
    """Modelled support (fraction of transactions) of the item at each rank 1..41,270.

    Ranks 1-4: the named items' exact supports. Ranks 5-156: log-log linear through the
    anchors (16, 3.25%), (32, 1.85%), (156, 0.5%), the first segment extended back to
    rank 5 (it gives 8.4% at rank 5; the real 5th item has 8.9%). Ranks 157..41,270: a
    power law continuing from rank 156 whose exponent makes the supports sum to the mean
    transaction length 8.1 (every item occurrence counted once).
    """
    fig = KOSARAK_FIGURES
    total = fig["transactions"]
    ranks = np.arange(1, fig["items"] + 1, dtype=float)
    support = np.empty(len(ranks))
    support[:4] = np.array(list(fig["named_supports"].values())) / total
    log = np.log
    a1 = log(fig["support_16"] / fig["support_32"]) / log(2.0)
    a2 = log(fig["support_32"] / fig["support_156"]) / log(156 / 32)
    mid = ranks[4:156]
    support[4:156] = np.where(
        mid <= 32, fig["support_16"] * (mid / 16) ** -a1, fig["support_32"] * (mid / 32) ** -a2
    )
    tail = ranks[156:] / 156
    head_sum = support[:156].sum()

    def excess(a: float) -> float:
        return head_sum + fig["support_156"] * (tail**-a).sum() - fig["mean_length"]

    a3 = brentq(excess, 0.1, 5.0)
    support[156:] = fig["support_156"] * tail**-a3
    return support


def kosarak_probabilities(item_rule: str = "random") -> tuple[np.ndarray, np.ndarray]:
    """(item ids of the named ranks or 0, per-user probability of each rank) for a rule.

    A user's item is the one their transaction hands over under ``item_rule``; its
    probability is support x factor: the measured factor for the named items, the
    measured mean factor for ranks 5-156, and for the tail (items below 0.5% support) the
    factor that makes the probabilities sum to one (0.075 for "random", against 0.076
    measured on the prefix).
    """
    if item_rule not in KOSARAK_RULE_FACTORS:
        raise ValueError(f"item_rule must be 'random' or 'first', got {item_rule!r}")
    factors = KOSARAK_RULE_FACTORS[item_rule]
    support = kosarak_supports()
    share = np.empty_like(support)
    named = list(KOSARAK_FIGURES["named_supports"])
    share[:4] = support[:4] * np.array([factors[item] for item in named])
    share[4:156] = support[4:156] * factors["mid"]
    rest = 1.0 - share[:156].sum()
    share[156:] = support[156:] * rest / support[156:].sum()
    ids = np.zeros(len(share), dtype=np.uint64)
    ids[:4] = named
    return ids, share


def kosarak_surrogate(
    n: int, item_rule: str, m: int, values_rng: np.random.Generator, counts_rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Histogram of n users' items: rank probabilities from :func:`kosarak_probabilities`.

    Item ids: the four named items keep their real ids (6, 3, 11, 1); the other ranks get
    a seeded random permutation of the remaining ids 1..41,270 (real ids are arbitrary
    labels).
    """
    if 2**m <= KOSARAK_FIGURES["items"]:
        raise ValueError(f"m={m} bits cannot hold kosarak's item ids up to 41,270")
    ids, probabilities = kosarak_probabilities(item_rule)
    others = np.setdiff1d(np.arange(1, KOSARAK_FIGURES["items"] + 1, dtype=np.uint64), ids[:4])
    ids[4:] = values_rng.permutation(others)
    counts = counts_rng.multinomial(n, probabilities)
    return ids, counts.astype(np.int64), {}


# ---------------------------------------------------------------------------------- AOL
AOL_FIGURES = {
    "users": 657_427,
    "distinct": 121_000,
    "top1": 0.0285,
    "top16": 0.128,
    "f16": 0.00344,
    "f32": 0.00189,
    "slope_1000": 0.86,
}
#: Ranks above which the AOL tail exponent takes over.
AOL_HEAD_RANKS = 1000
#: Tail exponent beyond rank 1,000, calibrated so that the expected number of distinct
#: values among 657,427 users is 121,000 (sum_r 1 - exp(-n p_r) = 121,000; the ranks run
#: until the probabilities sum to one, 208,614 ranks).
AOL_TAIL_EXPONENT = 0.9643
AOL_PLACEHOLDER = b"-"


def aol_probabilities() -> np.ndarray:
    """Probability of each rank of the AOL-like model (sums to one).

    * rank 1: 2.85% (the placeholder query ``-``);
    * ranks 16..1,000: f_16 (r / 16)^-a with a = log2(f_16 / f_32) = 0.864, through the
      measured 16th (0.344%) and 32nd (0.189%) frequencies;
    * ranks 2..16: f_16 ((r + q) / (16 + q))^-a' (Zipf-Mandelbrot), with q and a' such
      that ranks 1..16 hold 12.8% and the log-log slope is continuous at rank 16;
    * ranks beyond 1,000: a power law of exponent :data:`AOL_TAIL_EXPONENT` until the
      probabilities sum to one.

    The least-squares Zipf slope over ranks 1..1,000 is then 0.857 (0.86 on samples).
    """
    fig = AOL_FIGURES
    f16, f32 = fig["f16"], fig["f32"]
    a = np.log2(f16 / f32)
    head_ranks = np.arange(2, 17, dtype=float)

    def head(q: float) -> np.ndarray:
        return f16 * ((head_ranks + q) / (16 + q)) ** (-a * (16 + q) / 16)

    q = brentq(lambda q: head(q).sum() - (fig["top16"] - fig["top1"]), 0.0, 1000.0)
    body = f16 * (np.arange(17, AOL_HEAD_RANKS + 1) / 16) ** -a
    used = fig["top1"] + head(q).sum() + body.sum()
    # Tail: f_1000 (r / 1000)^-b for r > 1000, as many ranks as the remaining mass needs.
    size = 250_000
    while True:
        ranks = np.arange(AOL_HEAD_RANKS + 1, AOL_HEAD_RANKS + 1 + size, dtype=float)
        tail = body[-1] * (ranks / AOL_HEAD_RANKS) ** -AOL_TAIL_EXPONENT
        cumulative = np.cumsum(tail)
        if cumulative[-1] >= 1.0 - used:
            break
        size *= 4
    stop = int(np.searchsorted(cumulative, 1.0 - used)) + 1
    p = np.concatenate([[fig["top1"]], head(q), body, tail[:stop]])
    return p / p.sum()


def aol_surrogate(
    n: int, values_rng: np.random.Generator, counts_rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Histogram of n users' 6-byte query prefixes, as uint64 (m = 48).

    Values: rank 1 is ``-`` space-padded; ranks 2..201 are short navigational forms
    (``word``, ``www.word``, ``word.com``), later ranks a query mix (words, word pairs,
    ``www.``, ``.com``, word + number), all from :mod:`ldp.datasets.names`, cut to 6 bytes.
    """
    p = aol_probabilities()
    rng = values_rng
    placeholder = AOL_PLACEHOLDER.ljust(6)
    popular = names.distinct_texts(
        lambda size, r: names.query_texts(size, 6, r, popular=True),
        200,
        rng,
        exclude=(placeholder,),
    )
    rest = names.distinct_texts(
        lambda size, r: names.query_texts(size, 6, r),
        len(p) - 201,
        rng,
        exclude=(placeholder, *popular.tolist()),
    )
    texts = np.concatenate([np.array([placeholder], dtype="S6"), popular, rest])
    counts = counts_rng.multinomial(n, p)
    raw = np.ascontiguousarray(texts).view(np.uint8).reshape(len(texts), 6)
    padded = np.zeros((len(texts), 8), dtype=np.uint8)
    padded[:, 2:] = raw
    values = padded.view(">u8").reshape(-1).astype(np.uint64)
    return values, counts.astype(np.int64), {}


# ---------------------------------------------------------------------------------- URL
URL_FIGURES = {"sites": 80_000, "visits": 1_200_000, "distinct": 27_000}
#: Zipf exponent of visits by site rank, calibrated so that 1.2 million visits over the
#: top 80,000 sites reach 27,000 distinct sites in expectation (PEM, Section VI-A):
#: sum_r 1 - exp(-1.2e6 p_r) = 27,000 with p_r proportional to r^-s gives s = 1.338.
URL_ZIPF_EXPONENT = 1.338


def zipf_by_rank(ranks: np.ndarray, s: float) -> np.ndarray:
    """Visit probabilities of sites known only by rank: proportional to rank^-s.

    Sites that share a rank (ties in a ranking) get the same weight.
    """
    if not s > 0:
        raise ValueError(f"s must be > 0, got {s}")
    weights = np.asarray(ranks, dtype=float) ** -float(s)
    return weights / weights.sum()


def url_surrogate(
    n: int,
    s: float,
    sites: int,
    n_bytes: int,
    values_rng: np.random.Generator,
    counts_rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Histogram of n visits over ``sites`` generated domain names, Zipf(s) by rank."""
    domains = names.distinct_texts(
        lambda size, r: names.domain_names(size, n_bytes, r), sites, values_rng
    )
    p = zipf_by_rank(np.arange(1, sites + 1), s)
    counts = counts_rng.multinomial(n, p)
    return domains, counts.astype(np.int64), {}
