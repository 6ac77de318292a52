"""Where a ``python -m experiments.figures`` run spends its time and memory.

:class:`Profile` times each stage of each experiment or figure (composing its settings,
running its trials, loading its table, drawing, saving) and the run's end (gallery and
reproduction report); :meth:`Profile.table` is the Markdown table the command prints at the
end and writes beside the gallery (``profile.md``).  Wall times on a shared machine are
upper bounds; the peak memory is the kernel's ``maxrss`` of this process and of its
workers (exited ones via ``getrusage(RUSAGE_CHILDREN)``, live ones via ``/proc``).
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

#: The stages, in the order of a run, as the table's columns.
STAGES = ("settings", "trials", "data", "drawing", "saving", "report")


def _live_children_peaks() -> list[int]:
    """Peak resident set (kB, ``VmHWM``) of each live child of this process (Linux)."""
    me, peaks = os.getpid(), []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != me:
                continue
            status = (entry / "status").read_text()
        except (OSError, ValueError, IndexError):
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]))
    return peaks


def peak_memory_mb() -> tuple[float, float, float]:
    """(this process, the largest worker, both bounds added up), peak resident MB."""
    kb = 1024 if sys.platform == "darwin" else 1  # ru_maxrss: bytes there, kB on Linux
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // kb
    exited = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // kb
    live = _live_children_peaks()
    largest = max([exited, *live])
    together = own + max(exited, sum(live))
    return own / 1024, largest / 1024, together / 1024


class Profile:
    """Seconds per (name, stage), in the order first timed."""

    def __init__(self) -> None:
        self.seconds: dict[str, dict[str, float]] = {}
        self.start = time.perf_counter()

    def add(self, name: str, stage: str, seconds: float) -> None:
        """Add ``seconds`` (e.g. measured in a worker) to ``name``'s ``stage``."""
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
        row = self.seconds.setdefault(name, {})
        row[stage] = row.get(stage, 0.0) + seconds

    @contextlib.contextmanager
    def time(self, name: str, stage: str) -> Iterator[None]:
        """Add the wall time of the ``with`` block to ``name``'s ``stage``."""
        self.add(name, stage, 0.0)  # checks the stage, keeps the order of first use
        began = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, stage, time.perf_counter() - began)

    def table(self) -> str:
        """The Markdown table: a row per name, a column per stage, totals, peak memory."""
        used = [s for s in STAGES if any(s in row for row in self.seconds.values())]
        lines = [
            "| experiment / figure | " + " | ".join(used) + " | total |",
            "|---|" + "---:|" * (len(used) + 1),
        ]

        def cells(row: dict[str, float]) -> str:
            shown = [f"{row[s]:.1f}" if s in row else "" for s in used]
            return " | ".join(shown) + f" | {sum(row.values()):.1f} |"

        for name, row in self.seconds.items():
            lines.append(f"| {name} | " + cells(row))
        totals = {s: sum(r.get(s, 0.0) for r in self.seconds.values()) for s in used}
        lines.append("| **all** | " + cells(totals))
        own, largest, together = peak_memory_mb()
        wall = time.perf_counter() - self.start
        lines += [
            "",
            f"Wall time {wall:.1f} s. Settings and figures are prepared on the workers, "
            "whose seconds add up above; an experiment's trials run from the previous "
            "one's end to its own, in one pool. "
            f"Peak memory (maxrss): this process {own:.0f} MB, its largest child process "
            f"{largest:.0f} MB, at most {together:.0f} MB together.",
        ]
        return "\n".join(lines) + "\n"

    def write(self, directory: Path, table: str) -> Path:
        """Write ``table`` (:meth:`table`, as printed) to ``directory/profile.md`` under a
        title; return the path."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "profile.md"
        path.write_text("# Where the run's time went\n\n" + table)
        return path
