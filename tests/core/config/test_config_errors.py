"""Malformed configs: one line naming the file and the field, exit status 2, no run folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evo_core.cli.main import main
from evo_core.config import validate_config
from evo_core.hooks.discovery import get_registry

GOOD = {
    "environment": "CartPole-v1",
    "seed": 1,
    "generations": 2,
    "brain": {"type": "ctrnn", "number_neurons": 3},
    "optimizer": {"type": "cma-es", "population_size": 4},
    "episodes": {"runs": 1, "max_steps": 20},
    "processing": {"type": "sequential"},
}


def variant(path: tuple[str, ...], value: object) -> dict[str, object]:
    config = json.loads(json.dumps(GOOD))
    table = config
    for key in path[:-1]:
        table = table[key]
    if value is DELETE:
        del table[path[-1]]
    else:
        table[path[-1]] = value
    return dict(config)


DELETE = object()

# (name, config change, text the single line must contain)
CASES = [
    ("unknown top key", (("generatoins",), 5),
     "generatoins: unknown key (did you mean 'generations'?)"),
    ("missing generations", (("generations",), DELETE), "generations: required key is missing"),
    ("missing environment", (("environment",), DELETE), "environment: required key is missing"),
    ("generations zero", (("generations",), 0),
     "generations: must be greater than or equal to 1, got 0"),
    ("generations string", (("generations",), "ten"), "generations: must be a valid integer"),
    ("negative seed", (("seed",), -1), "seed: must be greater than or equal to 0, got -1"),
    ("unknown brain type", (("brain", "type"), "ctrn"),
     "brain.type: unknown brain type 'ctrn' (did you mean 'ctrnn'?); installed: "),
    ("missing brain type", (("brain", "type"), DELETE), "brain.type: missing; set it to one of:"),
    ("brain field typo", (("brain", "number_neuron"), 3),
     "brain.number_neuron: unknown key (did you mean 'number_neurons'?)"),
    ("neurons zero", (("brain", "number_neurons"), 0),
     "brain.number_neurons: must be greater than or equal to 1, got 0"),
    ("bad activation", (("brain", "neuron_activation"), "sigmoid"),
     "brain.neuron_activation: must be 'relu' or 'tanh', got 'sigmoid'"),
    ("bad boundaries", (("brain", "optimize_state_boundaries"), "perneuron"),
     "brain.optimize_state_boundaries: must be"),
    ("bad delta_t", (("brain", "delta_t"), 0), "brain.delta_t: must be greater than 0, got 0"),
    ("random mask param", (("brain", "w_mask"), "random"),
     "w_mask_param must be a probability in (0, 1] for a random mask, got 0.0"),
    ("unknown mask", (("brain", "v_mask"), "sparse"),
     "brain.v_mask: must be 'dense', 'random', 'logarithmic' or 'learned', got 'sparse'"),
    ("brain not a table", (("brain",), "ctrnn"), "brain: must be a table"),
    ("unknown optimizer", (("optimizer", "type"), "cmaes"),
     "optimizer.type: unknown optimizer type 'cmaes' (did you mean 'cma-es'?)"),
    ("population one", (("optimizer", "population_size"), 1),
     "optimizer.population_size: must be greater than or equal to 2, got 1"),
    ("missing population", (("optimizer", "population_size"), DELETE),
     "optimizer.population_size: required key is missing"),
    ("sigma negative", (("optimizer", "sigma"), -0.1),
     "optimizer.sigma: must be greater than 0, got -0.1"),
    ("mu too large", (("optimizer", "mu"), 9),
     "optimizer: mu (9) must not exceed population_size (4)"),
    ("episodes typo", (("episodes", "run"), 2), "episodes.run: unknown key (did you mean 'runs'?)"),
    ("runs zero", (("episodes", "runs"), 0),
     "episodes.runs: must be greater than or equal to 1, got 0"),
    ("seed_per", (("episodes", "seed_per"), "episode"),
     "episodes.seed_per: must be 'generation' or 'candidate', got 'episode'"),
    ("unknown handler", (("processing", "type"), "threads"),
     "processing.type: unknown processing type 'threads'"),
    ("bool as int", (("brain", "use_bias"), "maybe"), "brain.use_bias: must be a valid boolean"),
]


@pytest.mark.parametrize("name,change,expected", CASES, ids=[c[0] for c in CASES])
def test_malformed_config(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                          change: tuple[tuple[str, ...], object], expected: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(variant(*change)))
    out = tmp_path / "run"
    assert main(["train", str(path), "--out", str(out), "--quiet"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"evo: error: {path}: ")
    assert expected in lines[0]
    assert "Traceback" not in captured.err
    assert not out.exists()


@pytest.mark.parametrize("text,expected", [
    ("environment = 'CartPole-v1'\ngenerations = [\n", "invalid TOML"),
    ("[brain\n", "invalid TOML"),
])
def test_unparsable_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                         expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert main(["train", str(path), "--quiet", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and expected in err[0]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("name,expected", [
    ("missing.toml", "no such file"),
    ("config.yaml", "unknown config format '.yaml'"),
])
def test_bad_config_path(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                         expected: str) -> None:
    assert main(["train", str(tmp_path / name), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0] and name in err[0]


def test_invalid_json_names_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"environment": "CartPole-v1",\n "seed": }')
    assert main(["train", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "invalid JSON at line 2" in err and str(path) in err


def test_unknown_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(variant(("environment",), "CartPol-v1")))
    assert main(["train", str(path), "--quiet", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CartPol" in err[0] and "CartPole" in err[0]
    assert not (tmp_path / "run").exists()


def test_bad_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(GOOD))
    assert main(["train", str(path), "--quiet", "--set", "brain.number_neurons"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
    assert main(["train", str(path), "--quiet", "--set", "brain.number_neurons=-2",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "brain.number_neurons" in err[0]
    assert not (tmp_path / "run").exists()


def test_existing_out_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(GOOD))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "keep.txt").write_text("mine")
    assert main(["train", str(path), "--quiet", "--out", str(tmp_path / "run")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["keep.txt"]


def test_usage_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["train"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "config" in err[0]


def test_environment_from_a_missing_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(variant(("environment",), "no_such_package:Thing-v0")))
    assert main(["train", str(path), "--quiet", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no_such_package" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "run").exists()


def test_contract_keys_of_every_processing_type_validate() -> None:
    """The README's contract: `processing` has `type` and `workers` (and `address` for dask)."""
    from evo_core.config import validate_config
    from evo_core.hooks.discovery import get_registry

    for processing in ({"type": "sequential", "workers": 4}, {"type": "mp", "workers": 2},
                       {"type": "dask", "workers": 2, "address": "tcp://127.0.0.1:8786"}):
        config = validate_config(dict(GOOD, processing=processing), get_registry(), "contract")
        assert config.processing.type == processing["type"]


NONFINITE_TOML = """\
environment = "CartPole-v1"
generations = 1
[brain]
type = "ctrnn"
number_neurons = 2
[optimizer]
type = "cma-es"
population_size = 4
[episodes]
max_steps = 5
"""


@pytest.mark.parametrize("line,override,expected", [
    ("max_steps_penalty = nan", None, "episodes.max_steps_penalty: must be a finite number"),
    ("nonfinite_penalty = -inf", None, "episodes.nonfinite_penalty: must be a finite number"),
    (None, "brain.delta_t=inf", "brain.delta_t: must be a finite number"),
    (None, "optimizer.sigma=inf", "optimizer.sigma: must be a finite number"),
    (None, "optimizer.initial_mean=nan", "optimizer.initial_mean: must be a finite number"),
    (None, "brain.normalize_input_target=+inf", "brain.normalize_input_target: must be a finite"),
], ids=["toml nan penalty", "toml -inf penalty", "set delta_t inf", "set sigma inf",
        "set initial_mean nan", "set normalize target inf"])
def test_nan_and_infinity_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      line: str | None, override: str | None,
                                      expected: str) -> None:
    """A NaN penalty used to run to exit 0 with every fitness NaN and no best.npz."""
    path = tmp_path / "config.toml"
    path.write_text(NONFINITE_TOML + (line + "\n" if line else ""))
    out = tmp_path / "run"
    extra = ["--set", override] if override else []
    assert main(["train", str(path), "--out", str(out), "--quiet", *extra]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    source = f"--set {override}" if override else str(path)  # the file or the command line
    assert lines[0].startswith(f"evo: error: {source}: ") and expected in lines[0]
    assert "NaN or infinite" in lines[0] and "Traceback" not in captured.err
    assert not out.exists()


def test_every_float_field_of_every_config_model_refuses_nan() -> None:
    """Plugins' models included: they inherit the rule from the core's base models."""
    import math

    from pydantic import ValidationError

    from evo_core.hooks.discovery import get_registry

    registry = get_registry()
    checked = 0
    for kind in ("brain", "optimizer", "processing"):
        for component in registry.components[kind].values():
            model = component.config_model
            for name, field in model.model_fields.items():
                if field.annotation not in (float, float | None):
                    continue
                for bad in (math.nan, math.inf, -math.inf):
                    data = {"type": component.name, "population_size": 4, name: bad}
                    if kind != "optimizer":
                        data.pop("population_size")
                    with pytest.raises(ValidationError, match="finite number"):
                        model.model_validate(data)
                checked += 1
    from evo_core.config.schema import EpisodesConfig

    for name in ("max_steps_penalty", "nonfinite_penalty"):
        with pytest.raises(ValidationError, match="finite number"):
            EpisodesConfig.model_validate({name: math.nan})
    assert checked >= 10


def test_a_json_key_given_twice_is_refused_naming_it(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """TOML refuses a key given twice; JSON would keep the last one silently."""
    path = tmp_path / "c.json"
    text = json.dumps(GOOD)
    path.write_text(text.replace('"number_neurons": 3', '"number_neurons": 3, "number_neurons": 9'))
    assert main(["train", str(path), "--quiet", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0], err
    assert "'number_neurons' is given twice" in err[0]
    assert not (tmp_path / "run").exists()


def _behaviour_schema(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The `[behaviour]` table of what `evo schema` prints."""
    assert main(["schema"]) == 0
    found: dict[str, Any] = json.loads(capsys.readouterr().out)["$defs"]["BehaviourConfig"]
    return found


def test_behaviour_max_length_is_required_alike_by_schema_and_validation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = _behaviour_schema(capsys)
    assert "max_length" not in schema.get("required", [])  # not with interval = "final"
    assert schema["if"] == {"properties": {"interval": {"const": "final"}},
                            "required": ["interval"]}
    assert schema["else"] == {"required": ["max_length"]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(dict(GOOD, behaviour={"source": "action"})))
    assert main(["train", str(path), "--quiet", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "behaviour.max_length: required key is missing" in err[0], err
    final = validate_config(dict(GOOD, behaviour={"source": "action", "interval": "final"}),
                            get_registry(), source="config")
    assert final.behaviour is not None and final.behaviour.windows == 1
