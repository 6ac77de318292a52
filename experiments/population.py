"""The population of a setting: its data set loaded (cached per worker), its true counts
over an oracle's domain, the values a trial tracks, and its shape (n, m, d)."""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np


def drop_nulls(node: dict[str, Any], *skip: str) -> dict[str, Any]:
    """A config node without its null entries and the keys ``skip``."""
    return {k: v for k, v in node.items() if v is not None and k not in skip}


@functools.lru_cache(maxsize=8)
def _cached_load(name: str, params_json: str):
    from ldp import datasets

    if name in datasets.SET_LOADERS:
        return datasets.load_sets(name, **json.loads(params_json))
    return datasets.load(name, **json.loads(params_json))


def is_set_data(dataset: dict[str, Any]) -> bool:
    """Whether a dataset node names users' item sets (:data:`ldp.datasets.SET_LOADERS`)."""
    from ldp import datasets

    return dataset["name"] in datasets.SET_LOADERS


def load_dataset(dataset: dict[str, Any]):
    """``ldp.datasets.load(name, **non-null params)`` for a dataset config node.

    A data set is fixed by its parameters (its ``seed`` among them), so every trial,
    protocol and ε of a setting sees the same users; it is cached per worker.
    """
    params = drop_nulls(dataset, "name", "label")
    return _cached_load(dataset["name"], json.dumps(params, sort_keys=True))


def population_counts(dataset: dict[str, Any], domain_size: int | None) -> tuple[np.ndarray, str]:
    """True counts over {0..d-1} for an oracle trial, and the data source.

    ``point``: all n users hold 0 (every other value has count 0: the noise floor that
    Table 1 tabulates).  Otherwise the data set's distinct values are relabelled by
    frequency rank (0 = most frequent); ranks >= d are left out, with their users.
    """
    if dataset["name"] == "point":
        counts = np.zeros(domain_size or 2, dtype=np.int64)
        counts[0] = dataset["n"]
        return counts, "point"
    data = load_dataset(dataset)
    _, ranked = data.histogram()
    d = domain_size or len(ranked)
    counts = np.zeros(d, dtype=np.int64)
    counts[: min(d, len(ranked))] = ranked[:d]
    return counts, data.source


def tracked_values(counts: np.ndarray, track: str, k: int) -> np.ndarray:
    """The values whose errors an oracle trial records: top k ranks, all, or absent ones."""
    if track == "top":
        return np.arange(min(k, counts.shape[0]), dtype=np.int64)
    if track == "all":
        return np.arange(counts.shape[0], dtype=np.int64)
    absent = np.flatnonzero(counts == 0).astype(np.int64)
    if absent.size == 0:
        raise ValueError(
            "options.track=absent: every value of the domain has users; raise options.domain_size"
        )
    return absent


def data_shape(config: dict[str, Any]) -> tuple[int, int | None, int]:
    """(n, m, d) of a setting's data: users, bits per value (heavy hitters) and the oracle
    domain (``options.domain_size``, else the number of distinct values).  Loads the data
    set unless it is the ``point`` or ``bounded`` population, and keeps only its shape
    (cached per process): the run's own process checks every setting, and holding every
    data set there (up to 10^7 users each) cost it gigabytes, while its workers load their
    own."""
    dataset, domain_size = config["dataset"], config["options"]["domain_size"]
    if dataset["name"] == "point":
        return int(dataset["n"]), None, domain_size or 2
    if dataset["name"] == "bounded":  # real values: no domain
        return int(dataset["n"]), None, 0
    if is_set_data(dataset):  # item sets: their own domain of items
        data = load_dataset(dataset)
        return data.n, None, data.domain_size
    params = drop_nulls(dataset, "name", "label")
    n, m, distinct = _cached_shape(dataset["name"], json.dumps(params, sort_keys=True))
    return n, m, domain_size or distinct


@functools.lru_cache(maxsize=256)
def _cached_shape(name: str, params_json: str) -> tuple[int, int, int]:
    """(users, bits per value, distinct values) of a data set, which is not kept."""
    from ldp import datasets

    data = datasets.load(name, **json.loads(params_json))
    return data.n, data.m, data.n_distinct
