"""The brain `evo new-brain` writes, batched against one genome at a time, in one run: CartPole
environment steps per second of "off", "sync" and "native" for a chunk of genomes in the solved
regime, and the ratio native / off.

    python bench/scaffold_batched.py [--population 128] [--rows 128] [--hidden 8] [--repeats 2]

The brain is the plain scaffold, unchanged (an Elman network of `--hidden` units written once
as array functions, `evo new-brain elman`), written into a temporary folder and imported from
there. "native (stacked)" is the same brain behind a template that offers only `make()`: the
stacked fallback (one lone brain per row), what a scaffolded brain got before the core derived
its batch.

The solved regime: the genomes balance the pole for (nearly) all 500 steps of their episodes
(each mode's mean episode length is printed). They are constructed, not trained: a short search
finds linear controllers of the four observations that balance for 500 steps, placed in hidden
unit 0 (W_in's row 0, the two outputs -h0 and +h0 through W_out; the recurrence and the other
units start at 0), and the population is those genomes with small noise on every gene, kept
where they still balance in sync and native from four seeds each. (native's vector environment
resets its rows from the seed differently from the lone environments of off and sync, and a
row's start depends on its place in the chunk: a controller robust to its start balances in
every engine.)

Everything runs in this one process, one BLAS thread; best of `--repeats`. Goal (issue 35):
native >= 5x off.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from threadpoolctl import threadpool_limits

from evo_core.cli.scaffold import write_brain_package
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import IBrain, IBrainTemplate, IEvaluator
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner

SEED = 12345
STEPS = 500


class MakeOnly:
    """A template offering only what a brain written the old way offers (`genome_size`,
    `make`): the engine steps it through the stacked fallback."""

    def __init__(self, template: IBrainTemplate) -> None:
        self._template = template

    @property
    def genome_size(self) -> int:
        return self._template.genome_size

    def make(self, genome: np.ndarray) -> IBrain:
        return self._template.make(genome)


def scaffolded_template(folder: Path, hidden: int) -> Any:
    """The plain scaffold's template, built for CartPole-v1."""
    root = write_brain_package("elman", folder)
    sys.path.insert(0, str(root))
    module = importlib.import_module("brain_elman")
    env = gym.make("CartPole-v1")
    try:
        return module.ElmanTemplate(module.ElmanConfig(hidden=hidden), env.observation_space,
                                    env.action_space, np.random.default_rng(0))
    finally:
        env.close()


def runner(template: Any, mode: str, rows: int) -> IEvaluator:
    if mode == "off":
        return EpisodeRunner(template, "CartPole-v1", EpisodesConfig())
    return BatchedEpisodeRunner(template, "CartPole-v1",
                                EpisodesConfig(vectorize=mode, batch_rows=rows))


def evaluate(evaluator: IEvaluator, genomes: np.ndarray, seed: int = SEED) -> list[int]:
    """Each genome's episode length, one episode each, all from `seed`."""
    seeds = np.full(len(genomes), seed, dtype=np.int64)
    if isinstance(evaluator, BatchedEpisodeRunner):
        return [r.steps for r in evaluator.evaluate_many(genomes, seeds)]
    return [evaluator.evaluate(g, int(s)).steps for g, s in zip(genomes, seeds)]


def embedded(template: Any, gains: np.ndarray) -> np.ndarray:
    """The genome whose hidden unit 0 is tanh(gains · observation) and whose outputs are
    -h0 and +h0 (push left / right); every other gene 0."""
    h, i, o = template.config.hidden, template.input_size, template.output_size
    genome = np.zeros(template.genome_size)
    genome[:i] = gains  # W_in's row 0
    w_out = h * i + h * h + h
    genome[w_out:w_out + o * h].reshape(o, h)[:, 0] = [-1.0, 1.0]
    return genome


def solved_population(template: Any, population: int, rows: int) -> np.ndarray:
    """`population` genomes that all balance for STEPS steps (see the module doc), in the
    lone environments of off and sync and in native's vector environment alike (their resets
    from one seed differ)."""
    rng = np.random.default_rng(0)
    searches = [runner(template, mode, rows) for mode in ("sync", "native")]

    def balancing(genomes: np.ndarray) -> np.ndarray:
        """The genomes that balance from every start tried: robust controllers."""
        kept = np.ones(len(genomes), dtype=bool)
        for search in searches:
            for seed in range(SEED, SEED + 4):
                kept &= np.array(evaluate(search, genomes, seed)) == STEPS
        return genomes[kept]

    try:
        winners = balancing(np.array([embedded(template, rng.normal(0, 1, template.input_size))
                                      for _ in range(256)]))
        if not len(winners):
            raise SystemExit("no linear controller among 256 balanced CartPole for 500 steps")
        genomes = np.empty((0, template.genome_size))
        while len(genomes) < population:
            noisy = winners[rng.integers(len(winners), size=population)] + \
                rng.normal(0, 0.02, (population, template.genome_size))
            genomes = np.concatenate([genomes, balancing(noisy)])[:population]
    finally:
        for search in searches:
            search.close()
    return genomes


def steps_per_second(template: Any, mode: str, rows: int, genomes: np.ndarray,
                     repeats: int) -> tuple[float, float]:
    """Environment steps per second, best of `repeats`, and the mean episode length."""
    evaluator = runner(template, mode, rows)
    best = np.inf
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            steps = evaluate(evaluator, genomes)
            best = min(best, time.perf_counter() - start)
    finally:
        evaluator.close()
    return sum(steps) / best, float(np.mean(steps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=128)
    parser.add_argument("--rows", type=int, default=128, help="episodes.batch_rows")
    parser.add_argument("--hidden", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(f"CartPole-v1, the plain scaffold (hidden = {args.hidden}), population "
          f"{args.population}, episodes.batch_rows = {args.rows}, one BLAS thread, load average "
          f"{os.getloadavg()[0]:.1f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as folder, threadpool_limits(1):
        template = scaffolded_template(Path(folder), args.hidden)
        genomes = solved_population(template, args.population, args.rows)
        print(f"  solved: {len(genomes)} genomes, each {STEPS} steps", flush=True)
        rates: dict[str, float] = {}
        for label, mode, used in (("off", "off", template), ("sync", "sync", template),
                                  ("native", "native", template),
                                  ("native (stacked)", "native", MakeOnly(template))):
            rate, mean = steps_per_second(used, mode, args.rows, genomes, args.repeats)
            rates[label] = rate
            print(f"    {label:17s} {rate:12,.0f} steps/s  {rate / rates['off']:7.2f}x off  "
                  f"(mean episode {mean:.1f} steps)", flush=True)
    ratio = rates["native"] / rates["off"]
    print(f"\nnative / off = {ratio:.2f} (goal >= 5: {'met' if ratio >= 5 else 'NOT met'}); "
          f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)


if __name__ == "__main__":
    main()
