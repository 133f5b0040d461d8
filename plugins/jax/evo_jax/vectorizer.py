"""`episodes.vectorize = "jax"`: the chunk evaluator class the core finds through the registry.

`JaxVectorizer` is what the hook registers: made in the main process from the config (small and
picklable, so any handler can ship it), it checks the template before the run starts and builds
a `JaxChunkEvaluator` wherever the handler evaluates. That evaluator compiles the rollout once
per chunk size and scores a chunk in one call (`IBatchEvaluator`), with the observation
normaliser a handler hands it (`IContextEvaluator`); results come back as the
core's `EvaluationResult`s, so the optimizer, shaping, the log, best, hall of fame and
checkpoints are the core's, unchanged.

Processing: JAX uses every core for one compiled function already, so `processing.type =
"sequential"` (the default) is the natural choice; `mp` workers work too, spawned (or started
by a fork server): JAX does not survive `fork` after it started, so with JAX loaded in the main
process the core's mp handler spawns them unless `processing.start_method` says otherwise.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from evo_core import (
    EvaluationContext,
    EvaluationResult,
    IBrainTemplate,
    IJaxTemplate,
    ObservationNormalizer,
    ObservationStatistics,
    UserError,
    VectorizerConfig,
    jax_form,
)
from evo_jax.config import JaxVectorizeConfig
from evo_jax.environments import ENVIRONMENTS, make_jax_environment
from evo_jax.gymnasium_env import register_gymnasium
from evo_jax.keys import environment_seeds
from evo_jax.rollout import Rollout, build_rollout

__all__ = ["JaxChunkEvaluator", "JaxVectorizer"]

_WHERE = 'episodes.vectorize = "jax"'


@dataclass(frozen=True)
class JaxVectorizer:
    """The factory of JAX chunk evaluators (`IChunkEvaluatorFactory`) for one config."""

    config_model: ClassVar[type[VectorizerConfig]] = JaxVectorizeConfig
    environments: ClassVar[Mapping[str, str]] = {
        env_id: entry.description for env_id, entry in ENVIRONMENTS.items()}
    register_environments: ClassVar[Callable[[], None]] = staticmethod(register_gymnasium)

    config: JaxVectorizeConfig
    environment: Any  # the config's EnvironmentConfig
    episodes: Any  # the config's EpisodesConfig
    behaviour: Any = None

    def check(self, template: IBrainTemplate) -> None:
        """One line for whatever cannot run: the environment, a table, the brain."""
        env_id = self.environment.id
        entry = ENVIRONMENTS.get(env_id)
        if entry is None:
            raise UserError(f"{_WHERE} runs the environments `evo list-environments` shows "
                            f"({', '.join(ENVIRONMENTS)}), not {env_id!r}; use one of them, or "
                            'episodes.vectorize = "off"')
        evo_own = entry.source == "evo"  # made by gymnasium.make, with the config's kwargs
        if self.environment.wrappers or (self.environment.kwargs and not evo_own):
            made_from, remove = (("its id and kwargs", "its wrappers") if evo_own
                                 else ("its id", "its kwargs and wrappers"))
            raise UserError(f"environment: {_WHERE} makes {env_id!r} from {made_from} alone; "
                            f"remove {remove}")
        if self.behaviour is not None:
            raise UserError(f"{_WHERE} records no behaviour descriptors; remove the [behaviour] "
                            '(and [novelty]) table, or use episodes.vectorize = "sync"')
        libraries = [("jax", "evo-core[jax]")]
        if not evo_own:
            libraries.append((entry.source, "evo-core[jax]" if entry.source == "gymnax"
                              else "evo-jax[brax]"))
        for module, extra in libraries:
            if importlib.util.find_spec(module) is None:
                raise UserError(f"{_WHERE} with {env_id!r} needs {module}, which is not "
                                f"installed; install it with pip install '{extra}'")
        form = jax_form(template)
        if form is None:
            raise UserError(f"{_WHERE}: the brain template {type(template).__name__} has no JAX "
                            "form (it is neither an evo_core.IArrayBrain, from whose functions "
                            "evo derives one, nor an evo_core.IJaxTemplate); use a brain that "
                            'has one (ffnn, lstm, ctrnn), or episodes.vectorize = "off"')
        reason = form.jax_unsupported()
        if reason is not None:
            raise UserError(f"{_WHERE}: the brain cannot run in JAX: {reason}")

    def build(self, template: IBrainTemplate) -> JaxChunkEvaluator:
        form = jax_form(template)
        if form is None:  # `check` said so before the run
            raise TypeError(f"{type(template).__name__} has no JAX form")
        return JaxChunkEvaluator(form, self.environment.id, self.episodes,
                                 dict(self.environment.kwargs))


class JaxChunkEvaluator:
    """Scores chunks of genomes with one compiled rollout (`IBatchEvaluator`), with the
    observation normaliser of the last `use_context` (`IContextEvaluator`): its mean and
    standard deviation are arguments of the rollout, which is compiled once with a normaliser
    and once without."""

    def __init__(self, template: IJaxTemplate, env_id: str, episodes: Any,
                 kwargs: Mapping[str, Any] | None = None) -> None:
        import jax.numpy as jnp

        self.template = template
        #: JAX's default float type (float32 unless jax_enable_x64), as numpy's dtype
        self.real = np.dtype(jnp.result_type(float))
        self.runs = int(episodes.runs)
        self.episodes = episodes
        self.env = make_jax_environment(env_id, kwargs)
        self.entries = int(np.prod(self.env.observation_space.shape or ()))
        self.normalizer: ObservationNormalizer | None = None
        self._rollouts: dict[tuple[bool, float | None], Rollout] = {}

    def use_context(self, context: EvaluationContext) -> None:
        self.normalizer = context.normalizer

    def _rollout(self, normalizer: ObservationNormalizer | None) -> Rollout:
        """The compiled rollout with or without a normaliser (and its clip)."""
        key = (normalizer is not None, None if normalizer is None else normalizer.clip)
        rollout = self._rollouts.get(key)
        if rollout is None:
            episodes = self.episodes
            rollout = self._rollouts[key] = build_rollout(
                self.template, self.env, self.runs, episodes.max_steps,
                float(episodes.max_steps_penalty), float(episodes.nonfinite_penalty), *key)
        return rollout

    def evaluate(self, genome: NDArray[np.float64], seed: int) -> EvaluationResult:
        return self.evaluate_many(np.asarray(genome, dtype=np.float64)[None, :],
                                  np.array([seed], dtype=np.int64))[0]

    def evaluate_many(self, genomes: NDArray[np.float64], seeds: NDArray[np.int64]
                      ) -> list[EvaluationResult]:
        # numpy arrays straight into the jitted call (its own transfer is the cheapest), and
        # numpy views of what comes back: this path runs once a generation, beside a rollout of
        # a few milliseconds
        normalizer = self.normalizer
        mean, std = (np.zeros(self.entries, self.real), np.ones(self.entries, self.real)) \
            if normalizer is None else (normalizer.mean.astype(self.real),
                                        normalizer.std.astype(self.real))
        totals, steps, nonfinite, rows = self._rollout(normalizer)(
            np.asarray(genomes, dtype=self.real),
            environment_seeds(np.asarray(seeds, dtype=np.int64)), mean, std)
        # each candidate's episodes summed in order, as EpisodeRunner sums them (a row of a few
        # runs is reduced sequentially by numpy too), then averaged
        fitness = (np.asarray(totals, dtype=np.float64).sum(axis=1) / self.runs).tolist()
        step_counts = np.asarray(steps, dtype=np.int64).sum(axis=1).tolist()
        bad = np.asarray(nonfinite, dtype=np.int64).sum(axis=1).tolist()
        observed = [None] * len(fitness) if rows is None else self._statistics(rows)
        return [EvaluationResult(f, s, b, observations=o)
                for f, s, b, o in zip(fitness, step_counts, bad, observed)]

    def _statistics(self, rows: tuple[Any, Any, Any]) -> list[ObservationStatistics]:
        """Each candidate's statistics: its rows' (episodes'), in float64, pooled in episode
        order as the core's engines pool them."""
        counts, means, m2s = (np.asarray(values) for values in rows)
        episodes = [ObservationStatistics(int(count), mean.astype(np.float64),
                                          m2.astype(np.float64))
                    for count, mean, m2 in zip(counts, means, m2s)]
        runs = self.runs
        return [functools.reduce(ObservationStatistics.merged, episodes[start:start + runs])
                for start in range(0, len(episodes), runs)]

    def close(self) -> None:
        pass
