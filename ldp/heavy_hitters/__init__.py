"""Heavy-hitter identification on large domains ([PEM] Sections III-IV).

Every protocol is built with ``epsilon=``, ``k=``, ``m=`` and its own parameters, takes
its frequency oracle as a parameter (OLH by default), and offers
``run(dataset, rng, engine="sampled" | "reports")`` returning a
:class:`HeavyHitterResult` (``.identified``, ``.estimates``, ``.diagnostics``).
"""

from ldp.heavy_hitters.base import HeavyHitterResult
from ldp.heavy_hitters.pem import PEM

__all__ = ["PEM", "HeavyHitterResult"]
