"""Per-trial random streams (NEP 19): one root seed, trial t gets its own spawned streams.

Trial t of a setting draws from two streams of ``SeedSequence(seed, spawn_key=(t, ...))``:

* the *data* stream, ``spawn_key=(t, 0)`` (the t-th child's first child, as
  ``SeedSequence(seed).spawn(...)[t].spawn(2)[0]``): who the users are (synthetic data,
  subsampling, group assignment of the data).  Every protocol and ε of trial t sees the
  same users (common data).
* the *mechanism* stream, ``spawn_key=(t, 1, h)`` with ``h`` a 32-bit hash of the
  protocol's node (its name and non-null parameters, not its display label): what the
  protocol does with those users.  Two protocols (or two settings of one protocol's
  parameters) draw independent noise in the same trial; the ε values of one protocol
  share it.

Why independent noise per protocol (``docs/decisions.md``, "Independent mechanism
streams"): the summaries and figures put a standard error on each protocol's mean as if
its trials were independent of the other protocols', and compare protocols by those
errors; with one shared mechanism stream the rows of two protocols in a trial were
correlated (same uniforms fed to both), so a difference between protocols had a standard
error that the per-protocol ones did not describe.  Common data is kept: it is what the
paper's comparisons hold fixed.  :data:`STREAMS` names this scheme; it is part of every
setting's key and a column of every row, so results drawn with the earlier scheme (one
mechanism stream per trial) are another setting's, never mixed with these.

Nothing depends on the worker, the order or ``n_jobs``; adding trials never changes the
existing ones.  ``root + t`` style seeds are never used.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple

import numpy as np

#: The stream scheme: common data per trial, a mechanism stream per protocol setting.
STREAMS = "per-protocol-1"


class TrialStreams(NamedTuple):
    """The two independent generators of one trial."""

    data: np.random.Generator  #: who the users are
    mechanism: np.random.Generator  #: what the protocol does with them
    trial: int = 0  #: the trial's index (what is recorded once per setting, trial 0 records)


def trial_seed_sequence(seed: int, trial: int) -> np.random.SeedSequence:
    """The SeedSequence of trial ``trial`` under root ``seed``."""
    if seed < 0 or trial < 0:
        raise ValueError(f"seed and trial must be >= 0, got {seed} and {trial}")
    return np.random.SeedSequence(seed, spawn_key=(trial,))


def protocol_word(protocol: dict[str, Any] | str | None) -> int:
    """A 32-bit word naming a protocol node (name and non-null parameters, no label)."""
    if protocol is None:
        return 0
    if isinstance(protocol, str):
        node: dict[str, Any] = {"name": protocol}
    else:
        node = {k: v for k, v in protocol.items() if v is not None and k != "label"}
    node["name"] = str(node.get("name", "")).upper()
    text = json.dumps(node, sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def trial_streams(
    seed: int, trial: int, protocol: dict[str, Any] | str | None = None
) -> TrialStreams:
    """The data and mechanism generators of trial ``trial`` (PCG64, as ``default_rng``)
    for ``protocol`` (a config's protocol node or a name; see the module docstring)."""
    root = trial_seed_sequence(seed, trial)
    data = np.random.SeedSequence(root.entropy, spawn_key=(trial, 0))
    mechanism = np.random.SeedSequence(root.entropy, spawn_key=(trial, 1, protocol_word(protocol)))
    return TrialStreams(np.random.default_rng(data), np.random.default_rng(mechanism), trial)
