"""Data sets of the PEM paper, by name: synthetic, real files, and calibrated surrogates.

Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*, Sections V
and VI-A. ``load(name, **params)`` returns a :class:`Dataset` of users' m-bit values
(the representation of :mod:`ldp.bits`):

=========== ============================================================ ========
name        what                                                         m (bits)
=========== ============================================================ ========
zipf        Zipf(s) over random values; ``drop_top=20`` is "zipf(-20)"   64
exponential geometric rank frequencies, scale 0.05                       64
kosarak     FIMI click-stream, one item per user (file or surrogate)     32
aol         AOL 2006 first queries, 6 bytes (file or surrogate)          48
url         top-sites visits, 20-byte domains (file or surrogate)        160
=========== ============================================================ ========

``load_sets(name, **params)`` returns users' item sets (:class:`Transactions`):
``kosarak_sets`` (each transaction a user's set; file or surrogate) and ``planted``
(synthetic, with planted frequent itemsets), for :mod:`ldp.sets`.

See ``docs/datasets.md`` for every parameter, the surrogates' calibration and how to point
the loaders at the real files (``path=`` or ``$LDP_DATA_DIR``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ldp.datasets.base import Dataset
from ldp.datasets.loaders import (
    DataFallbackWarning,
    check_choices,
    load_aol,
    load_exponential,
    load_kosarak,
    load_url,
    load_zipf,
)
from ldp.datasets.readers import DataFileError
from ldp.datasets.summary import describe, format_description, zipf_slope
from ldp.datasets.transactions import (
    Transactions,
    load_kosarak_sets,
    read_transactions,
    synthetic_sets,
)

__all__ = [
    "LOADERS",
    "SET_LOADERS",
    "DataFallbackWarning",
    "DataFileError",
    "Dataset",
    "Transactions",
    "check_params",
    "describe",
    "format_description",
    "load",
    "load_kosarak_sets",
    "load_sets",
    "read_transactions",
    "synthetic_sets",
    "zipf_slope",
]

#: The public names, stable: experiment configs refer to them.
LOADERS: dict[str, Callable[..., Dataset]] = {
    "zipf": load_zipf,
    "exponential": load_exponential,
    "kosarak": load_kosarak,
    "aol": load_aol,
    "url": load_url,
}

#: The data sets of users' item sets (:class:`Transactions`), for :mod:`ldp.sets`.
SET_LOADERS: dict[str, Callable[..., Transactions]] = {
    "kosarak_sets": load_kosarak_sets,
    "planted": synthetic_sets,
}


def _loader(name: str, table: dict[str, Callable[..., object]] | None = None) -> Callable:
    known = table if table is not None else LOADERS | SET_LOADERS
    try:
        return known[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(known)}") from None


def check_params(name: str, **params: object) -> None:
    """Check parameters for :func:`load` without loading anything (for a harness's preflight).

    Raises ``TypeError`` for a parameter the loader does not take and a one-line
    ``ValueError`` for a choice-valued one (``item_rule``, ``source``, ``format``,
    ``on_bad_line``, ``encoding_errors``) outside its allowed values. Numbers and files are
    checked when loading.
    """
    loader = _loader(name)
    try:
        inspect.signature(loader).bind(**params)
    except TypeError as error:
        raise TypeError(f"dataset {name!r}: {error}") from None
    check_choices(name, params)


def load(name: str, **params: object) -> Dataset:
    """Load the data set ``name`` with the loader's keyword parameters.

    Parameters
    ----------
    name : str
        One of ``zipf``, ``exponential``, ``kosarak``, ``aol``, ``url``.
    **params
        The loader's parameters (see :mod:`ldp.datasets.loaders`); an unknown one is a
        ``TypeError``.

    Examples
    --------
    >>> data = load("zipf", n=10_000, m=16, seed=1)
    >>> data.n, data.m, data.source
    (10000, 16, 'synthetic')
    """
    return _loader(name, LOADERS)(**params)


def load_sets(name: str, **params: object) -> Transactions:
    """Load the data set of item sets ``name`` (``kosarak_sets`` or ``planted``) with the
    loader's keyword parameters (:func:`load_kosarak_sets`, :func:`synthetic_sets`).

    Examples
    --------
    >>> sets = load_sets("planted", n=1000, seed=1)
    >>> sets.n, sets.source
    (1000, 'synthetic')
    """
    return _loader(name, SET_LOADERS)(**params)
