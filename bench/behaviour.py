"""What recording behaviour descriptors costs the episode runner per step.

    python bench/behaviour.py [--evaluations 300] [--repeats 5]

A brain that alternates its two actions (no arithmetic, so the runner's own cost shows) plays
CartPole-v1 through `EpisodeRunner.evaluate`, without a `[behaviour]` table and with each
source that CartPole offers. Prints CPU microseconds per step (the best of the repeats, which
take turns) and the ratio to no recording. Run it
with another checkout's python for the no-recording line of that version (the cases it does not
know are skipped), to check that a run without `[behaviour]` is as fast as before.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from evo_core.config.schema import EpisodesConfig
from evo_core.evaluation.episodes import EpisodeRunner


class Alternating:
    def __init__(self) -> None:
        self.t = 0

    def reset(self) -> None:
        self.t = 0

    def step(self, observation: Any) -> int:
        self.t += 1
        return self.t & 1


class AlternatingTemplate:
    genome_size = 1

    def make(self, genome: Any) -> Alternating:
        return Alternating()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--evaluations", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cases: dict[str, Any] = {"no [behaviour]": None}
    try:
        from evo_core.config.behaviour import BehaviourConfig
    except ImportError:  # a checkout from before behaviour descriptors
        pass
    else:
        for source in ("action", "observation"):
            cases[f"source = {source!r}"] = BehaviourConfig(source=source, interval=10,
                                                            max_length=50)
    genome = np.zeros(1)
    runners = {name: EpisodeRunner(AlternatingTemplate(), "CartPole-v1",
                                   EpisodesConfig(runs=1),
                                   **({} if behaviour is None else {"behaviour": behaviour}))
               for name, behaviour in cases.items()}
    steps = {name: sum(runner.evaluate(genome, seed).steps for seed in range(args.evaluations))
             for name, runner in runners.items()}
    best = dict.fromkeys(runners, float("inf"))
    for _ in range(args.repeats):  # the cases take turns, so a busy spell hits them alike
        for name, runner in runners.items():
            started = time.process_time()  # CPU time: other processes' load counts less
            for seed in range(args.evaluations):
                runner.evaluate(genome, seed)
            seconds = time.process_time() - started
            best[name] = min(best[name], seconds / steps[name] * 1e6)
    baseline = best["no [behaviour]"]
    for name, runner in runners.items():
        runner.close()
        print(f"{name:24s} {best[name]:7.2f} us/step  x{best[name] / baseline:.3f}  "
              f"({steps[name]} steps)")

if __name__ == "__main__":
    main()
