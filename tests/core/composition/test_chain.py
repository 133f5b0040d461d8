"""The chain brain: validation errors, genome layout, equality with its stages composed by hand,
per-episode randomness and template state reaching every stage, the conformance checks, a
stage from a local plugin module, and train / replay / resume."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import brain_plugin_source, evo_in_process, fitness_rows, npz, run_evo

from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core import IArrayBrain, IRandomBrain, IStatefulTemplate, check_brain
from evo_core.api import Run, resume, train
from evo_core.cli.main import main
from evo_core.composition.brain import ChainBrain
from evo_core.composition.config import ChainConfig
from evo_core.composition.template import ArrayChainTemplate, ChainTemplate
from evo_core.config.schema import experiment_model, validate_config
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry

OBSERVATION = gym.spaces.Box(-2, 2, (4,), np.float64)
ACTION: gym.spaces.Discrete[Any] = gym.spaces.Discrete(3)
FFNN_STAGE = {"type": "ffnn", "hidden_layers": [5], "output_size": 3}
CTRNN_STAGE = {"type": "ctrnn", "number_neurons": 4, "w_mask": "random", "w_mask_param": 0.5,
               "parameter_perturbations": 0.1}


def chain(*stages: dict[str, Any]) -> ChainConfig:
    return ChainConfig.model_validate({"type": "chain", "stages": list(stages)})


def config_errors(brain: dict[str, Any]) -> str:
    data = {"environment": "CartPole-v1", "generations": 1, "brain": brain,
            "optimizer": {"type": "cma-es", "population_size": 4}}
    with pytest.raises(UserError) as caught:
        validate_config(data, get_registry(), "c.toml")
    return str(caught.value)


def test_stage_errors_name_the_stage_and_field() -> None:
    text = config_errors({"type": "chain", "stages": [
        {"type": "ffnn", "hidden_layers": ["a"]},
        {"type": "ctrn", "output_size": 2},
        {"type": "chain", "output_size": 2},
        {"type": "ctrnn", "number_neurons": 0, "numbr_neurons": 1, "output_size": 3}]})
    lines = text.splitlines()
    assert "c.toml: brain.stages[0].output_size: every stage but the last needs output_size " \
        "(the length of the vector it hands to the next stage); this one has none" in text
    assert "c.toml: brain.stages[0].hidden_layers[0]: must be a valid integer" in text
    assert "c.toml: brain.stages[1].type: unknown brain type (did you mean 'ctrnn'?); " \
        "installed: cnn, ctrnn, ffnn, lstm" in text
    assert "c.toml: brain.stages[2].type: a chain cannot be a stage" in text
    assert "c.toml: brain.stages[3].number_neurons: must be greater than or equal to 1" in text
    assert any(line.startswith("c.toml: brain.stages[3].numbr_neurons: unknown key (did you mean "
                               "'number_neurons'?)") for line in lines)
    assert "c.toml: brain.stages[3].output_size: the last stage acts on the environment" in text
    assert len(lines) == 7, text


def test_chain_level_errors_are_one_line_each() -> None:
    assert config_errors({"type": "chain"}) .startswith("c.toml: brain.stages: required key")
    assert "brain.stages: must be a non-empty list" in config_errors(
        {"type": "chain", "stages": []})
    assert "brain.stages[0].output_size: must be an integer >= 1, got 0" in config_errors(
        {"type": "chain", "stages": [{**FFNN_STAGE, "output_size": 0}, CTRNN_STAGE]})
    assert "brain.normalize_input: a chain hands observations to its first stage unchanged" in \
        config_errors({"type": "chain", "normalize_input": True, "stages": [CTRNN_STAGE]})


def test_the_config_round_trips_through_json() -> None:
    config = chain(FFNN_STAGE, CTRNN_STAGE)
    dumped = config.model_dump(mode="json")
    assert dumped["stages"][0]["output_size"] == 3 and "output_size" not in dumped["stages"][1]
    assert dumped["stages"][1]["number_neurons"] == 4
    assert chain(*json.loads(json.dumps(dumped))["stages"]) == config
    stage = config.stages[0]
    assert isinstance(stage.config, FFNNConfig) and stage.template_class is FFNNTemplate


def hand_built(seed: int) -> tuple[FFNNTemplate, CTRNNTemplate]:
    """The stages as the chain must build them: each from its own child Generator."""
    front_rng, back_rng = np.random.default_rng(seed).spawn(2)
    middle = gym.spaces.Box(-1, 1, (3,), np.float64)
    front = FFNNTemplate(FFNNConfig(hidden_layers=[5]), OBSERVATION, middle, front_rng)
    back = CTRNNTemplate(CTRNNConfig(number_neurons=4, w_mask="random", w_mask_param=0.5,
                                     parameter_perturbations=0.1), middle, ACTION, back_rng)
    return front, back


def test_a_chain_equals_its_stages_stepped_by_hand() -> None:
    template = ChainTemplate(chain(FFNN_STAGE, CTRNN_STAGE), OBSERVATION, ACTION,
                             np.random.default_rng(7))
    front, back = hand_built(7)
    assert template.genome_size == front.genome_size + back.genome_size
    assert np.array_equal(template.stages[1].w_mask, back.w_mask)  # type: ignore[attr-defined]
    genome = np.random.default_rng(1).normal(0, 1, template.genome_size)
    brain = template.make(genome)
    first = front.make(genome[:front.genome_size])
    second: Any = back.make(genome[front.genome_size:])
    assert isinstance(brain, IRandomBrain)
    assert isinstance(back.make(genome[front.genome_size:]), IRandomBrain)
    observations = np.random.default_rng(2).uniform(-2, 2, (40, 4))
    for episode in range(2):  # the second after reset: state and noise start again
        brain.use_rng(np.random.default_rng(episode))
        brain.reset()
        second.use_rng(np.random.default_rng(episode).spawn(2)[1])
        second.reset()
        first.reset()
        for observation in observations:
            middle = first.step(observation)
            assert middle.shape == (3,) and np.all(np.abs(middle) <= 1)
            assert brain.step(observation) == second.step(middle)
        assert not np.array_equal(second.state["y"], second.params["y0"])


def test_template_state_is_the_stages_state_prefixed() -> None:
    config = chain(FFNN_STAGE, CTRNN_STAGE)
    trained = ChainTemplate(config, OBSERVATION, ACTION, np.random.default_rng(3))
    assert isinstance(trained, IStatefulTemplate)
    state = trained.saved_state()
    assert sorted(state) == ["stage1_t_mask", "stage1_v_mask", "stage1_w_mask"]
    fresh = ChainTemplate(config, OBSERVATION, ACTION, np.random.default_rng(4))
    assert not np.array_equal(fresh.saved_state()["stage1_w_mask"], state["stage1_w_mask"])
    restored = fresh.restore({name: np.array(value) for name, value in state.items()})
    assert np.array_equal(restored.saved_state()["stage1_w_mask"], state["stage1_w_mask"])
    genome = np.random.default_rng(5).normal(0, 1, trained.genome_size)
    observation = np.full(4, 0.5)
    a, b = trained.make(genome), restored.make(genome)
    for brain in (a, b):
        brain.use_rng(np.random.default_rng(0))
        brain.reset()
    assert [a.step(observation) for _ in range(10)] == [b.step(observation) for _ in range(10)]
    with pytest.raises(ValueError, match="stage0_w_mask, which no stateful stage"):
        fresh.restore({**state, "stage0_w_mask": state["stage1_w_mask"]})
    with pytest.raises(ValueError, match=r"brain.stages\[1\] \(ctrnn\): the saved template "
                       "state has no w_mask"):
        fresh.restore({"stage1_v_mask": state["stage1_v_mask"],
                       "stage1_t_mask": state["stage1_t_mask"]})


def test_building_errors_name_the_stage() -> None:
    with pytest.raises(ValueError, match=r"brain.stages\[0\] \(cnn\): readout = 'none' outputs "
                       r"the 720 features .* output_size = 720"):
        ChainTemplate(chain({"type": "cnn", "readout": "none", "output_size": 700},
                            CTRNN_STAGE), gym.spaces.Box(0, 255, (64, 64, 3), np.uint8),
                      ACTION, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"expected \(\d+,\): the stages' genomes"):
        ChainTemplate(chain(FFNN_STAGE, CTRNN_STAGE), OBSERVATION, ACTION,
                      np.random.default_rng(0)).make(np.zeros(3))


def test_a_cnn_ctrnn_chain_has_the_predecessor_sizes() -> None:
    template = ChainTemplate(
        chain({"type": "cnn", "readout": "none", "use_bias": False, "output_size": 720},
              {"type": "ctrnn", "number_neurons": 20}),
        gym.spaces.Box(0, 255, (64, 64, 3), np.uint8), gym.spaces.Discrete(9),
        np.random.default_rng(0))
    cnn, ctrnn = template.stages
    assert cnn.genome_size == 760
    assert ctrnn.input_size == 720  # type: ignore[attr-defined]
    assert isinstance(template, ArrayChainTemplate)  # no stage draws noise: written once
    brain = template.make(np.random.default_rng(0).normal(0, 0.1, template.genome_size))
    assert not isinstance(brain, IRandomBrain)  # so the runner makes it no Generator
    brain.reset()
    assert ACTION.contains(brain.step(np.zeros((64, 64, 3), np.uint8)) % 3)


def test_a_chain_passes_the_conformance_checks() -> None:
    report = check_brain(ChainTemplate, chain(FFNN_STAGE, CTRNN_STAGE))
    assert report.ok, str(report)
    assert "restore(saved_state()) makes identical brains" in [c.name for c in report.checks]


def test_evo_check_brain_chain_checks_every_installed_brain(capsys: Any) -> None:
    assert main(["list-brains", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["chain"]["distribution"] == "evo-core" and rows["chain"]["status"] == "ok"
    assert main(["check-brain", "chain"]) == 0
    out = capsys.readouterr().out
    assert "checking brain 'chain' of cnn -> ctrnn -> ffnn -> lstm (evo-core" in out
    assert "all checks passed" in out


def test_check_brain_takes_a_config_file(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"brain": {"type": "chain", "stages": [FFNN_STAGE,
                                                                       CTRNN_STAGE]}}))
    assert main(["check-brain", "chain", "--config", str(path)]) == 0
    assert f"brain 'chain' as configured in {path}" in capsys.readouterr().out
    path.write_text(json.dumps({"brain": {"type": "chain", "stages": [CTRNN_STAGE,
                                                                       CTRNN_STAGE]}}))
    assert main(["check-brain", "chain", "--config", str(path)]) == 2
    assert f"{path}: brain.stages[0].output_size: every stage" in capsys.readouterr().err


def test_a_brain_with_a_genome_layout_is_no_stage(tmp_path: Path) -> None:
    """A NEAT stage would be searched by any optimizer as part of one vector: one line."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"environment": "CartPole-v1", "generations": 1,
                                "brain": {"type": "chain", "stages": [
                                    {"type": "ffnn", "output_size": 4}, {"type": "neat"}]},
                                "optimizer": {"type": "cma-es", "population_size": 4}}))
    result = evo_in_process("train", str(path), "--out", str(tmp_path / "run"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "brain.stages[1] (neat): its genome has a layout that only its own optimizer" \
        in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_the_schema_describes_stages_as_any_installed_brain() -> None:
    schema = experiment_model(get_registry()).model_json_schema()
    stages = schema["$defs"]["ChainConfig"]["properties"]["stages"]
    # every installed brain validates as a stage (NEAT's is refused when built: its genome
    # has a layout that only its optimizer searches)
    assert set(stages["items"]["discriminator"]["mapping"]) == {"cnn", "ctrnn", "ffnn", "lstm",
                                                                 "neat"}
    stage = schema["$defs"]["CTRNNConfigStage"]["properties"]
    assert "output_size" in stage and "number_neurons" in stage


def test_train_replay_and_resume_a_chain(tmp_path: Path) -> None:
    config = {"environment": "CartPole-v1", "seed": 2, "generations": 2,
              "brain": {"type": "chain", "stages": [FFNN_STAGE, CTRNN_STAGE]},
              "optimizer": {"type": "cma-es", "population_size": 4},
              "episodes": {"max_steps": 30}}
    run = train(config, out=tmp_path / "run")
    saved = npz(run.path / "best.npz")
    assert {"template.stage1_w_mask", "template.stage1_v_mask"} <= set(saved)
    reopened = Run.open(run.path)
    template: Any = reopened.template()
    assert np.array_equal(template.stages[1].w_mask, saved["template.stage1_w_mask"])
    assert len(reopened.replay(episodes=1)) == 1
    resumed = resume(run.path, generations=3)
    assert len(fitness_rows(resumed.path)) == 3
    straight = train({**config, "generations": 3}, out=tmp_path / "straight")
    assert fitness_rows(straight.path) == fitness_rows(resumed.path)


@pytest.mark.slow
def test_a_chain_with_a_local_plugin_stage_trains_replays_and_resumes(tmp_path: Path) -> None:
    (tmp_path / "my_linear.py").write_text(textwrap.dedent(brain_plugin_source("my_linear")))
    (tmp_path / "c.json").write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 1, "generations": 2,
        "brain": {"type": "chain", "stages": [{"type": "my_linear", "output_size": 3},
                                              CTRNN_STAGE]},
        "optimizer": {"type": "mu-lambda", "population_size": 6, "mu": 2},
        "episodes": {"max_steps": 30}, "processing": {"type": "mp", "workers": 2}}))
    plugin = ["--plugin", "my_linear"]
    result = run_evo(*plugin, "train", "c.json", "--quiet", "--out", "run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    result = run_evo(*plugin, "replay", "run", "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 0 and "episode 1: return" in result.stderr, result.stderr
    result = run_evo(*plugin, "resume", "run", "--generations", "3", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(fitness_rows(tmp_path / "run")) == 3
    stages = json.loads((tmp_path / "run" / "config.json").read_text())["brain"]["stages"]
    assert stages[0] == {"type": "my_linear", "normalize_input": False,
                         "normalize_input_target": 1.0, "scale": 1.0, "output_size": 3}


def test_a_chain_of_brains_written_once_is_one() -> None:
    """Its lone brain acts as ChainBrain of its stages' brains bit for bit, traces included,
    and the checker finds its derived batch and JAX form equal to it; a stage with state noise
    keeps the chain a plain ChainTemplate (ChainBrain gives each stage its own Generator)."""
    quiet = {**CTRNN_STAGE, "parameter_perturbations": 0.0}
    template = ChainTemplate(chain(FFNN_STAGE, quiet), OBSERVATION, ACTION,
                             np.random.default_rng(0))
    assert isinstance(template, ArrayChainTemplate) and isinstance(template, IArrayBrain)
    genome = np.random.default_rng(1).normal(size=template.genome_size)
    lone = template.make(genome)
    stages = ChainBrain([stage.make(genome[start:end]) for stage, start, end in
                         zip(template.stages, template.offsets, template.offsets[1:])])
    lone.reset()
    stages.reset()
    OBSERVATION.seed(2)
    for _ in range(20):
        observation = OBSERVATION.sample()
        assert np.array_equal(np.asarray(lone.step(observation)),
                              np.asarray(stages.step(observation)))
    ours, theirs = lone.trace_state(), stages.trace_state()
    assert ours.keys() == theirs.keys()
    assert all(np.array_equal(ours[key], theirs[key]) for key in ours)
    report = check_brain(ChainTemplate, chain(FFNN_STAGE, quiet))
    assert any(check.name.startswith("batch rows act as make()") for check in report.checks)
    report.raise_for_failures()
    noisy = ChainTemplate(chain(FFNN_STAGE, CTRNN_STAGE), OBSERVATION, ACTION,
                          np.random.default_rng(0))
    assert type(noisy) is ChainTemplate
