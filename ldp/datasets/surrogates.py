"""Calibrated surrogates of the real data sets: the default when no real file is configured.

Each surrogate is a rank-frequency model fitted to published or measured summary figures
of the real data (cited below), with procedurally generated values; users are one
multinomial draw over the ranks. No real value list is embedded: the item ids, queries
and domain names are synthetic; only the summary numbers below come from the real data.

Sources of the figures
    * kosarak: the FIMI repository's ``kosarak.dat`` (990,002 transactions over 41,270
      items, average length 8.1). Supports of items 6, 3, 11 and 1, of the 16th and 32nd
      most common items and the count of items with support >= 0.5% (156): Apriori output
      on the full file (frequent items at minimum support 0.005). Per-user
      factors: measured on the first 36,682 transactions of the file.
    * aol: the authors' release of the AOL log as 6-byte first queries (657,427 users),
      measured on that release: top-1 2.85% (the placeholder query ``-``), top-16 12.8%,
      16th 0.344%, 32nd 0.189%, Zipf slope 0.86 over the top 1,000, ~121,000 distinct;
      and its prefix table (:data:`AOL_PREFIX_TABLE`: the
      ``www.`` share and the ranks of the top values' prefixes at 8 to 48 bits).
    * url: the PEM paper, Section VI-A: the 80 thousand most visited sites (Quantcast),
      1.2 million visits, 27 thousand distinct URLs of 20 bytes.
"""

from __future__ import annotations

import numpy as np

from ldp.datasets import names
from ldp.lazy import lazy_module

optimize = lazy_module("scipy.optimize")

__all__ = [
    "AOL_FIGURES",
    "AOL_PREFIX_TABLE",
    "KOSARAK_FIGURES",
    "URL_FIGURES",
    "URL_ZIPF_EXPONENT",
    "aol_probabilities",
    "aol_surrogate",
    "fit_top_values",
    "www_ranks",
    "kosarak_supports",
    "kosarak_probabilities",
    "kosarak_surrogate",
    "url_exponent",
    "url_surrogate",
    "zipf_by_rank",
]

# ------------------------------------------------------------------------------ kosarak
KOSARAK_FIGURES = {
    "transactions": 990_002,
    "items": 41_270,
    "mean_length": 8.1,  # FIMI; 8.02 on the 36,682-transaction prefix
    # item id -> transactions containing it (four of the most common, from the full file)
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

    a3 = optimize.brentq(excess, 0.1, 5.0)
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

    q = optimize.brentq(lambda q: head(q).sum() - (fig["top16"] - fig["top1"]), 0.0, 1000.0)
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


#: The real release's prefix table (measured on the authors' 6-byte release):
#: prefix bits -> (distinct prefixes, top-1 share, top-16 together, 16th, 32nd share,
#: rank of the prefix of each of the 16 most frequent values among all prefixes).
AOL_PREFIX_TABLE: dict[int, tuple[int, float, float, float, float, tuple[int, ...]]] = {
    8: (42, 0.2626, 0.858, 0.02301, 0.00063, (12, 7, 2, 1, 1, 19, 17, 19, 6, 2, 1, 1, 5, 15, 1, 1)),
    12: (
        168,
        0.2330,
        0.688,
        0.01985,
        0.00831,
        (9, 4, 12, 1, 1, 21, 22, 21, 17, 3, 1, 1, 5, 23, 1, 1),
    ),
    15: (868, 0.2317, 0.469, 0.01052, 0.00652, (2, 3, 5, 1, 1, 8, 14, 8, 6, 4, 1, 1, 13, 25, 1, 1)),
    16: (
        1381,
        0.2316,
        0.456,
        0.00864,
        0.00586,
        (2, 3, 5, 1, 1, 7, 12, 7, 6, 4, 1, 1, 23, 24, 1, 1),
    ),
    20: (
        3657,
        0.2234,
        0.410,
        0.00681,
        0.00451,
        (2, 3, 7, 1, 1, 6, 12, 6, 4, 5, 1, 1, 18, 16, 1, 1),
    ),
    24: (
        14379,
        0.2233,
        0.377,
        0.00414,
        0.00249,
        (2, 3, 6, 1, 1, 5, 8, 5, 4, 7, 1, 1, 14, 11, 1, 1),
    ),
    26: (
        18500,
        0.2143,
        0.366,
        0.00396,
        0.00245,
        (2, 3, 6, 1, 1, 5, 8, 5, 4, 11, 1, 1, 14, 12, 1, 1),
    ),
    28: (
        23292,
        0.2136,
        0.358,
        0.00425,
        0.00207,
        (2, 3, 6, 1, 1, 5, 7, 5, 4, 9, 1, 1, 14, 10, 1, 1),
    ),
    32: (
        45192,
        0.2051,
        0.346,
        0.00300,
        0.00159,
        (2, 3, 6, 1, 1, 5, 8, 5, 4, 11, 1, 1, 12, 9, 1, 1),
    ),
    36: (
        58062,
        0.1365,
        0.328,
        0.00281,
        0.00143,
        (3, 4, 7, 1, 1, 5, 8, 5, 6, 10, 1, 2, 13, 9, 1, 1),
    ),
    37: (
        66266,
        0.0790,
        0.318,
        0.00285,
        0.00146,
        (4, 5, 8, 2, 1, 6, 10, 6, 7, 11, 2, 9, 14, 13, 1, 1),
    ),
    40: (
        82677,
        0.0285,
        0.221,
        0.00846,
        0.00332,
        (1, 3, 12, 2, 9, 6, 20, 6, 7, 23, 2, 22, 27, 26, 4, 4),
    ),
    44: (
        96303,
        0.0285,
        0.179,
        0.00714,
        0.00292,
        (1, 2, 8, 7, 6, 4, 17, 4, 15, 22, 5, 24, 27, 28, 3, 3),
    ),
    48: (120978, 0.0285, 0.128, 0.00344, 0.00189, tuple(range(1, 17))),
}
#: Share of the tail queries (ranks above 216, ``www.`` apart: see :func:`www_ranks`)
#: of each form of :func:`ldp.datasets.names.query_texts`.
AOL_TAIL_FORMS = {"word": 0.50, "pair": 0.36, "com": 0.05, "number": 0.05, "lead": 0.04}
#: How many distinct ``www.`` values the surrogate has (about all the generator makes).
AOL_WWW_VALUES = 280
#: Beam width of :func:`fit_top_values`.
AOL_BEAM = 24
#: Weight of a prefix length in :func:`fit_top_values`: PEM at m = 48 (eta = 11) keeps
#: its candidates at 15, 26 and 37 bits, so those ranks matter most.
AOL_STEP_WEIGHT = {15: 3.0, 26: 3.0, 37: 3.0}
#: Version of the AOL surrogate's value model (part of its cache key).
AOL_MODEL = 2


def _prefix_masses(values: np.ndarray, mass: np.ndarray) -> dict[int, dict[int, float]]:
    """Mass of every ell-bit prefix (ell in the table) of 48-bit values."""
    out = {}
    for ell in AOL_PREFIX_TABLE:
        heads, inverse = np.unique(values >> np.uint64(48 - ell), return_inverse=True)
        sums = np.bincount(inverse.reshape(-1), weights=mass, minlength=len(heads))
        out[ell] = dict(zip(heads.tolist(), sums.tolist(), strict=True))
    return out


def fit_top_values(
    tail: np.ndarray, tail_mass: np.ndarray, top_mass: np.ndarray, first: int
) -> np.ndarray:
    """The 16 most frequent 6-byte values, chosen so that their prefixes rank as in the table.

    PEM extends candidates prefix by prefix (Section IV-A), so what decides whether a top
    value survives is the rank of its ell-bit prefix among all ell-bit prefixes, which
    :data:`AOL_PREFIX_TABLE` gives for the real release. Given the other values (``tail``,
    with expected masses ``tail_mass``) and the masses of the top 16 (``top_mass``, the
    first of which is ``first``, the placeholder), each further top value is built byte by
    byte with a beam search of width :data:`AOL_BEAM` that minimises
    sum_ell w_ell |log2(rank_ell / target_ell)| over the table's lengths up to 44 bits
    (rank 48 is the value's own rank; weights :data:`AOL_STEP_WEIGHT`). Candidate bytes:
    those that follow the prefix among the other values, or a lower-case letter, digit or
    space (after a space: only what follows among the other values, so a value reads as
    text, padded with spaces). Values already present are excluded, so all 16 are distinct and new.
    Ranks are computed on expected masses; the values are deterministic given ``tail``.
    """
    targets = {ell: row[5] for ell, row in AOL_PREFIX_TABLE.items() if ell < 48}
    values = np.concatenate([tail, [first]]).astype(np.uint64)
    masses = np.concatenate([tail_mass, top_mass[:1]])
    table = _prefix_masses(values, masses)
    taken = set(values.tolist())
    by_byte: dict[int, list[int]] = {}
    for ell in targets:
        by_byte.setdefault((ell - 1) // 8, []).append(ell)
    # children[b][head]: the bytes that follow the b-byte prefix head among the values.
    children: list[dict[int, set[int]]] = []
    for byte in range(6):
        pairs = np.unique(values >> np.uint64(40 - 8 * byte))
        follow: dict[int, set[int]] = {}
        for pair in pairs.tolist():
            follow.setdefault(pair >> 8, set()).add(pair & 0xFF)
        children.append(follow)
    alphabet = set(b"abcdefghijklmnopqrstuvwxyz0123456789 ")
    space = ord(" ")
    chosen = [first]
    for j in range(1, 16):
        w = float(top_mass[j])
        ranked = {ell: np.sort(np.fromiter(table[ell].values(), float)) for ell in targets}

        def rank(ell: int, head: int, w: float = w, ranked: dict = ranked) -> int:
            mass = table[ell].get(head, 0.0) + w
            return 1 + len(ranked[ell]) - int(np.searchsorted(ranked[ell], mass, side="right"))

        beam = [(0.0, 0)]
        for byte in range(6):
            grown = []
            for cost, head in beam:
                following = children[byte].get(head, set())
                for c in following | alphabet:
                    if c != space and byte and (head & 0xFF) == space and c not in following:
                        continue  # text after a space only as the other values have it
                    value = (head << 8) | c
                    if byte == 5 and value in taken:
                        continue
                    extra = sum(
                        AOL_STEP_WEIGHT.get(ell, 1.0)
                        * abs(np.log2(rank(ell, value >> (8 * (byte + 1) - ell)) / targets[ell][j]))
                        for ell in by_byte.get(byte, [])
                    )
                    grown.append((cost + extra, value))
            grown.sort()
            beam = grown[:AOL_BEAM]
        value = beam[0][1]
        chosen.append(value)
        taken.add(value)
        for ell in table:
            head = value >> (48 - ell)
            table[ell][head] = table[ell].get(head, 0.0) + w
    return np.array(chosen, dtype=np.uint64)


def _as_uint64(texts: np.ndarray) -> np.ndarray:
    raw = np.ascontiguousarray(texts).view(np.uint8).reshape(len(texts), 6)
    padded = np.zeros((len(texts), 8), dtype=np.uint8)
    padded[:, 2:] = raw
    return padded.view(">u8").reshape(-1).astype(np.uint64)


def www_ranks(p: np.ndarray, count: int, share: float, rng: np.random.Generator) -> np.ndarray:
    """Ranks (0-based, from 16 on) for ``count`` ``www.`` values holding ``share`` of users.

    Stratified over ranks 16..R-1 (one at a uniform position in each of ``count`` equal
    strata), R the smallest for which the strata's expected mass reaches ``share``; all the
    first ranks when even that falls short.
    """
    cumulative = np.concatenate([[0.0], np.cumsum(p)])

    def picked(stop: int) -> np.ndarray:
        edges = 16 + np.floor(np.arange(count + 1) * (stop - 16) / count).astype(np.int64)
        return edges[:-1] + np.floor(rng.random(count) * np.diff(edges)).astype(np.int64)

    def expected(stop: int) -> float:
        return (cumulative[stop] - cumulative[16]) * count / (stop - 16)

    low, high = 16 + count, len(p)
    if expected(low) <= share:
        return np.arange(16, 16 + count)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if expected(middle) >= share else (low, middle)
    return picked(low)


def aol_surrogate(
    n: int, values_rng: np.random.Generator, counts_rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Histogram of n users' 6-byte query prefixes, as uint64 (m = 48).

    Values: rank 1 is ``-`` space-padded; ranks 2..16 are fitted by :func:`fit_top_values`
    so that their prefixes rank as the real release's do (:data:`AOL_PREFIX_TABLE`).
    ``www.`` values (every distinct ``www.`` + word the generator makes) are placed at
    ranks from 17 on by :func:`www_ranks` so that, with the top 16's, ``www.`` holds the
    real release's 20.51% of users at 32 bits. The other ranks: 200 short navigational
    forms (``word``, ``word.com``), then a query mix in the proportions
    :data:`AOL_TAIL_FORMS` (words, word pairs, ``.com``, word + number, number + word),
    all from :mod:`ldp.datasets.names`, cut to 6 bytes.
    """
    p = aol_probabilities()
    rng = values_rng
    placeholder = AOL_PLACEHOLDER.ljust(6)
    www = names.distinct_texts(
        lambda size, r: names.query_texts(size, 6, r, forms={"www": 1.0}),
        AOL_WWW_VALUES,
        rng,
    )
    popular = names.distinct_texts(
        lambda size, r: names.query_texts(size, 6, r, forms={"word": 0.85, "com": 0.15}),
        200,
        rng,
        exclude=(placeholder,),
    )
    rest = names.distinct_texts(
        lambda size, r: names.query_texts(size, 6, r, forms=AOL_TAIL_FORMS),
        len(p) - 216 - len(www),
        rng,
        exclude=(placeholder, *popular.tolist(), *www.tolist()),
    )
    top_www = [j for j, rank in enumerate(AOL_PREFIX_TABLE[32][5]) if rank == 1]
    ranks = www_ranks(p, len(www), AOL_PREFIX_TABLE[32][1] - p[top_www].sum(), rng)
    tail = np.empty(len(p) - 16, dtype="S6")
    is_www = np.zeros(len(tail), dtype=bool)
    is_www[ranks - 16] = True
    tail[is_www] = www
    tail[~is_www] = np.concatenate([popular, rest])
    tail_values = _as_uint64(tail)
    first = int(_as_uint64(np.array([placeholder]))[0])
    top = fit_top_values(tail_values, p[16:], p[:16], first)
    counts = counts_rng.multinomial(n, p)
    return np.concatenate([top, tail_values]), counts.astype(np.int64), {}


# ---------------------------------------------------------------------------------- URL
URL_FIGURES = {"sites": 80_000, "visits": 1_200_000, "distinct": 27_000}
#: Zipf exponent of visits by site rank, calibrated so that 1.2 million visits over the
#: top 80,000 sites reach 27,000 distinct sites in expectation (PEM, Section VI-A):
#: sum_r 1 - exp(-1.2e6 p_r) = 27,000 with p_r proportional to r^-s gives s = 1.338.
URL_ZIPF_EXPONENT = 1.338


def url_exponent(q: float = 0.0) -> float:
    """The s for which weights (rank + q)^-s over the 80,000 sites give 27,000 distinct
    sites in expectation among 1.2 million visits ([PEM] Sec. VI-A's figures).

    Solves sum_r 1 - exp(-n p_r) = 27,000 with p = :func:`zipf_by_rank` (ranks, s, q).
    q = 0 gives :data:`URL_ZIPF_EXPONENT` (1.338); a flatter head (q > 0) needs a steeper
    tail, e.g. s = 1.515 at q = 10.
    """
    fig = URL_FIGURES
    ranks = np.arange(1, fig["sites"] + 1)

    def excess(s: float) -> float:
        p = zipf_by_rank(ranks, s, q)
        return float(-np.expm1(-fig["visits"] * p).sum()) - fig["distinct"]

    return float(optimize.brentq(excess, 0.5, 5.0, xtol=1e-6))


def zipf_by_rank(ranks: np.ndarray, s: float, q: float = 0.0) -> np.ndarray:
    """Visit probabilities of sites known only by rank: proportional to (rank + q)^-s.

    q = 0 (default) is Zipf's law; q > 0 is the Zipf-Mandelbrot law, whose head is
    flatter (the top sites' shares closer to each other) with the same tail exponent.
    The real list's visitor counts are not available, so the head's shape is an
    assumption; q is how a study varies it (docs/datasets.md, url-like). Sites that
    share a rank (ties in a ranking) get the same weight.
    """
    if not s > 0:
        raise ValueError(f"s must be > 0, got {s}")
    if not 0 <= q < np.inf:  # also rejects NaN
        raise ValueError(f"q must be >= 0 and finite, got {q}")
    weights = (np.asarray(ranks, dtype=float) + float(q)) ** -float(s)
    return weights / weights.sum()


def url_surrogate(
    n: int,
    s: float,
    sites: int,
    n_bytes: int,
    values_rng: np.random.Generator,
    counts_rng: np.random.Generator,
    q: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Histogram of n visits over ``sites`` generated domain names, (rank + q)^-s by rank."""
    domains = names.distinct_texts(
        lambda size, r: names.domain_names(size, n_bytes, r), sites, values_rng
    )
    p = zipf_by_rank(np.arange(1, sites + 1), s, q)
    counts = counts_rng.multinomial(n, p)
    return domains, counts.astype(np.int64), {}
