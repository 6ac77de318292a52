"""The columns of a results table, each spelled once.

A results row (:func:`experiments.execute.run_setting`) holds the meta columns below, the
setting's parameters as dotted names (``protocol.eta``, ``dataset.n``; see
:func:`experiments.settings.flatten`) and the code's provenance; a summary
(:func:`experiments.results.summary`, :func:`experiments.summarize.statistics`) adds the
statistics columns.  Code that reads a table names a column through these constants, never
as a literal, so a renamed column is one edit here, and a misspelt one is an
``AttributeError`` at import rather than an empty selection at draw time.
``tests/experiments/test_columns.py`` checks that every constant is a column the harness
writes and that no figure module spells one itself.

The parameter constants are the ones the figures read; add one here when a figure needs
another parameter (its test checks it against the config schema).
"""

from __future__ import annotations

from typing import Final

# ------------------------------------------------------------------ meta columns (one row)
EXPERIMENT: Final = "experiment"  #: the experiment config's name
CONFIG_HASH: Final = "config_hash"  #: the setting's key (16 hex digits)
TRIAL: Final = "trial"  #: the trial's index within its setting
METRIC: Final = "metric"  #: what the row measures (``f1``, ``sq_error_n``, ...)
ITEM: Final = "item"  #: the value a per-value row is about; empty for a per-trial row
VALUE: Final = "value"  #: the measurement
ANALYTIC: Final = "analytic"  #: its closed form, where the protocol has one
DATA_SOURCE: Final = "data_source"  #: where the data came from (``surrogate:...``, ...)
N: Final = "n"  #: the users the trial ran with
WALL_TIME: Final = "wall_time"  #: the trial's seconds
LDP_VERSION: Final = "ldp_version"
NUMPY_VERSION: Final = "numpy_version"
GIT_COMMIT: Final = "git_commit"
PLUGIN: Final = "plugin"  #: a plug-in protocol's distribution
PLUGIN_VERSION: Final = "plugin_version"
CODE_DIGEST: Final = "code_digest"  #: the digest of the code that computed the row
STREAMS: Final = "streams"  #: the seeding scheme

#: Columns that are not parameters of a setting, in a row's order.
META: Final = (
    EXPERIMENT,
    CONFIG_HASH,
    TRIAL,
    METRIC,
    ITEM,
    VALUE,
    ANALYTIC,
    DATA_SOURCE,
    N,
    WALL_TIME,
    LDP_VERSION,
    NUMPY_VERSION,
    GIT_COMMIT,
    STREAMS,
    PLUGIN,
    PLUGIN_VERSION,
    CODE_DIGEST,
)

# ---------------------------------------------------------- parameters (the setting's)
EPSILON: Final = "epsilon"
K: Final = "k"  #: the heavy hitters a run looks for (top k)
ENGINE: Final = "engine"  #: ``sampled`` or ``reports``

PROTOCOL: Final = "protocol.name"  #: the registry name
PROTOCOL_KIND: Final = "protocol.kind"
PROTOCOL_LABEL: Final = "protocol.label"  #: the legend text, where a config gives one
PROTOCOL_ASSUMED: Final = "protocol.assumed"
PROTOCOL_BLOCK_BITS: Final = "protocol.block_bits"
PROTOCOL_BLOCK_ENCODING: Final = "protocol.block_encoding"
PROTOCOL_BUDGET: Final = "protocol.budget"
PROTOCOL_CHANNELS: Final = "protocol.channels"
PROTOCOL_ETA: Final = "protocol.eta"
PROTOCOL_ETAS: Final = "protocol.etas"
PROTOCOL_ELL: Final = "protocol.ell"  #: a set protocol's padding length ℓ
PROTOCOL_FORM: Final = "protocol.form"
PROTOCOL_FRACTIONS: Final = "protocol.fractions"
PROTOCOL_K: Final = "protocol.k"
PROTOCOL_K_PRIME: Final = "protocol.k_prime"
PROTOCOL_M: Final = "protocol.m"
PROTOCOL_SHAPE: Final = "protocol.shape"
PROTOCOL_THRESHOLD: Final = "protocol.threshold"
PROTOCOL_VARIANT: Final = "protocol.variant"

DATASET: Final = "dataset.name"
DATASET_LABEL: Final = "dataset.label"
DATASET_LAW: Final = "dataset.law"
DATASET_M: Final = "dataset.m"  #: bits per value
DATASET_N: Final = "dataset.n"  #: users, as configured
DATASET_SCALE: Final = "dataset.scale"
DATASET_SUPPORT: Final = "dataset.support"

DOMAIN_SIZE: Final = "options.domain_size"  #: d
ROUNDS: Final = "options.rounds"
CHANGE_PROB: Final = "options.change_prob"
POSTPROCESS: Final = "options.postprocess"

#: The parameter columns named here.
PARAMETERS: Final = (
    EPSILON,
    K,
    ENGINE,
    PROTOCOL,
    PROTOCOL_KIND,
    PROTOCOL_LABEL,
    PROTOCOL_ASSUMED,
    PROTOCOL_BLOCK_BITS,
    PROTOCOL_BLOCK_ENCODING,
    PROTOCOL_BUDGET,
    PROTOCOL_CHANNELS,
    PROTOCOL_ETA,
    PROTOCOL_ETAS,
    PROTOCOL_ELL,
    PROTOCOL_FORM,
    PROTOCOL_FRACTIONS,
    PROTOCOL_K,
    PROTOCOL_K_PRIME,
    PROTOCOL_M,
    PROTOCOL_SHAPE,
    PROTOCOL_THRESHOLD,
    PROTOCOL_VARIANT,
    DATASET,
    DATASET_LABEL,
    DATASET_LAW,
    DATASET_M,
    DATASET_N,
    DATASET_SCALE,
    DATASET_SUPPORT,
    DOMAIN_SIZE,
    ROUNDS,
    CHANGE_PROB,
    POSTPROCESS,
)

# ---------------------------------------------------------- statistics (a summary's)
TRIALS: Final = "trials"  #: trials in the group
MEAN: Final = "mean"  #: mean of the trials' values
STD: Final = "std"  #: their sample standard deviation
SE: Final = "se"  #: the mean's standard error
CI95_LOW: Final = "ci95_low"
CI95_HIGH: Final = "ci95_high"

#: The statistics columns of a summary, in order (``analytic``: the mean closed form).
STATISTICS: Final = (TRIALS, MEAN, STD, SE, CI95_LOW, CI95_HIGH, ANALYTIC)

#: Every column named here.
ALL: Final = frozenset(META) | frozenset(PARAMETERS) | frozenset(STATISTICS)
