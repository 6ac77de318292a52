"""Per-trial streams: spawned from one root seed, independent of order and of each other."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.seeding import trial_streams


def test_trial_t_is_the_t_th_spawned_child():
    children = np.random.SeedSequence(7).spawn(5)
    for t, child in enumerate(children):
        data, mechanism = child.spawn(2)
        streams = trial_streams(7, t)
        assert streams.data.integers(2**62) == np.random.default_rng(data).integers(2**62)
        assert streams.mechanism.integers(2**62) == np.random.default_rng(mechanism).integers(2**62)


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
