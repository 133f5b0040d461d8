"""Batched brains: encoders, decoders and every built-in brain act row for row as make() does."""

from __future__ import annotations

from typing import Any, Literal

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from brain_cnn import CNNConfig, CNNTemplate, ConvLayerConfig
from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from brain_ffnn import FFNNConfig, FFNNTemplate
from brain_lstm import LSTMConfig, LSTMTemplate
from evo_core import (
    ArrayBrainBatch,
    BrainConfig,
    BrainTemplateBase,
    GroupedArrayBrainBatch,
    IBatchTemplate,
    IGroupedArrayBrain,
    IRandomBrainBatch,
    IReloadableBatch,
    StackedBatch,
    action_decoder,
    array_batch,
    check_brain,
    observation_encoder,
)
from evo_core.authoring.batching import make_batch, split_rows, stack_rows
from evo_core.authoring.conformance import batch_mismatch

ROWS = 5

OBSERVATION_SPACES: dict[str, gym.Space[Any]] = {
    "box": spaces.Box(-2, 3, (4,), dtype=np.float32),
    "box-2d-partly-unbounded": spaces.Box(
        np.array([[-1, -np.inf, 0], [-5, -3, -np.inf]]),
        np.array([[1, np.inf, 10], [5, 3, np.inf]]), dtype=np.float64),
    "discrete": spaces.Discrete(4, start=-1),
    "multidiscrete": spaces.MultiDiscrete(np.array([[2, 3], [4, 2]]),
                                          start=np.array([[0, 1], [-1, 0]])),
    "multibinary": spaces.MultiBinary([2, 3]),
    "tuple": spaces.Tuple((spaces.Discrete(3), spaces.Box(-1, 1, (2,), dtype=np.float32))),
    "dict": spaces.Dict({"a": spaces.MultiDiscrete([3, 2]),
                         "b": spaces.Box(0, 4, (3,), dtype=np.float64)}),
    "image": spaces.Box(0, 255, (14, 12, 3), dtype=np.uint8),
    "image-gray": spaces.Box(-1, 1, (12, 13), dtype=np.float32),
}
ACTION_SPACES: dict[str, gym.Space[Any]] = {
    "discrete": spaces.Discrete(3, start=2),
    "box": spaces.Box(np.array([-2.0, 0.0]), np.array([2.0, 10.0]), dtype=np.float32),
    "box-unbounded-2d": spaces.Box(-np.inf, np.inf, (2, 2), dtype=np.float64),
    "box-half-bounded": spaces.Box(np.array([-1.0, -np.inf]), np.array([1.0, 5.0]),
                                   dtype=np.float64),
    "multidiscrete": spaces.MultiDiscrete([2, 3, 4], start=[1, 0, -2]),
    "multibinary": spaces.MultiBinary(3),
    "tuple": spaces.Tuple((spaces.Discrete(2), spaces.Box(-1, 1, (2,), dtype=np.float32))),
    "dict": spaces.Dict({"x": spaces.MultiBinary(2), "y": spaces.Discrete(4)}),
}


def equal_actions(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal_actions(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(equal_actions(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(np.asarray(a), np.asarray(b))) and \
        np.asarray(a).dtype == np.asarray(b).dtype


# ----------------------------------------------------------------- spaces


@pytest.mark.parametrize("name", list(OBSERVATION_SPACES))
@pytest.mark.parametrize("target", [None, 1.5])
def test_batched_encoding_is_the_rows_encodings(name: str, target: float | None) -> None:
    space = OBSERVATION_SPACES[name]
    encoder = observation_encoder(space, target)
    batched = gym.vector.utils.batch_space(space, ROWS)
    batched.seed(3)
    observations = batched.sample()
    encoded = encoder.batch(observations)
    assert encoded.shape == (ROWS, encoder.size) and encoded.dtype == np.float64
    rows = split_rows(space, observations)
    assert np.array_equal(encoded, np.stack([encoder(row) for row in rows]))
    into = np.empty(encoder.size)
    for row, observation in enumerate(rows):
        encoder.into(observation, into)
        assert np.array_equal(encoded[row], into)
    encoded[:] = 7.0  # the batch is the caller's own: the observations are untouched
    assert np.array_equal(encoder.batch(observations), np.stack([encoder(r) for r in rows]))


@pytest.mark.parametrize("name", list(ACTION_SPACES))
def test_batched_decoding_is_the_rows_actions(name: str) -> None:
    space = ACTION_SPACES[name]
    decoder = action_decoder(space)
    outputs = np.random.default_rng(4).normal(0, 2, (ROWS, decoder.size))
    outputs[0] = 0.0  # ties: argmax takes the first, in both
    actions = decoder.batch(outputs)
    expected = [decoder(output) for output in outputs]
    assert equal_actions(actions, stack_rows(space, expected))
    for action in split_rows(space, actions):
        assert space.contains(action)


# ----------------------------------------------------------------- brains

PAIRS = [("box", "discrete"), ("box-2d-partly-unbounded", "box"), ("discrete", "multidiscrete"),
         ("tuple", "box-unbounded-2d"), ("dict", "dict"), ("multibinary", "tuple"),
         ("multidiscrete", "box-half-bounded"), ("box", "multibinary")]

CTRNN_OPTIONS: list[dict[str, Any]] = [
    {},
    {"neuron_activation": "relu", "neuron_activation_inplace": True, "use_bias": False},
    {"optimize_y0": False, "optimize_state_boundaries": "per_neuron", "time_constants": True},
    {"optimize_state_boundaries": "legacy", "set_principle_diagonal_elements_of_W_negative": False,
     "normalize_input": True, "normalize_input_target": 2.0},
    {"optimize_state_boundaries": "fixed", "clipping_range_min": -0.5, "clipping_range_max": 2.0,
     "parameter_perturbations": 0.3},
    {"v_mask": "random", "v_mask_param": 0.5, "w_mask": "logarithmic", "w_mask_param": 1.5,
     "t_mask": "learned", "t_mask_param": 40.0, "parameter_perturbations": 0.05,
     "neuron_activation_inplace": True, "time_constants": True},
    {"optimize_state_boundaries": "global", "bounds_offset": 1.0},
    {"optimize_state_boundaries": "per_neuron", "bounds_offset": 0.5},
]


def build(cls: Any, config: BrainConfig, pair: tuple[str, str]) -> Any:
    return cls(config, OBSERVATION_SPACES[pair[0]], ACTION_SPACES[pair[1]],
               np.random.default_rng(1))


def check_rows(template: Any, pair: tuple[str, str], seed: int) -> None:
    """Rows of distinct genomes and of one genome (a candidate's episodes) alike."""
    rng = np.random.default_rng(seed)
    distinct = rng.normal(0, 1.5, (int(rng.integers(1, 5)), template.genome_size))
    genomes = distinct[rng.integers(0, len(distinct), int(rng.integers(1, 7)))]
    problem = batch_mismatch(template, genomes, OBSERVATION_SPACES[pair[0]],
                             ACTION_SPACES[pair[1]], seed=seed, steps=30)
    assert problem is None


def check_array_rows(template: Any, pair: tuple[str, str], seed: int) -> None:
    """`check_rows` of an `IArrayBrain`, whose batch is the core's derived one: grouped for
    an `IGroupedArrayBrain`."""
    kind = GroupedArrayBrainBatch if isinstance(template, IGroupedArrayBrain) else \
        ArrayBrainBatch
    assert isinstance(make_batch(template, np.zeros((2, template.genome_size)),
                                 OBSERVATION_SPACES[pair[0]], ACTION_SPACES[pair[1]]), kind)
    check_rows(template, pair, seed)


@pytest.mark.parametrize("options", CTRNN_OPTIONS)
@pytest.mark.parametrize("pair", PAIRS)
def test_ctrnn_batch_rows_act_as_make(options: dict[str, Any], pair: tuple[str, str]) -> None:
    neurons = 1 + sum(map(ord, str(options) + str(pair))) % 9  # a varied size per case
    template = build(CTRNNTemplate, CTRNNConfig(number_neurons=neurons, **options), pair)
    batch = make_batch(template, np.zeros((2, template.genome_size)),
                       OBSERVATION_SPACES[pair[0]], ACTION_SPACES[pair[1]])
    assert isinstance(batch, GroupedArrayBrainBatch)
    # only a noisy batch takes Generators (the runner makes none for the others)
    assert isinstance(batch, IRandomBrainBatch) == bool(options.get("parameter_perturbations"))
    check_rows(template, pair, seed=neurons)


@pytest.mark.parametrize("config", [
    FFNNConfig(), FFNNConfig(hidden_layers=[], use_bias=False),
    FFNNConfig(hidden_layers=[7, 3], non_linearity="relu", output_activation="linear",
               normalize_input=True)])
@pytest.mark.parametrize("pair", PAIRS)
def test_ffnn_batch_rows_act_as_make(config: FFNNConfig, pair: tuple[str, str]) -> None:
    check_array_rows(build(FFNNTemplate, config, pair), pair, seed=len(config.hidden_layers))


@pytest.mark.parametrize("config", [
    LSTMConfig(), LSTMConfig(lstm_num_layers=3, use_bias=False),
    LSTMConfig(lstm_num_layers=2, hidden_size=6, normalize_input=True)])
@pytest.mark.parametrize("pair", PAIRS)
def test_lstm_batch_rows_act_as_make(config: LSTMConfig, pair: tuple[str, str]) -> None:
    check_array_rows(build(LSTMTemplate, config, pair), pair, seed=config.lstm_num_layers)


CNN_LAYERS = [ConvLayerConfig(features=3, kernel_size=3, pool_size=2),
              ConvLayerConfig(features=2, kernel_size=2, stride=2, activation="sigmoid",
                              pool_size=2, pool_stride=1)]


@pytest.mark.parametrize("config", [
    CNNConfig(layers=CNN_LAYERS), CNNConfig(layers=CNN_LAYERS[:1], use_bias=False),
    CNNConfig(layers=[ConvLayerConfig(features=4, kernel_size=2, activation="tanh")],
              normalize_input=True)])
@pytest.mark.parametrize("pair", [("image", "discrete"), ("image-gray", "box"),
                                  ("image", "box-unbounded-2d"), ("image-gray", "tuple")])
def test_cnn_batch_rows_act_as_make(config: CNNConfig, pair: tuple[str, str]) -> None:
    check_array_rows(build(CNNTemplate, config, pair), pair, seed=len(config.layers))


@pytest.mark.parametrize("name", ["image", "image-gray"])
def test_cnn_features_out_batch_rows_act_as_make(name: str) -> None:
    """readout = 'none': the features themselves are the outputs (a chain's first stage)."""
    observation_space = OBSERVATION_SPACES[name]
    config = CNNConfig(layers=CNN_LAYERS, readout="none")
    probe = CNNTemplate(config.model_copy(update={"readout": "tanh"}), observation_space,
                        ACTION_SPACES["box"], np.random.default_rng(1))
    action_space = spaces.Box(-1, 1, (probe.feature_count,), dtype=np.float64)
    template = CNNTemplate(config, observation_space, action_space, np.random.default_rng(1))
    genomes = np.random.default_rng(2).normal(0, 1.5, (4, template.genome_size))
    assert batch_mismatch(template, genomes, observation_space, action_space, seed=2,
                          steps=10) is None


@pytest.mark.parametrize(("cls", "config"), [
    (CTRNNTemplate, CTRNNConfig(number_neurons=4)), (FFNNTemplate, FFNNConfig()),
    (LSTMTemplate, LSTMConfig(hidden_size=3))])
def test_a_lone_brain_keeps_its_genome_when_the_array_is_written_after(
        cls: Any, config: BrainConfig) -> None:
    """An optimizer may reuse the array it asked with; the brain made from it stays."""
    template = build(cls, config, ("box", "box"))
    genome = np.random.default_rng(3).normal(0, 1, template.genome_size)
    kept, reused = template.make(genome.copy()), template.make(genome)
    genome[:] = 0.0
    observation = np.full(4, 0.5, dtype=np.float32)
    assert np.array_equal(kept.step(observation), reused.step(observation))


def test_noise_reaches_each_row_from_its_own_generator() -> None:
    """A noisy CTRNN row draws from the Generator given for that row alone: the same genome in
    two rows with different Generators acts differently, with equal ones identically."""
    template = build(CTRNNTemplate, CTRNNConfig(number_neurons=4, parameter_perturbations=0.5),
                     ("box", "box"))
    genome = np.random.default_rng(0).normal(0, 1, template.genome_size)
    batch = make_batch(template, np.stack([genome] * 3), OBSERVATION_SPACES["box"],
                       ACTION_SPACES["box"])
    assert isinstance(batch, IRandomBrainBatch)
    batch.use_rngs([np.random.default_rng(1), np.random.default_rng(2), np.random.default_rng(1)])
    batch.reset()
    observations = np.zeros((3, 4), dtype=np.float32)
    actions = np.stack([batch.step(observations) for _ in range(5)])
    assert np.array_equal(actions[:, 0], actions[:, 2])
    assert not np.array_equal(actions[:, 0], actions[:, 1])


def test_a_masked_reset_touches_only_its_rows() -> None:
    template = build(LSTMTemplate, LSTMConfig(), ("box", "box"))
    genomes = np.random.default_rng(2).normal(0, 1, (3, template.genome_size))
    batch = array_batch(template, genomes)
    observations = np.ones((3, 4), dtype=np.float32)
    for _ in range(3):
        batch.step(observations)
    before = batch.state["h0"].copy()
    batch.reset(np.array([False, True, False]))
    assert np.array_equal(batch.state["h0"][[0, 2]], before[[0, 2]])
    assert not batch.state["h0"][1].any() and not batch.state["c0"][1].any()


# ----------------------------------------------------------------- the generic fallback


class LinearConfig(BrainConfig):
    """A linear policy with optional noise, and no make_batch: the fallback's test brain."""

    type: Literal["linear-test"] = "linear-test"
    noise: float = 0.0


class NoisyLinear:
    def __init__(self, w: np.ndarray, template: LinearTemplate) -> None:
        self.w, self.t = w, template
        self.rng = np.random.default_rng(0)
        self.steps = 0

    def use_rng(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def reset(self) -> None:
        self.steps = 0

    def step(self, observation: Any) -> Any:
        self.steps += 1
        noise = self.rng.normal(0, self.t.config.noise, self.t.output_size) \
            if self.t.config.noise else 0.0
        return self.t.decoder(np.tanh(self.w @ self.t.encoder(observation) + noise + self.steps))


class LinearTemplate(BrainTemplateBase[LinearConfig]):
    config_model = LinearConfig

    @property
    def genome_size(self) -> int:
        return self.input_size * self.output_size

    def build(self, genome: np.ndarray) -> NoisyLinear:
        return NoisyLinear(genome.reshape(self.output_size, self.input_size), self)


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("noise", [0.0, 0.4])
def test_the_stacked_fallback_acts_as_make(pair: tuple[str, str], noise: float) -> None:
    observation_space, action_space = OBSERVATION_SPACES[pair[0]], ACTION_SPACES[pair[1]]
    template = LinearTemplate(LinearConfig(noise=noise), observation_space, action_space,
                              np.random.default_rng(0))
    assert not isinstance(template, IBatchTemplate)
    genomes = np.random.default_rng(5).normal(0, 1, (4, template.genome_size))
    batch = make_batch(template, genomes, observation_space, action_space)
    assert isinstance(batch, StackedBatch) and isinstance(batch, IRandomBrainBatch)

    class Offering(LinearTemplate):  # the checker's comparison, with the fallback as the batch
        def make_batch(self, genomes: np.ndarray) -> StackedBatch:
            return StackedBatch([self.make(g) for g in genomes], observation_space, action_space)

    offering = Offering(LinearConfig(noise=noise), observation_space, action_space,
                        np.random.default_rng(0))
    assert batch_mismatch(offering, genomes, observation_space, action_space, seed=3) is None


def test_make_batch_prefers_the_templates_own() -> None:
    template = build(LeakyFFNNTemplate, FFNNConfig(), ("box", "discrete"))
    batch = make_batch(template, np.zeros((2, template.genome_size)),
                       OBSERVATION_SPACES["box"], ACTION_SPACES["discrete"])
    assert isinstance(batch, LeakyBatch)


class Softsign(CTRNNTemplate):
    """A CTRNN variant that changes the step: another neuron activation."""

    def sigma(self, xp: Any, y: Any) -> Any:
        return y / (1.0 + xp.abs(y))


def test_a_subclass_that_changes_the_step_keeps_the_fast_batch() -> None:
    config = CTRNNConfig(number_neurons=3, optimize_state_boundaries="fixed",
                         clipping_range_min=-10.0, clipping_range_max=10.0, delta_t=0.5)
    template = build(Softsign, config, ("box", "box"))
    batch = make_batch(template, np.zeros((2, template.genome_size)), OBSERVATION_SPACES["box"],
                       ACTION_SPACES["box"])
    assert isinstance(batch, GroupedArrayBrainBatch)  # `sigma` is elementwise, as the CTRNN's
    check_rows(template, ("box", "box"), seed=1)
    plain = build(CTRNNTemplate, config, ("box", "box"))
    genome = np.random.default_rng(2).normal(0, 2, template.genome_size)
    observation = np.ones(4)
    assert not np.array_equal(template.make(genome).step(observation),
                              plain.make(genome).step(observation))  # its own step ran


@pytest.mark.parametrize("kind", ["ctrnn", "ffnn"])
def test_a_subclass_that_decodes_its_own_way_is_decoded_its_own_way(kind: str) -> None:
    """A subclass that decodes genomes its own way gets batches of its own decoding, loaded
    rows included."""
    class Scaled(CTRNNTemplate):
        def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
            return super().params(xp, genomes * 0.5)

    class Made(FFNNTemplate):
        def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
            return super().params(xp, genomes * 0.5)

    cls, config = (Scaled, CTRNNConfig(number_neurons=4)) if kind == "ctrnn" else \
        (Made, FFNNConfig(hidden_layers=[3]))
    template = build(cls, config, ("box", "discrete"))
    check_rows(template, ("box", "discrete"), seed=3)


# ----------------------------------------------------------------- the conformance checker


def test_check_brain_compares_batches_with_make() -> None:
    report = check_brain(FFNNTemplate)
    names = [check.name for check in report.checks]
    assert any(name.startswith("batch rows act as make()") for name in names)
    report.raise_for_failures()


class LeakyBatch(ArrayBrainBatch):
    """Steps a shifted input."""

    def step(self, observations: Any) -> Any:
        template = self.template
        self.state, outputs = template.forward(
            np, self.params, self.state, template.encoder.batch(observations) + 1e-6, None)
        return template.decoder.batch(outputs)


class LeakyFFNNTemplate(FFNNTemplate):
    """An FFNN with a batch of its own (IBatchTemplate), which differs from make()."""

    def make_batch(self, genomes: np.ndarray) -> Any:
        good = array_batch(self, genomes)
        return LeakyBatch(good.template, good.params, good.start, good.state, good.rngs)


def test_check_brain_fails_a_batch_that_differs_from_make() -> None:
    report = check_brain(LeakyFFNNTemplate)
    failed = [check for check in report.failures()
              if check.name.startswith("batch rows act as make()")]
    assert failed and "row" in failed[0].message


# ----------------------------------------------------------------- loading genomes into rows


def assert_loaded_rows_act_as_make_batch(template: Any, pair: tuple[str, str],
                                         seed: int) -> None:
    """Rows 1 and 3 of a used batch loaded with other genomes act, after a reset, bit for bit
    as a batch made of the mixed genomes (and so as `make`), noise included."""
    observation_space, action_space = OBSERVATION_SPACES[pair[0]], ACTION_SPACES[pair[1]]
    rng = np.random.default_rng(seed)
    first = rng.normal(0, 1.5, (4, template.genome_size))
    loaded = rng.normal(0, 1.5, (2, template.genome_size))
    batch = make_batch(template, first, observation_space, action_space)
    assert isinstance(batch, IReloadableBatch)
    observation_space.seed(seed)
    observations = [stack_rows(observation_space, [observation_space.sample() for _ in range(4)])
                    for _ in range(12)]
    batch.reset()
    for observation in observations[:3]:
        batch.step(observation)  # state (and Generators) of the old genomes
    batch.load(np.array([1, 3], dtype=np.intp), loaded)
    mixed = first.copy()
    mixed[[1, 3]] = loaded
    fresh = make_batch(template, mixed, observation_space, action_space)
    for each in (batch, fresh):
        if isinstance(each, IRandomBrainBatch):
            each.use_rngs([np.random.default_rng(row) for row in range(4)])
        each.reset()
    for observation in observations:
        a, b = batch.step(observation), fresh.step(observation)
        for x, y in zip(split_rows(action_space, a), split_rows(action_space, b)):
            assert np.array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("options", CTRNN_OPTIONS)
def test_ctrnn_batch_loads_rows_as_make(options: dict[str, Any]) -> None:
    template = build(CTRNNTemplate, CTRNNConfig(number_neurons=5, **options), ("box", "box"))
    assert_loaded_rows_act_as_make_batch(template, ("box", "box"), seed=3)


@pytest.mark.parametrize("pair", PAIRS[:4])
def test_ffnn_and_lstm_batches_load_rows_as_make(pair: tuple[str, str]) -> None:
    for template in (build(FFNNTemplate, FFNNConfig(hidden_layers=[5, 3]), pair),
                     build(FFNNTemplate, FFNNConfig(hidden_layers=[], use_bias=False), pair),
                     build(LSTMTemplate, LSTMConfig(lstm_num_layers=2), pair),
                     build(LSTMTemplate, LSTMConfig(use_bias=False), pair)):
        assert_loaded_rows_act_as_make_batch(template, pair, seed=7)


@pytest.mark.parametrize("pair", [("image", "discrete"), ("image-gray", "box")])
def test_cnn_batch_loads_rows_as_make(pair: tuple[str, str]) -> None:
    template = build(CNNTemplate, CNNConfig(layers=CNN_LAYERS), pair)
    assert_loaded_rows_act_as_make_batch(template, pair, seed=5)


@pytest.mark.parametrize("noise", [0.0, 0.4])
def test_the_stacked_fallback_loads_rows_as_make(noise: float) -> None:
    pair = ("box", "box")
    template = LinearTemplate(LinearConfig(noise=noise), OBSERVATION_SPACES[pair[0]],
                              ACTION_SPACES[pair[1]], np.random.default_rng(0))
    assert_loaded_rows_act_as_make_batch(template, pair, seed=1)
    plain = StackedBatch([template.make(np.zeros(template.genome_size))],
                         OBSERVATION_SPACES[pair[0]], ACTION_SPACES[pair[1]])
    assert not isinstance(plain, IReloadableBatch)  # without make(): rows keep their genomes
