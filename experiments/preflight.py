"""Preflight: every setting's protocol built once on its real data before any trial runs,
so that a bad config stops the run with one line naming its field; and the run's size
estimated first (:func:`check_cost`), so that a setting too large for the memory budget
(:mod:`ldp.budget`) is refused before anything is allocated."""

from __future__ import annotations

import json
from typing import Any

from experiments.build import build_heavy_hitter, build_protocol, protocol_arguments
from experiments.population import data_shape
from experiments.schema import ORACLE_KINDS, ConfigError
from ldp import budget, registry
from ldp.validation import ParameterError

#: Bytes per unit of what a run holds, estimated from the arrays each unit brings beside
#: its own 8 bytes (a user's value, its sorted copy and histogram share; a domain value's
#: estimate, count and variance; a trial's row in the parent's table and its bookkeeping).
#: For refusing a setting before it starts, not accounting: the protocols' own checks
#: (docs/limits.md) bound what each trial allocates.  A support value's 80 B: the
#: generator's probabilities and their temporaries peaked at 66 B each (measured at 4·10^6
#: values, ``python -m benchmarks --only budget``).
USER_BYTES, SUPPORT_BYTES, DOMAIN_BYTES, TRIAL_BYTES = 32, 80, 32, 1024


def _largest(unit_bytes: int) -> str:
    return f"<= {budget.current().memory_bytes // unit_bytes:,} at the current memory budget"


def check_cost(configs: list[dict[str, Any]]) -> None:
    """Refuse, naming the field, a run whose trials, users, support or domain would not fit
    the memory budget (``ldp.budget``), before any data is built or trial run."""
    try:
        trials = sum(int(c["n_trials"]) for c in configs)
        budget.check_memory(
            "n_trials",
            configs[0]["n_trials"] if configs else 0,
            _largest(TRIAL_BYTES),
            trials * TRIAL_BYTES,
            f"the table of {trials:,} trials (about 1 KiB a trial)",
        )
        for config in configs:
            dataset, domain = config["dataset"], config["options"].get("domain_size")
            for field, unit, what in (
                ("n", USER_BYTES, "the data set's users"),
                ("support", SUPPORT_BYTES, "the data set's support (its probabilities)"),
            ):
                value = dataset.get(field)
                if value is not None:
                    budget.check_memory(
                        f"dataset.{field}",
                        value,
                        _largest(unit),
                        int(value) * unit,
                        f"{what} (about {unit} B each)",
                    )
            if domain is not None:
                budget.check_memory(
                    "options.domain_size",
                    domain,
                    _largest(DOMAIN_BYTES),
                    int(domain) * DOMAIN_BYTES,
                    f"a trial's estimate over the domain (about {DOMAIN_BYTES} B a value)",
                )
    except ParameterError as error:
        raise ConfigError(f"{error.name}: {str(error).removeprefix(error.name + ' ')}") from None


def _field_message(protocol: dict[str, Any], error: Exception, context: str) -> str:
    """A library error as one config line naming the field: ``protocol.g: must be ...``.

    The field is read from the error, never parsed from its text: a
    :class:`~ldp.validation.ParameterError` names its parameter (``error.name``); a protocol
    parameter becomes ``protocol.<name>``, ``epsilon`` and ``k`` stay as they are (root
    fields), anything else (``domain_size`` and ``m`` come from the data; a ``TypeError``)
    is attributed to the protocol as a whole.  ``context`` (the data's shape) is appended,
    as the message may depend on it.
    """
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if isinstance(error, ParameterError):
        own = {spec.name for spec in registry.parameters(registry.get(protocol["name"]).cls)}
        field = f"protocol.{error.name}" if error.name in own else error.name
        if error.name in own or error.name in ("epsilon", "k"):
            rest = text.removeprefix(f"{error.name} ").removeprefix(f"{error.name}: ")
            return f"{field}: {rest} ({context})"
    return f"protocol: {protocol['name']} rejects this setting: {text} ({context})"


def preflight(configs: list[dict[str, Any]]) -> None:
    """Build every setting's protocol once, on its real data, before any trial runs.

    The library's own checks (ranges, an η that does not fit m, an ε whose hash range
    overflows) and the data loaders' (a malformed ``dataset.path`` file) thus stop the run
    with one line naming the field (:class:`~experiments.schema.ConfigError`).
    """
    check_cost(configs)
    seen: set[str] = set()
    for config in configs:
        protocol = config["protocol"]
        fingerprint = json.dumps(
            [protocol, config["dataset"], config["options"], config["epsilon"], config["k"]],
            sort_keys=True,
        )
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        try:
            n, m, d = data_shape(config)
        except (OSError, TypeError, ValueError) as error:
            line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            word, _, rest = line.partition(" ")
            if word in config["dataset"] and word != "name" and rest:  # "item_rule must ..."
                raise ConfigError(f"dataset.{word}: {rest}") from None
            field = "dataset.path" if config["dataset"].get("path") is not None else "dataset"
            raise ConfigError(f"{field}: {line}") from None
        if protocol["kind"] == "oracle_frontier":
            continue  # its trial builds every registered oracle, skipping the ones that refuse
        shape = f"{config['dataset']['name']} data: n = {n}, " + (
            f"d = {d}" if protocol["kind"] != "heavy_hitter" else f"m = {m}"
        )
        try:
            if protocol["kind"] == "multiple_questions":
                build_protocol(protocol, config["epsilon"] / 2, domain_size=d)
            if protocol["kind"] in (*ORACLE_KINDS, "set"):
                build_protocol(protocol, config["epsilon"], domain_size=d)
            elif protocol["kind"] == "mean":
                registry.get(protocol["name"], "mean").cls(
                    epsilon=config["epsilon"], **protocol_arguments(protocol)
                )
            else:
                build_heavy_hitter(config, m, n)
        except (TypeError, ValueError) as error:
            raise ConfigError(_field_message(protocol, error, shape)) from None
