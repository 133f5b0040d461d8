"""What a newcomer met, each performed as they met it: a predecessor config given to `evo train`,
a run folder given to `evo train`, a chain stage's field set from `--set` and from a sweep grid,
a finished sweep run again."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, run_evo

from evo_core.cli.main import _format_warning, main
from evo_core.config.loading import set_values
from evo_core.dotted import key_parts
from evo_core.errors import UserError
from evo_core.results.log_file import LOG_COLUMNS
from evo_core.sweeps.plot import BAND_LABEL, sweep_figure
from evo_core.sweeps.summary import SettingRuns

CHAIN: dict[str, Any] = {
    "environment": "CartPole-v1", "seed": 2, "generations": 1,
    "brain": {"type": "chain", "stages": [{"type": "ffnn", "output_size": 4},
                                          {"type": "ctrnn", "number_neurons": 3}]},
    "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2},
    "episodes": {"runs": 1, "max_steps": 10},
}


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evo: ") and "Traceback" not in err, err
    return lines[0]


def test_a_predecessor_config_is_told_to_run_migrate(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    example = ROOT / "examples" / "predecessor_cartpole.json"
    assert main(["train", str(example), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    line = _one_line(capsys)
    assert f"evo migrate {example}" in line and "random_seed" in line
    assert not (tmp_path / "run").exists()


def test_a_run_folder_given_to_train_points_to_resume(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps(CHAIN))
    run = tmp_path / "run"
    assert main(["train", str(config), "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["train", str(run)]) == 2
    assert f"is a run folder, not a config; continue it with `evo resume {run}`" in \
        _one_line(capsys)
    swept = tmp_path / "sweep"
    swept.mkdir()
    (swept / "sweep.json").write_text("{}")
    assert main(["train", str(swept)]) == 2
    assert f"continue it with `evo sweep SWEEP_FILE --out {swept}`" in _one_line(capsys)


def test_a_chain_stage_field_is_set_from_the_command_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps(CHAIN))
    run = tmp_path / "run"
    assert main(["train", str(config), "--set", "brain.stages[0].output_size=7",
                 "--set", "brain.stages[1].number_neurons=2", "--out", str(run),
                 "--quiet"]) == 0
    stages = json.loads((run / "config.json").read_text())["brain"]["stages"]
    assert (stages[0]["output_size"], stages[1]["number_neurons"]) == (7, 2)
    capsys.readouterr()
    assert main(["train", str(config), "--set", "brain.stages[0].output_size=0",
                 "--out", str(tmp_path / "bad"), "--quiet"]) == 2
    assert "--set brain.stages[0].output_size=0: brain.stages[0].output_size: must be" in \
        _one_line(capsys)
    assert main(["train", str(config), "--set", "brain.stages[2].output_size=5",
                 "--out", str(tmp_path / "bad"), "--quiet"]) == 2
    assert "brain.stages[2] does not exist (the list has 2 item(s)" in _one_line(capsys)
    assert not (tmp_path / "bad").exists()


def test_a_chain_stage_field_is_varied_by_a_sweep_grid(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps(dict(CHAIN, sweep={
        "grid": {"brain.stages[0].output_size": [4, 6]}})))
    assert main(["sweep", str(sweep), "--dry-run"]) == 0
    assert "brain.stages[0].output_size=6" in capsys.readouterr().out
    sweep.write_text(json.dumps(dict(CHAIN, sweep={
        "grid": {"brain.stages[4].output_size": [4, 6]}})))
    assert main(["sweep", str(sweep), "--dry-run"]) == 2
    line = _one_line(capsys)
    assert f"{sweep}: sweep key brain.stages[4].output_size" in line and "--set" not in line


@pytest.mark.parametrize("key,parts", [
    ("generations", ["generations"]),
    ("brain.stages[0].output_size", ["brain", "stages", 0, "output_size"]),
    ("environment.wrappers[1].type", ["environment", "wrappers", 1, "type"]),
    ("a.b[0][2]", ["a", "b", 0, 2]),
    ("brain..x", None), ("brain.stages[x]", None), ("brain.[0]", None), ("", None),
])
def test_key_parts(key: str, parts: list[str | int] | None) -> None:
    assert key_parts(key) == parts


def test_set_values_into_a_list_never_grows_it() -> None:
    data = {"environment": {"id": "CartPole-v1", "wrappers": [{"type": "a"}]}}
    changed = set_values(data, [("environment.wrappers[0].type", "b")])
    assert changed["environment"]["wrappers"] == [{"type": "b"}]
    assert data["environment"]["wrappers"] == [{"type": "a"}]  # a copy
    with pytest.raises(UserError, match=r"environment\.wrappers\[1\] does not exist"):
        set_values(data, [("environment.wrappers[1]", {"type": "c"})])
    with pytest.raises(UserError, match=r"environment\.id is a value, not a table"):
        set_values(data, [("environment.id.x", 1)])


def test_a_sweep_run_again_says_what_it_skipped_and_continued(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps(dict(CHAIN, sweep={"seeds": 2})))
    out = tmp_path / "sweep"
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    assert "skipped" not in capsys.readouterr().err  # a first run skips nothing
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    assert "evo: sweep: of 2 runs, 2 were complete (skipped), 0 continued from their " \
        "folders, 0 started" in capsys.readouterr().err
    (sorted(out.glob("seed=*"))[0] / "checkpoint.npz").unlink()
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    assert "of 2 runs, 1 was complete (skipped), 1 continued" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["list-optimizers", "list-brains", "list-wrappers",
                                     "list-handlers", "list-trackers", "list-vectorizers"])
def test_listings_show_whole_sentences(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """A description is its docstring's first paragraph, however many lines it is wrapped over
    (MAP-Elites' and CMA-ME's were cut at the end of their first line)."""
    assert main([command, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    for entry in listed:
        if entry["status"] == "ok":
            assert entry["description"].endswith("."), entry
            assert "\n" not in entry["description"] and "  " not in entry["description"]
    if command == "list-optimizers":
        described = {entry["name"]: entry["description"] for entry in listed}
        assert described["map-elites"].endswith("a genome enters a cell it is the best of.")
        assert described["cma-me"].endswith("restarts from an elite when it stops.")


def test_list_vectorizers_shows_the_core_modes_with_the_plugins(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Every value `episodes.vectorize` takes: the core's own modes, then plugins' (evo-jax)."""
    assert main(["list-vectorizers", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    core = [entry["name"] for entry in listed if entry["distribution"] == "evo-core"]
    assert core == ["off", "sync", "native", "envpool"]
    assert "jax" in [entry["name"] for entry in listed]
    assert main(["list-vectorizers"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in table[1:5]] == core


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("written", ["champion.gif", "champion.mp4", "fitness.png",
                                     "runs/20260101-x/log.csv", "sweeps/s/summary.csv",
                                     "examples/predecessor_cartpole.toml", "trace.npz", "t.npz",
                                     "t.pdf", "a.pgf", "ab.pdf", "tb/x/events.out"])
def test_what_the_readme_writes_leaves_the_clone_clean(written: str) -> None:
    """`evo replay ... --render champion.gif`, `evo plot --out`, a default sweep folder,
    `evo migrate examples/predecessor_cartpole.json`, the traces and figures of docs/looking.md
    and the API's `trace="t.npz"`, and a tracker's `logdir = "tb"` write into the clone: git
    ignores them."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    result = subprocess.run([git, "check-ignore", "-q", written], cwd=ROOT, check=False)
    assert result.returncode == 0, f"{written} would show as untracked"


def _log(folder: Path, best: list[float]) -> Path:
    folder.mkdir(parents=True)
    rows = [",".join(LOG_COLUMNS)]
    for generation, value in enumerate(best, 1):
        rows.append(",".join(str(x) for x in (generation, 4 * generation, value, value / 2, 1.0,
                                              0.0, value, 10 * generation, generation)))
    (folder / "log.csv").write_text("\n".join(rows) + "\n")
    return folder


def test_the_sweep_plot_of_two_seeds_stays_within_their_returns(tmp_path: Path) -> None:
    """Two seeds' t-interval (t = 12.7) of returns 8..500 reached -600..800; the band is now
    within what the seeds did, and the legend says what it is."""
    import matplotlib.pyplot as plt

    seeds = [[8.0, 60.0, 200.0, 500.0], [30.0, 20.0, 480.0, 90.0]]
    setting = SettingRuns("all", {}, [_log(tmp_path / f"seed={i}", best)
                                      for i, best in enumerate(seeds)])
    figure = sweep_figure(tmp_path, [setting], [])
    try:
        axes = figure.axes[0]
        (band,) = axes.collections
        y = np.concatenate([path.vertices[:, 1] for path in band.get_paths()])
        assert y.min() >= 8.0 and y.max() <= 500.0, (y.min(), y.max())
        low, high = axes.get_ylim()
        assert low > -50 and high < 550, (low, high)
        legend = [text.get_text().replace("\n", " ") for text in figure.legends[0].get_texts()]
        assert BAND_LABEL in legend and "within the seeds' range" in BAND_LABEL
    finally:
        plt.close(figure)


def test_warnings_are_plain_text() -> None:
    """gymnasium colours its warnings; evo's warning lines carry no terminal codes."""
    coloured = "\x1b[33mWARN: Box low's precision lowered by casting to float32\x1b[0m"
    assert _format_warning(coloured, UserWarning, "x.py", 1) == \
        "evo: warning: Box low's precision lowered by casting to float32\n"


def test_envpool_mode_prints_no_colour_codes(tmp_path: Path) -> None:
    pytest.importorskip("envpool")
    config = tmp_path / "c.json"
    config.write_text(json.dumps(dict(CHAIN, brain={"type": "ctrnn", "number_neurons": 3},
                                      episodes={"max_steps": 10, "vectorize": "envpool"})))
    result = run_evo("train", str(config), "--out", str(tmp_path / "run"), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stderr, result.stderr
