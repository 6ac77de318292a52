"""Procedural text for the surrogates: query prefixes (AOL-like) and domain names (URL-like).

Nothing here comes from a real list: words are built from a small English-like syllable
model (onset + vowel + coda, one to three syllables), queries and domains from words.
Real data's shared prefixes (``www.``, common first syllables) are what PEM's candidate
extension meets (Section IV), so the generators reproduce that structure: many values
share their first bytes, few share all of them.

All generation is vectorised over byte matrices: each part is an (n, width) ``uint8``
matrix padded with zero bytes, parts are concatenated, the zero bytes squeezed out, and
the result cut or space-padded to the value width.
"""

from __future__ import annotations

import numpy as np

__all__ = ["distinct_texts", "domain_names", "encode_texts", "query_texts"]

# (text, weight): rough English frequencies, hand-written.
_ONSETS = [
    ("", 10),
    ("s", 8),
    ("c", 7),
    ("m", 6),
    ("b", 6),
    ("p", 6),
    ("t", 5),
    ("d", 5),
    ("r", 5),
    ("h", 5),
    ("f", 4),
    ("g", 4),
    ("l", 4),
    ("w", 4),
    ("n", 3),
    ("k", 2),
    ("j", 2),
    ("v", 2),
    ("y", 1),
    ("z", 1),
    ("st", 2),
    ("tr", 2),
    ("br", 2),
    ("cr", 1),
    ("pr", 2),
    ("gr", 1),
    ("fr", 1),
    ("dr", 1),
    ("bl", 1),
    ("cl", 1),
    ("fl", 1),
    ("pl", 1),
    ("sl", 1),
    ("sp", 1),
    ("sh", 2),
    ("ch", 2),
    ("th", 2),
    ("wh", 1),
    ("qu", 1),
    ("sc", 1),
    ("sm", 1),
    ("sn", 1),
]
_VOWELS = [
    ("a", 10),
    ("e", 9),
    ("i", 7),
    ("o", 8),
    ("u", 4),
    ("y", 1),
    ("ea", 2),
    ("ee", 1),
    ("oo", 1),
    ("ou", 1),
    ("ai", 1),
    ("ie", 1),
    ("ay", 1),
    ("oa", 1),
]
_CODAS = [
    ("", 14),
    ("n", 5),
    ("r", 5),
    ("s", 4),
    ("t", 4),
    ("l", 3),
    ("m", 2),
    ("d", 2),
    ("ck", 1),
    ("ng", 1),
    ("st", 1),
    ("nd", 1),
    ("rt", 1),
    ("ll", 1),
    ("ss", 1),
    ("x", 1),
    ("k", 1),
    ("p", 1),
    ("ch", 1),
    ("sh", 1),
]
_TLDS = [
    (".com", 72),
    (".org", 7),
    (".net", 7),
    (".edu", 2),
    (".gov", 1),
    (".us", 2),
    (".info", 2),
    (".tv", 1),
    (".co", 1),
    (".me", 1),
    (".biz", 1),
    (".io", 1),
    (".co.uk", 1),
    (".fm", 0.5),
    (".ly", 0.5),
]
_SUBDOMAINS = [
    ("m.", 2),
    ("en.", 1),
    ("blog.", 2),
    ("news.", 1),
    ("shop.", 1),
    ("my.", 2),
    ("web.", 1),
    ("app.", 1),
    ("mail.", 1),
]


def _table(entries: list[tuple[str, float]]) -> tuple[np.ndarray, np.ndarray]:
    width = max(1, max(len(text) for text, _ in entries))
    matrix = np.zeros((len(entries), width), dtype=np.uint8)
    for i, (text, _) in enumerate(entries):
        raw = text.encode("ascii")
        matrix[i, : len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    weights = np.array([w for _, w in entries], dtype=float)
    return matrix, weights / weights.sum()


_TABLES = {
    name: _table(entries)
    for name, entries in [
        ("onset", _ONSETS),
        ("vowel", _VOWELS),
        ("coda", _CODAS),
        ("tld", _TLDS),
        ("sub", _SUBDOMAINS),
    ]
}


def _pick(name: str, size: int, rng: np.random.Generator) -> np.ndarray:
    matrix, weights = _TABLES[name]
    return matrix[rng.choice(len(matrix), size=size, p=weights)]


def _constant(text: str, size: int) -> np.ndarray:
    return np.tile(np.frombuffer(text.encode("ascii"), dtype=np.uint8), (size, 1))


def _squeeze(*parts: np.ndarray) -> np.ndarray:
    """Concatenate byte-matrix parts and move every zero byte to the end of its row."""
    matrix = np.concatenate(parts, axis=1)
    order = np.argsort(matrix == 0, axis=1, kind="stable")
    return np.take_along_axis(matrix, order, axis=1)


def _words(size: int, rng: np.random.Generator, syllables: tuple[float, ...]) -> np.ndarray:
    """Pseudo-words of 1..len(syllables) syllables with the given probabilities."""
    count = rng.choice(len(syllables), size=size, p=np.asarray(syllables) / sum(syllables)) + 1
    parts = []
    for k in range(len(syllables)):
        syllable = _squeeze(
            _pick("onset", size, rng), _pick("vowel", size, rng), _pick("coda", size, rng)
        )
        syllable[count <= k] = 0
        parts.append(syllable)
    return _squeeze(*parts)


def _digits(size: int, rng: np.random.Generator) -> np.ndarray:
    length = rng.integers(1, 5, size=size)
    matrix = rng.integers(ord("0"), ord("9") + 1, size=(size, 4)).astype(np.uint8)
    matrix[np.arange(4)[None, :] >= length[:, None]] = 0
    return matrix


def _fit(matrix: np.ndarray, n_bytes: int) -> np.ndarray:
    """Cut or space-pad each row to n_bytes and view as dtype ``S{n_bytes}``."""
    size = len(matrix)
    out = np.zeros((size, n_bytes), dtype=np.uint8)
    width = min(n_bytes, matrix.shape[1])
    out[:, :width] = matrix[:, :width]
    out[out == 0] = ord(" ")
    return np.ascontiguousarray(out).view(f"S{n_bytes}").reshape(size)


#: Forms of :func:`query_texts`: the tail mix and the popular (navigational) mix.
QUERY_FORMS = {"word": 0.45, "pair": 0.33, "www": 0.12, "com": 0.05, "number": 0.05}
POPULAR_FORMS = {"word": 0.65, "www": 0.25, "com": 0.10}


def query_texts(
    size: int,
    n_bytes: int,
    rng: np.random.Generator,
    *,
    popular: bool = False,
    forms: dict[str, float] | None = None,
) -> np.ndarray:
    """Query-like texts cut to n_bytes: words, word pairs, ``www.`` and ``.com`` forms.

    ``popular`` draws the short navigational forms of the most frequent queries (one
    short word, ``www.word``, ``word.com``: :data:`POPULAR_FORMS`); otherwise the mix of a
    query log's tail, ``forms`` (default :data:`QUERY_FORMS`): shares of ``word``,
    ``pair`` (two words), ``www`` (``www.word``), ``com`` (``word.com``), ``number``
    (word and digits) and ``lead`` (digits then a word).
    """
    if forms is None:
        forms = POPULAR_FORMS if popular else QUERY_FORMS
    syllables = (0.45, 0.55) if popular else (0.3, 0.5, 0.2)
    kinds = list(forms)
    probs = np.array([forms[k] for k in kinds], dtype=float)
    form = rng.choice(len(kinds), size=size, p=probs / probs.sum())
    width = 24
    out = np.zeros((size, width), dtype=np.uint8)
    for index, kind in enumerate(kinds):
        rows = np.flatnonzero(form == index)
        k = len(rows)
        word = _words(k, rng, syllables)
        if kind == "word":
            parts = [word]
        elif kind == "pair":
            parts = [word, _constant(" ", k), _words(k, rng, syllables)]
        elif kind == "www":
            parts = [_constant("www.", k), word]
        elif kind == "com":
            parts = [word, _constant(".com", k)]
        elif kind == "number":
            parts = [word, _constant(" ", k), _digits(k, rng)]
        elif kind == "lead":
            parts = [_digits(k, rng), _constant(" ", k), word]
        else:
            raise ValueError(f"forms: unknown query form {kind!r}")
        text = _squeeze(*parts)[:, :width]
        out[rows, : text.shape[1]] = text
    return _fit(out, n_bytes)


def domain_names(size: int, n_bytes: int, rng: np.random.Generator) -> np.ndarray:
    """Domain-name-like texts cut or space-padded to n_bytes (e.g. ``blog.tarnest.com``)."""
    first = _words(size, rng, (0.35, 0.45, 0.2))
    second = _words(size, rng, (0.6, 0.4))
    second[rng.random(size) > 0.35] = 0  # compound names: "word" + "word"
    hyphen = _constant("-", size)
    third = _words(size, rng, (0.7, 0.3))
    keep_third = rng.random(size) < 0.06
    hyphen[~keep_third] = 0
    third[~keep_third] = 0
    digits = _digits(size, rng)
    digits[rng.random(size) > 0.05] = 0
    sub = _pick("sub", size, rng)
    sub[rng.random(size) > 0.05] = 0
    return _fit(
        _squeeze(sub, first, second, hyphen, third, digits, _pick("tld", size, rng)), n_bytes
    )


def distinct_texts(
    generate, count: int, rng: np.random.Generator, exclude: tuple[bytes, ...] = ()
) -> np.ndarray:
    """The first ``count`` distinct outputs of ``generate(size, rng)``, in order of generation.

    Draws batches until enough distinct values (not in ``exclude``) are found.
    """
    found: np.ndarray | None = None
    batch = max(1024, int(1.3 * count))
    for _ in range(50):
        fresh = generate(batch, rng)
        pool = fresh if found is None else np.concatenate([found, fresh])
        _, first = np.unique(pool, return_index=True)
        pool = pool[np.sort(first)]
        if exclude:
            pool = pool[~np.isin(pool, np.array(exclude, dtype=pool.dtype))]
        found = pool
        if len(found) >= count:
            return found[:count]
        batch *= 2
    raise RuntimeError(f"could not generate {count} distinct texts")


def encode_texts(
    texts: list[str] | list[bytes], n_bytes: int, errors: str = "strict"
) -> np.ndarray:
    """UTF-8 encode, cut to n_bytes, pad with spaces: dtype ``S{n_bytes}`` (slow path, lists)."""
    out = np.empty(len(texts), dtype=f"S{n_bytes}")
    for i, text in enumerate(texts):
        raw = text.encode("utf-8", errors) if isinstance(text, str) else bytes(text)
        out[i] = raw[:n_bytes].ljust(n_bytes, b" ")
    return out
