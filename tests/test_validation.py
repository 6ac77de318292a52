"""The array checks of :mod:`ldp.validation` refuse with a ``ParameterError`` (a
``ValueError``) that carries the parameter's name, the refused value and the allowed range,
as the scalar checks do."""

from __future__ import annotations

import numpy as np
import pytest

from ldp.validation import (
    MAX_USERS,
    ParameterError,
    check_bounded,
    check_counts,
    check_total,
    check_values,
)

CASES = [
    (lambda: check_values(np.array([0, 3, 9]), 8), "values", 9, "in [0, 8)"),
    (lambda: check_values(np.array([2, -1]), 8, "candidates"), "candidates", -1, "in [0, 8)"),
    (lambda: check_values(np.zeros((2, 2), dtype=int), 8), "values", (2, 2), "one-dimensional"),
    (
        lambda: check_values(np.zeros(3, dtype=np.uint64), 2**70),
        "values",
        "shape (3,) uint64",
        "a 2-D uint64 array of 2 words per value",
    ),
    (
        lambda: check_values(np.array([[2**6, 0]], dtype=np.uint64), 2**70),
        "values",
        [64, 0],
        f"in [0, {2**70})",
    ),
    (lambda: check_counts(np.array([1, -2, 3]), 3), "true_counts", -2, ">= 0 everywhere"),
    (lambda: check_counts(np.array([1, 2]), 3, "counts"), "counts", (2,), "of shape (3,)"),
    (
        lambda: check_counts(np.array([2**62, 2**62], dtype=np.uint64), 2),
        "true_counts",
        2.0**63,
        "a total below 2^62 users",
    ),
    (
        lambda: check_counts(np.array([2**64 - 1], dtype=np.uint64), 1),
        "true_counts",
        2**64 - 1,
        f"<= {MAX_USERS} everywhere",
    ),
    (
        lambda: check_total(np.array([MAX_USERS, 1], dtype=np.uint64)),
        "true_counts",
        MAX_USERS + 1,
        "a total of at most 2^63 - 1 users",
    ),
    (lambda: check_bounded([0.5, 1.5]), "values", 1.5, "in [-1, 1]"),
    (lambda: check_bounded([[0.5]], name="x"), "x", (1, 1), "one-dimensional"),
]


@pytest.mark.parametrize(("call", "name", "value", "allowed"), CASES)
def test_an_array_out_of_range_names_the_parameter_value_and_range(call, name, value, allowed):
    with pytest.raises(ParameterError) as refused:
        call()
    error = refused.value
    assert isinstance(error, ValueError)
    assert (error.name, error.value, error.allowed) == (name, value, allowed)
    assert str(error).startswith(name)


def test_arrays_in_range_pass_unchanged():
    assert check_values(np.array([0, 7]), 8).tolist() == [0, 7]
    assert check_counts(np.array([0, 5]), 2).dtype == np.int64
    assert check_total(np.array([MAX_USERS, 0], dtype=np.uint64)) == MAX_USERS
    assert check_bounded([-1, 1]).tolist() == [-1.0, 1.0]
