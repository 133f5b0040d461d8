"""What a frame of `evo replay --render` costs: drawing evo's own environments, the panels
beside them, and encoding the GIF and the MP4, in process time per frame, each beside the
environment's step alone (the baseline: what a replay without frames pays).

    OPENBLAS_NUM_THREADS=1 python bench/replay_frames.py [--frames 1000] [ID ...]

For each environment id (default: the double pole, the hard published maze, the swing-up),
`--frames` random steps are taken and each frame drawn, then composed with the panels of the
observation and of a CTRNN-like state of 4, 4 and 2 numbers (running/frame_panels.py), then
written to a GIF and to an MP4 at 50 frames a second (running/video.py) in a temporary folder.
ffmpeg encodes the MP4 in its own process, whose time is not this process's: the wall time of
writing it is printed beside.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from evo_core.environments.making import make_environment
from evo_core.running.frame_panels import FrameLayout, Shown
from evo_core.running.video import video_file

DEFAULT_IDS = ("evo/DoublePole-v0", "evo/HardMaze-v1", "evo/CartPoleSwingUp-v0")


def measure(environment: str, frames: int, folder: Path) -> None:
    env = make_environment(environment, "rgb_array")
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(frames)]
    start = time.process_time()
    for action in actions:
        env.step(action)
    stepping = time.process_time() - start
    env.reset(seed=0)
    pictures: list[np.ndarray] = []
    observations = []
    start = time.process_time()
    for action in actions:
        observation, *_ = env.step(action)
        pictures.append(np.asarray(env.render()))
        observations.append(observation)
    drawing = time.process_time() - start - stepping
    env.close()
    shown = [Shown(picture, observation,
                   {"potential": rng.normal(size=4), "activation": rng.normal(size=4),
                    "output": rng.normal(size=2)}, 1, 1, step, float(step))
             for step, (picture, observation) in enumerate(zip(pictures, observations))]
    start = time.process_time()
    layout = FrameLayout(shown[0], {"observation": 1.0, "state.potential": 3.0,
                                    "state.activation": 3.0, "state.output": 3.0})
    composed = [layout.compose(one) for one in shown]
    panels = time.process_time() - start
    costs: dict[str, tuple[float, float]] = {}
    for suffix in (".gif", ".mp4"):
        start, wall = time.process_time(), time.perf_counter()
        with video_file(folder / f"frames{suffix}", 50) as (add, _):
            for frame in composed:
                add(frame)
        costs[suffix] = (time.process_time() - start, time.perf_counter() - wall)
    per = 1000 / frames
    print(f"{environment}: {pictures[0].shape[1]} x {pictures[0].shape[0]} frames, "
          f"{composed[0].shape[1]} x {composed[0].shape[0]} with the panels")
    print(f"  ms a frame: step {stepping * per:.3f}; drawing {drawing * per:.2f} "
          f"({drawing / stepping:.0f}x the step); panels {panels * per:.2f}; GIF "
          f"{costs['.gif'][0] * per:.2f}; MP4 {costs['.mp4'][0] * per:.2f} in this process, "
          f"{costs['.mp4'][1]:.1f} s of wall time for the {frames} frames")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*", default=list(DEFAULT_IDS))
    parser.add_argument("--frames", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for environment in args.ids:
            measure(environment, args.frames, Path(folder))


if __name__ == "__main__":
    main()
