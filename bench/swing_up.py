"""EvoJAX's cart-pole swing-up table, evo's optimizers beside the published test scores and
beside EvoJAX's own speed on this machine, in the same invocation.

    OPENBLAS_NUM_THREADS=1 python bench/swing_up.py [--methods pgpe openai-es cma-es
        sep-cma-es ars] [--tasks easy hard] [--seeds 1] [--first-seed 42]
        [--iterations 1000] [--workers 1] [--out DIR] [--report]
        [--speed-iterations 5] [--speed-rounds 2] [--speed-processes 1 2] [--speed-only]
        [--no-speed] [--speed-from RUN] [--start-noise RUN [--pairs 64]]

The protocol is EvoJAX's benchmark (its scripts/benchmarks: configs/<ES>/cartpole_*.yaml):
`evo/CartPoleSwingUp-v0` (easy) and the same with `hard = true`, an MLP 5-64-64-1 with tanh
(brain-ffnn, 4,609 genes), 16 episodes per candidate, 1,000 iterations, and the champion tested
on 100 episodes it never trained on (`Run.replay(episodes=100)`); the score is the mean return
of those, at most 1,000. Each method is an example config with EvoJAX's hyperparameters
(examples/swing_up_<method>.toml, which name EvoJAX's fields beside evo's); the hard task is
the same config with `environment.kwargs.hard = true`.

EvoJAX's Trainer also tests its solver's `best_params` (the centre, for PGPE, OpenAI-ES and the
CMA-ES solvers their mean) on 100 test episodes every 100 iterations, keeps the best of these,
and its benchmark reports that one tested again on 100 fresh episodes. The table has that too
(column "EvoJAX's protocol"): each run trains in segments of 100 iterations (exact resumes, so
the run is the one uninterrupted run), the centre at each segment's end is tested (episodes
seeded REPLAY_SEED + iteration, DIR/.../centre_tests.json), the best's genome kept
(best_centre.npy), and at the end tested on 100 episodes seeded REPLAY_SEED + 1. evo's own
figure stays the champion's (chosen on fresh episodes during training, never on test episodes).

With `--out DIR` every run keeps its folder (DIR/<task>-<method>/seed-N, checkpointed every 20
iterations) and the same command continues the table: a finished run is read back (its test
score from DIR/.../test.json), an unfinished one resumed exactly where it stopped; `--report`
prints the table without training, an unfinished run's champion tested as it stands and its
iterations said beside it (the table of a machine whose time ran out).

Speed (unless `--no-speed`): seconds per iteration of evo's PGPE example and of EvoJAX 0.2.17's
PGPE with the same protocol (`pip install -r requirements/bench.txt`, bench-only), alternating
`--speed-rounds` times, `--speed-iterations` iterations each (the first iteration of each side,
which compiles or builds, left out); the median wall and process seconds of each side and
their ratio. EvoJAX uses every core (XLA's threads); evo is timed on one process and, with
`--speed-processes 1 2`, also on `processing.type = "mp"` with two workers (the same results:
a generation's candidates split among them). Goal: evo at most 0.5x EvoJAX's seconds per
iteration. EvoJAX steps all 1,024 rows
until the batch's last episode ends; evo drops an episode's row when it ends, so an untrained
network's iterations are cheaper for evo: `--speed-from RUN` times evo on a copy of a trained
run of the task (full-length episodes), and the line says evo's steps an iteration.

`--start-noise RUN` measures, around a PGPE run's last centre, how much noisier its
mirrored-pair differences are when the pair plays different start states than the same ones
(EvoJAX trains every candidate of an iteration on the same starts; evo's native rows do where
the generation shares its evaluation seed, docs/batched.md).

Published test scores (EvoJAX's benchmark table, easy / hard): PGPE 935.43 / 631.10, OpenES
929.42 / 604.69, CMA-ES 927.32 / 625.98, Sep-CMA-ES 924.30 / 626.97, ARS 902.11 / 666.64.
Goals: evo's PGPE and OpenAI-ES at least the published score on both tasks, the others within
2 % of it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from _seeds import slug

from evo_core.api import Run, resume, train
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.optimizers.cma_es import CMAES, CMAESConfig
from evo_core.results.checkpoint import Checkpoint, read_run_checkpoint, run_binding
from evo_core.results.run_folder import RunFolder
from evo_core.results.signing import signing_for
from evo_core.running.replay import Champion, load_champion, replay
from evo_core.running.seeding import REPLAY_SEED

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TEST_EPISODES = 100
CHECKPOINT_EVERY = 20
#: EvoJAX's Trainer tests its solver's centre every `test_interval` = 100 iterations
TEST_INTERVAL = 100
#: the seed of the final test of the best tested centre (the periodic tests' are
#: REPLAY_SEED + iteration, the champion's REPLAY_SEED): episodes none of the others played
PROTOCOL_SEED = REPLAY_SEED + 1


@dataclass(frozen=True)
class Method:
    """A row: its example config and EvoJAX's published test scores by task."""

    name: str
    example: str
    published: dict[str, float]
    #: at least the published score (True), or within 2 % of it
    must_match: bool


METHODS = {
    "pgpe": Method("PGPE", "swing_up_pgpe.toml", {"easy": 935.43, "hard": 631.10}, True),
    "openai-es": Method("OpenAI-ES", "swing_up_openai_es.toml",
                        {"easy": 929.42, "hard": 604.69}, True),
    "cma-es": Method("CMA-ES", "swing_up_cma_es.toml", {"easy": 927.32, "hard": 625.98}, False),
    "sep-cma-es": Method("Sep-CMA-ES", "swing_up_sep_cma_es.toml",
                         {"easy": 924.30, "hard": 626.97}, False),
    "ars": Method("ARS", "swing_up_ars.toml", {"easy": 902.11, "hard": 666.64}, False),
}
TASKS: dict[str, dict[str, Any]] = {"easy": {}, "hard": {"environment.kwargs.hard": True}}


@dataclass(frozen=True)
class Outcome:
    """One run: its champion's mean test return (None: not finished, or `error`), the
    iterations it made, and the median seconds of its iterations (log.csv's `seconds`)."""

    method: str
    task: str
    seed: int
    score: float | None
    iterations: int
    seconds_per_iteration: float | None
    error: str | None = None
    #: the optimizer's centre at the last checkpoint, tested as the champion is (None: the
    #: optimizer keeps none, or the run normalises observations)
    centre: float | None = None
    #: EvoJAX's protocol: the best of the centres tested every 100 iterations, tested again
    #: on fresh episodes, and how many periodic tests it was chosen from (0: none made)
    protocol: float | None = None
    protocol_tests: int = 0

    def line(self) -> str:
        if self.error is not None:
            return f"  {self.task}/{self.method} seed {self.seed}: not run: {self.error}"
        if self.score is None:
            return (f"  {self.task}/{self.method} seed {self.seed}: unfinished after "
                    f"{self.iterations} iterations")
        centre = "" if self.centre is None else f", its centre {self.centre:.2f}"
        if self.protocol is not None:
            centre += (f", EvoJAX's protocol {self.protocol:.2f} (best of "
                       f"{self.protocol_tests} centre tests)")
        return (f"  {self.task}/{self.method} seed {self.seed}: test score {self.score:.2f}"
                f"{centre} after {self.iterations} iterations "
                f"({self.seconds_per_iteration:.2f} s each)")


def _folder(out: Path, method: str, task: str, seed: int) -> Path:
    return out / slug(f"{task}-{method}") / f"seed-{seed}"


def iteration_seconds(run: Run) -> list[float]:
    """Each generation's seconds (log.csv's `seconds` is the run's total so far), the first,
    which builds the workers and compiles, left out."""
    total = [float(row["seconds"]) for row in run.log]
    return [later - earlier for earlier, later in itertools.pairwise(total)]


def _median_seconds(run: Run) -> float | None:
    seconds = iteration_seconds(run)
    return statistics.median(seconds) if seconds else None


def kept(method: str, task: str, seed: int, iterations: int, out: Path) -> Outcome | None:
    """The outcome of a finished run kept under `out` (trained and tested), else None."""
    folder = _folder(out, method, task, seed)
    tested = folder / "test.json"
    if not tested.is_file():
        return None
    record = json.loads(tested.read_text())
    if record["iterations"] < iterations:
        return None
    if "centre_score" not in record:  # tested before the centre was
        record["centre_score"] = centre_tested(Run.open(folder))
        tested.write_text(json.dumps(record))
    return Outcome(method, task, seed, float(record["score"]), int(record["iterations"]),
                   record["seconds_per_iteration"], centre=record["centre_score"],
                   protocol=record.get("protocol_score"),
                   protocol_tests=int(record.get("protocol_tests", 0)))


def tested(run: Run) -> float:
    """The mean return of the run's champion on 100 episodes it never trained on."""
    return statistics.fmean(run.replay(episodes=TEST_EPISODES))


def centre_champion(run: Run) -> Champion | None:
    """The optimizer's centre at the run's last checkpoint (its state's `mean`) as a champion
    to replay: what EvoJAX tests (its solver's `best_params` is the centre for PGPE, OpenAI-ES
    and Sep-CMA-ES; CMA-ES's mean is in its sealed pycma state). None where the run
    normalises observations (the champion's statistics are not the checkpoint's)."""
    folder = RunFolder.open(run.path)
    checkpoint = read_run_checkpoint(folder, run.config.provenance)
    if checkpoint is None or run.config.episodes.observation_normalization != "off":
        return None
    champion = load_champion(folder, get_registry(), replaying=True)
    centre = checkpoint.optimizer.get("mean")
    if isinstance(run.config.optimizer, CMAESConfig):
        centre = cma_es_mean(run, checkpoint, champion.genome.size)
    if not isinstance(centre, np.ndarray) or centre.shape != champion.genome.shape:
        return None
    return replace(champion, genome=np.asarray(centre, dtype=np.float64))


def cma_es_mean(run: Run, checkpoint: Checkpoint, genome_size: int) -> np.ndarray:
    """The mean of the run's CMA-ES at `checkpoint`: pycma's strategy is sealed in the state,
    signed for this run (opened with this user's secret, as `evo resume` opens it)."""
    provenance = run.config.provenance
    assert provenance is not None and isinstance(run.config.optimizer, CMAESConfig)
    optimizer = CMAES(run.config.optimizer, genome_size, np.random.default_rng(0))
    with signing_for(run_binding(str(provenance["run_id"]), checkpoint.config)):
        optimizer.load_state(checkpoint.optimizer)
    return np.array(optimizer.es.mean, dtype=np.float64)


def centre_tested(run: Run) -> float | None:
    """The mean return of the centre at the last checkpoint on the champion's 100 test
    episodes (None: no centre)."""
    centred = centre_champion(run)
    if centred is None:
        return None
    return statistics.fmean(replay(centred, TEST_EPISODES, REPLAY_SEED).returns)


CENTRE_TESTS = "centre_tests.json"
BEST_CENTRE = "best_centre.npy"


def centre_tests(folder: Path) -> dict[int, float]:
    """The periodic centre tests made so far: iteration -> mean test return."""
    path = folder / CENTRE_TESTS
    if not path.is_file():
        return {}
    return {int(k): float(v) for k, v in json.loads(path.read_text()).items()}


def test_centre(run: Run, iteration: int) -> None:
    """EvoJAX's periodic test: the centre at the checkpoint of `iteration` on 100 episodes
    seeded REPLAY_SEED + iteration, recorded; its genome kept when it is the best so far (the
    genome first, then the record: a kill between leaves a test to make again, never a
    record whose genome is missing)."""
    centred = centre_champion(run)
    if centred is None:
        return
    score = statistics.fmean(replay(centred, TEST_EPISODES, REPLAY_SEED + iteration).returns)
    tests = centre_tests(run.path)
    if not tests or score > max(tests.values()):
        buffer = io.BytesIO()
        np.save(buffer, centred.genome)
        run.write_file(BEST_CENTRE, buffer.getvalue())
    tests[iteration] = score
    run.write_file(CENTRE_TESTS, json.dumps({str(k): v for k, v in sorted(tests.items())})
                   .encode())


def protocol_tested(run: Run) -> tuple[float | None, int]:
    """EvoJAX's reported score: the best periodically tested centre, tested on 100 fresh
    episodes; and how many periodic tests it was the best of."""
    tests = centre_tests(run.path)
    centred = centre_champion(run)
    if not tests or centred is None:
        return None, 0
    best = replace(centred, genome=np.load(run.path / BEST_CENTRE))
    return statistics.fmean(replay(best, TEST_EPISODES, PROTOCOL_SEED).returns), len(tests)


def so_far(method: str, task: str, seed: int, out: Path) -> Outcome | None:
    """An unfinished run kept under `out` (another invocation may be training it), its
    champion tested as it stands: the row's figure when the machine's time ran out, with the
    iterations it had."""
    folder = _folder(out, method, task, seed)
    if not (folder / "config.json").is_file():
        return None
    run = Run.open(folder)
    if not run.log:
        return None
    protocol, tests = protocol_tested(run)
    return Outcome(method, task, seed, tested(run), int(run.log[-1]["generation"]),
                   _median_seconds(run), centre=centre_tested(run), protocol=protocol,
                   protocol_tests=tests)


def run_one(method: str, task: str, seed: int, iterations: int, out: Path) -> Outcome:
    """Train (or continue) one run to `iterations` and test its champion on 100 episodes;
    the score is written to test.json beside the run, so a later invocation reads it back."""
    done = kept(method, task, seed, iterations, out)
    if done is not None:
        return done
    folder = _folder(out, method, task, seed)
    try:
        run = trained(method, task, seed, iterations, folder)
        score, centre = tested(run), centre_tested(run)
        protocol, tests = protocol_tested(run)
    except UserError as error:
        return Outcome(method, task, seed, None, 0, None, str(error).splitlines()[0])
    made = int(run.log[-1]["generation"])
    per_iteration = _median_seconds(run)
    (folder / "test.json").write_text(json.dumps(
        {"score": score, "centre_score": centre, "iterations": made,
         "seconds_per_iteration": per_iteration, "episodes": TEST_EPISODES,
         "protocol_score": protocol, "protocol_tests": tests}))
    return Outcome(method, task, seed, score, made, per_iteration, centre=centre,
                   protocol=protocol, protocol_tests=tests)


def trained(method: str, task: str, seed: int, iterations: int, folder: Path) -> Run:
    """The run trained (or continued) to `iterations` in segments that end at multiples of
    TEST_INTERVAL, the centre tested at each end (`test_centre`). Resumes are exact, so the
    segments make the run one uninterrupted run makes; a periodic test a kill cut short is
    made before training goes on."""
    run = Run.open(folder) if (folder / "config.json").is_file() else None
    while True:
        checkpoint = None if run is None else run.checkpointed_optimizer()
        made = 0 if checkpoint is None else checkpoint[0]
        if run is not None and made and made not in centre_tests(folder) and (
                made % TEST_INTERVAL == 0 or made == iterations):
            test_centre(run, made)
        if run is not None and made >= iterations:
            return run
        target = min(iterations, (made // TEST_INTERVAL + 1) * TEST_INTERVAL)
        if run is None:
            folder.parent.mkdir(parents=True, exist_ok=True)
            run = train(EXAMPLES / METHODS[method].example, out=folder,
                        overrides={**TASKS[task], "seed": seed, "generations": target,
                                   "checkpoint_every": CHECKPOINT_EVERY})
        else:
            run = resume(folder, generations=target)


def report(outcomes: Sequence[Outcome], methods: Sequence[str], tasks: Sequence[str],
           seeds: int, iterations: int) -> None:
    """The table: per task and method, the mean test score of the runs (their count of those
    asked, their range, and their iterations where fewer than asked), the published score,
    the goal and whether it is met (by the champion's score), and the mean test score of the
    runs' centres (what EvoJAX tests) where their optimizer keeps one: the last checkpoint's,
    and the best of the periodic tests tested again (EvoJAX's protocol)."""
    print(f"\n| task | method | evo test score (runs of {seeds}) | centre | EvoJAX's protocol | "
          "iterations | EvoJAX published | goal | met | s per iteration |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for task in tasks:
        for method in methods:
            row = METHODS[method]
            runs = [o for o in outcomes if o.method == method and o.task == task and
                    o.score is not None]
            published = row.published[task]
            goal = published if row.must_match else 0.98 * published
            goal_text = f"at least {goal:.2f}"
            if not runs:
                print(f"| {task} | {row.name} | - (0 of {seeds}) | - | - | - | {published:.2f} | "
                      f"{goal_text} | - | - |")
                continue
            scores = [o.score for o in runs if o.score is not None]
            mean = statistics.fmean(scores)
            spread = "" if len(scores) == 1 else f", {min(scores):.2f}-{max(scores):.2f}"
            made = sorted({o.iterations for o in runs})
            short = made[0] < iterations
            met = "not decided" if short else ("yes" if mean >= goal else "no")
            made_text = ", ".join(f"{count:,}" for count in made)
            seconds = [o.seconds_per_iteration for o in runs
                       if o.seconds_per_iteration is not None]
            seconds_text = f"{statistics.median(seconds):.2f}" if seconds else "-"
            centres = [o.centre for o in runs if o.centre is not None]
            centre_text = f"{statistics.fmean(centres):.2f}" if centres else "-"
            print(f"| {task} | {row.name} | {mean:.2f} ({len(scores)} of {seeds}{spread}) | "
                  f"{centre_text} | {_protocol_text(runs)} | {made_text}"
                  f"{' of ' + format(iterations, ',') if short else ''} | "
                  f"{published:.2f} | {goal_text} | {met} | {seconds_text} |")


def _protocol_text(runs: Sequence[Outcome]) -> str:
    """The runs' mean score under EvoJAX's protocol; how many of the runs have one where not
    all do (runs finished before the bench tested centres), and the fewest periodic tests it
    was chosen from where a run made fewer than a whole run's (one resumed from then)."""
    scored = [o for o in runs if o.protocol is not None]
    if not scored:
        return "-"
    fewest = min(o.protocol_tests for o in scored)
    whole = max(o.iterations for o in scored) // TEST_INTERVAL
    notes = ([] if len(scored) == len(runs) else [f"{len(scored)} of {len(runs)} runs"]) + (
        [f"best of {fewest} tests"] if fewest < whole else [])
    text = f"{statistics.fmean(o.protocol for o in scored if o.protocol is not None):.2f}"
    return text + (f" ({', '.join(notes)})" if notes else "")


# ---------------------------------------------------------------------------------- speed

def evo_iterations(task: str, count: int, start: Path | None = None, processes: int = 1
                   ) -> tuple[list[float], float, float]:
    """Seconds of `count` PGPE iterations of evo (the first, which builds, left out), the
    process seconds per iteration of the whole (this process's: with `processes` > 1 the
    workers of `processing.type = "mp"` evaluate, and their time is not in it), and the median
    episode steps an iteration.

    From the start, most of a generation's episodes leave the track within a few hundred
    steps, and evo drops a finished episode's row, while EvoJAX's rollout steps every row until
    the last episode of the batch ends: `start` (a run folder of the same task, e.g. one the
    table trains under `--out`) continues a copy of a run whose episodes last their 1,000
    steps, so both sides step 64 x 16 x 1,000 rows an iteration."""
    import shutil

    processing = {} if processes == 1 else {"processing.type": "mp",
                                            "processing.workers": processes}
    cpu = time.process_time()
    with tempfile.TemporaryDirectory() as folder:
        if start is None:
            run = train(EXAMPLES / METHODS["pgpe"].example, out=Path(folder) / "run",
                        overrides={**TASKS[task], "generations": count + 1,
                                   "checkpoint_every": 0, **processing})
            rows = list(run.log)
        else:
            copy = Path(folder) / "run"
            shutil.copytree(start, copy)
            checkpoint = Run.open(copy).checkpointed_optimizer()
            done = 0 if checkpoint is None else checkpoint[0]
            run = resume(copy, generations=done + count + 1, overrides=processing)
            rows = list(run.log)[max(done - 1, 0):]
        total = [float(row["seconds"]) for row in rows]
        seconds = [later - earlier for earlier, later in itertools.pairwise(total)]
        steps = [float(later["steps"]) - float(earlier["steps"])
                 for earlier, later in itertools.pairwise(rows)]
    return (seconds[-count:], (time.process_time() - cpu) / (count + 1),
            statistics.median(steps[-count:]))


def evojax_iterations(task: str, count: int) -> tuple[list[float], float]:
    """Seconds of `count` iterations of EvoJAX's PGPE with its benchmark's configuration
    (configs/PGPE/cartpole_*.yaml), the first (compiling) left out, and process seconds per
    iteration of the whole."""
    import logging

    from evojax import Trainer
    from evojax.algo import PGPE
    from evojax.policy import MLPPolicy
    from evojax.task.cartpole import CartPoleSwingUp

    hard = task == "hard"
    cpu = time.process_time()
    train_task = CartPoleSwingUp(test=False, harder=hard)
    test_task = CartPoleSwingUp(test=True, harder=hard)
    policy = MLPPolicy(input_dim=5, hidden_dims=[64, 64], output_dim=1)
    solver = PGPE(pop_size=64, param_size=policy.num_params, center_learning_rate=0.05,
                  stdev_learning_rate=0.1, init_stdev=0.1, optimizer="adam", seed=42)
    quiet = logging.getLogger("evojax-bench")
    quiet.setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        trainer = Trainer(policy=policy, solver=solver, train_task=train_task,
                          test_task=test_task, max_iter=count + 1, log_interval=1000,
                          test_interval=1000, n_repeats=16, n_evaluations=TEST_EPISODES,
                          seed=42, log_dir=folder, logger=quiet)
        seconds = []
        for _ in range(count + 1):
            start = time.perf_counter()
            params = solver.ask()
            scores, _ = trainer.sim_mgr.eval_params(params=params, test=False)
            solver.tell(fitness=scores)
            scores.block_until_ready()
            seconds.append(time.perf_counter() - start)
    return seconds[1:], (time.process_time() - cpu) / (count + 1)


def speed(task: str, count: int, rounds: int, start: Path | None,
          processes: Sequence[int] = (1,)) -> None:
    """evo's (on each count of `processes`) and EvoJAX's PGPE iterations, alternating, and the
    ratio of their medians. EvoJAX runs on every core (XLA's threads); evo on one process, or
    on `processing.type = "mp"`'s workers."""
    try:
        import evojax  # noqa: F401
    except ImportError:
        print("speed: EvoJAX is not installed (pip install -r requirements/bench.txt); "
              "evo alone:")
        evojax_available = False
    else:
        evojax_available = True
    names = {count_: "evo" if count_ == 1 else f"evo on {count_} processes"
             for count_ in processes}
    sides: dict[str, list[float]] = {name: [] for name in [*names.values(), "EvoJAX"]}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    steps: list[float] = []
    for round_ in range(rounds):
        order = [*names.values(), "EvoJAX"]
        for side in order if round_ % 2 == 0 else order[::-1]:
            if side == "EvoJAX":
                if not evojax_available:
                    continue
                seconds, process = evojax_iterations(task, count)
            else:
                workers = next(n for n, name in names.items() if name == side)
                seconds, process, median_steps = evo_iterations(task, count, start, workers)
                steps.append(median_steps)
            sides[side] += seconds
            cpu[side].append(process)
            print(f"  speed round {round_ + 1}, {side}: " +
                  ", ".join(f"{s:.2f}" for s in seconds) + " s an iteration", flush=True)
    print(f"speed ({task}, PGPE, 64 x 16 episodes an iteration, evo's of "
          f"{statistics.median(steps):,.0f} steps in all, EvoJAX's 1,024,000 row-steps):",
          flush=True)
    other = statistics.median(sides["EvoJAX"]) if evojax_available else None
    for name in names.values():
        evo = statistics.median(sides[name])
        line = (f"  {name}: {evo:.2f} s an iteration (this process "
                f"{statistics.median(cpu[name]):.2f} s)")
        if other is not None:
            line += f", evo/EvoJAX {evo / other:.2f} (goal at most 0.5)"
        print(line, flush=True)
    if other is not None:
        print(f"  EvoJAX 0.2.17: {other:.2f} s an iteration (process "
              f"{statistics.median(cpu['EvoJAX']):.2f} s)", flush=True)


# ------------------------------------------------------------------ the start states' noise

def start_noise(folder: Path, pairs: int) -> tuple[float, float]:
    """The standard deviation of PGPE's mirrored-pair differences f(c + e) - f(c - e) around
    the run's last centre c (e drawn with its stdev; each f the mean of 16 episodes, as in
    training): with both members on the same start states, as EvoJAX trains and as evo's
    native rows play them where a generation shares its evaluation seed, and on different
    ones. Their ratio says how much of the gradient's noise the starts make."""
    run = Run.open(folder)
    checkpoint = run.checkpointed_optimizer()
    if checkpoint is None or "stdev" not in checkpoint[1]:
        raise UserError(f"{folder}: --start-noise needs a checkpointed PGPE run")
    mean = np.asarray(checkpoint[1]["mean"], dtype=np.float64)
    stdev = np.asarray(checkpoint[1]["stdev"], dtype=np.float64)
    champion = load_champion(RunFolder.open(run.path), get_registry(), replaying=True)
    rng = np.random.default_rng(0)

    def score(genome: np.ndarray, seed: int) -> float:
        return statistics.fmean(replay(replace(champion, genome=genome), 16, seed).returns)

    same, different = [], []
    for _ in range(pairs):
        noise = rng.standard_normal(mean.size) * stdev
        first, other = (int(seed) for seed in rng.integers(0, 2**31, 2))
        plus = score(mean + noise, first)
        same.append(plus - score(mean - noise, first))
        different.append(plus - score(mean - noise, other))
    return statistics.pstdev(same), statistics.pstdev(different)


def main(argv: Sequence[str] | None = None) -> None:
    """The command; what it refuses (a run folder it cannot use) ends in one line and status 2,
    as the `evo` command ends a user's mistake, no traceback."""
    try:
        _main(argv)
    except UserError as error:
        print(f"swing_up.py: error: {str(error).splitlines()[0]}", file=sys.stderr)
        raise SystemExit(2) from None


def _main(argv: Sequence[str] | None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument("--tasks", nargs="+", choices=list(TASKS), default=list(TASKS))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=42)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--report", action="store_true",
                        help="with --out: the table of the runs kept there, training nothing "
                             "(an unfinished run's champion tested as it stands)")
    parser.add_argument("--speed-iterations", type=int, default=5)
    parser.add_argument("--speed-rounds", type=int, default=2)
    parser.add_argument("--speed-processes", type=int, nargs="+", default=[1],
                        help="evo is timed on each of these numbers of processes (1: one "
                             "process; more: processing.type = \"mp\" with that many workers)")
    parser.add_argument("--speed-only", action="store_true")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--speed-from", type=Path,
                        help="a run folder of evo's PGPE on the task (e.g. OUT/easy-pgpe/"
                             "seed-42) whose episodes last 1,000 steps: evo's speed is timed "
                             "on a copy of it, continued")
    parser.add_argument("--start-noise", type=Path, metavar="RUN",
                        help="a PGPE run folder of the table: how noisy its mirrored-pair "
                             "differences are on the same start states and on different ones")
    parser.add_argument("--pairs", type=int, default=64, help="pairs of --start-noise")
    args = parser.parse_args(argv)
    if args.start_noise is not None:
        same, different = start_noise(args.start_noise, args.pairs)
        print(f"{args.start_noise}: {args.pairs} mirrored pairs, sd of f(c + e) - f(c - e) on "
              f"the same starts {same:.2f}, on different starts {different:.2f} (variance "
              f"x {(different / same) ** 2:.1f})")
        return
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(method, task, seed) for seed in seeds for task in args.tasks
            for method in args.methods]
    if args.report:
        if args.out is None:
            parser.error("--report needs --out")
        found = [kept(method, task, seed, args.iterations, args.out)
                 or so_far(method, task, seed, args.out) for method, task, seed in jobs]
        report([o for o in found if o is not None], args.methods, args.tasks, args.seeds,
               args.iterations)
        return
    if not args.no_speed:
        speed(args.tasks[0], args.speed_iterations, args.speed_rounds, args.speed_from,
              args.speed_processes)
        if args.speed_only:
            return
    # a scratch folder only where no --out keeps the runs (a stopped table leaves none)
    with (contextlib.nullcontext(str(args.out)) if args.out is not None
          else tempfile.TemporaryDirectory()) as folder:
        out = Path(folder)
        outcomes = []
        with ProcessPoolExecutor(args.workers) as pool:
            futures = [pool.submit(run_one, method, task, seed, args.iterations, out)
                       for method, task, seed in jobs]
            for future in as_completed(futures):
                outcome = future.result()
                print(outcome.line(), flush=True)
                outcomes.append(outcome)
    report(outcomes, args.methods, args.tasks, args.seeds, args.iterations)


if __name__ == "__main__":
    main()
