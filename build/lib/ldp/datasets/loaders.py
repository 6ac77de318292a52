"""The named loaders behind :func:`ldp.datasets.load`: parameters, files, surrogates, cache.

Randomness: every loader derives independent streams from
``np.random.SeedSequence([seed, salt of the name])`` (one per job: values, counts, user
order, subsampling), so the same parameters always give the same
users, cached or not, and changing n does not change which value sits at which rank.

Real files: a loader reads ``path`` when given (a missing path is a
``FileNotFoundError``, never a silent fallback), else the first of its default file names
found in ``$LDP_DATA_DIR``, else it returns its surrogate. When ``$LDP_DATA_DIR`` is set but
holds none of the expected names, the fallback is a :class:`DataFallbackWarning` naming
the folder, the expected names and any near misses, kept as ``Dataset.fallback``.
``source="real"`` makes a missing file an error; ``source="surrogate"`` ignores
``$LDP_DATA_DIR``.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ldp.datasets import cache, readers, surrogates, synthetic
from ldp.datasets.base import Dataset
from ldp.validation import check_int

__all__ = [
    "CHOICES",
    "DEFAULT_FILES",
    "DataFallbackWarning",
    "check_choices",
    "load_aol",
    "load_exponential",
    "load_kosarak",
    "load_url",
    "load_zipf",
    "resolve_path",
]

#: File names looked for in $LDP_DATA_DIR, in order (a directory holds the raw AOL files).
DEFAULT_FILES = {
    "kosarak": ("kosarak.dat", "kosarak.dat.gz"),
    "aol": (
        "aol.txt",
        "aol.txt.gz",
        "query_6bytes_sorted.txt.gz",
        "query_6bytes_sorted.txt",
        "AOL-user-ct-collection",
    ),
    "url": ("url.txt", "url.tsv", "quantcast-top-sites.txt", "Quantcast-Top-Million.txt"),
}
#: Words in a file name that suggest it was meant for a loader (a near miss of DEFAULT_FILES).
_NEAR_MISS = {
    "kosarak": ("kosarak",),
    "aol": ("aol", "query", "user-ct"),
    "url": ("url", "quantcast"),
}
SOURCE_CHOICES = ("auto", "real", "surrogate")
ITEM_RULES = ("random", "first")
AOL_FORMATS = ("auto", "raw", "histogram")
#: The parameters of each loader that take one of a few values.
CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "kosarak": {
        "item_rule": ITEM_RULES,
        "source": SOURCE_CHOICES,
        "on_bad_line": readers.ON_BAD_LINE,
    },
    "aol": {
        "format": AOL_FORMATS,
        "source": SOURCE_CHOICES,
        "encoding_errors": readers.ENCODING_ERRORS,
        "on_bad_line": readers.ON_BAD_LINE,
    },
    "url": {
        "format": readers.SITE_FORMATS,
        "source": SOURCE_CHOICES,
        "encoding_errors": readers.ENCODING_ERRORS,
        "on_bad_line": readers.ON_BAD_LINE,
    },
}


class DataFallbackWarning(UserWarning):
    """``$LDP_DATA_DIR`` is set but holds no file the loader knows: a surrogate stands in."""


def _choice(value: object, name: str, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``, else a one-line ValueError naming ``name``."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def check_choices(name: str, params: dict[str, object]) -> None:
    """Check the choice-valued parameters of loader ``name`` (see :data:`CHOICES`)."""
    for key, allowed in CHOICES.get(name, {}).items():
        if key in params:
            _choice(params[key], key, allowed)


#: Mixed into each loader's seed, so that data sets of different names built with the same
#: seed do not share values (zipf and its drop_top variants do share them on purpose).
_SALT = {"zipf": 1, "exponential": 2, "kosarak": 3, "aol": 4, "url": 5}


def _streams(name: str, seed: int, count: int) -> list[np.random.Generator]:
    """Independent generators for one loader: SeedSequence([seed, salt]).spawn(count)."""
    seed = check_int(seed, "seed", minimum=0)
    root = np.random.SeedSequence([seed, _SALT[name]])
    return [np.random.default_rng(child) for child in root.spawn(count)]


def resolve_path(
    name: str, path: str | os.PathLike[str] | None, source: str
) -> tuple[Path | None, list[str], str | None]:
    """The real file to read for loader ``name``, or None for the surrogate.

    Returns (file or None, notes, fallback): ``fallback`` is the warning text when
    ``$LDP_DATA_DIR`` is set but holds none of :data:`DEFAULT_FILES` (the warning is
    issued here, as a :class:`DataFallbackWarning`).
    """
    _choice(source, "source", SOURCE_CHOICES)
    if source == "surrogate":
        if path is not None:
            raise ValueError("source='surrogate' and a path were both given")
        return None, [], None
    if path is not None:
        resolved = Path(path).expanduser()
        if not resolved.exists():
            raise FileNotFoundError(f"{name} data file not found: {resolved}")
        return resolved.resolve(), [], None
    data_dir = os.environ.get("LDP_DATA_DIR")
    if not data_dir:
        if source == "real":
            raise FileNotFoundError(
                f"{name}: no real data file (LDP_DATA_DIR is not set); pass path="
            )
        return None, ["LDP_DATA_DIR is not set: using the calibrated surrogate"], None
    directory = Path(data_dir).expanduser()
    if not directory.is_dir():
        raise FileNotFoundError(f"LDP_DATA_DIR is not a directory: {directory}")
    for candidate in DEFAULT_FILES[name]:
        if (directory / candidate).exists():
            return (directory / candidate).resolve(), [], None
    expected = ", ".join(DEFAULT_FILES[name])
    near = sorted(
        entry.name
        for entry in directory.iterdir()
        if any(word in entry.name.lower() for word in _NEAR_MISS[name])
    )
    looked = f"LDP_DATA_DIR={directory} holds none of the {name} file names ({expected})"
    if near:
        looked += f"; rename or pass path= for: {', '.join(near[:5])}"
    if source == "real":
        raise FileNotFoundError(f"{name}: no real data file: {looked}")
    fallback = f"{looked}: using the calibrated {name} surrogate instead"
    warnings.warn(fallback, DataFallbackWarning, stacklevel=4)
    return None, [fallback], fallback


def _file_key(path: Path) -> dict[str, Any]:
    """What identifies a file's content for the cache: path, size, modification time."""
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    return {str(f): [f.stat().st_size, f.stat().st_mtime_ns] for f in files if f.is_file()}


def _subsample(
    values: np.ndarray, counts: np.ndarray, n: int | None, rng: np.random.Generator
) -> np.ndarray:
    """Counts of a uniform random subset of n users (without replacement), or all."""
    if n is None:
        return counts
    n = check_int(n, "n", minimum=1)
    total = int(counts.sum())
    if n > total:
        raise ValueError(f"n={n} is more than the {total} users in the data")
    return rng.multivariate_hypergeometric(counts, n, method="marginals").astype(np.int64)


def _text_values(texts: np.ndarray, n_bytes: int) -> np.ndarray:
    """Fixed-width text values as the project representation: uint64 up to 8 bytes."""
    if n_bytes > 8:
        return texts
    raw = np.ascontiguousarray(texts).view(np.uint8).reshape(len(texts), n_bytes)
    padded = np.zeros((len(texts), 8), dtype=np.uint8)
    padded[:, 8 - n_bytes :] = raw
    return padded.view(">u8").reshape(-1).astype(np.uint64)


def _build(name: str, key: dict[str, Any], build, use_cache: bool, cache_dir):
    values, counts, meta = cache.cached_histogram(
        name, key, build, enabled=use_cache, directory=cache_dir
    )
    return values, counts, tuple(meta.get("notes", ()))


def _real_dataset(
    name: str,
    file,
    built: tuple[np.ndarray, np.ndarray, tuple[str, ...]],
    m: int,
    params: dict[str, Any],
    sample_rng: np.random.Generator,
    order_rng: np.random.Generator,
    *,
    text: bool = False,
    integer: bool = False,
) -> Dataset:
    """A real file's (cached) histogram, subsampled to ``params["n"]`` users if given."""
    values, counts, file_notes = built
    counts = _subsample(values, counts, params["n"], sample_rng)
    return Dataset.from_histogram(
        values,
        counts,
        name=name,
        m=m,
        source=f"real:{file}",
        params=params,
        notes=file_notes,
        text=text,
        integer=integer,
        rng=order_rng,
    )


# ------------------------------------------------------------------------------ synthetic
def load_zipf(
    *,
    n: int = 10**6,
    m: int = 64,
    s: float = 1.5,
    support: int = synthetic.ZIPF_SUPPORT,
    drop_top: int = 0,
    seed: int = 0,
) -> Dataset:
    """Zipf's law over distinct random m-bit values (PEM, Sections V and V-B).

    Parameters
    ----------
    n : int
        Number of users (Section V-A: 10^5 in the text, 10^6 in Figure 2's caption).
    m : int
        Bits per value, 1..64 (Section V-B uses 16, Section VI 64).
    s : float
        Exponent: f_j proportional to j^-s (1.5 in the paper).
    support : int
        Number of ranks; capped at 2**m - drop_top. See :data:`synthetic.ZIPF_SUPPORT`.
    drop_top : int
        Drop the d most frequent ranks and renormalise: 20 gives the paper's
        "zipfs(-20)". The n users then follow f_j proportional to (j + d)^-s, so the figure
        keeps its n; removing those users instead would leave ~23% of them at s = 1.5.
        With the same seed, rank j + d holds the same value as in the d = 0 data.
    seed : int
        Seeds the values, the counts and the order of users.
    """
    m = check_int(m, "m", minimum=1, maximum=64)
    drop_top = check_int(drop_top, "drop_top", minimum=0)
    if drop_top >= 2**m:
        raise ValueError(f"drop_top={drop_top} leaves no value of m={m} bits")
    support = min(check_int(support, "support", minimum=1), 2**m - drop_top)
    values_rng, counts_rng, order_rng, _ = _streams("zipf", seed, 4)
    values = synthetic.distinct_random_values(support + drop_top, m, values_rng)[drop_top:]
    counts = synthetic.rank_counts(
        n, synthetic.zipf_probabilities(s, support, drop_top), counts_rng
    )
    params = {"n": n, "m": m, "s": float(s), "support": support, "drop_top": drop_top, "seed": seed}
    return Dataset.from_histogram(
        values, counts, name="zipf", m=m, source="synthetic", params=params, rng=order_rng
    )


def load_exponential(
    *,
    n: int = 10**6,
    m: int = 64,
    scale: float = 0.05,
    support: int = synthetic.EXPONENTIAL_SUPPORT,
    seed: int = 0,
) -> Dataset:
    """Exponential (geometric) rank frequencies f_j = scale (1 - scale)^(j-1) (Section VI-A).

    Defaults are the paper's: scale 0.05, n = 10^6, m = 64, random values.
    """
    m = check_int(m, "m", minimum=1, maximum=64)
    support = min(check_int(support, "support", minimum=1), 2**m)
    values_rng, counts_rng, order_rng, _ = _streams("exponential", seed, 4)
    values = synthetic.distinct_random_values(support, m, values_rng)
    counts = synthetic.rank_counts(
        n, synthetic.exponential_probabilities(scale, support), counts_rng
    )
    params = {"n": n, "m": m, "scale": float(scale), "support": support, "seed": seed}
    return Dataset.from_histogram(
        values, counts, name="exponential", m=m, source="synthetic", params=params, rng=order_rng
    )


# ------------------------------------------------------------------------------ kosarak
def load_kosarak(
    *,
    path: str | os.PathLike[str] | None = None,
    n: int | None = None,
    m: int = 32,
    item_rule: str = "random",
    seed: int = 0,
    source: str = "auto",
    on_bad_line: str = "raise",
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Dataset:
    """Kosarak click-stream: one item per user (transaction), as an m-bit item id.

    Parameters
    ----------
    path : path, optional
        A FIMI ``kosarak.dat`` (one transaction per line, item ids separated by spaces).
        Default: ``$LDP_DATA_DIR/kosarak.dat``, else the surrogate.
    n : int, optional
        Real file: a uniform random subset of n users (default: all). Surrogate: the
        number of users (default 990,002).
    m : int
        Bits per value; item ids are right-aligned integers (default 32).
    item_rule : {"random", "first"}
        Which item a transaction contributes: a seeded uniformly random one (default) or
        the first one listed.
    seed : int
        Seeds the item choice, the surrogate, subsampling and the order of users.
    source : {"auto", "real", "surrogate"}
    on_bad_line : {"raise", "skip"}
        Malformed lines raise (naming file and line) or are skipped and counted.
    cache, cache_dir
        Keep the built histogram on disk (see :mod:`ldp.datasets.cache`).
    """
    m = check_int(m, "m", minimum=1, maximum=64)
    check_choices("kosarak", {"item_rule": item_rule, "on_bad_line": on_bad_line})
    file, notes, fallback = resolve_path("kosarak", path, source)
    values_rng, content_rng, order_rng, sample_rng = _streams("kosarak", seed, 4)
    if file is None:
        users = surrogates.KOSARAK_FIGURES["transactions"] if n is None else n
        users = check_int(users, "n", minimum=1)
        key = {"n": users, "m": m, "item_rule": item_rule, "seed": seed}

        def build():
            return surrogates.kosarak_surrogate(users, item_rule, m, values_rng, content_rng)

        values, counts, _ = _build("kosarak", key, build, cache, cache_dir)
        params = {"source": "surrogate", **key}
        return Dataset.from_histogram(
            values,
            counts,
            name="kosarak",
            m=m,
            source="surrogate",
            params=params,
            notes=tuple(notes),
            fallback=fallback,
            integer=True,
            rng=order_rng,
        )
    key = {
        "file": _file_key(file),
        "m": m,
        "item_rule": item_rule,
        "seed": seed,
        "on_bad_line": on_bad_line,
    }

    def build_real():
        items, file_notes = readers.read_kosarak(
            file, item_rule=item_rule, rng=content_rng, m=m, on_bad_line=on_bad_line
        )
        distinct, counts = np.unique(items, return_counts=True)
        return distinct, counts.astype(np.int64), {"notes": file_notes}

    params = {"path": str(file), "n": n, "m": m, "item_rule": item_rule, "seed": seed}
    built = _build("kosarak-real", key, build_real, cache, cache_dir)
    return _real_dataset("kosarak", file, built, m, params, sample_rng, order_rng, integer=True)


# ---------------------------------------------------------------------------------- AOL
def _aol_files(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    files = sorted(
        p for p in path.iterdir() if p.is_file() and p.name.endswith((".txt", ".txt.gz"))
    )
    if not files:
        raise FileNotFoundError(f"no .txt or .txt.gz files in the AOL directory {path}")
    return files


def load_aol(
    *,
    path: str | os.PathLike[str] | None = None,
    format: str = "auto",
    n: int | None = None,
    n_bytes: int = 6,
    seed: int = 0,
    source: str = "auto",
    encoding_errors: str = "replace",
    on_bad_line: str = "raise",
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Dataset:
    """AOL query log 2006: each user's first query, cut or space-padded to 6 bytes (m = 48).

    Parameters
    ----------
    path : path, optional
        The raw collection (one ``user-ct-test-collection-*.txt[.gz]`` file, or the
        directory holding them) or a ``<query><TAB><count>`` histogram file.
        Default: the first of :data:`DEFAULT_FILES` in ``$LDP_DATA_DIR``, else the
        surrogate.
    format : {"auto", "raw", "histogram"}
        ``auto`` reads the first line: a header starting ``AnonID`` means raw.
    n : int, optional
        Real data: a uniform random subset of n users (default all). Surrogate: the
        number of users (default 657,427).
    n_bytes : int
        Value width in bytes (PEM, Section VI-A: 6). m = 8 n_bytes; values are uint64 up
        to 8 bytes and ``S{n_bytes}`` beyond. The surrogate is calibrated for 6 only.
    encoding_errors : {"replace", "strict"}
        Invalid UTF-8 in a query: replaced by U+FFFD and counted, or an error.
    seed, source, on_bad_line, cache, cache_dir
        As for :func:`load_kosarak`.
    """
    n_bytes = check_int(n_bytes, "n_bytes", minimum=1)
    m = 8 * n_bytes
    check_choices(
        "aol", {"format": format, "encoding_errors": encoding_errors, "on_bad_line": on_bad_line}
    )
    file, notes, fallback = resolve_path("aol", path, source)
    values_rng, counts_rng, order_rng, sample_rng = _streams("aol", seed, 4)
    if file is None:
        if n_bytes != 6:
            raise ValueError("the AOL surrogate is calibrated for n_bytes=6 only")
        users = check_int(surrogates.AOL_FIGURES["users"] if n is None else n, "n", minimum=1)
        key = {"n": users, "seed": seed, "model": surrogates.AOL_MODEL}
        values, counts, _ = _build(
            "aol",
            key,
            lambda: surrogates.aol_surrogate(users, values_rng, counts_rng),
            cache,
            cache_dir,
        )
        return Dataset.from_histogram(
            values,
            counts,
            name="aol",
            m=m,
            source="surrogate",
            params={"source": "surrogate", "n_bytes": 6, **key},
            notes=tuple(notes),
            fallback=fallback,
            text=True,
            rng=order_rng,
        )
    files = _aol_files(file)
    if format == "auto":
        format = readers.detect_aol_format(files[0])
    key = {
        "file": _file_key(file),
        "format": format,
        "n_bytes": n_bytes,
        "encoding_errors": encoding_errors,
        "on_bad_line": on_bad_line,
    }

    def build_real():
        texts, counts, file_notes = readers.read_aol(
            files,
            format=format,
            n_bytes=n_bytes,
            encoding_errors=encoding_errors,
            on_bad_line=on_bad_line,
        )
        return _text_values(texts, n_bytes), counts, {"notes": file_notes}

    params = {"path": str(file), "format": format, "n": n, "n_bytes": n_bytes, "seed": seed}
    built = _build("aol-real", key, build_real, cache, cache_dir)
    return _real_dataset("aol", file, built, m, params, sample_rng, order_rng, text=True)


# ---------------------------------------------------------------------------------- URL
def _rank_law(s: float, q: float) -> str:
    """The rank weights as a note: ``rank^-s`` (Zipf) or ``(rank + q)^-s``."""
    return f"rank^-{s}" if q == 0 else f"(rank + {q})^-{s}"


def load_url(
    *,
    path: str | os.PathLike[str] | None = None,
    format: str = "auto",
    n: int = surrogates.URL_FIGURES["visits"],
    s: float = surrogates.URL_ZIPF_EXPONENT,
    q: float = 0.0,
    top: int | None = None,
    n_bytes: int = 20,
    seed: int = 0,
    source: str = "auto",
    encoding_errors: str = "replace",
    on_bad_line: str = "raise",
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Dataset:
    """Visits to top web sites: n visits drawn in proportion to each site's weight (m = 160).

    PEM, Section VI-A: Quantcast's 80 thousand most visited sites with their monthly
    visitors, 1.2 million visits, 27 thousand distinct URLs cut to 20 bytes.

    Parameters
    ----------
    path : path, optional
        A top-sites list: with visitor counts (``<site><TAB><count>`` or
        ``<rank><TAB><site><TAB><count>``): weights are the counts; or ranks only
        (Quantcast's ``Rank<TAB>Site`` with ``#`` header lines; ties share a rank;
        ``Hidden profile`` rows skipped and counted): weights (rank + q)^-s. Default: the
        first of :data:`DEFAULT_FILES` in ``$LDP_DATA_DIR``, else the surrogate (80,000
        generated domains with weights (rank + q)^-s).
    format : {"auto", "ranks", "counts"}
    n : int
        Number of visits (users), drawn with one multinomial (default 1.2 million).
    s : float
        Zipf exponent for ranks-only lists and the surrogate (default 1.338: 80,000 sites
        and 1.2 million visits then give 27,000 distinct sites in expectation).
    q : float
        Zipf-Mandelbrot offset of the rank weights (rank + q)^-s, for ranks-only lists and
        the surrogate (:func:`~ldp.datasets.surrogates.zipf_by_rank`). 0 (default): Zipf's
        law. No visitor counts are published, so the head is an assumption; q > 0 flattens
        it (pass the s that keeps 27,000 distinct sites: docs/datasets.md, url-like).
    top : int, optional
        Keep only the ``top`` highest-ranked (or most visited) sites of a list, like the
        paper's top 80 thousand. Also the surrogate's number of sites (default 80,000).
    n_bytes : int
        Value width (20 in the paper); values are ``S{n_bytes}`` (uint64 up to 8 bytes).
    seed, source, encoding_errors, on_bad_line, cache, cache_dir
        As for :func:`load_aol`.
    """
    n = check_int(n, "n", minimum=1)
    n_bytes = check_int(n_bytes, "n_bytes", minimum=1)
    if top is not None:
        top = check_int(top, "top", minimum=1)
    m = 8 * n_bytes
    surrogates.zipf_by_rank(np.ones(1), float(s), float(q))  # s > 0, q >= 0: fail early
    check_choices(
        "url", {"format": format, "encoding_errors": encoding_errors, "on_bad_line": on_bad_line}
    )
    file, notes, fallback = resolve_path("url", path, source)
    values_rng, counts_rng, order_rng, _ = _streams("url", seed, 4)
    if file is None:
        sites = surrogates.URL_FIGURES["sites"] if top is None else top
        key = {
            "n": n,
            "s": float(s),
            "q": float(q),
            "sites": sites,
            "n_bytes": n_bytes,
            "seed": seed,
        }
        values, counts, _ = _build(
            "url",
            key,
            lambda: surrogates.url_surrogate(
                n, float(s), sites, n_bytes, values_rng, counts_rng, float(q)
            ),
            cache,
            cache_dir,
        )
        return Dataset.from_histogram(
            _text_values(values, n_bytes),
            counts,
            name="url",
            m=m,
            source="surrogate",
            params={"source": "surrogate", "top": sites, **key},
            notes=tuple(notes),
            fallback=fallback,
            text=True,
            rng=order_rng,
        )
    key = {
        "file": _file_key(file),
        "format": format,
        "top": top,
        "n_bytes": n_bytes,
        "encoding_errors": encoding_errors,
        "on_bad_line": on_bad_line,
        "s": float(s),
        "q": float(q),
    }

    def build_real():
        site_names, numbers, found, file_notes = readers.read_site_list(
            file,
            format=format,
            n_bytes=n_bytes,
            encoding_errors=encoding_errors,
            on_bad_line=on_bad_line,
        )
        if found == "ranks":
            order = np.argsort(numbers, kind="stable")
            weights = surrogates.zipf_by_rank(numbers, float(s), float(q))
        else:
            order = np.argsort(-numbers, kind="stable")
            weights = numbers.astype(float)
        if top is not None and top < len(order):
            file_notes.append(f"kept the top {top:,} of {len(order):,} sites")
            order = order[:top]
        distinct, merged, merge_notes = readers.merge_texts(
            [site_names[i] for i in order], weights[order], n_bytes, file, "sites"
        )
        if not merged.sum() > 0:
            raise readers.DataFileError(file, "every site has a zero visitor count")
        file_notes += merge_notes
        file_notes.append(
            f"{found} format: visit weights "
            + (_rank_law(float(s), float(q)) if found == "ranks" else "= visitor counts")
        )
        return distinct, merged, {"notes": file_notes, "format": found}

    values, weights, file_notes = _build("url-real", key, build_real, cache, cache_dir)
    counts = counts_rng.multinomial(n, weights / weights.sum()).astype(np.int64)
    params = {
        "path": str(file),
        "format": format,
        "n": n,
        "s": float(s),
        "q": float(q),
        "top": top,
        "n_bytes": n_bytes,
        "seed": seed,
    }
    return Dataset.from_histogram(
        _text_values(values, n_bytes),
        counts,
        name="url",
        m=m,
        source=f"real:{file}",
        params=params,
        notes=file_notes,
        text=True,
        rng=order_rng,
    )
