"""What the scaling ES cost beside the evaluation, at 10^5 and 10^6 genes: a CNN -> CTRNN chain
on ALE/Qbert-v5 (examples/qbert_cnn_ctrnn.toml's frames and stages, the CTRNN widened to reach
the size, its masks dense) trained by `openai-es` and `pgpe`, 64 candidates of one episode a
generation.

    OPENBLAS_NUM_THREADS=1 python bench/es_scale.py [--genes 100000 1000000]
        [--optimizers openai-es pgpe] [--generations 3] [--max-steps 1000] [--workers 2]

Each run is `evo train` itself (`running/session.py`'s session, the run folder, log, best.npz,
hall of fame and a checkpoint every generation), with its handler wrapped to time
`evaluate`: a generation's seconds (log.csv) less its evaluation (the candidates' episodes and
the default [champion] table's fresh ones) are what evo spends on ask, tell, the run folder and
the rest. Printed per size and optimizer: the genes, the median of
the generations' seconds (the first, which starts the workers, left out), of their evaluation,
and of the rest, with the rest's share of the generation. Goal: under 5 %.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core import EvaluationResult, IBrainTemplate, IHandler
from evo_core.api import Run
from evo_core.config.loading import read_config_file
from evo_core.hooks.events import EventRelay
from evo_core.running.session import prepare_train

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "qbert_cnn_ctrnn.toml"
POPULATION = 64


class TimedHandler:
    """The run's own handler, its `evaluate` timed."""

    def __init__(self, handler: IHandler) -> None:
        self.handler = handler
        self.seconds: list[float] = []

    def evaluate(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                 seeds: NDArray[np.int64]) -> list[EvaluationResult]:
        start = time.perf_counter()
        results = self.handler.evaluate(template, genomes, seeds)
        self.seconds.append(time.perf_counter() - start)
        return results

    def close(self) -> None:
        self.handler.close()


def neurons_for(genes: int) -> int:
    """The CTRNN's neurons that bring the chain to about `genes` genes: 720 inputs, n x n
    recurrent weights, 6 outputs and per-neuron terms (the CTRNN's own genome_size decides;
    this only picks n, and the printed size is the template's)."""
    inputs, outputs = 720, 6
    # n^2 + n (inputs + outputs + 3) = genes
    b = inputs + outputs + 3
    return max(1, int((-b + (b * b + 4 * genes) ** 0.5) / 2))


def config_for(genes: int, optimizer: str, generations: int, max_steps: int,
               workers: int) -> dict[str, Any]:
    config = read_config_file(EXAMPLE)
    config["generations"] = generations
    config["checkpoint_every"] = 1
    ctrnn = config["brain"]["stages"][1]
    ctrnn["number_neurons"] = neurons_for(genes)
    # the example's logarithmic masks keep ~n log n of the n^2 weights: dense ones reach the
    # size with ~700 neurons, not tens of thousands
    for mask in ("v_mask", "w_mask", "t_mask"):
        ctrnn[mask] = "dense"
        ctrnn.pop(f"{mask}_param", None)
    config["optimizer"] = {"type": optimizer, "population_size": POPULATION}
    config["episodes"] = {"max_steps": max_steps, "runs": 1}
    config["processing"] = {"type": "mp", "workers": workers}
    return config


def measure(genes: int, optimizer: str, generations: int, max_steps: int,
            workers: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        session = prepare_train(config_for(genes, optimizer, generations, max_steps, workers),
                                out=Path(folder) / "run")
        size = session.experiment.template.genome_size
        timed = TimedHandler(session.handler)
        session.handler = timed
        run = Run(session.folder.path, session.config)
        session.run(EventRelay(session.experiment.registry.manager, run))
        total = [float(row["seconds"]) for row in run.log]
    whole = [later - earlier for earlier, later in itertools.pairwise(total)]
    # the candidates' evaluation and the [champion] table's fresh episodes of each generation
    calls = len(timed.seconds) // len(total)
    assert calls * len(total) == len(timed.seconds), (len(timed.seconds), len(total))
    evaluation = [sum(timed.seconds[g * calls:(g + 1) * calls]) for g in range(1, len(total))]
    rest = [w - e for w, e in zip(whole, evaluation, strict=True)]
    median = statistics.median
    print(f"| {size:,} | {optimizer} | {median(whole):.2f} | {median(evaluation):.2f} | "
          f"{median(rest):.3f} | {100 * median(rest) / median(whole):.2f} % |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genes", nargs="+", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--optimizers", nargs="+", default=["openai-es", "pgpe"])
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print("| genes | optimizer | s a generation | evaluation | ask, tell, run folder | share |")
    print("| --- | --- | --- | --- | --- | --- |")
    for genes in args.genes:
        for optimizer in args.optimizers:
            measure(genes, optimizer, args.generations, args.max_steps, args.workers)


if __name__ == "__main__":
    main()
