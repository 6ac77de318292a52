"""Fixtures of the harness tests: composition in a temporary results dir, tiny settings.

Every test composes with ``hydra.compose`` into its own ``tmp_path`` and clears
``GlobalHydra`` afterwards (the lightning-hydra-template habit).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig

from experiments import schema
from experiments.run import CONF_DIR
from experiments.schema import register_configs
from experiments.settings import Setting, expand
from ldp import registry

REPO = CONF_DIR.parent
#: A population of 400 users on 8 values, errors of the 7 absent values: trials take ~1 ms.
TINY = (
    "dataset=point",
    "dataset.n=400",
    "options.domain_size=8",
    "options.track=absent",
    "progress=false",
)


@pytest.fixture(autouse=True)
def _clear_hydra() -> Iterator[None]:
    yield
    GlobalHydra.instance().clear()


@pytest.fixture
def register_protocol(monkeypatch) -> Iterator[Callable[..., type]]:
    """Register a protocol class for this test only (as its module's ``@register`` would)."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    schema._schema_of.cache_clear()
    added: list[str] = []

    def _register(cls: type, **display) -> type:
        registry.register(cls, **display)
        added.append(display.get("name") or getattr(cls, "name", None) or cls.__name__)
        schema._schema_of.cache_clear()
        register_configs()
        return cls

    yield _register
    schema._schema_of.cache_clear()
    for name in added:  # and its protocol=<name> choice
        ConfigStore.instance().repo["protocol"].pop(f"{name.lower()}.yaml", None)


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    return tmp_path / "results"


@pytest.fixture
def compose_config(results_dir: Path) -> Callable[..., DictConfig]:
    """Compose conf/config.yaml with overrides (results under this test's tmp_path)."""
    register_configs()

    def _compose(*overrides: str, hydra: bool = False) -> DictConfig:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return compose(
                "config",
                overrides=[f"results_dir={results_dir}", *overrides],
                return_hydra_config=hydra,
            )

    return _compose


@pytest.fixture
def settings_of(results_dir: Path) -> Callable[..., list[Setting]]:
    """The settings an in-process run would execute for these overrides."""
    register_configs()

    def _expand(*overrides: str) -> list[Setting]:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return expand("config", [f"results_dir={results_dir}", *overrides])

    return _expand


def run_cli(*args: str, timeout: float = 120, **popen) -> subprocess.CompletedProcess:
    """``python -m experiments.run ARGS`` in the repository, captured."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", **popen.pop("env", {})}
    return subprocess.run(
        [sys.executable, "-m", "experiments.run", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        **popen,
    )


#: A plug-in oracle (entry point ``ldp.protocols``): GRR whose every ``perturb`` call first
#: takes the next ticket of the gate folder named by ``LDP_TEST_GATE`` and waits until the
#: test allows that many; without the variable it is plain GRR (same numbers, same seeds).
GATED_PLUGIN = '''
"""GRR that waits at a gate the test controls (one ticket per perturb call)."""

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ldp.oracles import GRR
from ldp.registry import register


def _pass_gate():
    folder = os.environ.get("LDP_TEST_GATE")
    if not folder:
        return
    gate = Path(folder)
    ticket = 0
    while True:  # O_EXCL: each call, in any process, takes its own ticket
        try:
            os.close(os.open(gate / f"ticket-{ticket}", os.O_CREAT | os.O_EXCL))
            break
        except FileExistsError:
            ticket += 1
    while ticket >= int((gate / "allowed").read_text()):
        time.sleep(0.01)


@register(label="Gated", color="#000000", order=99)
@dataclass(frozen=True, kw_only=True)
class Gated(GRR):
    """GRR behind the test's gate."""

    name = "Gated"

    def perturb(self, values, rng):
        _pass_gate()
        return super().perturb(values, rng)
'''


class Gate:
    """The folder a ``protocol=gated`` run waits at: trial calls past :meth:`allow`'s count
    block until the test allows more, so a test interrupts a run at a known point instead
    of racing it."""

    def __init__(self, folder: Path, site: Path):
        self.folder, self.site = folder, site
        folder.mkdir(parents=True)
        self.allow(0)

    def allow(self, count: int) -> None:
        """Let the first ``count`` perturb calls through (atomically)."""
        temporary = self.folder / ".allowed.tmp"
        temporary.write_text(str(count))
        os.replace(temporary, self.folder / "allowed")

    def started(self) -> int:
        """How many perturb calls have taken a ticket."""
        return sum(1 for path in self.folder.glob("ticket-*"))

    def wait_until_blocked(self, process: subprocess.Popen, timeout: float = 120) -> None:
        """Wait until a call beyond the allowed count holds a ticket (so it is waiting)."""
        allowed = int((self.folder / "allowed").read_text())
        deadline = time.monotonic() + timeout
        while self.started() <= allowed:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"the run never reached the gate at {allowed} (exit {process.poll()})"
                )
            time.sleep(0.02)

    def env(self) -> dict[str, str]:
        """The environment of a run that loads the plug-in and waits at this gate."""
        path = os.pathsep.join([str(self.site), str(REPO)])
        return {**os.environ, "PYTHONPATH": path, "LDP_TEST_GATE": str(self.folder)}


@pytest.fixture
def gated_site(tmp_path: Path) -> Path:
    """A folder with the ``gated`` plug-in and its distribution metadata (``PYTHONPATH``)."""
    site = tmp_path / "gated-site"
    info = site / "gated_ldp-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "gated_ldp.py").write_text(textwrap.dedent(GATED_PLUGIN))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gated-ldp\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ldp.protocols]\ngated = gated_ldp\n")
    return site


@pytest.fixture
def new_gate(tmp_path: Path, gated_site: Path) -> Callable[[], Gate]:
    """A fresh :class:`Gate` (all calls blocked) per call, for one run each."""
    made = []

    def _new() -> Gate:
        made.append(Gate(tmp_path / f"gate-{len(made)}", gated_site))
        return made[-1]

    return _new
