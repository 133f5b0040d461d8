"""Looking at a trained brain: `evo replay --hof N`, MP4 with the observation beside the frame,
`--trace FILE.npz` through ITraceableBrain (CTRNN, LSTM, FFNN, chains per stage), and
`evo plot --trace`. Every file is opened and checked, not only found."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from figure_checks import check_figure, panel_colours, png_size

from evo_core import ITraceableBrain
from evo_core.api import Run
from evo_core.cli.main import main
from evo_core.results.plot import save_figure
from evo_core.results.plot_style import COLUMN_WIDTH, FULL_WIDTH, PNG_DPI, PlotStyle
from evo_core.results.trace_plot import trace_figure

CARTPOLE_WIDTH = 600  # gymnasium's CartPole renders 600x400
NEURONS = 3


def train(folder: Path, brain: dict[str, Any], name: str) -> Path:
    config = folder / f"{name}.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 3, "generations": 2, "hall_of_fame_size": 3,
        "brain": brain, "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"runs": 1, "max_steps": 40},
        "champion": {"episodes": 0}}))  # best.npz is the hall of fame's first
    assert main(["train", str(config), "--out", str(folder / name), "--quiet"]) == 0
    return folder / name


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short CartPole CTRNN run (reward 1 per step: a return is a step count)."""
    return train(tmp_path_factory.mktemp("looking"), {"type": "ctrnn",
                                                      "number_neurons": NEURONS}, "ctrnn")


def returns_of(stderr: str) -> list[float]:
    return [float(value) for value in re.findall(r"^episode \d+: return (\S+)$", stderr, re.M)]


def test_hof_replays_any_member(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    members = Run.open(run).hall_of_fame
    assert len(members) == 3
    replays = []
    for rank in (1, 2, 3):
        assert main(["replay", str(run), "--hof", str(rank), "--episodes", "2"]) == 0
        replays.append(returns_of(capsys.readouterr().err))
    assert main(["replay", str(run), "--episodes", "2"]) == 0
    assert returns_of(capsys.readouterr().err) == replays[0]  # rank 1 is the best genome
    assert Run.open(run).replay(2, hof=3) == replays[2]
    brain = Run.open(run).champion(hof=2)
    assert isinstance(brain, ITraceableBrain)


def test_a_rank_beyond_the_hall_of_fame_is_one_line(run: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(run), "--hof", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--hof 4: the hall of fame of" in err[0]
    assert "from 1 (the best) to 3" in err[0]


def video(path: Path) -> list[np.ndarray]:
    import imageio.v2 as imageio

    reader: Any = imageio.get_reader(path, format="FFMPEG")
    try:
        return [np.asarray(frame) for frame in reader]
    finally:
        reader.close()


def test_mp4_has_a_frame_per_step_with_the_observation_beside(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pygame")
    pytest.importorskip("imageio_ffmpeg")  # the `render` extra
    plain, beside = tmp_path / "plain.mp4", tmp_path / "beside.mp4"
    assert main(["replay", str(run), "--episodes", "1", "--render", str(plain)]) == 0
    steps = returns_of(capsys.readouterr().err)[0]
    assert main(["replay", str(run), "--episodes", "1", "--render", str(beside),
                 "--show-observation"]) == 0
    capsys.readouterr()
    frames, wide = video(plain), video(beside)
    assert len(frames) == len(wide) == steps + 1  # after the reset and after each step
    height, width, _ = frames[0].shape  # the frame, and the strip below it
    assert width == CARTPOLE_WIDTH and 400 < height < 440 and height % 2 == 0
    assert wide[0].shape[0] == height and wide[0].shape[1] > CARTPOLE_WIDTH
    assert wide[0].shape[1] % 2 == 0
    # the observation's panel right of the frame: its colour bar, red above and blue below
    # (each cell's colour is checked in tests/core/running/test_frame_panels.py)
    panel = wide[len(wide) // 2][:height - 30, CARTPOLE_WIDTH + 8:].astype(int)
    redder = panel[:, :, 0] - panel[:, :, 2]
    assert (redder > 60).sum() > 300 and (redder < -60).sum() > 300
    assert (plain.stat().st_mode & 0o777) != 0o600  # an ordinary file, not a secret


def test_neurons_beside_the_frame(run: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """--show-neurons: the CTRNN's potential, activation and output columns right of the
    frame, its initial state after the reset, the state after each step (so every frame has
    the same size)."""
    pytest.importorskip("pygame")
    pytest.importorskip("imageio_ffmpeg")
    out = tmp_path / "neurons.mp4"
    assert main(["replay", str(run), "--episodes", "1", "--render", str(out),
                 "--show-neurons"]) == 0
    steps = returns_of(capsys.readouterr().err)[0]
    frames = video(out)
    assert len(frames) == steps + 1
    assert frames[0].shape[1] > CARTPOLE_WIDTH

    def colour(frame: np.ndarray) -> float:
        panel = frame[:, CARTPOLE_WIDTH + 8:].astype(int)
        return float((np.abs(panel[:, :, 0] - panel[:, :, 2]) > 60).mean())

    assert {frame.shape for frame in frames} == {frames[0].shape}
    assert colour(frames[len(frames) // 2]) > 0.05
    assert not np.array_equal(frames[1][:, CARTPOLE_WIDTH:], frames[-1][:, CARTPOLE_WIDTH:])
    assert not (tmp_path / "trace.npz").exists()  # traced for the frames, no file asked for


def test_render_names_a_wrong_extension_before_running(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(run), "--render", "x.avi"]) == 2
    assert "give a name ending in .gif or .mp4" in capsys.readouterr().err
    assert main(["replay", str(run), "--show-observation"]) == 2
    assert "add --render" in capsys.readouterr().err
    assert main(["replay", str(run), "--show-neurons"]) == 2
    assert "--show-neurons draws beside the rendered frames" in capsys.readouterr().err


def test_the_api_names_a_wrong_extension(run: Path, tmp_path: Path) -> None:
    from evo_core.errors import UserError

    with pytest.raises(UserError, match=r"x\.png: give a name ending in \.gif or \.mp4"):
        Run.open(run).replay(1, render=tmp_path / "x.png")
    with pytest.raises(UserError, match=r"t\.csv: give a name ending in \.npz"):
        Run.open(run).replay(1, trace=tmp_path / "t.csv")
    with pytest.raises(UserError, match="hof: must be a rank of at least 1"):
        Run.open(run).replay(1, hof=0)


def test_trace_has_a_row_per_step_and_the_returns(run: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace.npz"
    assert main(["replay", str(run), "--episodes", "3", "--trace", str(trace)]) == 0
    err = capsys.readouterr().err
    returns = returns_of(err)
    with np.load(trace, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    steps = int(sum(returns))  # CartPole: one reward per step
    assert f"trace: {trace} ({steps} steps, with the brain's state)" in err
    assert arrays["observation"].shape == (steps, 4)
    assert arrays["action"].shape == (steps, 1)
    assert arrays["reward"].shape == arrays["episode"].shape == arrays["step"].shape == (steps,)
    assert arrays["state.potential"].shape == arrays["state.activation"].shape == (steps, NEURONS)
    assert arrays["state.output"].shape == (steps, 2)  # Discrete(2): one output per action
    assert arrays["return"].tolist() == returns
    for episode, value in enumerate(returns):
        rows = arrays["episode"] == episode
        assert arrays["reward"][rows].sum() == value
        assert arrays["step"][rows].tolist() == list(range(int(value)))
        assert arrays["done"][rows].tolist() == [False] * (int(value) - 1) + [True] or \
            value == 40  # the step limit ends an episode without `done`
    # the state is the CTRNN's: activation = tanh or relu of the potential
    potential, activation = arrays["state.potential"], arrays["state.activation"]
    assert np.allclose(activation, np.tanh(potential)) or \
        np.allclose(activation, np.maximum(potential, 0))
    # tracing changes nothing the episodes see
    assert main(["replay", str(run), "--episodes", "3"]) == 0
    assert returns_of(capsys.readouterr().err) == returns


@pytest.mark.parametrize(("brain", "keys"), [
    ({"type": "lstm", "hidden_size": 3}, {"layer0.hidden": 3, "layer0.cell": 3}),
    ({"type": "ffnn", "hidden_layers": [5]}, {"layer0": 5, "layer1": 2}),
    ({"type": "chain", "stages": [{"type": "ffnn", "hidden_layers": [4], "output_size": 3},
                                  {"type": "ctrnn", "number_neurons": 2}]},
     {"stage0.layer0": 4, "stage0.layer1": 3, "stage1.potential": 2,
      "stage1.activation": 2, "stage1.output": 2}),
])
def test_other_brains_trace_their_state(tmp_path: Path, brain: dict[str, Any],
                                        keys: dict[str, int]) -> None:
    folder = train(tmp_path, brain, brain["type"])
    trace = tmp_path / "trace.npz"
    returns = Run.open(folder).replay(1, trace=trace)
    with np.load(trace, allow_pickle=False) as data:
        states = {key[len("state."):]: data[key].shape for key in data.files
                  if key.startswith("state.")}
    steps = int(returns[0])
    assert states == {key: (steps, width) for key, width in keys.items()}


def trace_arrays(trace: Path) -> dict[str, np.ndarray]:
    with np.load(trace) as data:
        return {key: data[key] for key in data.files}


def labels_of(figure: Any) -> list[str]:
    """The panels' y labels, each on one line (they wrap to their panel's height)."""
    return [axes.get_ylabel().replace("\n", " ") for axes in figure.axes]


def test_plot_trace_draws_one_episodes_observation_action_reward_and_state(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import matplotlib.pyplot as plt

    trace = tmp_path / "t.npz"
    assert main(["replay", str(run), "--episodes", "2", "--trace", str(trace)]) == 0
    capsys.readouterr()
    assert main(["plot", str(run), "--trace", str(trace)]) == 0
    png = tmp_path / "t.png"
    assert capsys.readouterr().out.strip() == str(png)
    assert png_size(png)[0] == int(FULL_WIDTH * PNG_DPI)
    arrays = trace_arrays(trace)
    first = int((arrays["episode"] == 0).sum())
    figure = trace_figure(arrays, "CartPole-v1 · ctrnn · ctrnn")
    try:
        panels = [axes for axes in figure.axes if axes.get_ylabel()]
        assert [label for label in labels_of(figure) if label] == [
            "observation", "action", "reward", "return so far", "potential (neuron)",
            "activation (neuron)", "output (neuron)"]
        heatmap = panels[4]
        assert heatmap.images[0].get_array().shape == (NEURONS, first)  # episode 0 only
        returned = float(arrays["return"][0])
        assert figure.get_suptitle().splitlines() == [
            "CartPole-v1 · ctrnn · ctrnn",
            f"episode 0 of 2: return {returned:g} in {first} steps"]
        (observation,) = [line for line in panels[0].get_lines()][:1]
        assert len(panels[0].get_lines()) == 4  # CartPole's four observations, as lines
        assert np.array_equal(observation.get_ydata(), arrays["observation"][:first, 0])
        check_figure(figure)
        save_figure(figure, png)
        assert all(panel_colours(png, figure, axes) > 3 for axes in panels)
    finally:
        plt.close(figure)


@pytest.mark.parametrize("column", [False, True])
def test_plot_trace_of_any_episode_or_all_reads_back(run: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     column: bool) -> None:
    import matplotlib.pyplot as plt

    trace = tmp_path / "t.npz"
    assert main(["replay", str(run), "--episodes", "3", "--trace", str(trace)]) == 0
    arrays = trace_arrays(trace)
    out = tmp_path / "one.png"
    assert main(["plot", str(run), "--trace", str(trace), "--episode", "1", "--out", str(out),
                 *(["--column"] if column else [])]) == 0
    assert png_size(out)[0] == int((COLUMN_WIDTH if column else FULL_WIDTH) * PNG_DPI)
    style = PlotStyle(column=column)
    for episode, steps in ((1, int((arrays["episode"] == 1).sum())),
                           (None, len(arrays["reward"]))):
        figure = trace_figure(arrays, "a run", style, episode)
        try:
            heatmap = next(axes for axes in figure.axes if axes.images)
            assert heatmap.images[0].get_array().shape == (NEURONS, steps)
            dotted = [c for c in figure.axes[0].collections if c.get_linestyle() != "solid"]
            assert len(dotted) == (1 if episode is None else 0)  # between episodes
            check_figure(figure)
        finally:
            plt.close(figure)
    capsys.readouterr()
    assert main(["plot", str(run), "--trace", str(trace), "--episode", "7"]) == 2
    assert capsys.readouterr().err.strip() == (f"evo: error: --trace {trace}: has episodes 0 "
                                               "to 2; --episode 7 is not one of them")
    assert main(["plot", str(run), "--episode", "1"]) == 2
    assert "--episode chooses the episode --trace draws" in capsys.readouterr().err


def test_plot_trace_refuses_a_file_that_is_not_a_trace(run: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    assert main(["plot", str(run), "--trace", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lacks reward, episode, step" in err[0]
