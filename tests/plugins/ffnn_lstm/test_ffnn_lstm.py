"""brain-ffnn and brain-lstm: worked examples, loop references on random shapes, the template."""

from __future__ import annotations

import itertools
import math
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from pydantic import ValidationError

from brain_ffnn import FFNNConfig, FFNNTemplate
from brain_lstm import LSTMConfig, LSTMTemplate
from evo_core import ITraceableBrain

FREE = lambda n: spaces.Box(-np.inf, np.inf, (n,), dtype=np.float64)  # noqa: E731
BOX = lambda n: spaces.Box(-1, 1, (n,), dtype=np.float64)  # noqa: E731
RNG = np.random.default_rng(0)


def ffnn(inputs, outputs, **fields) -> FFNNTemplate:
    return FFNNTemplate(FFNNConfig(**fields), BOX(inputs), FREE(outputs), RNG)


def lstm(inputs, outputs, **fields) -> LSTMTemplate:
    return LSTMTemplate(LSTMConfig(**fields), BOX(inputs), FREE(outputs), RNG)


def test_ffnn_worked_example() -> None:
    t = ffnn(2, 2, hidden_layers=[3], non_linearity="tanh", use_bias=True)
    assert t.genome_size == 17
    genome = np.linspace(-1, 1, 17, dtype=np.float32)
    brain = t.make(genome)  # type: ignore[arg-type]  # float32 genes on purpose
    assert np.allclose(brain.step(np.array([0.5, -0.5])), [0.6096592, 0.88590026], atol=1e-6)


def test_ffnn_genome_layout_weights_then_biases() -> None:
    t = ffnn(2, 1, hidden_layers=[2], use_bias=True, output_activation="linear")
    params = t.params(np, np.arange(float(t.genome_size))[None, :])
    (w1, b1), (w2, b2) = [(params[f"w{i}"][0], params[f"b{i}"][0]) for i in range(2)]
    assert np.array_equal(w1, [[0, 1], [2, 3]]) and np.array_equal(w2, [[4, 5]])
    assert np.array_equal(b1, [6, 7]) and np.array_equal(b2, [8])


def test_ffnn_size_of_the_reference() -> None:
    t = ffnn(24, 4, hidden_layers=[64, 64], use_bias=True)
    assert t.genome_size == 6020


def reference_ffnn(genome, sizes, hidden, output, bias, x):
    pos = 0
    mats = []
    for a, b in itertools.pairwise(sizes):
        mats.append([[genome[pos + r * a + c] for c in range(a)] for r in range(b)])
        pos += a * b
    vecs = []
    for b in sizes[1:]:
        vecs.append(genome[pos:pos + b] if bias else [0.0] * b)
        pos += b if bias else 0
    act = {"tanh": math.tanh, "relu": lambda v: max(v, 0.0), "linear": lambda v: v}
    for layer, (m, v) in enumerate(zip(mats, vecs)):
        f = act[output if layer == len(mats) - 1 else hidden]
        x = [f(sum(m[r][c] * x[c] for c in range(len(x))) + v[r]) for r in range(len(m))]
    return np.array(x)


@pytest.mark.parametrize("seed", range(15))
def test_ffnn_random_shapes_match_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    hidden = [int(h) for h in rng.integers(1, 7, size=int(rng.integers(0, 4)))]
    inputs, outputs = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    nl = str(rng.choice(["relu", "tanh"]))
    out = [None, "relu", "tanh", "linear"][int(rng.integers(4))]
    bias = bool(rng.integers(2))
    t = ffnn(inputs, outputs, hidden_layers=hidden, non_linearity=nl,
             output_activation=None if out is None else str(out), use_bias=bias)
    genome = rng.normal(size=t.genome_size)
    brain = t.make(genome)
    for x in rng.uniform(-1, 1, (5, inputs)):
        expected = reference_ffnn(genome, [inputs, *hidden, outputs], nl,
                                  nl if out is None else str(out), bias, list(x))
        assert np.allclose(brain.step(x), expected, rtol=1e-12, atol=1e-12)


def test_lstm_worked_example_from_zero_state() -> None:
    t = lstm(2, 2, lstm_num_layers=1, use_bias=True)
    assert t.genome_size == 48
    brain = t.make(np.linspace(-1, 1, 48, dtype=np.float32))
    brain.reset()
    assert np.allclose(brain.step(np.array([0.5, -0.5])), [0.47284988, 0.49488378], atol=1e-6)
    assert np.allclose(brain.step(np.array([1.0, 0.0])), [0.45522767, 0.5573999], atol=1e-6)


def test_lstm_size_of_the_reference() -> None:
    env = gym.make("CartPole-v1")
    t = LSTMTemplate(LSTMConfig(lstm_num_layers=3), env.observation_space, env.action_space, RNG)
    assert t.genome_size == 160


def reference_lstm(genome, inputs, hidden, outputs, layers, bias, head, xs):
    pos = 0

    def take(n):
        nonlocal pos
        part = np.array(genome[pos:pos + n])
        pos += n
        return part

    params = []
    for layer in range(layers):
        n_in = inputs if layer == 0 else hidden
        w_ih = take(4 * hidden * n_in).reshape(4 * hidden, n_in)
        w_hh = take(4 * hidden * hidden).reshape(4 * hidden, hidden)
        b_ih = take(4 * hidden) if bias else np.zeros(4 * hidden)
        b_hh = take(4 * hidden) if bias else np.zeros(4 * hidden)
        params.append((w_ih, w_hh, b_ih, b_hh))
    if head:
        w_out = take(outputs * hidden).reshape(outputs, hidden)
        b_out = take(outputs) if bias else np.zeros(outputs)
    h = [[0.0] * hidden for _ in range(layers)]
    c = [[0.0] * hidden for _ in range(layers)]

    def sig(v: float) -> float:
        return 1 / (1 + math.exp(-v))

    results = []
    for x in xs:
        x = list(x)
        for layer, (w_ih, w_hh, b_ih, b_hh) in enumerate(params):
            inputs_now, state = x, h[layer]
            gates = [[sum(w_ih[k * hidden + j][m] * inputs_now[m] for m in range(len(inputs_now)))
                      + b_ih[k * hidden + j]
                      + sum(w_hh[k * hidden + j][m] * state[m] for m in range(hidden))
                      + b_hh[k * hidden + j] for j in range(hidden)] for k in range(4)]
            new_h, new_c = [], []
            for j in range(hidden):
                i, f = sig(gates[0][j]), sig(gates[1][j])
                g, o = math.tanh(gates[2][j]), sig(gates[3][j])
                cj = f * c[layer][j] + i * g
                new_c.append(cj)
                new_h.append(o * math.tanh(cj))
            h[layer], c[layer] = new_h, new_c
            x = new_h
        if head:
            x = [math.tanh(sum(w_out[k][m] * x[m] for m in range(hidden)) + b_out[k])
                 for k in range(outputs)]
        results.append(x)
    return np.array(results)


@pytest.mark.parametrize("seed", range(12))
def test_lstm_random_shapes_match_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    inputs, outputs = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    layers, bias = int(rng.integers(1, 4)), bool(rng.integers(2))
    hidden_size = None if rng.integers(2) else int(rng.integers(1, 6))
    t = lstm(inputs, outputs, lstm_num_layers=layers, use_bias=bias, hidden_size=hidden_size)
    genome = rng.normal(size=t.genome_size)
    xs = rng.uniform(-1, 1, (6, inputs))
    brain = t.make(genome)
    got = np.array([brain.step(x) for x in xs])
    expected = reference_lstm(genome, inputs, hidden_size or outputs, outputs, layers, bias,
                              hidden_size is not None, xs)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)


def plain_lstm(genome, inputs, hidden, outputs, layers, bias, head, xs):
    """The lone LSTM of evo's earlier versions, in plain numpy: each step's output and every
    layer's (h, c). Its arithmetic (the sigmoid `1/(1+exp(-z))`; `W_ih @ x`, then `+= W_hh @ h`,
    then `+=` the biases summed at decoding) is what runs and checkpoints made with them hold."""
    pos = 0

    def take(n):
        nonlocal pos
        pos += n
        return genome[pos - n:pos].copy()

    params = []
    for layer in range(layers):
        n_in = inputs if layer == 0 else hidden
        w_ih = take(4 * hidden * n_in).reshape(4 * hidden, n_in)
        w_hh = take(4 * hidden * hidden).reshape(4 * hidden, hidden)
        params.append((w_ih, w_hh, take(4 * hidden) + take(4 * hidden) if bias else None))
    w_out = take(outputs * hidden).reshape(outputs, hidden) if head else None
    b_out = take(outputs) if head and bias else None
    h = [np.zeros(hidden) for _ in range(layers)]
    c = [np.zeros(hidden) for _ in range(layers)]
    steps = []
    for x in xs:
        for k, (w_ih, w_hh, b) in enumerate(params):
            z = w_ih @ x
            z += w_hh @ h[k]
            if b is not None:
                z += b
            i, f, o = (1.0 / (1.0 + np.exp(-z[j * hidden:(j + 1) * hidden])) for j in (0, 1, 3))
            c[k] = f * c[k] + i * np.tanh(z[2 * hidden:3 * hidden])
            h[k] = x = o * np.tanh(c[k])
        if w_out is not None:
            out = w_out @ x
            if b_out is not None:
                out += b_out
            x = np.tanh(out)
        steps.append((x, [(a.copy(), d.copy()) for a, d in zip(h, c)]))
    return steps


@pytest.mark.parametrize("seed", range(8))
def test_lstm_is_the_earlier_lstm_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    inputs, outputs = int(rng.integers(1, 7)), int(rng.integers(1, 5))
    layers, bias = int(rng.integers(1, 4)), bool(seed % 2)
    hidden_size = None if seed % 4 < 2 else int(rng.integers(1, 20))
    t = lstm(inputs, outputs, lstm_num_layers=layers, use_bias=bias, hidden_size=hidden_size)
    genome = rng.normal(0, 2, t.genome_size)
    xs = rng.normal(0, 3, (12, inputs))
    brain = t.make(genome)
    assert isinstance(brain, ITraceableBrain)
    expected = plain_lstm(genome, inputs, hidden_size or outputs, outputs, layers, bias,
                          hidden_size is not None, xs)
    for x, (output, states) in zip(xs, expected):
        assert np.array_equal(brain.step(x), output)
        traced = brain.trace_state()
        for k, (h, c) in enumerate(states):
            assert np.array_equal(traced[f"layer{k}.hidden"], h)
            assert np.array_equal(traced[f"layer{k}.cell"], c)


def test_lstm_reset_restores_zero_state() -> None:
    t = lstm(3, 2, lstm_num_layers=2, hidden_size=4)
    brain = t.make(np.random.default_rng(1).normal(size=t.genome_size))
    xs = np.random.default_rng(2).uniform(-1, 1, (10, 3))
    runs = []
    for _ in range(2):
        brain.reset()
        runs.append(np.array([brain.step(x) for x in xs]))
    assert np.array_equal(runs[0], runs[1])


@pytest.mark.parametrize("make", [
    lambda: ffnn(3, 2, hidden_layers=[4, 3]),
    lambda: lstm(3, 2, lstm_num_layers=2, hidden_size=5)])
def test_pickle_round_trip_and_genome_check(make) -> None:
    t = make()
    clone = pickle.loads(pickle.dumps(t))
    genome = np.random.default_rng(3).normal(size=t.genome_size)
    xs = np.random.default_rng(4).uniform(-1, 1, (8, 3))
    a, b = t.make(genome), clone.make(genome)
    assert all(np.array_equal(a.step(x), b.step(x)) for x in xs)
    with pytest.raises(ValueError, match=rf"expected \({t.genome_size},\)"):
        t.make(genome[:-1])
    with pytest.raises(AttributeError, match="immutable"):
        t.config = None


def test_shared_space_handling_discrete_in_multidiscrete_out() -> None:
    observation: spaces.Space[Any] = spaces.Discrete(5)
    action: spaces.Space[Any] = spaces.MultiDiscrete([3, 2])
    for t in (FFNNTemplate(FFNNConfig(), observation, action, RNG),
              LSTMTemplate(LSTMConfig(), observation, action, RNG)):
        assert t.input_size == 5 and t.output_size == 5
        brain = t.make(np.random.default_rng(0).normal(size=t.genome_size))
        brain.reset()
        assert spaces.MultiDiscrete([3, 2]).contains(brain.step(4))


@pytest.mark.parametrize("model,fields,message", [
    (FFNNConfig, {"hidden_layers": [8, 0]}, "greater than or equal to 1"),
    (FFNNConfig, {"non_linearity": "sigmoid"}, "'relu' or 'tanh'"),
    (FFNNConfig, {"output_activation": "softmax"}, "'relu', 'tanh' or 'linear'"),
    (LSTMConfig, {"lstm_num_layers": 0}, "greater than or equal to 1"),
    (LSTMConfig, {"hidden_size": 0}, "greater than or equal to 1"),
    (LSTMConfig, {"layers": 2}, "Extra inputs are not permitted"),
])
def test_config_validation(model, fields, message) -> None:
    with pytest.raises(ValidationError, match=message):
        model(**fields)
