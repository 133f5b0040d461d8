"""The reference scores of the memory task (evo/ReacherMemory-v0), on the episodes of
`evo replay RUN --episodes N --seed SEED`: what a trained champion's return M is placed between,
and, for each run folder given, what its champion does with and without the target.

    python bench/reacher_memory_baselines.py [--episodes 100] [--seed 12345] [RUN ...]

- H, holding the arm still (zero actions): what a brain that learnt nothing scores;
- random actions (uniform in the action box, from a Generator seeded with SEED);
- U, a hand-written PD reacher that remembers the target it saw: the torque J^T (target -
  fingertip) x 20 - 0.1 x joint speeds, clipped to the action box, with the target taken from the
  observation of `reset` and the fingertip computed from the joint angles (Reacher's links are
  0.1 and 0.11 long); the same PD with the target shown throughout (hide_target = false) scores
  the same, so U is the fully observed bound too;
- a blind policy that never looks at the target: it folds the elbow (a gentle joint-space PD to
  angles 0 and 2.9), which brings the fingertip near the base, the centre of the disk the
  targets are drawn from (radius 0.2), while the stretched arm it starts with has it on the
  disk's rim. It beats H by itself; what a champion earns beyond it is what remembering earns.

For a RUN (trained on evo/ReacherMemory-v0), its champion's mean return on the same episodes
three ways: as trained (M, the target hidden after the first phase; what `evo replay` prints),
with the target never shown (the run's wrappers and then a `scale-observation` that blanks the
target's entries in every observation, the one of reset included: a control that no memory can
help, so M minus it is what remembering the target earns), and with it shown throughout
(hide_target = false). Then the ratio (M - H) / (U - H), and for a CTRNN champion the share of
its neuron-steps that sit on a clipping bound (a saturated state keeps no analog memory).

The episodes are the ones a replay runs: the first from `reset(seed=...)` with the seed a replay
derives from SEED, the next ones continuing the environment's stream. Needs the mujoco extra.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from brain_ctrnn import CTRNNTemplate
from evo_core import ArrayBrain, IBrain
from evo_core.api import Run
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments import make_environment
from evo_core.environments.reacher_memory import TARGET_ENTRIES, make_reacher_memory
from evo_core.evaluation.rows import environment_seed
from evo_core.wrappers.scale_observation import ScaleObservationConfig

FloatArray = NDArray[np.float64]
#: (observation, the target seen after reset) -> action
Policy = Callable[[FloatArray, FloatArray], FloatArray]
LINKS = (0.1, 0.11)


def pd_reacher(observation: FloatArray, target: FloatArray) -> FloatArray:
    """Joint torques that pull the fingertip toward `target`, damped by the joint speeds."""
    cos1, cos2, sin1, sin2 = observation[:4]
    q1, q12 = np.arctan2(sin1, cos1), np.arctan2(sin1 * cos2 + cos1 * sin2,
                                                 cos1 * cos2 - sin1 * sin2)
    fingertip = np.array([LINKS[0] * np.cos(q1) + LINKS[1] * np.cos(q12),
                          LINKS[0] * np.sin(q1) + LINKS[1] * np.sin(q12)])
    jacobian = np.array([[-LINKS[0] * np.sin(q1) - LINKS[1] * np.sin(q12), -LINKS[1] * np.sin(q12)],
                         [LINKS[0] * np.cos(q1) + LINKS[1] * np.cos(q12), LINKS[1] * np.cos(q12)]])
    torque = 20.0 * jacobian.T @ (target - fingertip) - 0.1 * observation[6:8]
    action: FloatArray = np.clip(torque, -1.0, 1.0)
    return action


def fold(observation: FloatArray, target: FloatArray) -> FloatArray:
    """Shoulder held at 0, elbow driven to 2.9 rad; small gains, since Reacher-v5 charges the
    squared action (weight 1) per step, as much as a fifth of a metre of distance."""
    cos1, cos2, sin1, sin2 = observation[:4]
    angles = np.array([np.arctan2(sin1, cos1), np.arctan2(sin2, cos2)])
    action: FloatArray = np.clip(0.07 * (np.array([0.0, 2.9]) - angles) - 0.01 * observation[6:8],
                                 -1.0, 1.0)
    return action


def mean_return(policy: Policy, episodes: int, seed: int, hide_target: bool = True) -> float:
    env = make_reacher_memory(hide_target=hide_target)
    try:
        total = 0.0
        env_seed = environment_seed(seed)
        for episode in range(episodes):
            observation, _ = env.reset(seed=env_seed if episode == 0 else None)
            target = observation[4:6].copy()
            done = False
            while not done:
                observation, reward, terminated, truncated, _ = env.step(
                    policy(observation, target))
                total += float(reward)
                done = terminated or truncated
        return total / episodes
    finally:
        env.close()


def champion_return(brain: IBrain, environment: EnvironmentConfig, episodes: int, seed: int
                    ) -> tuple[float, float]:
    """The brain's mean return on the replay's episodes, and the share of its neuron-steps on
    a clipping bound (nan for a brain other than a CTRNN)."""
    env = make_environment(environment)
    total, on_bound, states = 0.0, 0, 0
    try:
        env_seed = environment_seed(seed)
        for episode in range(episodes):
            observation, _ = env.reset(seed=env_seed if episode == 0 else None)
            brain.reset()
            done = False
            while not done:
                observation, reward, terminated, truncated, _ = env.step(brain.step(observation))
                total += float(reward)
                done = terminated or truncated
                if isinstance(brain, ArrayBrain) and isinstance(brain.template, CTRNNTemplate):
                    y = brain.state["y"]
                    on_bound += int(np.count_nonzero((y <= brain.params["lower"]) |
                                                     (y >= brain.params["upper"])))
                    states += y.size
        return total / episodes, on_bound / states if states else float("nan")
    finally:
        env.close()


def champion_rows(run_dir: str, episodes: int, seed: int, hold: float, bound: float
                  ) -> list[tuple[str, float]]:
    run = Run.open(run_dir)
    environment = run.config.environment
    size = gym.spaces.flatdim(make_environment(environment).observation_space)
    blank = [0.0 if i in TARGET_ENTRIES else 1.0 for i in range(size)]
    never = environment.model_copy(update={
        "wrappers": (*environment.wrappers, ScaleObservationConfig(scale=blank))})
    shown = environment.model_copy(update={
        "kwargs": {**environment.kwargs, "hide_target": False}})
    brain = run.champion()
    trained, saturation = champion_return(brain, environment, episodes, seed)
    return [(f"{run_dir}: M, as trained", trained),
            ("  ratio (M - H) / (U - H)", (trained - hold) / (bound - hold)),
            ("  target never shown", champion_return(brain, never, episodes, seed)[0]),
            ("  target shown throughout", champion_return(brain, shown, episodes, seed)[0]),
            ("  share of neuron-steps on a bound", saturation)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("runs", nargs="*", help="run folders whose champions to measure")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = [("holding still (H)", mean_return(lambda o, t: np.zeros(2), args.episodes, args.seed)),
            ("random actions", mean_return(lambda o, t: rng.uniform(-1.0, 1.0, 2),
                                           args.episodes, args.seed)),
            ("PD reacher, target remembered (U)",
             mean_return(pd_reacher, args.episodes, args.seed)),
            ("PD reacher, target shown", mean_return(
                lambda o, t: pd_reacher(o, o[4:6]), args.episodes, args.seed, hide_target=False)),
            ("folding the arm, target unused (blind)",
             mean_return(fold, args.episodes, args.seed))]
    for run_dir in args.runs:
        rows += champion_rows(run_dir, args.episodes, args.seed, rows[0][1], rows[2][1])
    for name, value in rows:
        print(f"{name:40s} {value:8.2f}")


if __name__ == "__main__":
    main()
