"""A conformance checker for brain plugins, as gymnasium's `check_env` is for environments.

    from evo_core import check_brain
    check_brain(MyTemplate).raise_for_failures()   # in a plugin's own tests

`evo check-brain NAME` runs the same checks on an installed brain and prints the report. Each
failed check says what is wrong and how to fix it. Timings (µs per `make` and per `step`) are
reported, never asserted: machines differ.
"""

from __future__ import annotations

import functools
import pickle
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pydantic import ValidationError

from evo_core.contract.config_models import BrainConfig, component_type_name

__all__ = ["check_brain", "BrainReport", "Check", "SPACE_PAIRS"]

#: (observation space, action space) pairs every brain is built for and stepped in.
SPACE_PAIRS: list[tuple[str, gym.Space[Any], gym.Space[Any]]] = [
    ("Box(4) -> Discrete(3)", spaces.Box(-1, 1, (4,), dtype=np.float64), spaces.Discrete(3)),
    ("Box(2, 3) -> Box(2)", spaces.Box(-5, 5, (2, 3), dtype=np.float32),
     spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 10.0], np.float32))),
    ("Discrete(5) -> MultiDiscrete([2, 3])", spaces.Discrete(5), spaces.MultiDiscrete([2, 3])),
    ("Tuple(Discrete(3), Box(2)) -> Box(3, unbounded)",
     spaces.Tuple((spaces.Discrete(3), spaces.Box(-1, 1, (2,), dtype=np.float64))),
     spaces.Box(-np.inf, np.inf, (3,), dtype=np.float64)),
]
STEPS = 25


@dataclass
class Check:
    name: str
    passed: bool
    message: str = ""


@dataclass
class BrainReport:
    """The outcome of every check, and timings."""

    template: str
    checks: list[Check] = field(default_factory=list)
    make_us: float | None = None
    step_us: float | None = None

    @property
    def ok(self) -> bool:
        return all(check.passed for check in self.checks)

    def failures(self) -> list[Check]:
        return [check for check in self.checks if not check.passed]

    def raise_for_failures(self) -> None:
        if not self.ok:
            raise AssertionError("\n".join(f"{c.name}: {c.message}" for c in self.failures()))

    def __str__(self) -> str:
        lines = [f"checking {self.template}"]
        for check in self.checks:
            mark = "ok  " if check.passed else "FAIL"
            lines.append(f"  {mark} {check.name}" + (f": {check.message}" if check.message else ""))
        if self.make_us is not None and self.step_us is not None:
            lines.append(f"  make() {self.make_us:.1f} µs, step() {self.step_us:.1f} µs "
                         "(Box(4) -> Discrete(3), default config)")
        failed = len(self.failures())
        lines.append("all checks passed" if not failed else f"{failed} check(s) failed")
        return "\n".join(lines)


class _Checker:
    def __init__(self, template_class: type[Any]) -> None:
        self.cls = template_class
        self.report = BrainReport(f"{template_class.__module__}.{template_class.__qualname__}")

    def check(self, name: str, test: Callable[[], str | None]) -> bool:
        """Run `test`; it returns None when fine, or what is wrong and how to fix it."""
        try:
            problem = test()
        except Exception as exc:  # noqa: BLE001 - any exception is a failed check
            problem = f"raised {type(exc).__name__}: {exc}"
        self.report.checks.append(Check(name, problem is None, problem or ""))
        return problem is None

    def run(self) -> BrainReport:
        config: list[Any] = []
        if not self.check("config model", lambda: self._config_model(config)):
            return self.report
        templates: list[tuple[str, Any]] = []
        for label, observation_space, action_space in SPACE_PAIRS:
            self.check(f"builds for {label}", functools.partial(
                self._build, config[0], observation_space, action_space, label, templates))
        if not templates:
            return self.report
        label, template = templates[0]
        self.check("genome_size", lambda: self._genome_size(templates))
        self.check("make() rejects a wrong genome length", lambda: self._wrong_length(template))
        for label, each in templates:
            self.check(f"step() gives valid actions for {label}",
                       functools.partial(self._valid_actions, each))
        # continuous actions show any difference between runs; argmax actions may hide it
        continuous = next((t for _, t in templates if isinstance(t.action_space, spaces.Box)),
                          template)
        self.check("reset() makes a rerun identical", lambda: self._reset(continuous))
        self.check("a pickled template makes identical brains",
                   lambda: self._pickle(continuous))
        self.check("the template is immutable", lambda: self._immutable(template))
        self.check("no draws from numpy's global RNG",
                   lambda: self._global_rng(config[0], templates))
        self._timings(template)
        return self.report

    # ------------------------------------------------------------------ the checks

    def _config_model(self, out: list[Any]) -> str | None:
        model = getattr(self.cls, "config_model", None)
        if not (isinstance(model, type) and issubclass(model, BrainConfig)):
            return ("config_model must be a subclass of evo_core.BrainConfig; set "
                    "`config_model = MyConfig` on the template class")
        if component_type_name(model) is None:
            return (f'{model.__name__}.type must be `type: Literal["name"] = "name"`, the '
                    "brain's registered name")
        try:
            out.append(model.model_validate({}))
        except ValidationError as exc:
            return (f"{model.__name__}() does not validate with its defaults ({exc.error_count()} "
                    "error(s)); give every field a default that validates")
        return None

    def _build(self, config: Any, observation_space: gym.Space[Any],
               action_space: gym.Space[Any], label: str,
               out: list[tuple[str, Any]]) -> str | None:
        template = self.cls(config, observation_space, action_space, np.random.default_rng(0))
        out.append((label, template))
        return None

    def _genome_size(self, templates: list[tuple[str, Any]]) -> str | None:
        for label, template in templates:
            size = template.genome_size
            if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
                return f"genome_size is {size!r} for {label}; it must be a positive int"
        return None

    def _wrong_length(self, template: Any) -> str | None:
        size = int(template.genome_size)
        for wrong in (size - 1, size + 1):
            try:
                template.make(np.zeros(wrong))
            except ValueError as exc:
                if str(size) not in str(exc):
                    return (f"make() with {wrong} genes raised ValueError({str(exc)!r}), which "
                            f"does not name the expected size {size}; say it in the message")
                continue
            except Exception as exc:  # noqa: BLE001
                return (f"make() with {wrong} genes raised {type(exc).__name__}; raise ValueError "
                        f"naming the expected size {size} (BrainTemplateBase.check_genome does)")
            return (f"make() accepted a genome of {wrong} genes (expected {size}); check the "
                    "length and raise ValueError (BrainTemplateBase.check_genome does)")
        return None

    def _episode(self, brain: Any, space: gym.Space[Any], seed: int = 1) -> list[Any]:
        brain.reset()
        space.seed(seed)
        return [brain.step(space.sample()) for _ in range(STEPS)]

    def _valid_actions(self, template: Any) -> str | None:
        genome = np.random.default_rng(2).normal(0, 1, int(template.genome_size))
        brain = template.make(genome)
        for index, action in enumerate(self._episode(brain, template.observation_space)):
            if not template.action_space.contains(action):
                return (f"step {index} returned {action!r}, not in {template.action_space}; map "
                        "outputs with evo_core.action_decoder (BrainTemplateBase.decoder)")
        return None

    def _reset(self, template: Any) -> str | None:
        brain = template.make(np.random.default_rng(3).normal(0, 1, int(template.genome_size)))
        first = self._episode(brain, template.observation_space)
        second = self._episode(brain, template.observation_space)
        if not _same(first, second):
            return ("a second episode after reset() differs from the first; reset() must "
                    "restore every piece of per-episode state")
        return None

    def _pickle(self, template: Any) -> str | None:
        clone = pickle.loads(pickle.dumps(template))
        genome = np.random.default_rng(4).normal(0, 1, int(template.genome_size))
        a = self._episode(template.make(genome), template.observation_space)
        b = self._episode(clone.make(genome), clone.observation_space)
        if not _same(a, b):
            return ("brains from a pickled copy of the template act differently; keep all "
                    "set-up state (masks, index maps) as picklable attributes of the template")
        return None

    def _immutable(self, template: Any) -> str | None:
        try:
            template._evo_check_probe = 1
        except (AttributeError, TypeError):
            pass
        else:
            return ("attributes can be set on the template after construction; derive from "
                    "evo_core.BrainTemplateBase (it freezes) or make __setattr__ refuse")
        for path, array in _arrays(template):
            if array.flags.writeable:
                return (f"template array {path} is writeable; call setflags(write=False) "
                        "(BrainTemplateBase does this for every array it holds)")
        return None

    def _global_rng(self, config: Any, templates: list[tuple[str, Any]]) -> str | None:
        label, first = templates[0]
        before = _global_rng_state()
        template = self.cls(config, first.observation_space, first.action_space,
                            np.random.default_rng(5))
        brain = template.make(np.random.default_rng(6).normal(0, 1, int(template.genome_size)))
        self._episode(brain, template.observation_space)
        if _global_rng_state() != before:
            return ("building, making or stepping drew from numpy's global RNG; use the "
                    "Generator passed to the template (or to use_rng(rng)) instead")
        return None

    def _timings(self, template: Any) -> None:
        genome = np.random.default_rng(7).normal(0, 1, int(template.genome_size))
        start = time.perf_counter()
        for _ in range(200):
            template.make(genome)
        self.report.make_us = (time.perf_counter() - start) / 200 * 1e6
        brain = template.make(genome)
        brain.reset()
        template.observation_space.seed(0)
        observations = [template.observation_space.sample() for _ in range(500)]
        start = time.perf_counter()
        for observation in observations:
            brain.step(observation)
        self.report.step_us = (time.perf_counter() - start) / 500 * 1e6


def _global_rng_state() -> tuple[bytes, int, int, float]:
    """numpy's legacy global state, position included (one draw moves only the position)."""
    state: Any = np.random.get_state(legacy=True)
    _, keys, position, has_gauss, cached = state
    return keys.tobytes(), int(position), int(has_gauss), float(cached)


def _same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b))


def _arrays(value: Any, path: str = "template", seen: set[int] | None = None
            ) -> Iterator[tuple[str, np.ndarray]]:
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _arrays(item, f"{path}[{index}]", seen)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _arrays(item, f"{path}[{key!r}]", seen)
    elif hasattr(value, "__dict__") and not isinstance(value, (gym.Space, type)):
        for key, item in vars(value).items():
            yield from _arrays(item, f"{path}.{key}", seen)


def check_brain(template_class: type[Any]) -> BrainReport:
    """Check a brain template class against the contract; see `BrainReport`."""
    return _Checker(template_class).run()
