"""`evo train`, `evo replay` and `evo plot` end to end, in-process."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evo_core.cli.main import main

FITNESS_COLUMNS = ["generation", "evaluations", "best", "mean", "std", "worst", "best_ever",
                   "steps"]


def write_config(path: Path, **changes: object) -> Path:
    config: dict[str, object] = {
        "environment": "CartPole-v1", "seed": 5, "generations": 3,
        "brain": {"type": "ctrnn", "number_neurons": 4, "w_mask": "random", "w_mask_param": 0.5},
        "optimizer": {"type": "cma-es", "population_size": 6},
        "episodes": {"runs": 2, "max_steps": 100},
    }
    for key, value in changes.items():
        config[key] = value
    path.write_text(json.dumps(config))
    return path


def train(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str], **changes: object) -> Path:
    config = write_config(tmp_path / f"{name}.json", **changes)
    out = tmp_path / name
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == str(out)
    return out


def fitness_columns(run: Path) -> list[list[str]]:
    with open(run / "log.csv", newline="") as handle:
        return [[row[c] for c in FITNESS_COLUMNS] for row in csv.DictReader(handle)]


def test_run_folder_contents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = train(tmp_path, "run", capsys)
    assert sorted(p.name for p in run.iterdir()) == [
        "best.npz", "checkpoint.npz", "config.json", "fitness.png", "hall_of_fame.npz",
        "log.csv"]
    config = json.loads((run / "config.json").read_text())
    assert config["brain"]["number_neurons"] == 4 and config["brain"]["delta_t"] == 0.05
    versions = config["provenance"]["versions"]
    assert {"evo-core", "brain-ctrnn"} <= set(versions)
    assert len(config["provenance"]["run_id"]) == 32 and "git_commit" in config["provenance"]
    rows = fitness_columns(run)
    assert [r[0] for r in rows] == ["1", "2", "3"] and rows[-1][1] == "18"
    with np.load(run / "best.npz", allow_pickle=False) as best:
        assert best["genome"].dtype == np.float64 and "template.w_mask" in best.files
        assert float(best["fitness"]) == max(float(r[6]) for r in rows)
    with np.load(run / "hall_of_fame.npz", allow_pickle=False) as hof:
        assert hof["genomes"].shape[0] == 10 and np.all(np.diff(hof["fitness"]) <= 0)
    assert (run / "fitness.png").read_bytes()[:4] == b"\x89PNG"


def test_same_seed_same_log_other_seed_other_log(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    a = train(tmp_path, "a", capsys)
    b = train(tmp_path, "b", capsys)
    c = train(tmp_path, "c", capsys, seed=6)
    assert fitness_columns(a) == fitness_columns(b) != fitness_columns(c)


def test_replay_rebuilds_the_champion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = train(tmp_path, "run", capsys)
    assert main(["replay", str(run), "--episodes", "3", "--seed", "9"]) == 0
    captured = capsys.readouterr()
    returns = [float(line.rsplit(" ", 1)[1]) for line in captured.err.splitlines()
               if line.startswith("episode")]
    # the mean is printed with 4 decimals
    assert len(returns) == 3
    assert float(captured.out.strip()) == pytest.approx(np.mean(returns), abs=1e-4)
    # the same seed gives the same episodes
    assert main(["replay", str(run), "--episodes", "3", "--seed", "9"]) == 0
    assert capsys.readouterr().out == captured.out


def test_replay_uses_saved_masks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = train(tmp_path, "run", capsys)
    assert main(["replay", str(run), "--episodes", "2"]) == 0
    expected = capsys.readouterr().out
    # a config whose seed no longer reproduces the masks still replays the trained brain
    config = json.loads((run / "config.json").read_text())
    config["seed"] = 12345
    (run / "config.json").write_text(json.dumps(config))
    assert main(["replay", str(run), "--episodes", "2"]) == 0
    assert capsys.readouterr().out == expected


def test_replay_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a run folder" in err[0]
    run = train(tmp_path, "run", capsys)
    (run / "best.npz").write_bytes(b"garbage")
    assert main(["replay", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "best.npz" in err[0]


def test_plot_compares_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = train(tmp_path, "a", capsys)
    b = train(tmp_path, "b", capsys, seed=7)
    out = tmp_path / "both.png"
    assert main(["plot", str(a), str(b), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out) and out.stat().st_size > 1000


@pytest.mark.parametrize("brain,optimizer", [
    ({"type": "ffnn", "hidden_layers": [4]}, {"type": "mu-lambda", "population_size": 6}),
    ({"type": "lstm", "hidden_size": 3}, {"type": "cma-es", "population_size": 4,
                                          "diagonal": True}),
])
def test_other_brains_and_optimizers(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     brain: dict[str, Any], optimizer: dict[str, Any]) -> None:
    run = train(tmp_path, "run", capsys, brain=brain, optimizer=optimizer,
                environment="Pendulum-v1")
    assert len(fitness_columns(run)) == 3


def test_nonfinite_observations_warn_once_per_generation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import counter_envs  # noqa: F401 - registers test/NanObs-v0

    with pytest.warns(RuntimeWarning) as caught:
        train(tmp_path, "run", capsys, environment="test/NanObs-v0",
              brain={"type": "ctrnn", "number_neurons": 2})
    messages = [str(w.message) for w in caught if "NaN" in str(w.message)]
    # every candidate of every generation hits the NaN (6 candidates, 2 episodes each)
    assert messages == [f"generation {g}: 6 candidate(s) hit a NaN or infinite observation or "
                        "reward in 12 episode(s) (candidates 0, 1, 2, 3, 4, 5); those episodes "
                        "ended with episodes.nonfinite_penalty" for g in (1, 2, 3)]


def test_memory_environment_is_registered(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    run = train(tmp_path, "run", capsys, environment="evo/CartPoleNoVelocity-v1")
    with np.load(run / "best.npz", allow_pickle=False) as best:
        assert best["template.v_mask"].shape == (4, 3)  # 2 inputs + bias


def test_replay_renders_a_gif(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pygame")  # the `render` extra; scripts/setup.sh installs it
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    run = train(tmp_path, "run", capsys)
    gif = tmp_path / "champion.gif"
    assert main(["replay", str(run), "--episodes", "1", "--render", str(gif)]) == 0
    from PIL import Image

    with Image.open(gif) as image:
        assert getattr(image, "n_frames", 1) > 5 and image.size[0] >= 100


def test_plot_of_a_non_run_folder_is_one_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plot", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no log.csv" in err[0] and str(tmp_path) in err[0]


def test_default_run_folder_location(tmp_path: Path) -> None:
    import re

    from conftest import run_evo

    config = write_config(tmp_path / "c.json", generations=1)
    result = run_evo("train", str(config), "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    folder = Path(result.stdout.strip().splitlines()[-1])
    assert re.fullmatch(r"runs/\d{8}-\d{6}-CartPole-v1-ctrnn", str(folder))
    assert (tmp_path / folder / "log.csv").exists()
