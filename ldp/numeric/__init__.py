"""Mean estimation of values in [-1, 1] under ε-LDP (Wang et al., ICDE 2019, Sec. III).

Duchi et al.'s mechanism, the Piecewise Mechanism (PM), the Hybrid Mechanism (HM) and the
Laplace baseline, registered as the kind ``"mean"`` (:mod:`ldp.registry`).  The closed
forms are in :mod:`ldp.theory.numeric`; ``docs/numeric.md`` compares them.

>>> import numpy as np
>>> from ldp.numeric import PM
>>> protocol = PM(epsilon=2.0)
>>> values = np.linspace(-1, 1, 10_000)
>>> reports = protocol.perturb(values, np.random.default_rng(0))
>>> bool(abs(protocol.estimate(reports) - values.mean()) < 5 * protocol.variance(values) ** 0.5)
True
"""

from ldp import registry as _registry
from ldp.numeric.base import MeanProtocol
from ldp.numeric.duchi import Duchi
from ldp.numeric.laplace import Laplace
from ldp.numeric.piecewise import PM, Hybrid

_registry.discover(__name__)

#: Every mean protocol of this package by its registered name.
MEAN_PROTOCOLS: dict[str, type[MeanProtocol]] = _registry.defined_in(__name__)

__all__ = ["MEAN_PROTOCOLS", "PM", "Duchi", "Hybrid", "Laplace", "MeanProtocol"]
