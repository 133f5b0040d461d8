"""The evo-qd plugin (plugins/qd): MAP-Elites and CMA-ME on pyribs, trained on the maze."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("evo_qd")
from conftest import fitness_rows, run_evo
from PIL import Image
from shared_configs import maze_config

from evo_core import UserError, api
from evo_core.contract.protocols import IDescriptorOptimizer
from evo_core.environments.maze import MEDIUM
from evo_core.results.checkpoint import read_checkpoint, run_binding
from evo_core.results.plot_style import FULL_WIDTH, PNG_DPI
from evo_core.results.signing import signing_for
from evo_qd import CMAME, CMAMEConfig, MapElites, MapElitesConfig
from evo_qd.optimizer import load_scheduler


def archive_of(run: api.Run) -> Any:
    run_id = run.config.provenance["run_id"]  # type: ignore[index]
    checkpoint = read_checkpoint(run.path / "checkpoint.npz", run_id)
    with signing_for(run_binding(run_id, checkpoint.config)):  # signed for its run
        return load_scheduler(checkpoint.optimizer).archive


def test_list_optimizers_shows_the_plugin():
    result = run_evo("list-optimizers")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()[1:]}
    assert rows["map-elites"] == "evo-qd" and rows["cma-me"] == "evo-qd"


@pytest.mark.parametrize("optimizer", [{"type": "map-elites"}, {"type": "cma-me", "emitters": 2}])
def test_training_in_the_maze_fills_the_archive(tmp_path, optimizer):
    run = api.train(maze_config(optimizer), out=tmp_path / "run")
    archive = archive_of(run)
    data = archive.data()
    assert len(archive) > 3  # different genomes ended in different cells
    # descriptors are final positions inside the maze, and the archive keeps the best ever
    assert ((data["measures"] >= 0) & (data["measures"] <= 200)).all()
    assert data["objective"].max() == pytest.approx(run.log[-1]["best_ever"])
    assert (data["objective"] <= MEDIUM.start_distance).all()
    image = (run.path / "archive.png").read_bytes()
    assert image.startswith(b"\x89PNG")
    with Image.open(run.path / "archive.png") as png:  # the full width of 16 cm
        assert png.size[0] == int(FULL_WIDTH * PNG_DPI)
    assert not list(run.path.glob("*.tmp*"))


@pytest.mark.parametrize("optimizer", [{"type": "map-elites", "variation": "gaussian"},
                                       {"type": "cma-me"}])
def test_resume_continues_exactly(tmp_path, optimizer):
    whole = api.train(maze_config(optimizer, generations=4), out=tmp_path / "whole")
    part = api.train(maze_config(optimizer, generations=2), out=tmp_path / "part")
    api.resume(part.path, generations=4)
    assert fitness_rows(part.path) == fitness_rows(whole.path)
    first, second = archive_of(whole).data(), archive_of(part).data()
    for field in ("solution", "objective", "measures", "index"):
        np.testing.assert_array_equal(first[field], second[field])


def test_a_run_with_another_seed_differs(tmp_path):
    one = api.train(maze_config({"type": "map-elites"}, generations=2), out=tmp_path / "a")
    two = api.train(maze_config({"type": "map-elites"}, generations=2, seed=4),
                    out=tmp_path / "b")
    assert fitness_rows(one.path) != fitness_rows(two.path)


def test_config_errors_are_one_line_and_leave_no_run_folder(tmp_path):
    config = maze_config({"type": "map-elites"})
    del config["behaviour"]
    path = tmp_path / "maze.toml"
    path.write_text(_toml(config))
    result = run_evo("train", str(path), "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "optimizer 'map-elites'" in result.stderr and "[behaviour]" in result.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("optimizer", "fragment"), [
    ({"type": "map-elites", "bins": [10, 10, 10]}, "bins has 3 entries but ranges has 2"),
    ({"type": "map-elites", "ranges": [[0, 200], [5, 5]]}, "[5, 5] is empty"),
    ({"type": "cma-me", "emitters": 3}, "must be a multiple of emitters (3)"),
    ({"type": "map-elites", "variation": "random"},
     "optimizer.variation: must be 'iso-line' or 'gaussian'"),
    ({"type": "cma-me", "bins": 10**4}, "cells"),
])
def test_bad_archive_settings_are_one_line(tmp_path, optimizer, fragment):
    with pytest.raises(UserError) as caught:
        api.train(maze_config(optimizer), out=tmp_path / "run")
    message = str(caught.value)
    assert fragment in message and "\n" not in message
    assert not (tmp_path / "run").exists()


def test_ranges_that_do_not_fit_the_descriptor_are_one_line():
    optimizer = MapElites(MapElitesConfig(population_size=4, ranges=[(0, 1)] * 3), 5,
                          np.random.default_rng(0))
    optimizer.ask()
    with pytest.raises(UserError, match=r"^optimizer.ranges has 3 pair\(s\).*has 2 values"):
        optimizer.tell_descriptors(np.zeros(4), np.zeros((4, 2)))


def test_optimizers_declare_descriptors_and_refuse_a_plain_tell():
    config = CMAMEConfig(population_size=4, ranges=[(0, 1), (0, 1)])
    optimizer = CMAME(config, 3, np.random.default_rng(0))
    assert isinstance(optimizer, IDescriptorOptimizer)
    optimizer.ask()
    with pytest.raises(RuntimeError, match="needs behaviour descriptors"):
        optimizer.tell(np.zeros(4))


def test_state_round_trip_and_forged_state_is_refused():
    config = MapElitesConfig(population_size=6, ranges=[(0, 1), (0, 1)], bins=4)
    rng = np.random.default_rng(7)
    optimizer = MapElites(config, 3, np.random.default_rng(1))
    for _ in range(3):
        genomes = optimizer.ask()
        optimizer.tell_descriptors(genomes.sum(axis=1), rng.random((6, 2)))
    state = optimizer.state()
    copy = MapElites(config, 3, np.random.default_rng(99))
    copy.load_state(state)
    np.testing.assert_array_equal(copy.ask(), optimizer.ask())
    forged = dict(state, scheduler=state["scheduler"].copy())
    forged["scheduler"][-2] ^= 1
    with pytest.raises(UserError, match="not signed with your evo secret"):
        copy.load_state(forged)
    with pytest.raises(UserError, match="missing or damaged"):
        copy.load_state({})
    wrong_size = MapElites(config, 4, np.random.default_rng(1))
    with pytest.raises(UserError, match="holds genomes of 3 genes, not 4"):
        wrong_size.load_state(state)


def test_the_first_generation_is_spread_by_initial_sigma():
    config = MapElitesConfig(population_size=200, ranges=[(0, 1)], initial_sigma=2.0,
                             initial_mean=1.0)
    genomes = MapElites(config, 50, np.random.default_rng(0)).ask()
    assert genomes.mean() == pytest.approx(1.0, abs=0.05)
    assert genomes.std() == pytest.approx(2.0, rel=0.05)


def _toml(config: dict[str, Any]) -> str:
    from evo_core.config.toml_writer import to_toml

    return to_toml(config)


def test_archive_grid_of_a_three_value_descriptor_shows_the_first_two():
    """A cell of the first two values holds the best elite over the third (the figure is the
    core's: `IRun.write_archive_figure`, tests/core/results/test_figures.py)."""
    from ribs.archives import GridArchive

    from evo_qd.heatmap import archive_grid

    archive = GridArchive(solution_dim=2, dims=[4, 4, 4], ranges=[(0, 1)] * 3, seed=0)
    archive.add(np.zeros((3, 2)), np.array([1.0, 2.0, 3.0]),
                np.array([[0.1, 0.1, 0.1], [0.1, 0.1, 0.9], [0.9, 0.9, 0.5]]))
    grid = archive_grid(archive, 7)
    assert grid.objective.shape == (4, 4)
    assert grid.objective[0, 0] == 2.0 and grid.objective[3, 3] == 3.0  # 2 beats 1 in (0, 0)
    assert np.isnan(grid.objective).sum() == 14
    assert (grid.filled, grid.cells, grid.descriptors, grid.generation) == (3, 64, 3, 7)
    assert grid.lower.tolist() == [0, 0] and grid.upper.tolist() == [1, 1]
