"""brain-cnn: the vectorised forward pass against explicit loops, the genome layout, the
predecessor's sizes, the errors for images that do not fit, and the plugin contract."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from numpy.typing import NDArray

from brain_cnn import CNNConfig, CNNTemplate, ConvLayerConfig
from evo_core import check_brain

FloatArray = NDArray[np.float64]

ACTIVATIONS: dict[str, Callable[[float], float]] = {
    "relu": lambda x: max(x, 0.0), "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)),
    "tanh": math.tanh, "linear": lambda x: x}


def reference_convolution(x: FloatArray, layer: Any, kernel: FloatArray, bias: FloatArray
                          ) -> FloatArray:
    """One layer's convolution and activation, one output pixel at a time."""
    k, s = layer.kernel_size, layer.stride
    rows, cols = (x.shape[1] - k) // s + 1, (x.shape[2] - k) // s + 1
    conv = np.zeros((layer.features, rows, cols))
    for f, i, j in itertools.product(range(layer.features), range(rows), range(cols)):
        total = sum((kernel[f, c, a, b] * x[c, i * s + a, j * s + b]
                     for c, a, b in itertools.product(range(x.shape[0]), range(k), range(k))),
                    start=bias[f])
        conv[f, i, j] = ACTIVATIONS[layer.activation](total)
    return conv


def reference_pool(conv: FloatArray, layer: Any) -> FloatArray:
    """One layer's max pooling, one output pixel at a time."""
    p, ps = layer.pool_size, layer.pool_stride or layer.pool_size
    rows, cols = (conv.shape[1] - p) // ps + 1, (conv.shape[2] - p) // ps + 1
    pooled = np.zeros((conv.shape[0], rows, cols))
    for f, i, j in itertools.product(range(conv.shape[0]), range(rows), range(cols)):
        pooled[f, i, j] = max(conv[f, i * ps + a, j * ps + b]
                              for a in range(p) for b in range(p))
    return pooled


def reference_forward(image: FloatArray, config: CNNConfig, genome: FloatArray,
                      outputs: int) -> FloatArray:
    """The network written out with a loop over every output pixel, decoding the genome as
    the README documents it: kernels (F, C, k, k) layer by layer, then biases, then the readout."""
    x = image.transpose(2, 0, 1)  # (C, H, W), as the predecessor's NCHW
    position = 0
    kernels: list[FloatArray] = []
    for layer in config.layers:
        shape = (layer.features, x.shape[0] if not kernels else kernels[-1].shape[0],
                 layer.kernel_size, layer.kernel_size)
        count = int(np.prod(shape))
        kernels.append(genome[position:position + count].reshape(shape))
        position += count
    biases = []
    for layer in config.layers:
        if config.use_bias:
            biases.append(genome[position:position + layer.features])
            position += layer.features
        else:
            biases.append(np.zeros(layer.features))
    for layer, kernel, bias in zip(config.layers, kernels, biases):
        x = reference_pool(reference_convolution(x, layer, kernel, bias), layer)
    features = x.reshape(-1)
    if config.readout == "none":
        assert position == len(genome)
        return features
    weight = genome[position:position + outputs * len(features)].reshape(outputs, -1)
    position += weight.size
    out = weight @ features
    if config.use_bias:
        out = out + genome[position:position + outputs]
        position += outputs
    assert position == len(genome)
    return np.tanh(out)


def random_case(rng: np.random.Generator) -> tuple[CNNConfig, tuple[int, int, int]]:
    """A config and an image shape whose layers fit."""
    while True:
        layers = [ConvLayerConfig(
            features=int(rng.integers(1, 5)), kernel_size=int(rng.integers(1, 4)),
            stride=int(rng.integers(1, 3)),
            activation=str(rng.choice(["relu", "sigmoid", "tanh", "linear"])),
            pool_size=int(rng.integers(1, 4)),
            pool_stride=int(rng.integers(1, 3)) if rng.random() < 0.7 else None)
            for _ in range(int(rng.integers(1, 4)))]
        config = CNNConfig(layers=layers, use_bias=bool(rng.random() < 0.5),
                           readout=str(rng.choice(["tanh", "none"])))
        shape = (int(rng.integers(5, 16)), int(rng.integers(5, 16)), int(rng.integers(1, 4)))
        try:
            CNNTemplate(config, gym.spaces.Box(-1, 1, shape), gym.spaces.Discrete(2),
                        np.random.default_rng(0))
        except ValueError as exc:
            if "does not fit" in str(exc):
                continue
        return config, shape


def build(config: CNNConfig, shape: tuple[int, ...], outputs: int | None = None,
          dtype: Any = np.float64) -> CNNTemplate:
    observation = gym.spaces.Box(0 if dtype == np.uint8 else -1,
                                 255 if dtype == np.uint8 else 1, shape, dtype)
    if outputs is None:
        probe = CNNTemplate(config.model_copy(update={"readout": "tanh"}), observation,
                            gym.spaces.Box(-1, 1, (1,)), np.random.default_rng(0))
        outputs = probe.feature_count
    return CNNTemplate(config, observation, gym.spaces.Box(-1, 1, (outputs,), np.float64),
                       np.random.default_rng(0))


def network(template: CNNTemplate, genome: FloatArray, image: Any) -> FloatArray:
    """The outputs before the action decoder clips them."""
    params = template.params(np, genome.reshape(1, -1))
    inputs = template.encoder(image).reshape(1, -1)
    outputs: FloatArray = template.forward(np, params, {}, inputs, None)[1][0]
    return outputs


@pytest.mark.parametrize("seed", range(12))
def test_the_forward_pass_matches_explicit_loops(seed: int) -> None:
    rng = np.random.default_rng(seed)
    config, shape = random_case(rng)
    outputs = 3 if config.readout == "tanh" else None
    template = build(config, shape, outputs)
    genome = rng.normal(0, 1, template.genome_size)
    image = rng.uniform(-1, 1, shape)
    brain: Any = template.make(genome)
    expected = reference_forward(image, config, genome, outputs or 0)
    got = brain.step(image)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, np.clip(expected, -1, 1), rtol=0, atol=1e-12)
    # and unclipped, straight from the network
    np.testing.assert_allclose(network(template, genome, image), expected, rtol=0, atol=1e-12)


def test_the_predecessor_qbert_sizes() -> None:
    """64x64x3 -> 62 -> 30 -> 26 -> 12: 12*12*5 = 720 features from 760 genes."""
    config = CNNConfig(use_bias=False, readout="none")
    template = CNNTemplate(config, gym.spaces.Box(0, 255, (64, 64, 3), np.uint8),
                           gym.spaces.Box(-1, 1, (720,), np.float64), np.random.default_rng(0))
    assert template.feature_count == 720
    assert template.genome_size == 760
    # biases add a gene per feature map, the readout one per weight and output
    assert build(CNNConfig(readout="none"), (64, 64, 3), 720).genome_size == 770
    assert build(CNNConfig(), (64, 64, 3), 4).genome_size == 770 + 720 * 4 + 4


def test_uint8_images_are_scaled_to_unit_range() -> None:
    config = CNNConfig(layers=[ConvLayerConfig(features=1, kernel_size=1, activation="linear")],
                       use_bias=False, readout="none")
    frame = np.arange(12, dtype=np.uint8).reshape(2, 2, 3) * 20
    scaled = build(config, (2, 2, 3), 4, np.uint8)
    np.testing.assert_allclose(network(scaled, np.ones(3), frame),
                               frame.sum(axis=2).reshape(-1) / 255.0)
    np.testing.assert_allclose(scaled.make(np.ones(3)).step(frame),
                               np.clip(frame.sum(axis=2) / 255.0, -1, 1).reshape(-1))
    raw = build(config.model_copy(update={"scale_uint8": False}), (2, 2, 3), 4, np.uint8)
    assert raw.input_scale == 1.0
    np.testing.assert_allclose(network(raw, np.ones(3), frame), frame.sum(axis=2).reshape(-1))


def test_grayscale_images_have_one_channel() -> None:
    template = build(CNNConfig(readout="none", use_bias=False), (64, 64))
    assert template.image_shape == (64, 64, 1)
    assert template.genome_size == 5 * 9 + 5 * 5 * 25


def test_errors_name_the_layer_and_the_right_size() -> None:
    with pytest.raises(ValueError, match=r"layers\[1\]: its 5x5 kernel does not fit the 2x2 "
                       r"maps it gets \(sizes so far: 8x8x3 -> 6x6 -> 2x2x5\)"):
        build(CNNConfig(), (8, 8, 3), 4)
    with pytest.raises(ValueError, match=r"outputs the 720 features .* output_size = 720"):
        build(CNNConfig(readout="none"), (64, 64, 3), 700)
    with pytest.raises(TypeError, match="needs image observations"):
        CNNTemplate(CNNConfig(), gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2),
                    np.random.default_rng(0))


def test_the_plugin_passes_the_conformance_checks_on_images() -> None:
    report = check_brain(CNNTemplate)
    assert report.ok, str(report)
    assert "builds for Box(24, 24, 3, uint8) image -> Discrete(3)" in \
        [check.name for check in report.checks]
    assert report.timed_for.startswith("Box(24, 24, 3, uint8) image")
