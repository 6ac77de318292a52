"""``ldp-harness``: the console script, its command list, and each command's ``--help``."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import cli

#: The console script of this environment (pyproject's [project.scripts]).
SCRIPT = shutil.which("ldp-harness", path=str(Path(sys.executable).parent))


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


PRESENT = [name for name, command in cli.COMMANDS.items() if _installed(command.module)]


def test_the_console_script_is_installed_and_lists_every_command() -> None:
    assert SCRIPT is not None, "reinstall the project: pip install -e '.[dev]'"
    done = subprocess.run([SCRIPT, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ldp-harness <command>")
    for name, command in cli.COMMANDS.items():
        assert f"  {name}" in done.stdout and command.summary in done.stdout


def test_version_is_the_distributions(capsys) -> None:
    from importlib.metadata import version

    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"ldp-harness {version('ldp-harness')}\n"


def test_no_command_or_an_unknown_one_is_a_usage_error(capsys) -> None:
    assert cli.main([]) == 2
    assert "commands:" in capsys.readouterr().out
    assert cli.main(["plott"]) == 2
    assert "unknown command 'plott'; one of: run, figures" in capsys.readouterr().err


@pytest.mark.parametrize("name", [n for n in PRESENT if n != "run"])
def test_each_commands_help(name: str, capsys) -> None:
    try:  # argparse exits on --help; the audit command returns its status instead
        code = cli.main([name, "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ") and "--help" in out


@pytest.mark.slow
def test_run_hands_its_arguments_to_the_hydra_app() -> None:
    """Hydra reads sys.argv, so ``run`` is checked in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "run", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "python -m experiments.run [experiment=NAME]" in done.stdout
    assert "Frequency oracles (protocol=<choice>" in done.stdout


def test_a_command_not_installed_says_so(monkeypatch, capsys) -> None:
    """A command whose own module is missing (a partial install) is one line, exit 2."""
    name = "plot"
    module = cli.COMMANDS[name].module

    def missing(wanted, *args, **kwargs):
        raise ModuleNotFoundError(f"No module named {wanted!r}", name=wanted)

    monkeypatch.setattr(cli.importlib, "import_module", missing)
    assert cli.main([name, "--help"]) == 2
    assert f"this installation has no {module}" in capsys.readouterr().err


def test_a_missing_dependency_inside_a_command_is_not_hidden(monkeypatch) -> None:
    """Only the command's own module counts as "not installed"; a missing import inside it
    surfaces as the error it is."""

    def broken(name, *args, **kwargs):
        raise ModuleNotFoundError("No module named 'somelib'", name="somelib")

    monkeypatch.setattr(cli.importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="somelib"):
        cli.load("summarize")


def test_the_commands_exit_code_is_passed_on(capsys) -> None:
    assert cli.main(["figures", "--only", "no_such_figure"]) == 2
    assert "no figure named" in capsys.readouterr().err


def test_run_without_the_config_directory_says_where_it_looked(monkeypatch, tmp_path, capsys):
    """A non-editable install has no conf/: one line, not Hydra's traceback."""
    import experiments.run

    monkeypatch.setattr(experiments.run, "CONF_DIR", tmp_path / "conf")
    assert cli.main(["run", "--help"]) == 2
    assert f"no config directory at {tmp_path / 'conf'}" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["summarize", "plot", "figures", "audit", "rappor"])
def test_a_subcommand_s_usage_names_it_as_typed(name: str, capsys) -> None:
    """``ldp-harness summarize --help`` shows ``usage: ldp-harness summarize``, not the
    module's own ``python -m experiments.summarize``."""
    try:  # argparse exits on --help; the audit command returns its status instead
        code = cli.dispatch([name, "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0
    assert capsys.readouterr().out.startswith(f"usage: ldp-harness {name} ")
