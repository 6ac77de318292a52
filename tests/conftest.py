"""Settings of the whole test session, applied before any test module imports numpy.

BLAS on one thread per process: the suite runs one pytest worker per core (``make test``,
pytest-xdist) and the harness's own workers limit BLAS the same way (loky), while
OpenBLAS's default threads wait for each other: on the busy 2-core machine an in-process
SPM trial took 4x to 60x the CPU time with them (``python -m benchmarks.blas_threads``).
An explicit setting in the environment wins; subprocesses the tests start inherit it.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
