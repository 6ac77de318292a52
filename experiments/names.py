"""The names Hydra resolves while composing a run: an experiment's directory name and
where its logs go.

Apart from :mod:`experiments.store` on purpose: :func:`experiments.schema.register_configs`
registers these as resolvers, and the schema is part of every trial's code
(:mod:`experiments.codedigest`), so whatever it imports re-keys every recorded setting
when edited.  The storage layer computes no row and must not be among them.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

#: An experiment's name: a plain directory name under the results directory.
PLAIN_NAME = re.compile(r"(?!\.)[A-Za-z0-9_.\-]{1,200}")


def plain_name(name: object) -> str:
    """``name`` if it is a plain directory name (letters, digits, ``_ . -``, not starting
    with a dot, at most 200 characters), else a ``ValueError`` naming the field: a name
    such as ``../../etc`` would put the results, and Hydra's files, outside
    ``results_dir``."""
    if not isinstance(name, str) or not PLAIN_NAME.fullmatch(name):
        raise ValueError(
            f"name: must be a plain directory name (letters, digits, '_', '.', '-', not "
            f"starting with '.', at most 200 characters), got {str(name)[:80]!r}"
        )
    return name


def log_root(results_dir: object, name: object) -> str:
    """Where Hydra writes a run's logs and resolved configs: ``<results_dir>/<name>/hydra``,
    or, when that cannot be created or written (a read-only copy of finished results),
    ``<temp>/ldp-hydra/<name>``, so that a rerun with nothing to run still reads the
    recorded rows instead of failing on Hydra's log directory."""
    name = plain_name(name)
    target = Path(str(results_dir)).absolute() / name / "hydra"
    existing = target
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.is_dir() and os.access(existing, os.W_OK):
        return str(target)  # Hydra creates what is missing
    return str(Path(tempfile.gettempdir()) / "ldp-hydra" / name)
