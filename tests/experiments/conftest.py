"""Fixtures of the harness tests: composition in a temporary results dir, tiny settings.

Every test composes with ``hydra.compose`` into its own ``tmp_path`` and clears
``GlobalHydra`` afterwards (the lightning-hydra-template habit).
"""

from __future__ import annotations

import os
import subprocess
import sys
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
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    return subprocess.run(
        [sys.executable, "-m", "experiments.run", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        **popen,
    )
