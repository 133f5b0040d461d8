"""Rebuilding a trained brain from its run folder and running it on new episodes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, SupportsFloat, TypeVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.config.schema import ExperimentConfig
from evo_core.contract.observation_statistics import EvaluationContext, ObservationNormalizer
from evo_core.contract.protocols import IBrainTemplate, IObservationLabels
from evo_core.environments.making import wrapper_chain
from evo_core.environments.rendering import (
    check_draws_frames,
    frame_rate,
    prefer_offscreen_gl,
)
from evo_core.errors import EnvironmentRaised, UserError
from evo_core.evaluation.behaviour import StateProvider, check_state_provider
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.hooks.registry import Registry
from evo_core.results.provenance import warn_changed_versions
from evo_core.results.run_folder import RunFolder
from evo_core.results.template_state import restored_template
from evo_core.running.experiment import build_template
from evo_core.running.frame_panels import FrameLayout, ScaleMeter, Shown
from evo_core.running.frames import FrameRecorder
from evo_core.running.normalization import kept_normalizer
from evo_core.running.received import (
    OPEN_KEYS,
    REPLAY_KEYS,
    REPLAY_STEP_KEYS,
    read_received,
    replay_fix,
)
from evo_core.running.seeding import Streams
from evo_core.running.tracing import RewardTracer, Trace, TracingTemplate, new_trace
from evo_core.running.video import Video, video_file

__all__ = ["Champion", "Replay", "StateRecorder", "load_champion", "replay", "replay_states"]

Played = TypeVar("Played")


@dataclass
class Champion:
    config: ExperimentConfig
    template: IBrainTemplate
    genome: np.ndarray
    fitness: float
    #: the observation normaliser it was evaluated with (None: the run had none)
    normalizer: ObservationNormalizer | None = None


def load_champion(folder: RunFolder, registry: Registry, hof: int | None = None,
                  command: str = "", hof_option: str = "hof", *, replaying: bool = False,
                  max_steps: int | None = None, render_option: str | None = None) -> Champion:
    """The best genome (or, with `hof`, the hall of fame's member of that rank: 1 is the best)
    and a template equal to the one it was trained with. The code the run recorded must be
    loaded already (`command` is how the refusal tells to run again); a rank the hall of fame
    lacks is refused naming `hof_option`, the argument as the caller's user typed it (the API's
    `hof`, the command line's `--hof`). `replaying`: the champion is to play episodes, so their
    steps are checked too (`running/received.py`) and versions other than the run's are said
    in one line (`warn_changed_versions`); `max_steps`, when given, bounds them instead of the
    folder's limits. `render_option` (how the caller's user asked for frames): the environment
    must draw them, said in one line naming it, and MuJoCo is set up to draw them without a
    display (`environments/rendering.py`)."""
    if render_option is not None:
        prefer_offscreen_gl()
    config = read_received(folder, registry, keys=REPLAY_KEYS if replaying else OPEN_KEYS,
                           command=command, give_again=replay_fix(folder, command),
                           given_again=REPLAY_STEP_KEYS if max_steps is not None else ())
    if replaying:
        warn_changed_versions(config.provenance, registry, folder.config_file)
    if max_steps is not None:
        config = config.model_copy(update={"episodes": config.episodes.model_copy(
            update={"max_steps": max_steps})})
    if render_option is not None:
        check_draws_frames(config.environment, render_option)
    _, template = build_template(config, registry, Streams.from_seed(config.seed),
                                 str(folder.config_file))
    if hof is None:
        file = folder.best_file
        kept = folder.read_best()
    else:
        file = folder.hall_of_fame_file
        kept = folder.read_hall_of_fame_member(hof, hof_option)
    template = restored_template(template, kept.template_state, file)
    genome = kept.genome
    if genome.shape != (template.genome_size,):
        raise UserError(f"{file}: genome has shape {genome.shape} but the brain of "
                        f"config.json takes {template.genome_size} genes; was config.json or the "
                        "brain plugin changed since training?")
    return Champion(config, template, genome, kept.fitness,
                    kept_normalizer(kept, config, file, str(folder.config_file)))


class StateRecorder(gym.Wrapper[Any, Any, Any, Any]):
    """Keeps the environment's behaviour state (what `[behaviour] source = "state"` records:
    `evaluation/behaviour.py`'s provider) after every reset and step: `episodes[i]` is episode
    i's, one row for its start and one per step. A wrapper sees every reset and step, so the
    episode loop needs no code of its own for it; an environment without a state is the
    provider's one-line refusal."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._state: StateProvider = check_state_provider(env)
        self._rows: list[list[np.ndarray]] = []

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        result = self.env.reset(seed=seed, options=options)
        self._rows.append([])
        self._keep()
        return result

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        result = self.env.step(action)
        self._keep()
        return result

    def _keep(self) -> None:
        # a copy: a provider may hand out a view of state that the next step changes (qpos)
        self._rows[-1].append(np.array(self._state(), dtype=np.float64).reshape(-1))

    @property
    def episodes(self) -> list[np.ndarray]:
        """Each episode's states, (steps + 1, D)."""
        return [np.stack(rows) for rows in self._rows]


@contextmanager
def _headless_sdl() -> Iterator[None]:
    """pygame-drawn environments open SDL's video subsystem even for rgb_array frames; its
    Wayland probe prints "error: XDG_RUNTIME_DIR is invalid or not set" on a machine without a
    desktop session; and gymnasium 1.3's renderers call `pygame.init()`, whose audio subsystem
    prints ALSA's "cannot find card" lines on a machine without a sound card. Offscreen
    rendering needs neither: use SDL's dummy drivers for what the user did not choose."""
    chosen = [name for name in ("SDL_VIDEODRIVER", "SDL_AUDIODRIVER") if name not in os.environ]
    for name in chosen:
        os.environ[name] = "dummy"
    try:
        yield
    finally:
        for name in chosen:
            os.environ.pop(name, None)


@dataclass
class Replay:
    """The returns of every episode, how many episodes were recorded, and the video written
    (its frames and rate) with the layout of its frames."""

    returns: list[float]
    recorded: int
    #: every step's observation, action, reward and brain state, when asked for
    trace: Trace | None = None
    #: the video written (None: none asked for)
    video: Video | None = None
    #: where everything is on its frames (None: no video, or no frame drawn)
    layout: FrameLayout | None = None


def replay(champion: Champion, episodes: int, seed: int, video: Path | None = None,
           record: int = 1, show_observation: bool = False, trace: bool = False,
           show_neurons: bool = False) -> Replay:
    """`episodes` episodes (the first seeds the environment, the rest continue); with `video`
    (a .gif or .mp4), the frames of the first `record` of them go into that file as they are
    rendered, at the environment's own frame rate (`show_observation`: with the observation
    beside each, `show_neurons`: with the brain's state, running/frame_panels.py); with
    `trace`, every step of every episode (running/tracing.py). The panels' colour scales are
    fixed over the recorded episodes: a first pass plays them without drawing to measure
    them (the same seeds, so the same episodes). Tracing changes nothing the brain or the
    environment sees: the returns are the same."""
    record = min(record, episodes) if video is not None else 0
    panels = record > 0 and (show_observation or show_neurons)
    scales = _played(champion, lambda: _scales(champion, record, seed, show_observation,
                                               show_neurons)) if panels else {}
    drawing = _Drawing(show_observation, show_neurons, scales)
    return _played(champion, lambda: _replay(champion, episodes, seed, video, record, trace,
                                             drawing))


@dataclass(frozen=True)
class _Drawing:
    """What a replay's frames show beside the environment's picture, and the panels' fixed
    scales."""

    observation: bool
    neurons: bool
    scales: dict[str, NDArray[np.float64]]


def _played(champion: Champion, play: Callable[[], Played]) -> Played:
    """`play()`, what the environment raised while rendering said in one line: rendering and
    writing the frames happen in the environment's reset and step."""
    try:
        return play()
    except (gym.error.DependencyNotInstalled, EnvironmentRaised) as exc:
        cause = exc.__cause__ if isinstance(exc, EnvironmentRaised) else exc
        if isinstance(cause, gym.error.DependencyNotInstalled):
            raise UserError(f"rendering {champion.config.environment.id} needs an extra "
                            f"package: {cause}; or install evo-core[render]") from None
        if isinstance(cause, UserError):  # the video's file could not be written
            raise cause from None
        raise


def _scales(champion: Champion, record: int, seed: int, show_observation: bool,
            show_neurons: bool) -> dict[str, NDArray[np.float64]]:
    """The panels' fixed scales: the first `record` episodes played as the replay plays them,
    nothing drawn, what each frame would show measured (`ScaleMeter`)."""
    meter = ScaleMeter()
    runner = _runner(champion, record, None)
    try:
        collected = new_trace(runner.env) if show_neurons else None
        recorder = FrameRecorder(runner.env, record, record, meter.add, pictures=False,
                                 observation=show_observation, neurons=collected)
        runner.env = recorder
        if collected is not None:
            runner.template = TracingTemplate(champion.template, collected)
        runner.run_episodes(champion.genome, seed)
        recorder.finish()
    finally:
        runner.close()
    return meter.scales()


def _replay(champion: Champion, episodes: int, seed: int, video: Path | None, record: int,
            trace: bool, drawing: _Drawing) -> Replay:
    trace = trace or (drawing.neurons and record > 0)
    with _headless_sdl() if record else nullcontext():
        runner = _runner(champion, episodes, "rgb_array" if record else None)
        try:
            with (video_file(video, frame_rate(runner.env)) if video is not None
                  else nullcontext(None)) as writing:
                collected = new_trace(runner.env) if trace else None
                recorder = None
                layout: list[FrameLayout] = []
                if writing is not None:
                    add, written = writing
                    names = _observation_names(runner.env)

                    def show(shown: Shown) -> None:
                        if not layout:
                            layout.append(FrameLayout(shown, drawing.scales, names))
                        add(layout[0].compose(shown))

                    recorder = FrameRecorder(runner.env, record, episodes, show,
                                             observation=drawing.observation,
                                             neurons=collected if drawing.neurons else None)
                    runner.env = recorder
                tracer = None
                if collected is not None:
                    runner.template = TracingTemplate(champion.template, collected)
                    tracer = RewardTracer(runner.env, collected)
                    runner.env = tracer
                returns = [o.total for o in runner.run_episodes(champion.genome, seed)]
                if recorder is not None:
                    recorder.finish()
        finally:
            runner.close()
    if tracer is not None:
        tracer.finish()
    return Replay(returns, record, tracer.trace if tracer is not None else None,
                  written if writing is not None else None, layout[0] if layout else None)


def _observation_names(env: gym.Env[Any, Any]) -> dict[str, tuple[str, ...]]:
    """The observation's names, by panel key, when the environment gives them (the outermost
    `IObservationLabels` of the wrapper chain)."""
    named = next((layer for layer in wrapper_chain(env)
                  if isinstance(layer, IObservationLabels)), None)
    return {} if named is None else {"observation": tuple(named.observation_labels())}


def replay_states(champion: Champion, episodes: int, seed: int) -> list[np.ndarray]:
    """Each of `episodes` episodes' behaviour states, (steps + 1, D), as `replay` plays them
    (the same seeds, so the same episodes): `StateRecorder` around the runner's environment
    (`evo plot --maze`'s path)."""
    runner = _runner(champion, episodes, None)
    try:
        recorder = StateRecorder(runner.env)
        runner.env = recorder
        runner.run_episodes(champion.genome, seed)
    finally:
        runner.close()
    return recorder.episodes


def _runner(champion: Champion, episodes: int, render_mode: str | None) -> EpisodeRunner:
    """The runner of a replay: `episodes` episodes in the run's environment, under the run's
    `[episodes]` rules otherwise."""
    episodes_config = champion.config.episodes.model_copy(update={"runs": episodes})
    runner = EpisodeRunner(champion.template, champion.config.environment, episodes_config,
                           render_mode=render_mode)
    runner.use_context(EvaluationContext(champion.normalizer))  # what it was trained to see
    return runner
