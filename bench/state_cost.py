"""What a generation of `evo train` costs beyond the bare ask/evaluate/tell loop when the
optimizer is large: CMA-ES (full covariance) on about 2,500 genes, population 20, on a trivial
evaluation (CartPole-v1 cut after one step), so that nearly all of a generation is the
optimizer and the framework around it.

    python bench/state_cost.py [--generations 12] [--checkpoint-every 0]

Both sides draw the same genomes (same seed); the bare loop is pycma's ask/tell on the
evaluator's fitnesses; evo is `evo train` with the sequential handler and a run folder. With
`checkpoint_every = 0` evo writes one checkpoint, at the end, so its per-generation cost beyond
the bare loop is what it does every generation whatever the checkpoints (the optimizer state
that used to be pickled and signed after every generation).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from evo_core.cli.main import main as evo_main
from evo_core.config import validate_config
from evo_core.hooks.discovery import get_registry
from evo_core.running.experiment import build_experiment

SEED, POPULATION, HIDDEN = 2, 20, 356  # FFNN 4-356-2 on CartPole: 2,490 genes


def config(generations: int, checkpoint_every: int) -> dict[str, object]:
    return {"environment": "CartPole-v1", "seed": SEED, "generations": generations,
            "checkpoint_every": checkpoint_every,
            "brain": {"type": "ffnn", "hidden_layers": [HIDDEN]},
            "optimizer": {"type": "cma-es", "population_size": POPULATION},
            "episodes": {"max_steps": 1}}


def bare_loop(generations: int) -> float:
    """ask / evaluate / tell with the experiment's own optimizer, handler and seeds."""
    registry = get_registry()
    experiment = build_experiment(validate_config(config(generations, 0), registry, "bench"),
                                  registry)
    handler = experiment.make_handler()
    try:
        start = time.perf_counter()
        for _ in range(generations):
            genomes = experiment.optimizer.ask()
            seeds = experiment.streams.evaluation_seeds(len(genomes), per_candidate=False)
            results = handler.evaluate(experiment.template, genomes, seeds)
            experiment.optimizer.tell(np.array([r.fitness for r in results]))
        return time.perf_counter() - start
    finally:
        handler.close()


def evo_run(generations: int, checkpoint_every: int, folder: Path) -> float:
    path = folder / "config.json"
    path.write_text(json.dumps(config(generations, checkpoint_every)))
    with contextlib.redirect_stdout(io.StringIO()):
        start = time.perf_counter()
        assert evo_main(["train", str(path), "--out", str(folder / "run"), "--quiet"]) == 0
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=12)
    parser.add_argument("--checkpoint-every", type=int, default=0)
    args = parser.parse_args()
    registry = get_registry()
    genes = build_experiment(validate_config(config(1, 0), registry, "bench"),
                             registry).template.genome_size
    bare = bare_loop(args.generations)
    with tempfile.TemporaryDirectory() as folder:
        evo = evo_run(args.generations, args.checkpoint_every, Path(folder))
    print(f"CMA-ES, {genes} genes, population {POPULATION}, {args.generations} generations, "
          f"checkpoint_every = {args.checkpoint_every}")
    print(f"bare ask/evaluate/tell  {1000 * bare / args.generations:8.1f} ms a generation")
    print(f"evo train               {1000 * evo / args.generations:8.1f} ms a generation "
          f"(one checkpoint, the plot and set-up included)")
    print(f"per-generation cost     {1000 * (evo - bare) / args.generations:8.1f} ms; "
          f"ratio {evo / bare:.2f}")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
