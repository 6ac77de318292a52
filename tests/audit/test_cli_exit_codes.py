"""``python -m ldp.audit``'s exit status: 1 only for a measured violation, 2 for bad input.

Each broken plug-in below used to end in a traceback, which Python exits with status 1,
the status of "the claim FAILS": a script reading the status would have published that a
protocol was shown not to be ε-LDP when the audit never ran.  Each must now exit 2 with
one line on stderr naming the cause; a planted leak still exits 1 and an honest protocol 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp.audit.__main__ import main

HERE = "tests.audit.test_cli_exit_codes"
FAST = ["--trials", "2000"]


class NoPerturb:
    epsilon = 1.0


class WrongLength:
    epsilon = 1.0

    def perturb(self, values, rng):
        return np.asarray(values)[:-1]


class NoneReports:
    epsilon = 1.0

    def perturb(self, values, rng):
        return None


class NoEpsilon:
    def perturb(self, values, rng):
        return rng.integers(0, 2, size=len(values))


class StringEpsilon(NoEpsilon):
    epsilon = "1"


class Raises:
    epsilon = 1.0

    def perturb(self, values, rng):
        raise RuntimeError("the mechanism's own bug\nsecond line")


class Honest:
    """Randomised response on {0, 1}, truthful with probability e/(e+1): 1-LDP."""

    epsilon = 1.0

    def perturb(self, values, rng):
        truthful = rng.random(len(values)) < np.e / (np.e + 1)
        return np.where(truthful, values, 1 - np.asarray(values))


class Leaky(Honest):
    """Claims 1-LDP and returns the value."""

    def perturb(self, values, rng):
        return np.asarray(values).copy()


class TakesDefaults(Honest):
    def __init__(self, epsilon: float, domain_size: int) -> None:
        self.epsilon, self.domain_size = float(epsilon), domain_size


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([f"{HERE}:NoPerturb"], "perturb"),
        ([f"{HERE}:WrongLength"], "reports for"),
        ([f"{HERE}:NoneReports"], "perturb must return"),
        ([f"{HERE}:NoEpsilon"], "epsilon"),
        ([f"{HERE}:StringEpsilon"], "epsilon"),
        ([f"{HERE}:Raises"], "the mechanism's own bug"),
        (["GRR", "--trials", "0"], "--trials"),
        (["GRR", "--alpha", "2"], "--alpha"),
        (["GRR", "--trials", "many"], "--trials"),
        (["GRR", "--no-such-option"], "--no-such-option"),
        (["NoSuchProtocol"], "NoSuchProtocol"),
        ([f"{HERE}:NoSuchClass"], "NoSuchClass"),
    ],
)
def test_input_errors_exit_2_in_one_line(argv, says, capsys) -> None:
    assert main([*FAST, *argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], captured.err
    assert "FAILS" not in captured.out


def test_only_a_measured_violation_exits_1(capsys) -> None:
    assert main([f"{HERE}:Leaky", *FAST]) == 1
    assert "FAILS" in capsys.readouterr().out
    assert main([f"{HERE}:Honest", "--trials", "20000"]) == 0


def test_defaults_given_to_a_class_are_said(capsys) -> None:
    assert main([f"{HERE}:TakesDefaults", "--trials", "20000"]) == 0
    assert "set to their defaults: epsilon=1.0, domain_size=4" in capsys.readouterr().out
    assert main([f"{HERE}:TakesDefaults", "epsilon=1", "domain_size=2", *FAST]) == 0
    assert "defaults" not in capsys.readouterr().out


def test_a_class_without_those_parameters_gets_none(capsys) -> None:
    # Honest() takes no arguments: nothing is injected (it used to get a TypeError)
    assert main([f"{HERE}:Honest", "--trials", "20000"]) == 0
    assert "defaults" not in capsys.readouterr().out
