"""Attacks on `evo migrate`: long design-space lists, a pooling stride of 0, deep nesting, a
FIFO or folder at --out, an unknown environment, and strings TOML spells otherwise than JSON.
Each test performs the attack and asserts the promise: one `evo:` line, exit 2, nothing written;
or a result that is right and reads back."""

from __future__ import annotations

import copy
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from shared_configs import CTRNN_CMA

from evo_core.cli.main import main
from evo_core.config.migrate import MAX_DEPTH, migrate_config
from evo_core.config.toml_writer import to_toml
from evo_core.errors import UserError

CNN_CTRNN = {
    "environment": "CartPole-v1", "random_seed": 1, "number_generations": 2,
    "optimizer": {"type": "CMA_ES", "population_size": 8, "sigma": 1.0, "mu": 2},
    "brain": {"type": "CNN_CTRNN",
              "cnn_conf": {"conv_size1": 3, "conv_feat1": 2, "maxp_size1": 2, "maxp_stride1": 0,
                           "conv_size2": 3, "conv_feat2": 2, "maxp_size2": 2,
                           "maxp_stride2": 2},
              "ctrnn_conf": {"type": "CTRNN", "number_neurons": 3}},
}


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines()
             if not line.startswith(("dropped: ", "note: "))]
    assert len(lines) == 1 and lines[0].startswith("evo: ") and "Traceback" not in err, err
    return lines[0]


def refused(tmp_path: Path, old: dict[str, Any], capsys: pytest.CaptureFixture[str],
            *extra: str) -> str:
    source = tmp_path / "old.json"
    source.write_text(json.dumps(old))
    assert main(["migrate", str(source), *extra]) == 2
    assert not source.with_suffix(".toml").exists()
    return one_line(capsys.readouterr().err)


def test_a_long_design_space_list_keeps_every_distinct_choice_in_order() -> None:
    old = copy.deepcopy(CTRNN_CMA)
    values = [round(0.001 * (i + 1), 6) for i in range(3000)]
    old["brain"]["delta_t"] = [*values, values[5], values[7]]  # repeats give no new choice
    old["optimizer"]["sigma"] = [1, 1.0, 2]  # equal values are one choice
    migration = migrate_config(old)
    sample = migration.config["sweep"]["sample"]
    assert sample["brain.delta_t"] == values
    assert sample["optimizer.sigma"] == [1, 2]
    assert len(migration.dropped) == len(set(migration.dropped))
    text = to_toml(migration.config)
    assert tomllib.loads(text)["sweep"]["sample"]["brain.delta_t"] == values


def test_alternative_tables_are_rebuilt_from_what_changed() -> None:
    brains = [{"type": "CTRNN", "number_neurons": 3, "delta_t": 0.05},
              {"type": "FeedForward_NumPy", "hidden_layers": [[4]], "use_bias": False},
              {"type": "CTRNN", "number_neurons": 6, "delta_t": 0.05}]
    sample = migrate_config({**CTRNN_CMA, "brain": brains}).config["sweep"]["sample"]
    # each choice is what migrating that alternative alone makes of the brain table
    alone = [migrate_config({**CTRNN_CMA, "brain": brain}).config["brain"] for brain in brains]
    assert sample == {"brain": alone}


def test_a_pooling_stride_of_zero_is_one_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(tmp_path, CNN_CTRNN, capsys)
    assert "pool_stride" in line and "old.json" in line


def test_deep_nesting_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep: Any = 1
    for _ in range(500):
        deep = {"k": deep}
    old = copy.deepcopy(CTRNN_CMA)
    old["brain"]["extra"] = deep
    line = refused(tmp_path, old, capsys)
    assert f"nested more than {MAX_DEPTH} deep" in line and "brain.extra.k.k" in line
    listed: Any = 1
    for _ in range(MAX_DEPTH + 1):
        listed = [listed]
    with pytest.raises(UserError, match="nested more than"):
        migrate_config({**CTRNN_CMA, "novelty": listed})


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_force_replaces_only_a_regular_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            kind: str) -> None:
    out = tmp_path / "out.toml"
    if kind == "fifo":
        os.mkfifo(out)
    else:
        out.mkdir()
    line = refused(tmp_path, CTRNN_CMA, capsys, "--out", str(out), "--force")
    assert str(out) in line and "not a regular file" in line
    assert out.is_fifo() if kind == "fifo" else out.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json", "out.toml"]


@pytest.mark.parametrize("environment,expected", [
    ("NoSuchEnvironment-v3", "NoSuchEnvironment"),
    ("Cart\U0001F600Pole", "Malformed environment ID"),
    ("Cart\ud83dPole", "environment: must be a valid string"),  # a lone surrogate
])
def test_an_environment_evo_train_refuses_is_refused(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     environment: str, expected: str) -> None:
    line = refused(tmp_path, {**CTRNN_CMA, "environment": environment}, capsys)
    assert expected in line and "(migrated)" in line


def test_a_design_space_with_an_unknown_environment_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(tmp_path, {**CTRNN_CMA, "environment": ["CartPole-v1", "NoSuchEnv-v0"]},
                   capsys)
    assert "NoSuchEnv" in line


def test_an_environment_whose_package_is_missing_is_a_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "old.json"
    source.write_text(json.dumps({**CTRNN_CMA, "environment": "evo_no_such_module:Env-v0"}))
    assert main(["migrate", str(source)]) == 0
    err = capsys.readouterr().err
    assert "note: environment 'evo_no_such_module:Env-v0' cannot be made on this machine" in err
    assert tomllib.loads(source.with_suffix(".toml").read_text())["environment"] == \
        "evo_no_such_module:Env-v0"


@pytest.mark.parametrize("text", ["Cart\U0001F600Pole", 'q"uote\\back', "tab\tnl\nnul\0del\x7f",
                                  "\u2028 é \U0010FFFF", ""])
def test_toml_strings_read_back_as_written(text: str) -> None:
    data = {"environment": text, "brain": {text or "k": [text], "t": {"x": text}}}
    assert tomllib.loads(to_toml(data)) == data


def test_a_lone_surrogate_has_no_toml_spelling() -> None:
    with pytest.raises(ValueError, match="lone surrogate U\\+D83D"):
        to_toml({"environment": "Cart\ud83dPole"})
    with pytest.raises(ValueError, match="lone surrogate U\\+DE00"):
        to_toml({"brain": {"\ude00": 1}})
