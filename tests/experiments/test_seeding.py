"""Per-trial streams: spawned from one root seed, independent of order and of each other."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.seeding import protocol_word, trial_streams


def test_trial_t_data_is_the_t_th_spawned_childs_first_child():
    children = np.random.SeedSequence(7).spawn(5)
    for t, child in enumerate(children):
        data, _ = child.spawn(2)
        streams = trial_streams(7, t, "OLH")
        assert streams.data.integers(2**62) == np.random.default_rng(data).integers(2**62)
        word = protocol_word("OLH")
        mechanism = np.random.SeedSequence(7, spawn_key=(t, 1, word))
        assert streams.mechanism.integers(2**62) == np.random.default_rng(mechanism).integers(2**62)


def test_protocols_share_the_data_and_draw_independent_noise():
    olh, grr = trial_streams(3, 2, {"name": "OLH", "g": None}), trial_streams(3, 2, "grr")
    assert olh.data.integers(2**62) == grr.data.integers(2**62)  # common users
    assert olh.mechanism.integers(2**62) != grr.mechanism.integers(2**62)
    # the display label and null parameters do not change the stream; a parameter does
    same = trial_streams(3, 2, {"name": "olh", "label": "OLH (paper)"})
    assert same.mechanism.integers(2**62) == trial_streams(3, 2, "OLH").mechanism.integers(2**62)
    tuned = trial_streams(3, 2, {"name": "OLH", "g": 8}).mechanism.integers(2**62)
    assert tuned != trial_streams(3, 2, "OLH").mechanism.integers(2**62)


def test_two_protocols_errors_are_uncorrelated_over_trials():
    """The mechanism uniforms of two protocols over 4000 trials: correlation within
    4.5/sqrt(4000) of 0 (false alarm ~7e-6); with one shared stream it was exactly 1."""
    a = np.array([trial_streams(0, t, "OUE").mechanism.random() for t in range(4000)])
    b = np.array([trial_streams(0, t, "OLH").mechanism.random() for t in range(4000)])
    assert abs(np.corrcoef(a, b)[0, 1]) < 4.5 / np.sqrt(4000)


def test_streams_do_not_depend_on_order_and_differ_between_trials():
    first = [trial_streams(0, t).mechanism.random() for t in range(4)]
    backwards = [trial_streams(0, t).mechanism.random() for t in reversed(range(4))][::-1]
    assert first == backwards
    assert len(set(first)) == 4
    streams = trial_streams(0, 0)
    assert streams.data.random() != streams.mechanism.random()


def test_negative_seeds_are_refused():
    with pytest.raises(ValueError, match="seed and trial"):
        trial_streams(-1, 0)
