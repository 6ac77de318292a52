"""Atomic file writes: the one helper every writer of the package and its harness uses.

A file is written to a temporary sibling ``.<name>.<pid>.<token>.tmp`` and then
``os.replace``d onto its name, so a reader sees the old file or the new one, never half.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

__all__ = ["TEMPORARY", "atomic_write_bytes"]

#: A temporary name made by :func:`atomic_write_bytes`: ``.<name>.<pid>.<token>.tmp``
#: (the pid tells a stale file of a dead process from a live writer's).
TEMPORARY = re.compile(r"^\..+\.(\d+)\.[0-9a-f]+\.tmp$")


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary sibling and ``os.replace`` (atomic).

    The parent directory is created if missing.  No ``fsync`` (it cost more than a
    sampled trial in the harness): a process killed at any point leaves the old file or
    the new one, and a file damaged by a system crash is for its reader to detect (the
    harness's parts and the dataset cache carry checksums).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()
