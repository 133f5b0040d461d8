"""A conformance checker for brain plugins, as gymnasium's `check_env` is for environments.

    from evo_core import check_brain
    check_brain(MyTemplate).raise_for_failures()   # in a plugin's own tests

`evo check-brain NAME` runs the same checks on an installed brain and prints the report.

The checker relies only on what `evo_core.contract.protocols` declares: the class's
`config_model` and constructor, `genome_size` and `make`, a brain's `reset` and `step`, and the
optional `use_rng` (IRandomBrain) and `saved_state`/`restore` (IStatefulTemplate), detected with
`isinstance` as the engine detects them. It never asks a template for its spaces: it keeps the
spaces it built each template for next to it. A template that offers `make_batch`
(IBatchTemplate) must make batches whose every row acts as `make()` of its genome, through resets
of single rows and per-row Generators (IRandomBrainBatch) included.

A template that raises TypeError or ValueError for a pair of spaces does not support that pair,
as the experiment treats it ("cannot be built for ENV"); the report lists such pairs as not
supported, and at least one pair must build. Whatever a plugin raises, wherever, becomes a failed
check that names the call that raised: the checker itself never ends in a traceback. Timings (µs
per `make` and per `step`) are reported, never asserted: machines differ.
"""

from __future__ import annotations

import copy
import functools
import inspect
import keyword
import pickle
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pydantic import ValidationError
from typing_extensions import get_protocol_members

from evo_core.authoring.array_jax import jax_form
from evo_core.authoring.batching import make_batch, split_rows
from evo_core.authoring.freezing import reachable_arrays
from evo_core.authoring.jax_conformance import jax_mismatch, jax_missing
from evo_core.contract.config_models import BrainConfig, component_type_name
from evo_core.contract.protocols import (
    IArrayBrain,
    IBatchTemplate,
    IBrain,
    IBrainBatch,
    IBrainTemplate,
    IRandomBrain,
    IRandomBrainBatch,
    IReloadableBatch,
    IStatefulTemplate,
    ISubsetBatch,
)
from evo_core.errors import describe

__all__ = ["check_brain", "BrainReport", "Check", "space_pairs", "batch_mismatch"]

STEPS = 25
#: Rows of the batches the checker compares with lone brains, and the tolerance of continuous
#: actions (the built-in batched brains agree bit for bit).
BATCH_ROWS = 3
BATCH_TOLERANCE = 1e-12
MAKE_REPEATS = 200
STEP_REPEATS = 500
T = TypeVar("T")

SpacePair = tuple[str, gym.Space[Any], gym.Space[Any]]


def space_pairs() -> list[SpacePair]:
    """(label, observation space, action space): every pair the checker tries, new each call
    (the checker seeds them, and a template may keep them)."""
    return [
        ("Box(4) -> Discrete(3)", spaces.Box(-1, 1, (4,), dtype=np.float64), spaces.Discrete(3)),
        ("Box(2, 3) -> Box(2)", spaces.Box(-5, 5, (2, 3), dtype=np.float32),
         spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 10.0], np.float32))),
        ("Discrete(5) -> MultiDiscrete([2, 3])", spaces.Discrete(5),
         spaces.MultiDiscrete([2, 3])),
        ("Tuple(Discrete(3), Box(2)) -> Box(3, unbounded)",
         spaces.Tuple((spaces.Discrete(3), spaces.Box(-1, 1, (2,), dtype=np.float64))),
         spaces.Box(-np.inf, np.inf, (3,), dtype=np.float64)),
        # pixels, for image brains (a CNN); the others see 1728 inputs
        ("Box(24, 24, 3, uint8) image -> Discrete(3)",
         spaces.Box(0, 255, (24, 24, 3), dtype=np.uint8), spaces.Discrete(3)),
    ]


@dataclass(frozen=True)
class Check:
    """One check. `unsupported` marks a space pair the template declines: not a failure."""

    name: str
    passed: bool
    message: str = ""
    unsupported: bool = False

    def line(self) -> str:
        if self.unsupported:
            return f"  --   {self.name} ({self.message})"
        mark = "ok  " if self.passed else "FAIL"
        return f"  {mark} {self.name}" + (f": {self.message}" if self.message else "")


@dataclass
class BrainReport:
    """The outcome of every check, and timings."""

    template: str
    checks: list[Check] = field(default_factory=list)
    make_us: float | None = None
    step_us: float | None = None
    timed_for: str = ""
    config_label: str = "default config"

    @property
    def ok(self) -> bool:
        return all(check.passed for check in self.checks)

    def failures(self) -> list[Check]:
        return [check for check in self.checks if not check.passed]

    def unsupported(self) -> list[Check]:
        """The space pairs the template declined, with its reasons."""
        return [check for check in self.checks if check.unsupported]

    def raise_for_failures(self) -> None:
        if not self.ok:
            raise AssertionError("\n".join(f"{c.name}: {c.message}" for c in self.failures()))

    def render(self, title: str | None = None) -> str:
        """The report as text; `title` replaces the first line's template path."""
        lines = [f"checking {title or self.template}"]
        lines += [check.line() for check in self.checks]
        if self.make_us is not None and self.step_us is not None:
            lines.append(f"  make() {self.make_us:.1f} µs, step() {self.step_us:.1f} µs "
                         f"({self.timed_for}, {self.config_label})")
        failed = len(self.failures())
        summary = "all checks passed" if not failed else f"{failed} check(s) failed"
        declined = len(self.unsupported())
        if declined:
            summary += f" ({declined} space pair(s) not supported)"
        lines.append(summary)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class _Built:
    """A template with the spaces the checker built it for, since a template need not expose
    them, and its genome size once that has been checked."""

    label: str
    observation_space: gym.Space[Any]
    action_space: gym.Space[Any]
    template: IBrainTemplate
    genome_size: int = 0


class _StepFailed(Exception):
    """A plugin's call raised: `step` names the call, for the report."""

    def __init__(self, step: str, error: Exception) -> None:
        super().__init__(step)
        self.step = step
        self.error = error


class _Problem(Exception):
    """What is wrong and how to fix it, found deep inside a check."""


def _call(step: str, function: Callable[[], T]) -> T:
    """Call plugin code; anything it raises becomes a `_StepFailed` naming `step`."""
    try:
        return function()
    except Exception as exc:  # a plugin may raise anything
        raise _StepFailed(step, exc) from exc


def _implements(value: object, protocol: type[Any], name: str) -> bool:
    """`isinstance(value, protocol)` as the engine decides it, with what Python's own check
    leaves out. evo's protocols look members up without running the object's code, on every
    Python (`evo_core.contract.protocols`); Python 3.11's own ones asked `__getattr__` for
    every member the object lacks. So an object whose class answers names by code of its own
    (`__getattr__`, or a `__getattribute__` other than object's) is asked here, under the
    checker's guard, for each member of `protocol` it lacks: a name it lacks must raise
    AttributeError, as hasattr() and getattr() with a default expect, and a member it answers
    there is one the engine never calls."""
    step = f"isinstance({name}, {protocol.__name__})"
    if _call(step, functools.partial(isinstance, value, protocol)):
        return True
    if not _answers_names_itself(value):
        return False
    for member in sorted(get_protocol_members(protocol)):
        if _declares(value, member):
            continue
        try:
            getattr(value, member)
        except AttributeError:
            continue
        except Exception as exc:  # a plugin may raise anything
            raise _StepFailed(step, exc) from exc
        raise _Problem(f"{member} is answered only by __getattr__, where evo never looks "
                       f"(isinstance looks members up on the class and instance, as Python "
                       f"3.12 does), so {protocol.__name__} goes unseen; define {member} on "
                       "the class")
    return False


def _declares(value: object, name: str) -> bool:
    """Whether `value` or its class has `name`, found as isinstance finds it: statically."""
    try:
        inspect.getattr_static(value, name)
    except AttributeError:
        return False
    return True


def _answers_names_itself(value: object) -> bool:
    """Whether `value`'s class, or a base other than object, defines `__getattr__` or
    `__getattribute__` (read from the classes, without asking the object)."""
    return any(name in vars(base) for base in type(value).__mro__ if base is not object
               for name in ("__getattr__", "__getattribute__"))


def _show(value: Any) -> str:
    """A short repr, even of an object whose `__repr__` raises."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = f"<{type(value).__name__} whose repr raises>"
    return text if len(text) <= 80 else text[:77] + "..."


class _Checker:
    def __init__(self, template_class: Any, config: Any = None) -> None:
        self.cls = template_class
        self.config = config
        self.report = BrainReport(_class_path(template_class))
        if config is not None:
            self.report.config_label = "given config"

    def check(self, name: str, test: Callable[[], str | None]) -> bool:
        """Run `test`; it returns None when fine, or what is wrong and how to fix it."""
        try:
            problem = test()
        except _Problem as found:
            problem = str(found)
        except _StepFailed as failed:
            problem = f"{failed.step} raised {describe(failed.error)}"
            if failed.step.startswith("isinstance("):
                problem += ("; a name the object lacks must raise AttributeError (mind "
                            "__getattr__): hasattr(), getattr() with a default and Python "
                            "3.11's isinstance on a protocol rely on it")
        except Exception as exc:  # noqa: BLE001 - any exception is a failed check
            problem = f"raised {describe(exc)}"
        self.report.checks.append(Check(name, problem is None, problem or ""))
        return problem is None

    def attempt(self, name: str, function: Callable[[], T]) -> tuple[bool, T | None]:
        """Run a step that is not a check of its own: only a failure enters the report."""
        result: list[T] = []

        def run() -> str | None:
            result.append(function())
            return None

        checks = len(self.report.checks)
        if self.check(name, run):
            del self.report.checks[checks:]
            return True, result[0]
        return False, None

    def run(self) -> BrainReport:
        config: list[Any] = []
        if not self.check("config model", lambda: self._config_model(config)):
            return self.report
        built = [b for b in (self._build(config[0], *pair) for pair in space_pairs()) if b]
        if not built:
            if not self.report.failures():
                self.check("builds for at least one space pair", lambda: (
                    "the template raised TypeError or ValueError for every space pair; a brain "
                    "must support at least one (see the reasons above)"))
            return self.report
        sized: list[_Built] = []
        self.check("genome_size", lambda: self._genome_size(built, sized))
        if not sized:
            return self.report
        main = sized[0]
        self.check("make() rejects a wrong genome length", lambda: self._wrong_length(main))
        for each in sized:
            self.check(f"step() gives valid actions for {each.label}",
                       functools.partial(self._valid_actions, each))
        # continuous actions show any difference between runs; argmax actions may hide it
        continuous = next((b for b in sized if isinstance(b.action_space, spaces.Box)), main)
        self.check("reset() makes a rerun identical", lambda: self._reset(continuous))
        self.check("a pickled template makes identical brains", lambda: self._pickle(continuous))
        worked, stateful = self.attempt("detecting IStatefulTemplate", functools.partial(
            _implements, continuous.template, IStatefulTemplate, "template"))
        if worked and stateful:
            self.check("restore(saved_state()) makes identical brains",
                       lambda: self._restore(config[0], continuous))
        worked, batched = self.attempt("detecting IBatchTemplate or IArrayBrain",
                                       lambda: _implements(main.template, IBatchTemplate,
                                                           "template")
                                       or _implements(main.template, IArrayBrain, "template"))
        if worked and batched:
            for each in sized:
                self.check(f"batch rows act as make() for {each.label}",
                           functools.partial(self._batch, each))
        self._jax_checks(sized)
        self.check("the template is immutable", lambda: self._immutable(main))
        self.check("no draws from numpy's global RNG", lambda: self._global_rng(config[0], main))
        self._timings(main)
        return self.report

    # ------------------------------------------------------------------ the checks

    def _config_model(self, out: list[Any]) -> str | None:
        model = _call("reading config_model", lambda: getattr(self.cls, "config_model", None))
        if not (isinstance(model, type) and issubclass(model, BrainConfig)):
            return ("config_model must be a subclass of evo_core.BrainConfig; set "
                    "`config_model = MyConfig` on the template class")
        if component_type_name(model) is None:
            return (f'{model.__name__}.type must be `type: Literal["name"] = "name"`, the '
                    "brain's registered name")
        if self.config is not None:
            if not isinstance(self.config, model):
                return (f"the config to check is a {type(self.config).__name__}, not a "
                        f"{model.__name__}")
            out.append(self.config)
            return None
        try:
            out.append(model.model_validate({}))
        except ValidationError as exc:
            return (f"{model.__name__}() does not validate with its defaults ({exc.error_count()} "
                    "error(s)); give every field a default that validates")
        return None

    def _build(self, config: Any, label: str, observation_space: gym.Space[Any],
               action_space: gym.Space[Any]) -> _Built | None:
        """The template for one pair; a TypeError or ValueError means "not supported"."""
        name = f"builds for {label}"
        try:
            template = self.cls(config, observation_space, action_space,
                                np.random.default_rng(0))
        except (TypeError, ValueError) as exc:
            self.report.checks.append(Check(f"not supported: {label}", True, describe(exc),
                                            unsupported=True))
            return None
        except Exception as exc:  # noqa: BLE001
            self.report.checks.append(Check(name, False, (
                f"the constructor raised {describe(exc)}; raise TypeError or ValueError for "
                "spaces the brain does not support")))
            return None
        self.report.checks.append(Check(name, True))
        return _Built(label, observation_space, action_space, template)

    def _genome_size(self, built: list[_Built], out: list[_Built]) -> str | None:
        problems = []
        for each in built:
            try:
                size = _call("genome_size", functools.partial(_genome_size_of, each.template))
            except _StepFailed as failed:
                problems.append(f"genome_size raised {describe(failed.error)} for {each.label}")
                continue
            if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
                problems.append(f"genome_size is {_show(size)} for {each.label}; it must be a "
                                "positive int")
                continue
            if not _implements(each.template, IBrainTemplate, "template"):
                problems.append(f"the template for {each.label} has no make(genome) (see "
                                "evo_core.IBrainTemplate)")
                continue
            out.append(_Built(each.label, each.observation_space, each.action_space,
                              each.template, int(size)))
        return "; ".join(problems) or None

    def _wrong_length(self, built: _Built) -> str | None:
        size = built.genome_size
        for wrong in (size - 1, size + 1):
            try:
                built.template.make(np.zeros(wrong))
            except ValueError as exc:
                if str(size) not in describe(exc):
                    return (f"make() with {wrong} genes raised {describe(exc)!r}, which does not "
                            f"name the expected size {size}; say it in the message")
                continue
            except Exception as exc:  # noqa: BLE001
                return (f"make() with {wrong} genes raised {describe(exc)}; raise ValueError "
                        f"naming the expected size {size} (BrainTemplateBase.check_genome does)")
            return (f"make() accepted a genome of {wrong} genes (expected {size}); check the "
                    "length and raise ValueError (BrainTemplateBase.check_genome does)")
        return None

    def _brain(self, built: _Built, seed: int, template: IBrainTemplate | None = None) -> IBrain:
        """A brain of a seeded random genome, checked to be an IBrain."""
        maker = built.template if template is None else template
        # a template built from another seed may draw masks that keep another number of genes
        size = built.genome_size if template is None else _call(
            "genome_size", functools.partial(_genome_size_of, template))
        genome = np.random.default_rng(seed).normal(0, 1, size)
        brain = _call("make()", lambda: maker.make(genome))
        if not _implements(brain, IBrain, "brain"):
            raise _Problem(f"make() returned {_show(brain)}, which lacks reset() or "
                           "step(observation) (see evo_core.IBrain)")
        return brain

    def _valid_actions(self, built: _Built) -> str | None:
        actions = _episode(self._brain(built, 2), built.observation_space, seed=1)
        for index, action in enumerate(actions):
            if not _call("action_space.contains(action)",
                         functools.partial(built.action_space.contains, action)):
                return (f"step {index} returned {_show(action)}, not in {built.action_space}; map "
                        "outputs with evo_core.action_decoder (BrainTemplateBase.decoder)")
        return None

    def _reset(self, built: _Built) -> str | None:
        brain = self._brain(built, 3)
        first = _episode(brain, built.observation_space, seed=1)
        second = _episode(brain, built.observation_space, seed=1)
        if not _same(first, second):
            return ("a second episode after reset() differs from the first; reset() must "
                    "restore every piece of per-episode state (and a brain that draws random "
                    "numbers must draw them from the Generator given to use_rng)")
        return None

    def _pickle(self, built: _Built) -> str | None:
        data = _call("pickle.dumps(template)", lambda: pickle.dumps(built.template))
        clone = _call("pickle.loads(pickle.dumps(template))", lambda: pickle.loads(data))  # noqa: S301 - the template just pickled
        a = _episode(self._brain(built, 4), built.observation_space, seed=1)
        b = _episode(self._brain(built, 4, clone), built.observation_space, seed=1)
        if not _same(a, b):
            return ("brains from a pickled copy of the template act differently; keep all "
                    "set-up state (masks, index maps) as picklable attributes of the template")
        return None

    def _restore(self, config: Any, built: _Built) -> str | None:
        """Replay and resume build a fresh template and restore the saved state into it: that
        must give the very brains the saved template gave."""
        template = cast(IStatefulTemplate, built.template)
        state = _call("saved_state()", template.saved_state)
        if not isinstance(state, Mapping):
            return f"saved_state() returned {_show(state)}; return a dict of name -> numpy array"
        for name, value in state.items():
            if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
                return (f"saved_state() has the key {_show(name)}; use plain identifiers (they "
                        "name arrays in run-folder files)")
            if not isinstance(value, np.ndarray):
                return f"saved_state()[{name!r}] is {_show(value)}; it must be a numpy array"
        saved = {name: np.array(value) for name, value in state.items()}
        fresh: IStatefulTemplate = _call("the constructor", lambda: self.cls(
            config, built.observation_space, built.action_space, np.random.default_rng(8)))
        restored = _call("restore()", lambda: fresh.restore(saved))
        if not _implements(restored, IBrainTemplate, "restored"):
            return f"restore() returned {_show(restored)}, not a template"
        size = _call("genome_size", lambda: restored.genome_size)
        if size != built.genome_size:
            return (f"the restored template's genome_size is {_show(size)}, the saved one's "
                    f"{built.genome_size}; restore must rebuild everything derived from the state")
        a = _episode(self._brain(built, 9), built.observation_space, seed=1)
        b = _episode(self._brain(built, 9, restored), built.observation_space, seed=1)
        if not _same(a, b):
            return ("brains from restore(saved_state()) on a freshly built template act "
                    "differently; saved_state must hold everything set-up draws at random")
        return None

    def _batch(self, built: _Built) -> str | None:
        """The last row holds the first row's genome: a batch that groups the rows of one
        genome (`IGroupedArrayBrain`) is checked with a group of two and one of one."""
        genomes = np.random.default_rng(10).normal(0, 1, (BATCH_ROWS, built.genome_size))
        genomes[-1] = genomes[0]
        return batch_mismatch(built.template, genomes, built.observation_space,
                              built.action_space, seed=11)

    def _jax_checks(self, sized: list[_Built]) -> None:
        """The JAX form (declared `IJaxTemplate`, or derived from an `IArrayBrain`) against
        `make()` for every pair it supports."""
        worked, form = self.attempt("detecting IJaxTemplate or IArrayBrain", functools.partial(
            jax_form, sized[0].template))
        if not (worked and form is not None):
            return
        missing = jax_missing()
        for each in sized:
            name = f"jax_step() acts as make() for {each.label}"
            template = jax_form(each.template)
            assert template is not None
            reason = _call("jax_unsupported()", template.jax_unsupported) if missing is None \
                else missing
            if reason is not None:
                self.report.checks.append(Check(name, True, str(reason), unsupported=True))
                continue
            genome = np.random.default_rng(12).normal(0, 1, each.genome_size)
            self.check(name, functools.partial(jax_mismatch, template, genome,
                                               each.observation_space, 13))

    def _immutable(self, built: _Built) -> str | None:
        template: Any = built.template
        try:
            template._evo_check_probe = 1
        except Exception:  # noqa: BLE001 - refusing in any way is what is asked
            pass
        else:
            return ("attributes can be set on the template after construction; derive from "
                    "evo_core.BrainTemplateBase (it freezes) or make __setattr__ refuse")
        for path, array in reachable_arrays(template):
            if array.flags.writeable:
                return (f"template array {path} is writeable; call setflags(write=False) "
                        "(BrainTemplateBase does this for every array it holds)")
        return None

    def _global_rng(self, config: Any, built: _Built) -> str | None:
        before = _global_rng_state()
        template = _call("the constructor", lambda: self.cls(
            config, built.observation_space, built.action_space, np.random.default_rng(5)))
        _episode(self._brain(built, 6, template), built.observation_space, seed=1)
        if _global_rng_state() != before:
            return ("building, making or stepping drew from numpy's global RNG; use the "
                    "Generator passed to the template (or to use_rng(rng)) instead")
        return None

    def _timings(self, built: _Built) -> None:
        """µs per make() and per step(); a failure here is a failed check like any other."""

        def measure() -> None:
            genome = np.random.default_rng(7).normal(0, 1, built.genome_size)
            start = time.perf_counter()
            for _ in range(MAKE_REPEATS):
                _call("make()", lambda: built.template.make(genome))
            make_us = (time.perf_counter() - start) / MAKE_REPEATS * 1e6
            brain = self._brain(built, 7)
            _start_episode(brain, 0)
            built.observation_space.seed(0)
            observations = [built.observation_space.sample() for _ in range(STEP_REPEATS)]
            step = brain.step
            start = time.perf_counter()
            try:
                for observation in observations:
                    step(observation)
            except Exception as exc:
                raise _StepFailed("step()", exc) from exc
            step_us = (time.perf_counter() - start) / STEP_REPEATS * 1e6
            self.report.make_us, self.report.step_us = make_us, step_us
            self.report.timed_for = built.label

        self.attempt("timing make() and step()", measure)


def _start_episode(brain: IBrain, seed: int) -> None:
    """As the runner starts an episode: `use_rng` for brains that draw random numbers, then
    `reset()`."""
    if _implements(brain, IRandomBrain, "brain"):
        random_brain: Any = brain
        _call("use_rng()", lambda: random_brain.use_rng(np.random.default_rng(seed)))
    _call("reset()", brain.reset)


def _episode(brain: IBrain, observation_space: gym.Space[Any], seed: int) -> list[Any]:
    """STEPS actions for observations sampled with `seed`, each copied when returned (a brain
    may hand out the same buffer every step)."""
    _start_episode(brain, seed)
    observation_space.seed(seed)
    actions = []
    for _ in range(STEPS):
        observation = observation_space.sample()
        action = _call("step()", functools.partial(brain.step, observation))
        actions.append(_call("copying an action", functools.partial(copy.deepcopy, action)))
    return actions


def batch_mismatch(template: IBrainTemplate, genomes: NDArray[np.float64],
                   observation_space: gym.Space[Any], action_space: gym.Space[Any], seed: int,
                   steps: int = STEPS) -> str | None:
    """Where the template's batch (`make_batch` of authoring/batching.py: its own, or the one
    derived from its array functions) acts differently from `make(genome)` per row, or
    None. Every row starts with its own Generator; halfway, row 0 alone is reset with a new
    one (as the batched runner starts a row's next episode), so a reset that leaks into other
    rows, or noise drawn from the wrong row's Generator, shows. A batch that loads genomes
    (`IReloadableBatch`) gets another genome in row 0 there first, as the runner gives a row
    its next candidate. At three quarters, a batch that gives subsets (`ISubsetBatch`) goes on
    as its subset of the even rows, as the runner's tail steps only the rows still running."""
    rows = len(genomes)
    brains = [_call("make()", functools.partial(template.make, genome)) for genome in genomes]
    batch = _call("make_batch()", lambda: make_batch(template, genomes, observation_space,
                                                     action_space))
    if not _implements(batch, IBrainBatch, "batch"):
        return (f"make_batch() returned {_show(batch)}, which lacks reset(mask=None) or "
                "step(observations) (see evo_core.IBrainBatch)")
    random = _implements(batch, IRandomBrainBatch, "batch")
    reloadable = _implements(batch, IReloadableBatch, "batch")

    def restart(only: int | None, first: int) -> None:
        _restart(brains, batch, random, seed + first, only)

    subsets = rows > 1 and _implements(batch, ISubsetBatch, "batch")
    batched_space = gym.vector.utils.batch_space(observation_space, rows)
    batched_space.seed(seed)
    restart(None, 0)
    for step in range(steps):
        if step == steps // 2:
            if reloadable:
                _reload_row_zero(template, cast(IReloadableBatch, batch), genomes, brains)
            restart(0, 100)
        if subsets and step == 3 * steps // 4:
            kept = np.arange(0, rows, 2, dtype=np.intp)
            subset = _subset(cast(ISubsetBatch, batch), kept)
            if isinstance(subset, str):
                return subset
            batch, brains = subset, [brains[row] for row in kept.tolist()]
            batched_space = gym.vector.utils.batch_space(observation_space, len(kept))
            batched_space.seed(seed + 1)
        problem = _step_mismatch(step, batch, brains, batched_space.sample(),
                                 observation_space, action_space)
        if problem is not None:
            return problem
    return None


def _subset(batch: ISubsetBatch, rows: NDArray[np.intp]) -> IBrainBatch | str:
    """`batch.subset(rows)`, or what is wrong with what it returned."""
    subset = _call("subset(rows)", functools.partial(batch.subset, rows))
    if not _implements(subset, IBrainBatch, "subset"):
        return (f"subset(rows) returned {_show(subset)}, which lacks reset(mask=None) or "
                "step(observations) (see evo_core.ISubsetBatch)")
    return subset


def _restart(brains: list[IBrain], batch: IBrainBatch, random: bool, seed: int,
             only: int | None) -> None:
    """As the runner starts episodes: Generators first (row i's seeded with `seed + i`, the
    same for a lone brain and its row), then reset; `only` one row, None all."""
    rows = len(brains)
    lone = [np.random.default_rng(seed + row) for row in range(rows)]
    batched = [np.random.default_rng(seed + row) for row in range(rows)]
    for row, brain in enumerate(brains):
        if only is None or row == only:
            _start_brain(brain, lone[row])
    if random:
        given: list[np.random.Generator | None] = [
            rng if only is None or row == only else None for row, rng in enumerate(batched)]
        random_batch = cast(IRandomBrainBatch, batch)
        _call("use_rngs()", lambda: random_batch.use_rngs(given))
    mask = None if only is None else np.arange(rows) == only
    _call("reset(mask)", lambda: batch.reset(mask))


def _reload_row_zero(template: IBrainTemplate, batch: IReloadableBatch,
                     genomes: NDArray[np.float64], brains: list[IBrain]) -> None:
    """Another genome loaded into row 0, as the runner gives a row its next candidate, and
    `brains[0]` the brain `make()` builds of it, to compare the row with."""
    other = np.ascontiguousarray(genomes[-1] * 0.5)
    brains[0] = _call("make()", functools.partial(template.make, other))
    _call("load(rows, genomes)", functools.partial(batch.load, np.zeros(1, dtype=np.intp),
                                                   other[None, :]))


def _step_mismatch(step: int, batch: IBrainBatch, brains: list[IBrain], observations: Any,
                   observation_space: gym.Space[Any], action_space: gym.Space[Any]
                   ) -> str | None:
    """Where one step of `batch` on the stacked `observations` differs from its brains'."""
    actions = _call("step(observations)", functools.partial(batch.step, observations))
    expected = [_call("step()", functools.partial(brain.step, observation))
                for brain, observation in zip(brains, split_rows(observation_space,
                                                                 observations))]
    try:
        got = split_rows(action_space, actions)
    except Exception as exc:  # noqa: BLE001 - a malformed batch of actions
        return (f"step {step}: the batch's actions {_show(actions)} are not {len(brains)} "
                f"actions of {action_space} stacked along axis 0 ({describe(exc)})")
    for row, (want, have) in enumerate(zip(expected, got)):
        if not _close_action(want, have):
            return (f"step {step}, row {row}: the batch gave {_show(have)}, make() gave "
                    f"{_show(want)}; row i of make_batch(genomes) must act exactly as "
                    "make(genomes[i]), resets and Generators included")
    return None


def _start_brain(brain: IBrain, rng: np.random.Generator) -> None:
    if _implements(brain, IRandomBrain, "brain"):
        random_brain: Any = brain
        _call("use_rng()", lambda: random_brain.use_rng(rng))
    _call("reset()", brain.reset)


def _close_action(a: Any, b: Any) -> bool:
    """Equal actions, continuous parts within `BATCH_TOLERANCE`."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_close_action(a[k], b[k]) for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_close_action(x, y) for x, y in zip(a, b))
    first, second = np.asarray(a), np.asarray(b)
    if first.shape != second.shape:
        return False
    if first.dtype.kind == "f" or second.dtype.kind == "f":
        return bool(np.allclose(first, second, rtol=0.0, atol=BATCH_TOLERANCE, equal_nan=True))
    return bool(np.array_equal(first, second))


def _genome_size_of(template: IBrainTemplate) -> Any:
    return template.genome_size


def _global_rng_state() -> tuple[bytes, int, int, float]:
    """numpy's legacy global state, position included (one draw moves only the position)."""
    state: Any = np.random.get_state(legacy=True)
    _, keys, position, has_gauss, cached = state
    return keys.tobytes(), int(position), int(has_gauss), float(cached)


def _same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(_same_action(x, y) for x, y in zip(a, b))


def _same_action(a: Any, b: Any) -> bool:
    """Equal actions, also for Tuple and Dict actions whose parts have different shapes."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same_action(a[k], b[k]) for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_action(x, y) for x, y in zip(a, b))
    first: NDArray[Any] = np.asarray(a)
    return bool(np.array_equal(first, np.asarray(b)))


def _class_path(template_class: Any) -> str:
    try:
        return f"{template_class.__module__}.{template_class.__qualname__}"
    except Exception:  # noqa: BLE001
        return _show(template_class)


def check_brain(template_class: Any, config: BrainConfig | None = None) -> BrainReport:
    """Check a brain template class against the contract; see `BrainReport`.

    `config` (an instance of the class's `config_model`) is the configuration to check; unset,
    the model's defaults. Never raises for anything the plugin does: every problem is a failed
    check in the report.
    """
    checker = _Checker(template_class, config)
    try:
        return checker.run()
    except Exception as exc:  # noqa: BLE001 - a last resort; every step catches its own
        checker.report.checks.append(Check("the checker", False, f"stopped: {describe(exc)}"))
        return checker.report
