"""Rebuilding a trained brain from its run folder and running it on new episodes."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from evo_core.config.schema import ExperimentConfig
from evo_core.contract.observation_statistics import EvaluationContext, ObservationNormalizer
from evo_core.contract.protocols import IBrainTemplate
from evo_core.environments.rendering import check_draws_frames, prefer_offscreen_gl
from evo_core.errors import EnvironmentRaised, UserError
from evo_core.evaluation.behaviour import StateProvider, check_state_provider
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.hooks.registry import Registry
from evo_core.results.provenance import warn_changed_versions
from evo_core.results.run_folder import RunFolder
from evo_core.results.template_state import restored_template
from evo_core.running.experiment import build_template
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
from evo_core.running.video import beside, observation_image, rgb, video_file

__all__ = ["Champion", "FrameRecorder", "Replay", "StateRecorder", "load_champion", "replay",
           "replay_states"]


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


class FrameRecorder(gym.Wrapper[Any, Any, Any, Any]):
    """Hands `frames` a frame after every reset and step of the first `episodes` episodes, with
    the episode, the step and the return so far drawn on it, and keeps none.

    A wrapper sees every reward, so the episode loop needs no rendering code of its own.
    """

    def __init__(self, env: gym.Env[Any, Any], episodes: int, of_episodes: int,
                 frames: Callable[[Any], None], show_observation: bool = False,
                 neurons: Trace | None = None) -> None:
        """`frames`: where each frame goes (`video.video_file`'s writer); `show_observation`:
        draw the observation the brain receives next beside each frame; `neurons`: the trace
        the brain's state goes into, drawn beside each frame after a step
        (running/video.py)."""
        super().__init__(env)
        self.neurons = neurons
        self._rows_at_reset = 0
        self.record_episodes = episodes
        self.of_episodes = of_episodes
        self.show_observation = show_observation
        self.frames = frames
        self.count = 0
        self.episode = 0
        self.step_count = 0
        self.total = 0.0

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        result = self.env.reset(seed=seed, options=options)
        self.episode += 1
        self.step_count, self.total = 0, 0.0
        self._rows_at_reset = len(self.neurons.observations) if self.neurons is not None else 0
        self._record(result[0])
        return result

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        result = self.env.step(action)
        self.step_count += 1
        self.total += float(result[1])
        self._record(result[0])
        return result

    def _record(self, observation: Any) -> None:
        if self.episode > self.record_episodes:
            return
        frame = self.env.render()
        if frame is None:
            return
        frame = rgb(np.asarray(frame))
        if self.show_observation:
            frame = beside(frame, observation_image(observation, frame.shape[0]))
        if self.neurons is not None:
            frame = beside(frame, self._neurons(frame.shape[0]))
        self.frames(_annotated(frame, f"episode {self.episode}/{self.of_episodes}  "
                               f"step {self.step_count}  return {self.total:.6g}"))
        self.count += 1


    def _neurons(self, height: int) -> np.ndarray:
        """The brain's state after the step just taken, one column of cells per state array
        (at most four); after a reset, the state it starts the episode from."""
        trace = self.neurons
        assert trace is not None
        # the brain stepped (and was traced) before this env step: its row is the last one
        rows = len(trace.observations)
        if rows > self._rows_at_reset:
            current = [values[rows - 1] for values in trace.states.values()]
        else:
            current = list(trace.initial.values())
        panels = [observation_image(values, height) for values in current[:4] or [np.zeros(1)]]
        panel = panels[0]
        for other in panels[1:]:
            panel = beside(panel, other)
        return panel


def _annotated(frame: np.ndarray, text: str) -> Any:
    """`frame` as an RGB image with `text` on a dark strip across its top-left corner."""
    from PIL import Image, ImageDraw

    image = Image.fromarray(frame.astype(np.uint8)).convert("RGB")
    font = _font(max(10, image.height // 28))
    draw = ImageDraw.Draw(image)
    _left, _top, right, bottom = draw.textbbox((4, 3), text, font=font)
    draw.rectangle((0, 0, right + 4, bottom + 3), fill=(32, 32, 32))
    draw.text((4, 3), text, fill=(255, 255, 255), font=font)
    return image


@functools.cache
def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: its fixed bitmap font
        return ImageFont.load_default()


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
    """The returns of every episode, and how many frames of how many episodes were recorded."""

    returns: list[float]
    frames: int
    recorded: int
    #: every step's observation, action, reward and brain state, when asked for
    trace: Trace | None = None


def replay(champion: Champion, episodes: int, seed: int, video: Path | None = None,
           record: int = 1, show_observation: bool = False, trace: bool = False,
           show_neurons: bool = False) -> Replay:
    """`episodes` episodes (the first seeds the environment, the rest continue); with `video`
    (a .gif or .mp4), the frames of the first `record` of them go into that file as they are
    rendered (`show_observation`: with the observation beside each); with `trace`, every step
    of every episode (running/tracing.py). `show_neurons` draws the brain's state beside each
    frame (it traces, so the state is there). Tracing changes nothing the brain or the
    environment sees: the returns are the same."""
    record = min(record, episodes) if video is not None else 0
    trace = trace or (show_neurons and record > 0)
    with video_file(video) if video is not None else nullcontext(None) as frames, \
            _headless_sdl() if record else nullcontext():
        runner = _runner(champion, episodes, "rgb_array" if record else None)
        collected = new_trace(runner.env) if trace else None
        recorder = (FrameRecorder(runner.env, record, episodes, frames, show_observation,
                                  collected if show_neurons else None)
                    if frames is not None else None)
        if recorder is not None:
            runner.env = recorder
        tracer = None
        if collected is not None:
            runner.template = TracingTemplate(champion.template, collected)
            tracer = RewardTracer(runner.env, collected)
            runner.env = tracer
        try:
            returns = [o.total for o in runner.run_episodes(champion.genome, seed)]
        except (gym.error.DependencyNotInstalled, EnvironmentRaised) as exc:
            # rendering and writing the frames happen in the environment's reset and step
            cause = exc.__cause__ if isinstance(exc, EnvironmentRaised) else exc
            if isinstance(cause, gym.error.DependencyNotInstalled):
                raise UserError(f"rendering {champion.config.environment.id} needs an extra "
                                f"package: {cause}; or install evo-core[render]") from None
            if isinstance(cause, UserError):  # the video's file could not be written
                raise cause from None
            raise
        finally:
            runner.close()
    if tracer is not None:
        tracer.finish()
    return Replay(returns, recorder.count if recorder is not None else 0, record,
                  tracer.trace if tracer is not None else None)


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
