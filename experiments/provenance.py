"""Which code produced a row: the columns every results row carries about it.

:func:`provenance` is the package versions, the git commit of the source tree (``-dirty``
when its code has uncommitted changes) and the seeding scheme; :func:`plugin_of` names the
plug-in distributions (and their versions) a setting's protocol comes from.  The runner
(:mod:`experiments.execute`) stamps both on every row, and a setting's key
(:func:`experiments.settings.setting_key`) includes the plug-in's version, so results of
another version of a plug-in are never reused.
"""

from __future__ import annotations

import functools
import importlib.metadata
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

import ldp
from experiments.schema import FRONTIER_PROTOCOL
from experiments.seeding import STREAMS

#: The paths whose uncommitted changes make a row's commit ``<sha>-dirty``.
SOURCE_PATHS = ("ldp", "experiments", "conf", "pyproject.toml")


def source_commit(root: Path) -> str:
    """``git rev-parse HEAD`` of the checkout at ``root``, ``<sha>-dirty`` when its code
    (:data:`SOURCE_PATHS`, not the results) has uncommitted changes, or "unknown"."""

    def git(*args: str) -> str:
        out = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=10, cwd=root, check=True
        )
        return out.stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", *SOURCE_PATHS)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha}-dirty" if sha and dirty else sha or "unknown"


@functools.cache
def git_commit() -> str:
    """:func:`source_commit` of this source tree (once per process)."""
    return source_commit(Path(__file__).resolve().parent.parent)


def short_commit(commit: str) -> str:
    """A commit as shown to people: 10 hex digits, and ``-dirty`` if it was."""
    commit = str(commit)
    return commit[:10] + ("-dirty" if commit.endswith("-dirty") else "")


def provenance() -> dict[str, str]:
    """The columns every row carries about the code that produced it."""
    return {
        "ldp_version": ldp.__version__,
        "numpy_version": np.__version__,
        "git_commit": git_commit(),
        "streams": STREAMS,
    }


def plugin_of(protocol: dict[str, Any]) -> dict[str, str]:
    """``plugin`` and ``plugin_version`` of a config's protocol node: the distributions the
    plug-ins it uses come from (:attr:`ldp.registry.Protocol.source` ``plugin:<name>``) and
    their installed versions (``importlib.metadata``), joined by ``;``.  The node's protocol
    counts, and so does a protocol it names in a parameter (a heavy hitter's ``oracle``);
    empty strings when every one is of this package.  The frontier's node names none but
    runs every registered oracle, so each of them counts.

    Both are columns of every row and part of a plug-in setting's key
    (:func:`experiments.settings.make_setting`), so results of another version of a
    plug-in are another setting's, never reused.
    """
    from ldp import registry

    names = [protocol["name"], *(v for k, v in protocol.items() if k != "name")]
    if protocol.get("kind") == FRONTIER_PROTOCOL["kind"]:  # every registered oracle runs
        names += list(registry.protocols("oracle"))
    found: dict[str, str] = {}
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            continue
        try:
            source = registry.get(name).source
        except registry.RegistryError:
            continue
        if source.startswith("plugin:"):
            distribution = source.removeprefix("plugin:")
            try:
                found[distribution] = importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                found[distribution] = "unknown"
    return {"plugin": ";".join(found), "plugin_version": ";".join(found.values())}
