"""The JAX forms of CTRNN, FFNN, LSTM and CNN (IJaxTemplate) act as their numpy `make()` brains:
to 1e-6 in float32 and to 1e-12 in float64, on random shapes and every option they support."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import requires

from brain_cnn import CNNConfig, CNNTemplate
from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from brain_ffnn import FFNNConfig, FFNNTemplate
from brain_lstm import LSTMConfig, LSTMTemplate
from evo_core import check_brain, jax_form

pytestmark = requires("jax", reason="jax is not installed (pip install 'evo-core[jax]')")

STEPS = 6

CNN_LAYERS = [{"features": 3, "kernel_size": 3, "pool_size": 2},
              {"features": 2, "kernel_size": 2, "stride": 2, "activation": "sigmoid",
               "pool_size": 2, "pool_stride": 1}]

CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("ffnn", FFNNTemplate, {}),
    ("ffnn relu no bias", FFNNTemplate, {"hidden_layers": [5, 3], "non_linearity": "relu",
                                         "use_bias": False, "output_activation": "linear"}),
    ("ffnn linear map", FFNNTemplate, {"hidden_layers": [], "normalize_input": True}),
    ("lstm", LSTMTemplate, {}),
    ("lstm 2 layers, head", LSTMTemplate, {"lstm_num_layers": 2, "hidden_size": 5}),
    ("lstm no bias", LSTMTemplate, {"use_bias": False, "hidden_size": 3}),
    ("ctrnn", CTRNNTemplate, {"number_neurons": 6}),
    ("ctrnn random masks, per-neuron bounds", CTRNNTemplate, {
        "number_neurons": 7, "v_mask": "random", "v_mask_param": 0.5, "w_mask": "random",
        "w_mask_param": 0.4, "t_mask": "random", "t_mask_param": 0.7,
        "optimize_state_boundaries": "per_neuron", "bounds_offset": 1.0}),
    ("ctrnn logarithmic, legacy bounds, tau", CTRNNTemplate, {
        "number_neurons": 9, "v_mask": "logarithmic", "v_mask_param": 2.0,
        "w_mask": "logarithmic", "w_mask_param": 1.5, "t_mask": "logarithmic",
        "t_mask_param": 2.0, "optimize_state_boundaries": "legacy", "time_constants": True}),
    ("ctrnn learned, fixed bounds, relu in place", CTRNNTemplate, {
        "number_neurons": 5, "v_mask": "learned", "v_mask_param": 30.0, "w_mask": "learned",
        "w_mask_param": 50.0, "t_mask": "learned", "t_mask_param": 20.0,
        "optimize_state_boundaries": "fixed", "neuron_activation": "relu",
        "neuron_activation_inplace": True, "use_bias": False, "optimize_y0": False,
        "set_principle_diagonal_elements_of_W_negative": False}),
    ("cnn", CNNTemplate, {"layers": CNN_LAYERS}),
    ("cnn tanh, no bias, uint8", CNNTemplate, {"layers": [
        {"features": 4, "kernel_size": 2, "activation": "tanh", "pool_size": 3,
         "pool_stride": 2}], "use_bias": False}),
    # a linear last layer's features reach 1.1e-6 in float32 (sums of 18 float32 products):
    # the predecessor's front end ends in a sigmoid
    ("cnn features out", CNNTemplate, {"layers": [
        {"features": 2, "kernel_size": 3, "stride": 2, "activation": "linear"},
        {"features": 3, "kernel_size": 2, "activation": "sigmoid"}], "readout": "none"}),
]

#: CNN cases see images (uint8 where the name says so); "features out" has a Box of its features
IMAGE = (12, 12, 3)


def _spaces(rng: np.random.Generator) -> tuple[gym.Space[Any], gym.Space[Any]]:
    """Random sizes; bounded and unbounded observation dimensions, bounded Box actions."""
    inputs, outputs = int(rng.integers(1, 7)), int(rng.integers(1, 4))
    # unbounded as CartPole declares it: float32's largest value
    high = np.where(rng.random(inputs) < 0.5, 3.0, np.finfo(np.float32).max).astype(np.float32)
    observation = gym.spaces.Box(-high, high, (inputs,), dtype=np.float32)
    bound = np.float32(rng.uniform(0.5, 2.0))
    return observation, gym.spaces.Box(-bound, bound, (outputs,), dtype=np.float64)


def _image_spaces(rng: np.random.Generator, options: dict[str, Any], uint8: bool
                  ) -> tuple[gym.Space[Any], gym.Space[Any]]:
    """A 12x12x3 image and, for a CNN whose features are its outputs, a Box of them."""
    observation = gym.spaces.Box(0, 255, IMAGE, dtype=np.uint8) if uint8 else \
        gym.spaces.Box(-1.0, 1.0, IMAGE, dtype=np.float32)
    action = _spaces(rng)[1]
    if options.get("readout") == "none":
        probe = CNNTemplate(CNNConfig(**{**options, "readout": "tanh"}), observation, action,
                            rng)
        action = gym.spaces.Box(-1.0, 1.0, (probe.feature_count,), dtype=np.float64)
    return observation, action


def _build(cls: Any, options: dict[str, Any], seed: int, action: gym.Space[Any] | None = None,
           uint8: bool = False) -> tuple[Any, np.ndarray, np.random.Generator]:
    rng = np.random.default_rng(seed)
    observation_space, action_space = _image_spaces(rng, options, uint8) \
        if cls is CNNTemplate else _spaces(rng)
    template = cls(cls.config_model(**options), observation_space,
                   action if action is not None else action_space, rng)
    genome = rng.normal(0.0, 0.7, template.genome_size)
    return template, genome, rng


def _compare(template: Any, genome: np.ndarray, rng: np.random.Generator, dtype: Any
             ) -> float:
    """The largest difference between the numpy brain's and the JAX form's actions over STEPS
    random observations; the JAX side is one jitted function (one compile per case)."""
    space = template.observation_space
    brain = template.make(genome)
    form = jax_form(template)
    assert form is not None and form.jax_unsupported() is None
    brain.reset()
    observations = rng.integers(0, 256, (STEPS, *space.shape), dtype=np.uint8) \
        if space.dtype == np.uint8 else \
        rng.normal(0.0, 1.5, (STEPS, *space.shape)).astype(np.float32)
    expected = np.array([np.asarray(brain.step(o), dtype=np.float64) for o in observations])
    import jax
    import jax.numpy as jnp

    def episode(genes: Any, seen: Any) -> Any:
        params = form.jax_params(genes)

        def one(state: Any, observation: Any) -> tuple[Any, Any]:
            return form.jax_step(params, state, observation)

        return jax.lax.scan(one, form.jax_init_state(params), seen)[1]

    got = np.asarray(jax.jit(episode)(jnp.asarray(genome, dtype=dtype),
                                      jnp.asarray(observations)), dtype=np.float64)
    assert got.shape == expected.shape
    return float(np.max(np.abs(got - expected), initial=0.0))


@pytest.mark.parametrize(("name", "cls", "options"), CASES, ids=[c[0] for c in CASES])
def test_float32_matches_make(name, cls, options):
    template, genome, rng = _build(cls, options, 1, uint8="uint8" in name)
    assert _compare(template, genome, rng, np.float32) <= 1e-6


@pytest.mark.parametrize(("name", "cls", "options"), CASES, ids=[c[0] for c in CASES])
def test_float64_matches_make(name, cls, options):
    template, genome, rng = _build(cls, options, 3, uint8="uint8" in name)
    import jax

    with jax.enable_x64(True):
        assert _compare(template, genome, rng, np.float64) <= 1e-12


@pytest.mark.parametrize("cls", [FFNNTemplate, LSTMTemplate, CTRNNTemplate, CNNTemplate])
def test_discrete_actions_match_make(cls):
    """Argmax actions (CartPole's kind) are the numpy brain's, integer for integer."""
    options: dict[str, Any] = {"number_neurons": 4} if cls is CTRNNTemplate else \
        {"layers": CNN_LAYERS} if cls is CNNTemplate else {}
    template, genome, rng = _build(cls, options, 4, gym.spaces.Discrete(3))
    import jax

    with jax.enable_x64(True):
        assert _compare(template, genome, rng, np.float64) == 0.0


def test_ctrnn_refuses_state_noise_in_one_line():
    template, _, _ = _build(CTRNNTemplate, {"number_neurons": 3,
                                            "parameter_perturbations": 0.1}, 5)
    form = jax_form(template)
    reason = form.jax_unsupported() if form is not None else "no JAX form"
    assert reason is not None and "parameter_perturbations" in reason and "\n" not in reason


def test_unsupported_spaces_are_named():
    rng = np.random.default_rng(6)
    tuple_space = gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Discrete(3)))
    template = FFNNTemplate(FFNNConfig(), tuple_space, gym.spaces.Discrete(2), rng)
    form = jax_form(template)
    assert form is not None and "Tuple observations" in (form.jax_unsupported() or "")


def test_a_subclass_that_changes_the_math_keeps_its_jax_form():
    """The JAX form is derived from the same functions as make(): a subclass that changes them
    gets its own math compiled too."""
    class Doubled(FFNNTemplate):
        def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
            return super().params(xp, genomes * 2)

    template, genome, rng = _build(Doubled, {}, 7)
    assert _compare(template, genome, rng, np.float32) <= 1e-6


@pytest.mark.parametrize(("cls", "config"), [(CTRNNTemplate, CTRNNConfig()),
                                             (LSTMTemplate, LSTMConfig())])
def test_check_brain_checks_the_jax_form(cls, config):
    report = check_brain(cls, config)
    names = [check.name for check in report.checks]
    assert any("jax_step()" in name for name in names), names
    assert report.ok, report.render()


def test_a_ctrnn_subclass_that_changes_the_step_keeps_its_jax_form():
    class Softsign(CTRNNTemplate):
        def sigma(self, xp: Any, y: Any) -> Any:
            return y / (1.0 + xp.abs(y))

    template, genome, rng = _build(Softsign, {"number_neurons": 5, "time_constants": True}, 8)
    assert _compare(template, genome, rng, np.float32) <= 1e-6
