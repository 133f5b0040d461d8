"""The conformance checker relies on the declared contract only and never ends in a traceback.

The brain here is written as a newcomer would write one from the protocols' documentation: a
plain class, no evo base class and no evo helper, frozen by its own `__setattr__`, without an
`observation_space` attribute, for Box observations only. It draws noise (IRandomBrain) and
keeps set-up state (IStatefulTemplate). Its broken variants each break one step.
"""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import run_evo

from evo_core import IRandomBrain, IStatefulTemplate, check_brain
from evo_core.authoring.conformance import space_pairs
from evo_core.authoring.freezing import freeze_arrays, reachable_arrays
from evo_core.cli.main import main

PLAIN = '''
"""A linear policy with a fixed random input projection, for Box observations only."""

from typing import Any, Literal

import gymnasium as gym
import numpy as np

from evo_core import BrainConfig, hookimpl


class PlainConfig(BrainConfig):
    """A plain-class brain for tests."""

    type: Literal["plain"] = "plain"
    noise: float = 0.01


class PlainBrain:
    def __init__(self, template: "PlainTemplate", weights: Any, bias: Any) -> None:
        self.template, self.weights, self.bias = template, weights, bias
        self.rng: Any = None

    def use_rng(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def reset(self) -> None:
        if self.rng is None:
            raise RuntimeError("use_rng() must come before reset()")

    def step(self, observation: Any) -> Any:
        t = self.template
        x = t.projection @ np.asarray(observation, dtype=np.float64).reshape(-1)
        out = np.tanh(self.weights @ x + self.bias) + self.rng.normal(0, t.noise, len(self.bias))
        if t.discrete:
            return int(np.argmax(out))
        return np.clip(t.low + (out + 1) / 2 * (t.high - t.low), t.low, t.high).astype(t.dtype)


class PlainTemplate:
    config_model = PlainConfig

    def __init__(self, config: PlainConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator, /) -> None:
        if not isinstance(observation_space, gym.spaces.Box):
            raise TypeError(f"needs Box observations, not {type(observation_space).__name__}")
        inputs = int(np.prod(observation_space.shape))
        state: dict[str, Any] = {"noise": config.noise, "inputs": inputs,
                                 "projection": rng.normal(0, 1, (inputs, inputs))}
        if isinstance(action_space, gym.spaces.Discrete):
            state.update(discrete=True, outputs=int(action_space.n))
        elif isinstance(action_space, gym.spaces.Box) and np.all(np.isfinite(action_space.low)):
            state.update(discrete=False, outputs=int(np.prod(action_space.shape)),
                         low=action_space.low.astype(np.float64).reshape(-1),
                         high=action_space.high.astype(np.float64).reshape(-1),
                         dtype=action_space.dtype)
        else:
            raise ValueError(f"needs Discrete or bounded Box actions, not {action_space}")
        self.__setstate__(state)

    def __setstate__(self, state: dict[str, Any]) -> None:
        for value in state.values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        self.__dict__.update(state)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"PlainTemplate is immutable: cannot set {name!r}")

    @property
    def genome_size(self) -> int:
        return self.outputs * (self.inputs + 1)

    def make(self, genome: Any) -> PlainBrain:
        genome = np.asarray(genome, dtype=np.float64)
        if genome.shape != (self.genome_size,):
            raise ValueError(f"expected {self.genome_size} genes, got shape {genome.shape}")
        weights = genome[:-self.outputs].reshape(self.outputs, self.inputs).copy()
        return PlainBrain(self, weights, genome[-self.outputs:].copy())

    def saved_state(self) -> dict[str, Any]:
        return {"projection": self.projection}

    def restore(self, state: Any) -> "PlainTemplate":
        clone = object.__new__(type(self))
        clone.__setstate__({**self.__dict__, "projection": np.array(state["projection"])})
        return clone


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [PlainTemplate, *BROKEN]


BROKEN: list[type[Any]] = []


def broken(name: str) -> Any:
    """A PlainTemplate variant registered as `name`, with its own config type."""
    def register(cls: type[Any]) -> type[Any]:
        config = type(f"{cls.__name__}Config", (PlainConfig,), {
            "__annotations__": {"type": Literal[name]}, "type": name, "__module__": __name__})
        cls.config_model = config
        BROKEN.append(cls)
        return cls
    return register
'''

BROKEN = '''
@broken("no_pair")
class NoPair(PlainTemplate):
    def __init__(self, *args: Any) -> None:
        raise TypeError("supports nothing")


@broken("size_raises")
class SizeRaises(PlainTemplate):
    @property
    def genome_size(self) -> int:
        raise RuntimeError("no size today")


@broken("make_raises")
class MakeRaises(PlainTemplate):
    def make(self, genome: Any) -> PlainBrain:
        raise RuntimeError("cannot make")


class Stumbles(PlainBrain):
    def step(self, observation: Any) -> Any:
        raise RuntimeError("stumbled")


@broken("step_raises")
class StepRaises(PlainTemplate):
    def make(self, genome: Any) -> PlainBrain:
        brain = super().make(genome)
        return Stumbles(self, brain.weights, brain.bias)


@broken("unpicklable")
class Unpicklable(PlainTemplate):
    def __reduce__(self) -> Any:
        raise TypeError("holds an open socket")


MADE = [0]


@broken("tires")
class Tires(PlainTemplate):
    """Works for the checks, then raises while being timed."""

    def make(self, genome: Any) -> PlainBrain:
        MADE[0] += 1
        if MADE[0] > 40:
            raise RuntimeError("tired")
        return super().make(genome)


class HostileBrain:
    """Answers every unknown attribute with a RuntimeError, not an AttributeError."""

    def __init__(self, inner: PlainBrain) -> None:
        self.inner = inner

    def reset(self) -> None:
        self.inner.use_rng(np.random.default_rng(0))

    def step(self, observation: Any) -> Any:
        return self.inner.step(observation)

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"nobody asked for {name}")


@broken("hostile")
class Hostile(PlainTemplate):
    def make(self, genome: Any) -> Any:
        return HostileBrain(super().make(genome))


class PassingBrain:
    """Hands every name it lacks on to the brain it wraps, use_rng included."""

    def __init__(self, inner: PlainBrain) -> None:
        self.inner = inner

    def reset(self) -> None:
        self.inner.reset()

    def step(self, observation: Any) -> Any:
        return self.inner.step(observation)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@broken("passing")
class Passing(PlainTemplate):
    def make(self, genome: Any) -> Any:
        return PassingBrain(super().make(genome))


@broken("forgetful")
class Forgetful(PlainTemplate):
    def restore(self, state: Any) -> "PlainTemplate":
        return self


@broken("not_a_brain")
class NotABrain(PlainTemplate):
    def make(self, genome: Any) -> Any:
        super().make(genome)
        return "a brain"
'''

#: brain name -> (the failed check, what its message says)
FAILURES = {
    "no_pair": ("builds for at least one space pair", "TypeError or ValueError for every"),
    "size_raises": ("genome_size", "genome_size raised RuntimeError: no size today"),
    "make_raises": ("step() gives valid actions for Box(4) -> Discrete(3)",
                    "make() raised RuntimeError: cannot make"),
    "step_raises": ("step() gives valid actions for Box(4) -> Discrete(3)",
                    "step() raised RuntimeError: stumbled"),
    "unpicklable": ("a pickled template makes identical brains",
                    "pickle.dumps(template) raised TypeError: holds an open socket"),
    "tires": ("timing make() and step()", "make() raised RuntimeError: tired"),
    "hostile": ("step() gives valid actions for Box(4) -> Discrete(3)",
                "isinstance(brain, IRandomBrain) raised RuntimeError: nobody asked for use_rng"),
    "passing": ("step() gives valid actions for Box(4) -> Discrete(3)",
                "use_rng is answered only by __getattr__, where evo never looks"),
    "forgetful": ("restore(saved_state()) makes identical brains", "act differently"),
    "not_a_brain": ("step() gives valid actions for Box(4) -> Discrete(3)",
                    "make() returned 'a brain', which lacks reset() or step(observation)"),
}

NOT_SUPPORTED = [
    "not supported: Discrete(5) -> MultiDiscrete([2, 3]) (TypeError: needs Box observations, "
    "not Discrete)",
    "not supported: Tuple(Discrete(3), Box(2)) -> Box(3, unbounded) (TypeError: needs Box "
    "observations, not Tuple)",
]


@pytest.fixture
def plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The module `plain_brains` (importable, so templates pickle), registered as a local
    plugin for in-process `evo` commands."""
    (tmp_path / "plain_brains.py").write_text(PLAIN + textwrap.dedent(BROKEN))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("EVO_PLUGINS", "plain_brains")
    return importlib.import_module("plain_brains")


def test_a_plain_class_brain_passes_with_its_unsupported_pairs_listed(plain: ModuleType) -> None:
    template_class = plain.PlainTemplate
    assert not hasattr(template_class, "observation_space")
    template = template_class(template_class.config_model(), *_box_pair(),
                              np.random.default_rng(0))
    brain = template.make(np.zeros(template.genome_size))
    assert isinstance(template, IStatefulTemplate) and isinstance(brain, IRandomBrain)

    report = check_brain(template_class)
    assert report.ok, str(report)
    assert [check.name for check in report.unsupported()] == [
        "not supported: Discrete(5) -> MultiDiscrete([2, 3])",
        "not supported: Tuple(Discrete(3), Box(2)) -> Box(3, unbounded)"]
    names = [check.name for check in report.checks]
    assert "restore(saved_state()) makes identical brains" in names
    assert "reset() makes a rerun identical" in names
    text = str(report)
    for line in NOT_SUPPORTED:
        assert line in text
    assert "all checks passed (2 space pair(s) not supported)" in text
    assert report.make_us is not None and report.timed_for == "Box(4) -> Discrete(3)"


def test_the_plain_brain_passes_evo_check_brain(tmp_path: Path) -> None:
    (tmp_path / "plain_brains.py").write_text(PLAIN + textwrap.dedent(BROKEN))
    env = {"PYTHONPATH": str(tmp_path)}
    result = run_evo("--plugin", "plain_brains", "check-brain", "plain", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checking brain 'plain' (local module plain_brains: plain_brains.PlainTemplate)" \
        in result.stdout
    for line in NOT_SUPPORTED:
        assert line in result.stdout
    assert "all checks passed" in result.stdout and "µs" in result.stdout
    # a broken one through the real command: exit 1, a report, no traceback
    result = run_evo("--plugin", "plain_brains", "check-brain", "tires", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL timing make() and step(): make() raised RuntimeError: tired" in result.stdout
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_every_failure_is_a_check_naming_the_step(plain: ModuleType, name: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    check, message = FAILURES[name]
    plain.MADE[0] = 0
    report = check_brain(next(cls for cls in plain.BROKEN
                              if cls.config_model.model_fields["type"].default == name))
    failed = {c.name: c.message for c in report.failures()}
    assert check in failed, str(report)
    assert message in failed[check]
    plain.MADE[0] = 0
    assert main(["check-brain", name]) == 1
    out, err = capsys.readouterr()
    assert f"FAIL {check}: " in out and "Traceback" not in out + err


def test_a_template_with_no_supported_pair_lists_every_reason(plain: ModuleType) -> None:
    report = check_brain(plain.NoPair)
    assert len(report.unsupported()) == len(space_pairs())
    assert all(check.message == "TypeError: supports nothing" for check in report.unsupported())
    assert [check.name for check in report.failures()] == ["builds for at least one space pair"]


def test_a_hostile_getattr_gets_a_hint(plain: ModuleType) -> None:
    report = check_brain(plain.Hostile)
    assert report.failures()
    for failure in report.failures():
        assert "must raise AttributeError (mind __getattr__)" in failure.message, failure


def test_protocols_never_ask_getattr_on_any_python(plain: ModuleType) -> None:
    # Python 3.11's own protocols asked __getattr__: the hostile brain raised in the engine, and
    # the passing one got use_rng there but not on 3.12 (other numbers on another Python)
    template = plain.PlainTemplate(plain.PlainConfig(), *_box_pair(), np.random.default_rng(0))
    inner = template.make(np.zeros(template.genome_size))
    assert isinstance(inner, IRandomBrain)
    assert not isinstance(plain.HostileBrain(inner), IRandomBrain)
    assert not isinstance(plain.PassingBrain(inner), IRandomBrain)


def test_the_checker_survives_a_class_that_is_not_a_template() -> None:
    class Hostile(type):
        def __getattr__(cls, name: str) -> Any:
            raise RuntimeError(name)

    class Weird(metaclass=Hostile):
        pass

    report = check_brain(Weird)
    assert report.failures()[0].message == "reading config_model raised RuntimeError: config_model"
    assert not check_brain(42).ok


def test_one_walker_finds_and_freezes_every_array() -> None:
    class Slotted:
        __slots__ = ("__hidden", "shown")

        def __init__(self) -> None:
            self.__hidden = np.zeros(2)
            self.shown = [np.zeros(1), {"deep": (np.zeros(3),)}]

    class Holder:
        def __init__(self) -> None:
            self.slotted = Slotted()
            self.again = self.slotted  # reached twice, reported once
            self.rng = np.random.default_rng(0)

    holder = Holder()
    paths = [path for path, _ in reachable_arrays(holder)]
    assert paths == ["template.slotted._Slotted__hidden", "template.slotted.shown[0]",
                     "template.slotted.shown[1]['deep'][0]"]
    freeze_arrays(holder)
    assert not any(array.flags.writeable for _, array in reachable_arrays(holder))


def _box_pair() -> tuple[Any, Any]:
    import gymnasium as gym

    return gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(3)
