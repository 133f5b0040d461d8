"""The `[stop]` table: solved runs stop and say so, budgets, champion tests, resume, the API,
handlers and a sweep's summary."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evo_core import api
from evo_core.cli.main import main
from evo_core.config.schema import EpisodesConfig
from evo_core.config.stop import ChampionTest, StopConfig
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments.double_pole import GENERALIZATION_STARTS, DoublePole
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.running.stopping import Stopping, StopState
from evo_core.sweeps.summary import SettingRuns, summary_rows

SHORT = {"id": "evo/DoublePole-v0", "kwargs": {"max_episode_steps": 100}}


def config(stop: dict[str, Any], processing: str = "sequential", **changes: Any
           ) -> dict[str, Any]:
    """A linear network on a double pole cut at 100 decisions: solved in 10 generations."""
    return {"environment": SHORT, "seed": 2, "generations": 60, "checkpoint_every": 0,
            "brain": {"type": "ffnn", "hidden_layers": [], "use_bias": False},
            "optimizer": {"type": "cma-es", "population_size": 9, "sigma": 0.5},
            "processing": {"type": processing}, "stop": stop, **changes}


def log(run: Path) -> list[dict[str, str]]:
    with open(run / "log.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def train(tmp_path: Path, data: dict[str, Any], capsys: Any, name: str = "run"
          ) -> tuple[Path, str]:
    (tmp_path / f"{name}.json").write_text(json.dumps(data))
    out = tmp_path / name
    assert main(["train", str(tmp_path / f"{name}.json"), "--out", str(out), "--quiet"]) == 0
    return out, capsys.readouterr().out


def test_a_solved_run_stops_at_the_generation_that_solved_it(tmp_path: Path, capsys) -> None:
    run, out = train(tmp_path, config({"fitness": 100}), capsys)
    rows = log(run)
    assert [float(r["best"]) >= 100 for r in rows] == [False] * (len(rows) - 1) + [True]
    assert [r["solved"] for r in rows] == ["0"] * (len(rows) - 1) + ["1"]
    assert {r["test_episodes"] for r in rows} == {"0"}
    assert 1 < len(rows) < 60 and int(rows[-1]["evaluations"]) == 9 * len(rows)
    assert out.splitlines() == [f"evo: solved at generation {len(rows)} after "
                                f"{rows[-1]['evaluations']} evaluations", str(run)]


def test_a_budget_stops_an_unsolved_run(tmp_path: Path, capsys) -> None:
    run, out = train(tmp_path, config({"fitness": 10**9, "evaluations": 20}), capsys)
    rows = log(run)
    assert [r["evaluations"] for r in rows] == ["9", "18", "27"]  # the first >= 20
    assert {r["solved"] for r in rows} == {"0"}
    assert out.splitlines()[0] == ("evo: not solved; the budget of 20 evaluations was spent at "
                                   "generation 3 (27 evaluations)")


def test_without_stop_the_log_keeps_its_columns(tmp_path: Path, capsys) -> None:
    data = config({"fitness": 1})
    del data["stop"]
    run, out = train(tmp_path, {**data, "generations": 2}, capsys)
    assert "solved" not in log(run)[0] and out.splitlines() == [str(run)]
    assert "stop" not in json.loads((run / "config.json").read_text())


def test_resuming_a_solved_run_trains_nothing_and_says_so(tmp_path: Path, capsys) -> None:
    run, out = train(tmp_path, config({"fitness": 100}), capsys)
    before = {name: (run / name).read_bytes() for name in ("log.csv", "config.json",
                                                          "checkpoint.npz")}
    assert main(["resume", str(run), "--quiet", "--generations", "100"]) == 0
    again = capsys.readouterr().out.splitlines()[0]
    assert again == out.splitlines()[0] + "; it had stopped already, nothing was trained"
    assert before == {name: (run / name).read_bytes() for name in before}


def test_a_resumed_run_stops_where_an_uninterrupted_one_does(tmp_path: Path, capsys) -> None:
    tests = [{"environment": SHORT, "episodes": 2, "min_return": 100}]
    whole, _ = train(tmp_path, config({"champion_tests": tests}), capsys, "whole")
    part, _ = train(tmp_path, config({"champion_tests": tests}, generations=3,
                                     checkpoint_every=1), capsys, "part")
    assert main(["resume", str(part), "--generations", "60", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("evo: solved at generation")
    assert len(log(part)) == len(log(whole))
    assert log(part) == [{**row, "seconds": r["seconds"]} for row, r in zip(log(whole),
                                                                            log(part))]
    assert log(whole)[-1]["solved"] == "1" and int(log(whole)[-1]["test_episodes"]) >= 2


def test_the_mp_handler_and_the_api_stop_alike(tmp_path: Path, capsys) -> None:
    sequential, _ = train(tmp_path, config({"fitness": 100}), capsys, "sequential")
    run = api.train(config({"fitness": 100}, "mp"), out=tmp_path / "mp")
    keep = ("generation", "evaluations", "best", "mean", "solved", "test_episodes")
    assert [{k: r[k] for k in keep} for r in log(sequential)] == \
        [{k: r[k] for k in keep} for r in log(run.path)]
    assert run.log[-1]["solved"] == 1 and run.log[0]["test_episodes"] == 0


@pytest.mark.slow
def test_the_dask_handler_stops_alike(tmp_path: Path, capsys) -> None:
    sequential, _ = train(tmp_path, config({"fitness": 100}), capsys, "sequential")
    data = config({"fitness": 100})
    data["processing"] = {"type": "dask", "workers": 2}
    dask, out = train(tmp_path, data, capsys, "dask")
    keep = ("generation", "evaluations", "best", "solved")
    assert [{k: r[k] for k in keep} for r in log(sequential)] == \
        [{k: r[k] for k in keep} for r in log(dask)]
    assert out.startswith("evo: solved at generation")


# ---------------------------------------------------------------- champion tests, in-process


class _Push:
    """A brain that pushes `force` and records every reset and the first observation after it."""

    def __init__(self, force: float, seen: list[Any]) -> None:
        self.force, self.seen, self.fresh = force, seen, False

    def reset(self) -> None:
        self.fresh = True

    def step(self, observation: Any) -> Any:
        if self.fresh:
            self.seen.append(np.array(observation))
            self.fresh = False
        return np.array([self.force])


class _Template:
    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.genome_size = 1

    def make(self, genome: Any) -> _Push:
        return _Push(float(genome[0]), self.seen)


def _decisions(start: tuple[float, ...], force: float, limit: int) -> int:
    env = DoublePole()
    env.reset(options={"state": list(start)})
    for decision in range(limit):
        if env.step(np.array([force]))[2]:
            return decision
    return limit


def test_champion_tests_seed_episode_i_with_i_and_stop_when_decided() -> None:
    """Test 1 (standard start) passes; test 2 plays generalization starts 0, 1, ... until
    its outcome is certain; the counts match a direct simulation of the same pushes."""
    force, threshold = 0.3, 20
    survived = [_decisions(s, force, 50) for s in GENERALIZATION_STARTS[:40]]
    standard = _decisions((0, 0, 0.07, 0, 0, 0), force, 50)
    generalization = EnvironmentConfig(id="evo/DoublePole-v0", kwargs={
        "start": "generalization", "max_episode_steps": 50})
    for needed in (3, 38):
        stop = StopConfig(champion_tests=(
            ChampionTest(environment=EnvironmentConfig(id="evo/DoublePole-v0"), episodes=1,
                         min_return=standard),
            ChampionTest(environment=generalization, episodes=40, min_return=threshold,
                         min_passes=needed)))
        template = _Template()
        stopping = Stopping(stop, template)
        state = StopState()
        stopping.after_generation(state, np.array([[0.0], [force]]), np.array([0.0, 1.0]), 2)
        stopping.close()
        passes = np.cumsum(np.array(survived) >= threshold)
        failures = np.cumsum(np.array(survived) < threshold)
        decided = next(i for i in range(40) if passes[i] >= needed or failures[i] > 40 - needed)
        assert state.solved == (passes[decided] >= needed)
        assert state.test_episodes == 1 + decided + 1
        for k, observation in enumerate(template.seen[1:]):  # episode k started in start k
            start, _ = DoublePole(start="generalization").reset(seed=k)
            np.testing.assert_array_equal(observation, start)
    assert len({tuple(o) for o in template.seen[1:]}) == len(template.seen) - 1


def test_a_failed_first_test_skips_the_others_and_fitness_gates_the_tests() -> None:
    stop = StopConfig(fitness=5.0, champion_tests=(
        ChampionTest(environment=EnvironmentConfig(id="evo/DoublePole-v0"), episodes=3,
                     min_return=10**6),
        ChampionTest(environment=EnvironmentConfig(id="evo/DoublePole-v0"), episodes=3,
                     min_return=0)))
    template = _Template()
    stopping = Stopping(stop, template)
    state = StopState()
    stopping.after_generation(state, np.array([[0.0]]), np.array([4.0]), 1)
    assert state.test_episodes == 0  # below the fitness: no test played
    stopping.after_generation(state, np.array([[0.0]]), np.array([5.0]), 2)
    stopping.close()
    assert not state.solved and state.test_episodes == 1  # one failure decides test 1


def test_a_champion_tested_before_is_not_played_again_but_its_episodes_count() -> None:
    """An elitist optimizer keeps its champion: the same genome's seeded tests would repeat
    step for step, so its outcome is reused and its episodes counted again (as a resumed run,
    which plays them, counts them); another genome is played."""
    stop = StopConfig(champion_tests=(ChampionTest(
        environment=EnvironmentConfig(id="evo/DoublePole-v0", kwargs={"max_episode_steps": 30}),
        episodes=3, min_return=10**6),))
    template = _Template()
    stopping = Stopping(stop, template)
    state = StopState()
    stopping.after_generation(state, np.array([[0.3]]), np.array([1.0]), 1)
    played = len(template.seen)
    assert played > 0 and state.test_episodes == 1 and not state.solved
    stopping.after_generation(state, np.array([[0.1], [0.3]]), np.array([0.0, 1.0]), 2)
    assert len(template.seen) == played and state.test_episodes == 2
    stopping.after_generation(state, np.array([[0.2]]), np.array([1.0]), 3)
    stopping.close()
    assert len(template.seen) > played and state.test_episodes == 3


def test_the_runner_used_by_the_tests_is_the_evaluations_runner() -> None:
    """The same EpisodeRunner gives the same return for the same start as a test episode."""
    runner = EpisodeRunner(_Template(), "evo/DoublePole-v0", EpisodesConfig())
    outcome = runner.run_episode(_Push(0.3, []), 0)
    runner.close()
    assert outcome.total == _decisions((0, 0, 0.07, 0, 0, 0), 0.3, 10**5)


# ---------------------------------------------------------------- mistakes and the summary


@pytest.mark.parametrize(("stop", "message"), [
    ({}, "set fitness, evaluations or champion_tests"),
    ({"champion_tests": [{"environment": SHORT, "episodes": 2, "min_return": 1,
                          "min_passes": 3}]}, "min_passes (3) cannot exceed episodes (2)"),
    ({"champion_tests": [{"environment": {"id": "evo/DoublePole-v0",
                                          "kwargs": {"velocities": False}},
                          "min_return": 1}]}, "stop.champion_tests[0]: environment"),
    ({"fitnes": 3}, "fitnes"),
])
def test_stop_mistakes_are_one_line(tmp_path: Path, capsys, stop: dict[str, Any],
                                    message: str) -> None:
    (tmp_path / "c.json").write_text(json.dumps(config(stop)))
    assert main(["train", str(tmp_path / "c.json"), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evo: ") and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def _fake_run(path: Path, evaluations: list[int], solved: bool, stop: dict[str, Any],
              generations: int = 50) -> Path:
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"generations": generations, "stop": stop}))
    with open(path / "log.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["generation", "evaluations", "best", "mean", "std", "worst",
                         "best_ever", "steps", "seconds", "solved", "test_episodes"])
        for index, count in enumerate(evaluations, 1):
            done = solved and index == len(evaluations)
            writer.writerow([index, count, 1, 1, 0, 1, 1, 10, 0.1, int(done), 0])
    return path


def test_summary_counts_solved_runs_and_their_evaluations(tmp_path: Path) -> None:
    stop = {"fitness": 5, "evaluations": 30}
    runs = [_fake_run(tmp_path / "a", [10, 20], True, stop),
            _fake_run(tmp_path / "b", [10, 20, 30, 40], True, stop),
            _fake_run(tmp_path / "c", [10, 20, 30], False, stop),  # budget spent: finished
            _fake_run(tmp_path / "d", [10], False, stop)]  # neither: unfinished, left out
    (row,) = summary_rows([SettingRuns("s", {}, runs)], [], None)
    assert row["runs"] == 3 and row["solved"] == 2
    assert row["evaluations_to_solve_mean"] == 30.0
    assert row["evaluations_to_solve_ci95"] == pytest.approx(12.706204736 * 10, rel=1e-9)
