"""ldp: reproduce, check and extend local differential privacy research.

Frequency oracles (:mod:`ldp.oracles`), heavy-hitter protocols (:mod:`ldp.heavy_hitters`),
mean estimation of values in [-1, 1] (:mod:`ldp.numeric`), data sets (:mod:`ldp.datasets`),
metrics (:mod:`ldp.metrics`) and the papers' closed forms (:mod:`ldp.theory`).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    # the distribution's name (pyproject.toml), not the import name: docs/decisions.md says why
    __version__ = version("ldp-harness")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
