"""Heavy-hitter identification on large domains ([PEM] Sections III-IV).

Every protocol is built with ``epsilon=``, ``k=``, ``m=`` and its own parameters, takes
its frequency oracle as a parameter (a class or its name; OLH by default), and offers
``perturb(values, rng)``, the client side (what the users send, :class:`ClientReports`),
and ``run(dataset, rng, engine="sampled" | "reports")`` returning a
:class:`HeavyHitterResult` (``.identified``, ``.estimates``, ``.diagnostics``); the
reports engine aggregates ``perturb``'s output.

Every module of this package is imported, so a protocol added as one new module
(registered with :func:`ldp.registry.register`) is available as
``ldp.heavy_hitters.<Name>`` and by name in the harness without touching this file.
"""

from ldp import registry as _registry
from ldp.heavy_hitters.base import ClientReports, HeavyHitterResult
from ldp.heavy_hitters.mcm import MCM
from ldp.heavy_hitters.pem import PEM
from ldp.heavy_hitters.spm import SPM, joint_estimate, pair_estimate
from ldp.heavy_hitters.strawman import Strawman

_registry.discover(__name__)

#: Every heavy-hitter protocol of this package by its registered name.
PROTOCOLS = _registry.defined_in(__name__)
globals().update(PROTOCOLS)

__all__ = [
    "MCM",
    "PEM",
    "SPM",
    "Strawman",
    "PROTOCOLS",
    "ClientReports",
    "HeavyHitterResult",
    "joint_estimate",
    "pair_estimate",
]
__all__ += [name for name in PROTOCOLS if name not in __all__]  # new modules
