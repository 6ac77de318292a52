"""Per-trial random streams (NEP 19): one root seed, trial t gets its own spawned stream.

Trial t draws from ``SeedSequence(seed, spawn_key=(t,))``, which is exactly the t-th child
of ``SeedSequence(seed).spawn(...)``, split into a *data* stream (the trial's own draws
about the users: the pairing of the two questions' answers of ``multiple_questions``) and
a *mechanism* stream (everything the protocol draws, a heavy hitter's group assignment
included).  The data sets themselves are fixed by their own parameters (their ``seed``),
so every protocol and ε in trial t sees the same users (common random numbers).  Nothing
depends on the worker, the order or ``n_jobs``; adding trials never changes the existing
ones.  ``root + t`` style seeds are never used.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class TrialStreams(NamedTuple):
    """The two independent generators of one trial."""

    data: np.random.Generator  #: who the users are
    mechanism: np.random.Generator  #: what the protocol does with them


def trial_seed_sequence(seed: int, trial: int) -> np.random.SeedSequence:
    """The SeedSequence of trial ``trial`` under root ``seed``."""
    if seed < 0 or trial < 0:
        raise ValueError(f"seed and trial must be >= 0, got {seed} and {trial}")
    return np.random.SeedSequence(seed, spawn_key=(trial,))


def trial_streams(seed: int, trial: int) -> TrialStreams:
    """The data and mechanism generators of trial ``trial`` (PCG64, as ``default_rng``)."""
    data, mechanism = trial_seed_sequence(seed, trial).spawn(2)
    return TrialStreams(np.random.default_rng(data), np.random.default_rng(mechanism))
