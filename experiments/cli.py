"""``ldp-harness``: one command for the harness's entry points.

``ldp-harness <command> [arguments]`` hands the arguments, untouched, to that command's own
entry point, the same one ``python -m <module>`` runs, so ``ldp-harness run ...`` and
``python -m experiments.run ...`` are the same command line::

    ldp-harness run experiment=oracle_variance protocol=grr n_trials=5
    ldp-harness run -m protocol=grr,olh epsilon=1,2,4 name=my_sweep
    ldp-harness summarize --help

Each module is imported only when its command runs, so ``ldp-harness --help`` is quick and a
command whose module is not installed says so in one line instead of failing the others.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

PROG = "ldp-harness"


class Command(NamedTuple):
    """A subcommand: the module holding its entry point, that function, one line of help."""

    module: str
    function: str
    summary: str


COMMANDS: dict[str, Command] = {
    "run": Command(
        "experiments.run", "cli", "run an experiment or a sweep (the Hydra app; -m for a sweep)"
    ),
    "figures": Command(
        "experiments.figures.__main__", "main", "run what is missing and draw every figure"
    ),
    "plot": Command("experiments.plot", "main", "plot one metric of a results directory"),
    "summarize": Command(
        "experiments.summarize", "main", "a table of one results directory: mean ± std per setting"
    ),
    "audit": Command(
        "ldp.audit.__main__", "main", "empirical lower bounds on ε for every registered oracle"
    ),
    "rappor": Command("ldp.io.rappor", "main", "RAPPOR reports from and to files (ldp.io.rappor)"),
}


#: The commands that compose the Hydra configs of ``conf/`` (not part of a wheel).
NEEDS_CONF = ("run", "figures")


def _conf_dir() -> Path:
    from experiments.run import CONF_DIR

    return CONF_DIR


def usage() -> str:
    """The text of ``ldp-harness --help``."""
    width = max(map(len, COMMANDS))
    lines = [
        f"usage: {PROG} <command> [arguments]",
        "",
        "Reproduce, check and extend local differential privacy research.",
        "",
        "commands:",
        *(f"  {name:<{width}}  {command.summary}" for name, command in COMMANDS.items()),
        "",
        f"`{PROG} <command> --help` shows a command's own arguments;",
        f"`{PROG} --version` the installed version.",
    ]
    return "\n".join(lines)


def load(name: str) -> Callable[[list[str]], object]:
    """The entry point of command ``name``, imported now.

    Raises
    ------
    LookupError
        When the command's module is not part of this installation (a missing module of its
        own, not a missing dependency inside it, which propagates as it is).
    """
    command = COMMANDS[name]
    try:
        module = importlib.import_module(command.module)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if not (command.module == missing or command.module.startswith(missing + ".")):
            raise
        raise LookupError(
            f"{PROG} {name}: this installation has no {command.module} (the command is not "
            "built yet, or the package is older than this command list)"
        ) from None
    return getattr(module, command.function)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ldp-harness`` with ``argv`` (default: the process's arguments); the exit code."""
    try:
        code = dispatch(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): no second error at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


def dispatch(argv: list[str]) -> int:
    """The work of :func:`main`: the command list, or the command ``argv[0]`` run."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from ldp import __version__

        print(f"{PROG} {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"{PROG}: unknown command {name!r}; one of: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    try:
        entry = load(name)
    except LookupError as error:
        print(error, file=sys.stderr)
        return 2
    if name in NEEDS_CONF and not _conf_dir().is_dir():
        print(
            f"{PROG} {name}: no config directory at {_conf_dir()}: the experiments read conf/ "
            "from a clone of the repository, so install it editable there (pip install -e .)",
            file=sys.stderr,
        )
        return 2
    # the subcommand's usage and errors name it as typed (ldp-harness summarize ...)
    takes_prog = "prog" in inspect.signature(entry).parameters
    code = entry(rest, prog=f"{PROG} {name}") if takes_prog else entry(rest)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
