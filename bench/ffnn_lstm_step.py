"""FFNN and LSTM step and make cost against plain numpy loops measured in the same run.

    python bench/ffnn_lstm_step.py [--steps 20000] [--repeats 5]

CartPole-sized input (Box(4)) and output (Discrete(2)). The plain loops are the forward passes
written directly with preallocated weights (the LSTM with its two bias vectors pre-summed), as a
hand-written policy would be. Best of `--repeats` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from _timing import best_of, step_benchmark_setup
from threadpoolctl import threadpool_limits

from brain_ffnn import FFNNConfig, FFNNTemplate
from brain_lstm import LSTMConfig, LSTMTemplate


def plain_ffnn(layers: list[tuple[Any, Any]], observations: Any) -> int:
    actions = 0
    for observation in observations:
        x = np.asarray(observation, dtype=np.float64)
        for w, b in layers:
            x = np.tanh(w @ x + b)
        actions += int(np.argmax(x))
    return actions


def ffnn_layers(params: dict[str, Any]) -> list[tuple[Any, Any]]:
    """The lone brain's row 0 of each layer's weights and bias, as plain matrices."""
    return [(params[f"w{index}"][0], params[f"b{index}"][0])
            for index in range(sum(name.startswith("w") for name in params))]


def lstm_layers(params: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    """The lone brain's row 0 of each layer's W_ih, W_hh and summed bias, as plain arrays."""
    return [(params[f"w_ih{index}"][0], params[f"w_hh{index}"][0], params[f"b{index}"][0])
            for index in range(sum(name.startswith("w_ih") for name in params))]


def plain_lstm(layers: list[tuple[Any, Any, Any]], hidden: int, observations: Any) -> int:
    h = [np.zeros(hidden) for _ in layers]
    c = [np.zeros(hidden) for _ in layers]
    actions = 0
    for observation in observations:
        x = np.asarray(observation, dtype=np.float64)
        for k, (w_ih, w_hh, b) in enumerate(layers):
            z = w_ih @ x + w_hh @ h[k] + b
            i = 1 / (1 + np.exp(-z[:hidden]))
            f = 1 / (1 + np.exp(-z[hidden:2 * hidden]))
            g = np.tanh(z[2 * hidden:3 * hidden])
            o = 1 / (1 + np.exp(-z[3 * hidden:]))
            c[k] = f * c[k] + i * g
            h[k] = o * np.tanh(c[k])
            x = h[k]
        actions += int(np.argmax(x))
    return actions


def report(name: str, template: Any, plain: Callable[[Any], int], observations: Any,
           repeats: int) -> None:
    rng = np.random.default_rng(1)
    genome = rng.normal(0, 0.5, template.genome_size)
    brain = template.make(genome)

    def evo_steps() -> None:
        brain.reset()
        for observation in observations:
            brain.step(observation)

    makes = 2000

    def make_many() -> None:
        for _ in range(makes):
            template.make(genome)

    steps = len(observations)
    evo_time = best_of(repeats, evo_steps) / steps * 1e6
    plain_time = best_of(repeats, lambda: plain(brain)) / steps * 1e6
    make_time = best_of(repeats, make_many) / makes * 1e6
    print(f"{name:<24} {template.genome_size:>6} {evo_time:>12.2f} {plain_time:>9.2f} "
          f"{evo_time / plain_time:>6.2f} {make_time:>8.1f}")


def main() -> None:
    args, env, rng, observations = step_benchmark_setup(__doc__.splitlines()[0])
    print(f"{'brain':<24} {'genes':>6} {'evo step µs':>12} {'plain µs':>9} {'ratio':>6} "
          f"{'make µs':>8}")
    for hidden in ([16], [64, 64]):
        config = FFNNConfig(hidden_layers=hidden, non_linearity="tanh")
        template = FFNNTemplate(config, env.observation_space, env.action_space, rng)
        report(f"ffnn {hidden}", template,
               lambda brain: plain_ffnn(ffnn_layers(brain.params), observations),
               observations, args.repeats)
    for layers, hidden_size in ((1, None), (2, 16), (1, 64)):
        lstm_config = LSTMConfig(lstm_num_layers=layers, hidden_size=hidden_size)
        lstm = LSTMTemplate(lstm_config, env.observation_space, env.action_space, rng)

        def plain(brain: Any) -> int:
            return plain_lstm(lstm_layers(brain.params), brain.params["w_hh0"].shape[-1],
                              observations)

        report(f"lstm {layers}x{hidden_size or 'out'}", lstm, plain, observations,
               args.repeats)


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
