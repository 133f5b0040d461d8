"""`evo migrate` on the corpus of predecessor configs (tests/data/predecessor/): every config
migrates without a traceback, says what it drops, and those whose brain and features evo has
train for one generation.

The table EXPECTED is the one place that says what each config becomes; when evo gains a
feature (CNN and concatenated brains as chains, novelty, design spaces as sweeps), flip its rows.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from evo_core.cli.main import main

CORPUS = ROOT / "tests" / "data" / "predecessor"


@dataclass(frozen=True)
class Expect:
    """`migrates`: exit 0 with a TOML file written (else exit 2, one `evo:` line per problem and
    no file); `trains`: one generation runs; `dropped`: each text appears in a `dropped:` line;
    `errors`: each text appears in an `evo:` error line; `sweep`: a design space, written as a
    sweep file whose points `evo sweep --dry-run` lists; `needs`: a module training needs
    (procgen_gym installs on Python >= 3.13 only: there, .ci/run's suite on 3.13 trains it)."""

    migrates: bool = True
    trains: bool = True
    sweep: bool = False
    needs: str | None = None
    dropped: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


NOVELTY = "novelty"
PROCGEN = "procgen_gym"
KEEP_SEED = "keep_env_seed_fixed_during_generation"

EXPECTED: dict[str, Expect] = {
    # the five real configs
    "solve_cartpole_cma.json": Expect(dropped=(KEEP_SEED,)),
    "reacher_memory_ctrnn_novel.json": Expect(dropped=("extra_from_hof",)),
    "cnn_ctrnn.json": Expect(),
    "concatenated_brain_lstm.json": Expect(dropped=("feed_forward_front.indirect_encoding",)),
    "mu_basic_design_space.json": Expect(trains=False, sweep=True,
                                         dropped=("optimizer.extra_from_hof",)),
    # written for every other kind of experiment the predecessor ran
    "cartpole_ffnn_mu.json": Expect(dropped=("brain.indirect_encoding",)),
    "cartpole_lstm_cma.json": Expect(),
    "cartpole_v0_ctrnn_mu_per_gene.json": Expect(),
    "cartpole_ctrnn_novelty_cma.json": Expect(),
    "lunarlander_ctrnn_cma.json": Expect(),
    "lunarlander_ffnn_torch_mu.json": Expect(),
    "bipedalwalker_ctrnn_cma.json": Expect(),
    "bipedalwalker_ffnn_mu.json": Expect(dropped=("extra_from_hof",)),
    "bipedalwalker_lstm_max_steps.json": Expect(),
    # its state source: BipedalWalker is neither MuJoCo nor Atari
    "bipedalwalker_ctrnn_novelty_state_mu.json": Expect(dropped=(NOVELTY,)),
    "ant_v2_ctrnn_mu.json": Expect(),
    "ant_v3_lstm_mu.json": Expect(),
    "reacher_v2_ctrnn_cma.json": Expect(),
    "reacher_memory_ctrnn_cma.json": Expect(),
    "reacher_memory_dynamic_ctrnn_mu.json": Expect(),
    "reacher_memory_lstm_mu.json": Expect(),
    "qbert_ctrnn_mu.json": Expect(),
    "qbert_ram_ctrnn_cma.json": Expect(),
    "qbert_hard_ffnn_mu.json": Expect(),
    "qbert_autoencoder_ctrnn_mu.json": Expect(dropped=("use_autoencoder",)),
    "procgen_heist_ctrnn_mu.json": Expect(needs=PROCGEN),
    "reverse_ctrnn_cma.json": Expect(),
    "reverse_shaped_lstm_mu.json": Expect(),
    "cnn_ctrnn_procgen.json": Expect(needs=PROCGEN, dropped=("extra_from_hof",)),
    "cma_es_basic_design_space.json": Expect(trains=False, sweep=True),
    # real configs the predecessor's repository holds beside the five above, each of which
    # once stopped evo (an image or a Tuple recorded, a 32x32 CNN input, 0 generations)
    "qbert_hard_novel.json": Expect(dropped=("extra_from_hof",)),
    "qbert_mu_novel.json": Expect(dropped=("extra_from_hof",)),
    "qbert_hard_novel_cnn.json": Expect(dropped=("extra_from_hof",)),
    "reverse_novel.json": Expect(dropped=("extra_from_hof",)),
    "reverse_fixed.json": Expect(),
    "procgen.json": Expect(needs=PROCGEN, dropped=("extra_from_hof",)),
    "ffnn_design_space.json": Expect(trains=False, sweep=True,
                                     dropped=("brain.indirect_encoding",)),
}
NAMES = sorted(EXPECTED)

#: What `evo train` gets on top of a migrated config: one short, small generation.
SMALL = {"cma-es": ["optimizer.population_size=4", "optimizer.mu=2"],
         "mu-lambda": ["optimizer.population_size=4", "optimizer.mu=2"]}


def test_the_table_covers_the_corpus() -> None:
    assert sorted(path.name for path in CORPUS.glob("*.json")) == NAMES
    assert len(NAMES) == 37


def migrate(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
            ) -> tuple[int, Path, list[str]]:
    source = tmp_path / name
    shutil.copy(CORPUS / name, source)
    status = main(["migrate", str(source)])
    return status, source.with_suffix(".toml"), capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("name", NAMES)
def test_every_config_migrates_as_expected(tmp_path: Path, name: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    expect = EXPECTED[name]
    status, out, err = migrate(tmp_path, name, capsys)
    assert status == (0 if expect.migrates else 2), err
    assert out.exists() == expect.migrates
    assert all(line.startswith(("dropped: ", "note: ", "evo: ")) for line in err), err
    assert not any("Traceback" in line for line in err)
    dropped = [line for line in err if line.startswith("dropped: ")]
    for text in expect.dropped:
        assert any(text in line for line in dropped), (text, err)
    errors = [line for line in err if line.startswith("evo: ")]
    assert bool(errors) != expect.migrates
    for text in expect.errors:
        assert any(text in line for line in errors), (text, err)
    if expect.migrates:
        tomllib.loads(out.read_text())
    if not expect.trains and not expect.sweep:
        # what stops it is named: a dropped line, or an error
        assert dropped or errors


@pytest.mark.parametrize("name", [name for name in NAMES if EXPECTED[name].sweep])
def test_design_spaces_list_their_points(tmp_path: Path, name: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = migrate(tmp_path, name, capsys)
    assert status == 0, err
    assert "sweep" in tomllib.loads(out.read_text())
    assert main(["sweep", str(out), "--dry-run"]) == 0
    points = capsys.readouterr().out.splitlines()
    assert len(points) >= 2
    assert len(set(points)) == len(points)


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in NAMES if EXPECTED[name].sweep])
def test_a_design_space_point_trains_one_generation(tmp_path: Path, name: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A design space is trained as the predecessor's batch script did, one drawn config at a
    time: here the first point of its sweep, one seed, one short generation."""
    status, out, err = migrate(tmp_path, name, capsys)
    assert status == 0, err
    sweep = tmp_path / "sweep"
    args = ["sweep", str(out), "--out", str(sweep)]
    for override in ("sweep.samples=1", "sweep.seeds=[0]", "generations=1",
                     "episodes.max_steps=20", "episodes.runs=1"):
        args += ["--set", override]
    assert main(args) == 0, capsys.readouterr().err
    logs = list(sweep.glob("*/log.csv"))
    # one generation at least: a design space that samples number_generations (5, 6 or 7 in
    # cma_es_basic_design_space.json) runs the sampled number, the sample beating --set
    assert len(logs) == 1 and len(logs[0].read_text().splitlines()) >= 2


def environment_of(path: Path) -> Any:
    return tomllib.loads(path.read_text())["environment"]


def test_ids_become_current_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    migrated = {}
    for name in ("lunarlander_ctrnn_cma.json", "ant_v2_ctrnn_mu.json", "ant_v3_lstm_mu.json",
                 "reacher_v2_ctrnn_cma.json", "reverse_ctrnn_cma.json",
                 "reverse_shaped_lstm_mu.json", "procgen_heist_ctrnn_mu.json"):
        status, out, _ = migrate(tmp_path, name, capsys)
        assert status == 0
        migrated[name] = environment_of(out)
    assert migrated == {
        "lunarlander_ctrnn_cma.json": "LunarLander-v3", "ant_v2_ctrnn_mu.json": "Ant-v5",
        "ant_v3_lstm_mu.json": "Ant-v5", "reacher_v2_ctrnn_cma.json": "Reacher-v5",
        "reverse_ctrnn_cma.json": "evo/Reverse-v0",
        "reverse_shaped_lstm_mu.json": "evo/ReverseShaped-v0",
        "procgen_heist_ctrnn_mu.json": {
            "id": "evo/Procgen-v0",
            "kwargs": {"game": "heist", "distribution_mode": "memory",
                       "use_monochrome_assets": False, "restrict_themes": True,
                       "use_backgrounds": False, "screen_size": 32}}}


PREDECESSOR_ATARI = {"type": "atari-preprocessing", "noop_max": 30, "frame_skip": 4,
                     "screen_size": 64, "terminal_on_life_loss": True, "grayscale_obs": False,
                     "scale_obs": True}
NO_FRAMESKIP = {"frameskip": 1, "repeat_action_probability": 0.0}


def test_environment_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tables = {}
    for name in ("qbert_ctrnn_mu.json", "qbert_hard_ffnn_mu.json", "qbert_ram_ctrnn_cma.json",
                 "bipedalwalker_ctrnn_cma.json", "reacher_memory_ctrnn_cma.json",
                 "reacher_memory_dynamic_ctrnn_mu.json"):
        status, out, _ = migrate(tmp_path, name, capsys)
        assert status == 0
        tables[name] = environment_of(out)
    assert tables["qbert_ctrnn_mu.json"] == {
        "id": "ALE/Qbert-v5", "kwargs": NO_FRAMESKIP, "wrappers": [PREDECESSOR_ATARI]}
    assert tables["qbert_hard_ffnn_mu.json"] == {
        "id": "ALE/Qbert-v5", "kwargs": NO_FRAMESKIP,
        "wrappers": [{"type": "qbert-hard"}, dict(PREDECESSOR_ATARI, screen_size=32)]}
    assert tables["qbert_ram_ctrnn_cma.json"] == {
        "id": "ALE/Qbert-v5", "kwargs": {"repeat_action_probability": 0.25, "obs_type": "ram"}}
    assert tables["bipedalwalker_ctrnn_cma.json"] == {
        "id": "BipedalWalker-v3", "wrappers": [{"type": "stand-still-stop"}]}
    assert tables["reacher_memory_ctrnn_cma.json"] == {
        "id": "evo/ReacherMemory-v0",
        "kwargs": {"observation_frames": 10, "memory_frames": 10, "action_frames": 30}}
    assert tables["reacher_memory_dynamic_ctrnn_mu.json"]["id"] == "evo/ReacherMemoryDynamic-v0"


def test_normalize_input_target_zero_without_normalize_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The predecessor ignored the target when normalize_input was false, and left it at 0; evo
    rejects 0, so it is not carried over (it used to fail validation)."""
    status, out, err = migrate(tmp_path, "reacher_memory_lstm_mu.json", capsys)
    assert status == 0, err
    brain = tomllib.loads(out.read_text())["brain"]
    assert brain["type"] == "lstm" and "normalize_input_target" not in brain


def migrated(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
             ) -> tuple[dict[str, Any], list[str]]:
    status, out, err = migrate(tmp_path, name, capsys)
    assert status == 0, err
    return tomllib.loads(out.read_text()), err


def test_a_cnn_stage_reads_the_migrated_screen_size(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """qbert_hard_novel_cnn.json shrinks the screen to 32x32: its two conv/pool layers give
    9x9x5 = 405 features, not the 3125 of a 64x64 frame."""
    config, _ = migrated(tmp_path, "qbert_hard_novel_cnn.json", capsys)
    cnn, ctrnn = config["brain"]["stages"]
    assert config["environment"]["wrappers"][0]["screen_size"] == 32
    assert cnn["output_size"] == 405 and ctrnn["type"] == "ctrnn"
    config, _ = migrated(tmp_path, "cnn_ctrnn.json", capsys)
    assert config["brain"]["stages"][0]["output_size"] == 720  # from 64x64x3 frames


def test_a_random_mask_above_probability_one_is_dense(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = migrate(tmp_path, "cma_es_basic_design_space.json", capsys)
    assert status == 0, err
    base = tomllib.loads(out.read_text())["brain"]
    assert (base["v_mask"], base["v_mask_param"]) == ("dense", 1.1)
    assert any("v_mask \"random\" with v_mask_param 1.1" in line and "dense" in line
               for line in err)
    single = json.loads((CORPUS / "solve_cartpole_cma.json").read_text())
    single["brain"].update(w_mask="random", w_mask_param=4, t_mask="random", t_mask_param=0.5)
    (tmp_path / "masks.json").write_text(json.dumps(single))
    assert main(["migrate", str(tmp_path / "masks.json")]) == 0
    brain = tomllib.loads((tmp_path / "masks.toml").read_text())["brain"]
    assert (brain["w_mask"], brain["t_mask"], brain["t_mask_param"]) == ("dense", "random", 0.5)


def test_zero_generations_become_one_with_a_note(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    config, err = migrated(tmp_path, "reverse_fixed.json", capsys)
    assert config["generations"] == 1
    assert any(line.startswith("note: number_generations 0") for line in err)


HOSTILE: list[Any] = [None, "text", [1, "a", None], {"type": 7, "": {"": []}},
                      [{"a": 1}, {"b": 2}], 10**400]


@pytest.mark.slow
def test_any_value_anywhere_is_a_line_not_a_traceback(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Every top-level key of a real config, and every key of its optimizer and episode_runner
    sections (the ones migrate computes with), replaced by values of every wrong kind: migrate
    exits 0 or 2 and prints only its own lines."""
    base = json.loads((CORPUS / "reacher_memory_ctrnn_novel.json").read_text())
    paths: list[tuple[str, ...]] = [(key,) for key in base]
    paths += [(key, sub) for key in ("optimizer", "episode_runner") for sub in base[key]]
    paths += [("brain", "type"), ("brain", "hidden_layers"),
              ("episode_runner", "environment_attributes", "memory_frames")]
    source = tmp_path / "old.json"
    for path in paths:
        for value in HOSTILE:
            old = json.loads(json.dumps(base))
            table = old
            for key in path[:-1]:
                table = table[key]
            table[path[-1]] = value
            source.write_text(json.dumps(old))
            status = main(["migrate", str(source), "--force"])
            err = capsys.readouterr().err.splitlines()
            assert status in (0, 2), (path, value)
            assert all(line.startswith(("dropped: ", "note: ", "evo: ")) for line in err), \
                (path, value, err)


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in NAMES if EXPECTED[name].trains])
def test_migrated_configs_train_one_generation(tmp_path: Path, name: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    needs = EXPECTED[name].needs
    if needs is not None:
        pytest.importorskip(needs, reason=f"{needs} is not installed (Python >= 3.13 only)")
    status, out, err = migrate(tmp_path, name, capsys)
    assert status == 0, err
    optimizer = tomllib.loads(out.read_text())["optimizer"]["type"]
    # no fresh champion episodes: an Atari reset with a seed reloads the ROM (170 ms), and
    # they were most of each run's time
    overrides = ["generations=1", "episodes.max_steps=20", "episodes.runs=1",
                 "champion.episodes=0", *SMALL[optimizer]]
    run = tmp_path / "run"
    args = ["train", str(out), "--quiet", "--out", str(run)]
    for override in overrides:
        args += ["--set", override]
    assert main(args) == 0, capsys.readouterr().err
    assert len((run / "log.csv").read_text().splitlines()) == 2
