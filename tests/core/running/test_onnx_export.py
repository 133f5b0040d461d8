"""`evo export`: a champion as an ONNX model that onnxruntime steps as evo's `make()` brain does,
over 1,000 steps of real episodes (CartPole, Pendulum, Atari Q*bert frames), for the FFNN, the
LSTM, the CTRNN, the CNN and a CNN -> CTRNN chain; the observation normaliser in the model; and
the one-line refusals (a brain without an export, a brain that draws noise, no onnx)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import brain_plugin_source, evo_in_process

import evo_core
from evo_core import UserError, api
from evo_core.cli.main import main
from evo_core.config.schema import ExperimentConfig, validate_config
from evo_core.contract.observation_statistics import ObservationNormalizer, normalize
from evo_core.contract.protocols import IOnnxTemplate
from evo_core.environments import make_environment, probe_spaces
from evo_core.hooks.discovery import get_registry
from evo_core.running.experiment import build_template
from evo_core.running.export import MISSING_EXTRA, export_champion
from evo_core.running.replay import Champion
from evo_core.running.seeding import Streams

pytest.importorskip("onnx", reason="onnx is not installed (pip install 'evo-core[onnx]')")
onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip "
                                  "install 'evo-core[test]')")

STEPS = 1000
TOLERANCE = 1e-5
#: A small Q*bert: 32x32 RGB frames (gymnasium's Atari preprocessing, frame skip 4)
QBERT = {"id": "ALE/Qbert-v5", "kwargs": {"frameskip": 1, "repeat_action_probability": 0.0},
         "wrappers": [{"type": "atari-preprocessing", "screen_size": 32,
                       "grayscale_obs": False}]}
#: The predecessor's CNN front end (examples/qbert_cnn_ctrnn.toml), on 32x32 frames
CNN_LAYERS = [{"features": 3, "kernel_size": 3, "pool_size": 4, "pool_stride": 2},
              {"features": 3, "kernel_size": 5, "activation": "sigmoid", "pool_size": 4,
               "pool_stride": 2}]


class OnnxBrain:
    """An exported model stepped as its docs/export.md tells a user to: the state from the
    model's metadata at every episode's start, `state_out` fed back as `state_in`."""

    def __init__(self, model: Any) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1  # the tests' one core
        self.session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                                    providers=["CPUExecutionProvider"])
        metadata = self.session.get_modelmeta().custom_metadata_map
        self.initial = np.array(json.loads(metadata["evo.initial_state"]), dtype=np.float64)
        self.layout = json.loads(metadata["evo.state_layout"])
        self.names = [output.name for output in self.session.get_outputs()]
        self.kind = self.session.get_inputs()[0].type
        self.state = self.initial.copy()

    def reset(self) -> None:
        self.state = self.initial.copy()

    def step(self, observation: Any) -> Any:
        feed = {"observation": np.asarray(observation)}
        if self.layout:
            feed["state_in"] = self.state
        result = dict(zip(self.names, self.session.run(None, feed)))
        if self.layout:
            self.state = result["state_out"]
        return result["action"]


def evo_state(brain: Any, layout: list[dict[str, Any]]) -> np.ndarray:
    """The lone brain's state flattened in the model's layout."""
    if not layout:
        return np.zeros(0)
    return np.concatenate([np.asarray(brain.state[entry["name"]]).reshape(-1)
                           for entry in layout])


def agree(evo_action: Any, onnx_action: Any) -> float:
    """The largest difference of two actions (an int action must be the same int)."""
    expected = np.asarray(evo_action)
    got = np.asarray(onnx_action)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got, expected)
    if expected.dtype.kind in "iub":
        assert np.array_equal(got, expected)
        return 0.0
    return float(np.max(np.abs(got.astype(np.float64) - expected), initial=0.0))


def play(env: gym.Env[Any, Any], brain: Any, exported: OnnxBrain, *, seed: int = 0,
         normalizer: ObservationNormalizer | None = None) -> tuple[float, float, int]:
    """`STEPS` steps of back-to-back episodes, the environment stepped with evo's actions and
    both brains given its raw observations (evo's normalised as its episodes normalise them):
    the largest action and state differences, and the number of episodes."""
    worst_action = worst_state = 0.0
    observation, _ = env.reset(seed=seed)
    brain.reset()
    exported.reset()
    episodes = 1
    for _ in range(STEPS):
        seen = observation if normalizer is None else normalize(
            np, np.asarray(observation, np.float64).reshape(1, -1), normalizer.mean,
            normalizer.std, normalizer.clip).reshape(np.shape(observation))
        action = brain.step(seen)
        worst_action = max(worst_action, agree(action, exported.step(observation)))
        worst_state = max(worst_state, float(np.max(np.abs(
            evo_state(brain, exported.layout) - exported.state), initial=0.0)))
        observation, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            observation, _ = env.reset()
            brain.reset()
            exported.reset()
            episodes += 1
    env.close()
    return worst_action, worst_state, episodes


def champion_of(data: dict[str, Any], seed: int = 0,
                normalizer: ObservationNormalizer | None = None) -> Champion:
    """The champion of a config's template and a random genome, as a run would hold it."""
    registry = get_registry()
    config: ExperimentConfig = validate_config(
        {"generations": 1, "optimizer": {"type": "cma-es", "population_size": 4}, **data},
        registry, "test")
    _, template = build_template(config, registry, Streams.from_seed(config.seed))
    genome = np.random.default_rng(seed).normal(0.0, 0.5, template.genome_size)
    return Champion(config, template, genome, 1.0, normalizer)


def exported(champion: Champion) -> tuple[Any, OnnxBrain]:
    space = probe_spaces(champion.config.environment)[0]
    model = export_champion(champion, space, f"brain {champion.config.brain.type!r}",
                            "best genome")
    return model, OnnxBrain(model)


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory: pytest.TempPathFactory) -> api.Run:
    return api.train({"environment": "CartPole-v1", "seed": 1, "generations": 1,
                      "brain": {"type": "ffnn", "hidden_layers": [6, 5]},
                      "optimizer": {"type": "cma-es", "population_size": 4},
                      "episodes": {"max_steps": 20}},
                     out=tmp_path_factory.mktemp("export") / "run")


def test_the_api_exports_a_trained_ffnn_that_acts_as_its_champion(cartpole_run: api.Run,
                                                                   tmp_path: Path) -> None:
    path = cartpole_run.export(tmp_path / "ffnn.onnx")
    assert path == tmp_path / "ffnn.onnx"
    import onnx

    model = onnx.load(str(path))
    metadata = {entry.key: entry.value for entry in model.metadata_props}
    assert metadata["evo.genome"] == "best genome" and metadata["evo.brain"] == "ffnn"
    assert json.loads(metadata["evo.environment"]) == "CartPole-v1"  # as config.json has it
    assert (model.producer_name, model.producer_version) == ("evo", evo_core.__version__)
    brain = OnnxBrain(model)
    assert brain.layout == [] and brain.kind == "tensor(float)"  # CartPole's float32
    worst, _, episodes = play(gym.make("CartPole-v1"), cartpole_run.champion(), brain)
    assert worst == 0.0 and episodes > 1  # Discrete: the same action every step


def test_the_command_exports_a_hall_of_fame_member(cartpole_run: api.Run, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "second.onnx"
    assert main(["export", str(cartpole_run.path), "--hof", "2", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out)
    assert captured.err.startswith("exported the hall of fame rank 2 (fitness ")
    assert "inputs observation float32 (4,); outputs action int64 (), output float64 (2,)" \
        in captured.err
    import onnx

    brain = OnnxBrain(onnx.load(str(out)))
    worst, _, _ = play(gym.make("CartPole-v1"), cartpole_run.champion(hof=2), brain, seed=3)
    assert worst == 0.0
    assert main(["export", str(cartpole_run.path), "--hof", "9", "--out", str(out)]) == 2
    assert "--hof 9" in capsys.readouterr().err


def test_an_lstm_and_a_ctrnn_carry_their_state_through_the_model() -> None:
    lstm = champion_of({"environment": "Pendulum-v1", "brain": {
        "type": "lstm", "lstm_num_layers": 2, "hidden_size": 5}})
    _, brain = exported(lstm)
    assert [entry["name"] for entry in brain.layout] == ["h0", "c0", "h1", "c1"]
    worst_action, worst_state, _ = play(gym.make("Pendulum-v1"),
                                        lstm.template.make(lstm.genome), brain)
    assert worst_action < TOLERANCE and worst_state < TOLERANCE
    ctrnn = champion_of({"environment": "CartPole-v1", "brain": {
        "type": "ctrnn", "number_neurons": 7, "w_mask": "random", "w_mask_param": 0.5,
        "v_mask": "logarithmic", "v_mask_param": 2, "time_constants": True,
        "optimize_state_boundaries": "legacy", "bounds_offset": 1.0}}, seed=4)
    _, brain = exported(ctrnn)
    start = ctrnn.template.make(ctrnn.genome)
    assert np.array_equal(brain.initial, evo_state(start, brain.layout))  # y0, from the genes
    worst_action, worst_state, episodes = play(gym.make("CartPole-v1"), start, brain)
    assert worst_action == 0.0 and worst_state < TOLERANCE and episodes > 1


def test_the_observation_normaliser_is_in_the_model() -> None:
    """Raw observations in, the action of the brain that saw them normalised and clipped."""
    normalizer = ObservationNormalizer(np.array([0.5, -0.2, 1.0]), np.array([0.4, 0.9, 2.0]),
                                       clip=1.5)
    champion = champion_of({"environment": "Pendulum-v1", "brain": {
        "type": "ctrnn", "number_neurons": 5, "optimize_state_boundaries": "per_neuron"},
        "episodes": {"observation_normalization": "running", "observation_clip": 1.5}},
        normalizer=normalizer)
    model, brain = exported(champion)
    metadata = {entry.key: entry.value for entry in model.metadata_props}
    assert metadata["evo.observation_normalization"].startswith("running: in the model")
    worst_action, worst_state, _ = play(gym.make("Pendulum-v1"),
                                        champion.template.make(champion.genome), brain,
                                        normalizer=normalizer)
    assert worst_action < TOLERANCE and worst_state < TOLERANCE
    # the same genome without the normaliser acts otherwise: the model did normalise
    plain = champion_of({"environment": "Pendulum-v1", "brain": {
        "type": "ctrnn", "number_neurons": 5, "optimize_state_boundaries": "per_neuron"}})
    _, unnormalised = exported(plain)
    observation = np.array([0.9, 0.3, -4.0], dtype=np.float32)
    assert not np.allclose(brain.step(observation), unnormalised.step(observation))


@pytest.fixture(scope="module")
def qbert_frames() -> list[tuple[np.ndarray, bool]]:
    """`STEPS` frames of Q*bert episodes played with seeded random actions, each with whether
    it starts an episode."""
    pytest.importorskip("ale_py", reason="ale-py is not installed (pip install "
                        "'evo-core[atari]')")
    config = champion_of({"environment": QBERT, "brain": {"type": "cnn", "layers": CNN_LAYERS}})
    env = make_environment(config.config.environment)
    rng = np.random.default_rng(0)
    frame, _ = env.reset(seed=0)
    frames = [(frame, True)]
    while len(frames) < STEPS:
        frame, _, terminated, truncated, _ = env.step(int(rng.integers(6)))
        if terminated or truncated:
            frame, _ = env.reset()
        frames.append((frame, terminated or truncated))
    env.close()
    return frames


def watch(frames: list[tuple[np.ndarray, bool]], champion: Champion) -> tuple[float, int]:
    """Both brains on the frames: the largest state difference, and the actions that agree."""
    brain = champion.template.make(champion.genome)
    _, onnx_brain = exported(champion)
    worst = 0.0
    for frame, starts in frames:
        if starts:
            brain.reset()
            onnx_brain.reset()
        assert agree(brain.step(frame), onnx_brain.step(frame)) == 0.0
        worst = max(worst, float(np.max(np.abs(
            evo_state(brain, onnx_brain.layout) - onnx_brain.state), initial=0.0)))
    return worst, len(frames)


def test_a_cnn_on_qbert_frames(qbert_frames: list[tuple[np.ndarray, bool]]) -> None:
    champion = champion_of({"environment": QBERT, "brain": {"type": "cnn",
                                                            "layers": CNN_LAYERS}})
    assert watch(qbert_frames, champion) == (0.0, STEPS)


def test_a_cnn_ctrnn_chain_on_qbert_frames(qbert_frames: list[tuple[np.ndarray, bool]]
                                           ) -> None:
    """The chain of examples/qbert_cnn_ctrnn.toml on smaller frames: pixels in, the chain's
    state (the CTRNN's, and the features it got) carried, Q*bert's action out."""
    champion = champion_of({"environment": QBERT, "brain": {"type": "chain", "stages": [
        {"type": "cnn", "readout": "none", "output_size": 48, "layers": CNN_LAYERS},
        {"type": "ctrnn", "number_neurons": 8, "neuron_activation": "relu", "delta_t": 0.1,
         "v_mask": "logarithmic", "v_mask_param": 2, "w_mask": "logarithmic",
         "w_mask_param": 4}]}}, seed=2)
    worst, steps = watch(qbert_frames, champion)
    assert worst < TOLERANCE and steps == STEPS


def test_a_brain_that_draws_noise_is_refused_in_one_line() -> None:
    champion = champion_of({"environment": "CartPole-v1", "brain": {
        "type": "ctrnn", "number_neurons": 3, "parameter_perturbations": 0.1}})
    with pytest.raises(UserError) as raised:
        exported(champion)
    assert str(raised.value) == (
        "brain 'ctrnn' has no ONNX export for this run: CTRNNTemplate draws 3 random numbers "
        "per step from numpy Generators, which a model cannot repeat; export a brain that "
        "draws none (a CTRNN: brain.parameter_perturbations = 0)")


def test_a_brain_without_an_export_says_so_naming_its_plugin(tmp_path: Path) -> None:
    (tmp_path / "my_linear.py").write_text(textwrap.dedent(brain_plugin_source("my_linear")))
    (tmp_path / "c.json").write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 1, "generations": 1,
        "brain": {"type": "my_linear"}, "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"max_steps": 5}}))
    plugin = ["--plugin", "my_linear"]
    assert evo_in_process(*plugin, "train", "c.json", "--quiet", "--out", "run",
                          cwd=tmp_path).returncode == 0
    result = evo_in_process(*plugin, "export", "run", "--out", "m.onnx", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "evo: error: brain 'my_linear' (local module my_linear) has no ONNX export: its "
        "template is not written once (IArrayBrain) and declares no IOnnxTemplate; ask its "
        "author for one"]
    assert not (tmp_path / "m.onnx").exists()


def test_without_onnx_the_export_names_the_extra(cartpole_run: api.Run, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError
    out = tmp_path / "m.onnx"
    assert main(["export", str(cartpole_run.path), "--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"evo: error: {MISSING_EXTRA}"]
    assert MISSING_EXTRA.endswith("pip install 'evo-core[onnx]'")
    assert not out.exists()
    with pytest.raises(UserError, match=r"evo-core\[onnx\]"):
        cartpole_run.export(out)


def test_the_output_file_is_checked_before_the_run_is_opened(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    assert main(["export", str(tmp_path / "none"), "--out", str(tmp_path / "m.gif")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"evo: error: --out {tmp_path / 'm.gif'}: give a name ending in .onnx"


def test_the_derived_form_is_the_declared_capability() -> None:
    """The four brains and a chain of them are IArrayBrains: onnx_form derives their
    IOnnxTemplate; a template that declares it is its own form."""
    from evo_core.authoring.array_onnx import ArrayBrainOnnx, onnx_form

    champion = champion_of({"environment": "CartPole-v1", "brain": {"type": "ffnn"}})
    form = onnx_form(champion.template)
    assert isinstance(form, ArrayBrainOnnx) and isinstance(form, IOnnxTemplate)
    assert onnx_form(form) is form



@pytest.mark.parametrize("network", ["recurrent", "feedforward"])
def test_a_neat_champion_exports_its_own_topology(network: str, tmp_path: Path) -> None:
    """NEAT's brain is written once too: its dense sweeps (gathers, wheres, concatenations)
    export as they are; a feedforward network's sweeps unrolled, as JAX unrolls them."""
    run = api.train({"environment": "CartPole-v1", "seed": 2, "generations": 2,
                     "brain": {"type": "neat", "network": network},
                     "optimizer": {"type": "neat", "population_size": 10},
                     "episodes": {"max_steps": 30}}, out=tmp_path / "run")
    import onnx

    brain = OnnxBrain(onnx.load(str(run.export(tmp_path / "neat.onnx"))))
    worst_action, worst_state, _ = play(gym.make("CartPole-v1"), run.champion(), brain)
    assert worst_action == 0.0 and worst_state < TOLERANCE


class Declared:
    """A template that declares `IOnnxTemplate` itself, its model that of an FFNN less
    `dropped`, an output the interface requires."""

    def __init__(self, template: Any, dropped: str | None) -> None:
        self.template = template
        self.dropped = dropped

    @property
    def genome_size(self) -> int:
        return int(self.template.genome_size)

    def make(self, genome: np.ndarray) -> Any:
        return self.template.make(genome)

    def onnx_unsupported(self) -> str | None:
        return None

    def onnx_model(self, genome: np.ndarray) -> Any:
        from evo_core.authoring.array_onnx import ArrayBrainOnnx

        model = ArrayBrainOnnx(self.template).onnx_model(genome)
        kept = [value for value in model.graph.output if value.name != self.dropped]
        del model.graph.output[:]
        model.graph.output.extend(kept)
        return model


def test_a_declared_model_is_checked_against_the_interface() -> None:
    champion = champion_of({"environment": "CartPole-v1", "brain": {"type": "ffnn"}})
    space = probe_spaces(champion.config.environment)[0]
    declared = Champion(champion.config, Declared(champion.template, None), champion.genome,
                        1.0)
    assert isinstance(declared.template, IOnnxTemplate)
    worst, _, _ = play(gym.make("CartPole-v1"), champion.template.make(champion.genome),
                       OnnxBrain(export_champion(declared, space, "brain 'x'", "best genome")))
    assert worst == 0.0
    broken = Champion(champion.config, Declared(champion.template, "output"), champion.genome,
                      1.0)
    with pytest.raises(UserError) as raised:
        export_champion(broken, space, "brain 'x' (x 1.0)", "best genome")
    assert str(raised.value) == ("brain 'x' (x 1.0): its ONNX model has no output 'output' (it "
                                 "has action) (a bug in the plugin: report it to its author)")


def _tanh_by_numpy(template: Any, xp: Any, params: Any, inputs: Any) -> Any:
    return np.tanh(template.layers(xp, params, inputs)[-1])


def _clip_by_numpy(template: Any, xp: Any, params: Any, inputs: Any) -> Any:
    return np.clip(template.layers(xp, params, inputs)[-1], -1.0, 1.0)


def _sinh(template: Any, xp: Any, params: Any, inputs: Any) -> Any:
    return xp.sinh(template.layers(xp, params, inputs)[-1])


@pytest.mark.parametrize(("last", "said"), [
    (_tanh_by_numpy, "its step does what the graph's values do not: operand 'OnnxTensor' does "
     "not support ufuncs (__array_ufunc__=None); write it with its namespace xp"),
    (_clip_by_numpy, "the step calls numpy.clip on an array instead of xp.clip"),
    (_sinh, "the step calls xp.sinh, which evo's ONNX export does not translate")])
def test_a_step_the_graph_cannot_follow_is_named(last: Any, said: str) -> None:
    """A subclass of a brain written once whose step calls numpy itself, or a function of xp
    the graph has no node for: refused in one line, naming what."""
    from brain_ffnn import FFNNConfig, FFNNTemplate

    class Variant(FFNNTemplate):
        def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                    noise: Any) -> tuple[dict[str, Any], Any]:
            return state, last(self, xp, params, inputs)

    champion = champion_of({"environment": "CartPole-v1", "brain": {"type": "ffnn"}})
    template = Variant(FFNNConfig(), *probe_spaces("CartPole-v1"), np.random.default_rng(0))
    variant = Champion(champion.config, template, champion.genome, 1.0)
    with pytest.raises(UserError) as raised:
        export_champion(variant, probe_spaces("CartPole-v1")[0], "brain 'v' (v 1)", "best")
    assert str(raised.value) == f"brain 'v' (v 1) has no ONNX export: {said}"
