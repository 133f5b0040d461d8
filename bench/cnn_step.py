"""µs per CNN forward pass on a 64x64x3 frame: brain-cnn against a plain numpy loop and torch.

    python bench/cnn_step.py [--repeats 5] [--passes 200]

The network is the predecessor's Qbert front end (3x3 conv to 5 maps, relu, 4/2 max-pool, 5x5
conv to 5 maps, sigmoid, 4/2 max-pool: 720 features, 760 weights, no biases). The plain numpy
reference computes each output pixel from its patch in a Python loop (what a first numpy CNN
looks like); torch runs `conv2d`, the activations and `max_pool2d` on one thread, as the
predecessor set it up, when torch is installed. Every result is checked against brain-cnn's
before it is timed. Best of `--repeats` runs.

Measured on 2 vCPUs shared with other work (load ~7; absolute times are inflated, read the
ratios): brain-cnn 2.1 ms per pass, the plain loop 534 ms (249x slower), torch 2.13 `conv2d`
2.1 ms (brain-cnn / torch = 1.03). Under heavier load (~15) 11.3 ms, 2.7 s and 13.4 ms.

brain-cnn's im2col is a gather (`take` with an index computed once per geometry, the same in
numpy and jax.numpy) since it is written once over rows; in the same minute as the
`sliding_window_view` copy it replaced (load ~6 on 2 vCPUs): 942 µs per pass against 1094-1157
µs, the plain loop 271-305x slower.
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium as gym
import numpy as np
from _timing import best_of
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from brain_cnn import CNNConfig, CNNTemplate

FloatArray = NDArray[np.float64]
FRAME = (64, 64, 3)


def plain_forward(image: FloatArray, kernels: list[FloatArray]) -> FloatArray:
    """The reference: a loop over output pixels, each a numpy sum over its patch."""
    x = image.transpose(2, 0, 1)
    for kernel, activation in zip(kernels, ("relu", "sigmoid")):
        features, _, size, _ = kernel.shape
        rows, cols = x.shape[1] - size + 1, x.shape[2] - size + 1
        conv = np.empty((features, rows, cols))
        for f in range(features):
            for i in range(rows):
                for j in range(cols):
                    conv[f, i, j] = np.sum(kernel[f] * x[:, i:i + size, j:j + size])
        conv = np.maximum(conv, 0.0) if activation == "relu" else 1.0 / (1.0 + np.exp(-conv))
        rows, cols = (rows - 4) // 2 + 1, (cols - 4) // 2 + 1
        pooled = np.empty((features, rows, cols))
        for f in range(features):
            for i in range(rows):
                for j in range(cols):
                    pooled[f, i, j] = np.max(conv[f, 2 * i:2 * i + 4, 2 * j:2 * j + 4])
        x = pooled
    return x.reshape(-1)


def torch_forward(kernels: list[FloatArray]) -> Any:
    """A function image -> features in torch (float64, one thread), or None without torch."""
    try:
        import torch
        from torch.nn import functional
    except ImportError:
        return None
    torch.set_num_threads(1)
    weights = [torch.from_numpy(kernel) for kernel in kernels]

    def forward(image: FloatArray) -> FloatArray:
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1)))[None]
            x = functional.max_pool2d(torch.relu(functional.conv2d(x, weights[0])), 4, 2)
            x = functional.max_pool2d(torch.sigmoid(functional.conv2d(x, weights[1])), 4, 2)
            result: FloatArray = x.reshape(-1).numpy()
            return result

    return forward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--passes", type=int, default=200)
    args = parser.parse_args()
    template = CNNTemplate(CNNConfig(use_bias=False, readout="none"),
                           gym.spaces.Box(0, 255, FRAME, np.uint8),
                           gym.spaces.Box(-1, 1, (720,), np.float64), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    genome = rng.normal(0, 0.5, template.genome_size)
    kernels = [genome[:135].reshape(5, 3, 3, 3), genome[135:].reshape(5, 5, 5, 5)]
    params = template.params(np, genome.reshape(1, -1))
    image = rng.uniform(0, 1, FRAME)
    row = image.reshape(1, -1)
    expected = template.features(np, params, row)[0]
    assert np.allclose(plain_forward(image, kernels), expected, rtol=0, atol=1e-12)
    with threadpool_limits(limits=1):
        passes = args.passes
        evo_us = best_of(args.repeats, lambda: [template.features(np, params, row)
                                                for _ in range(passes)]) / passes * 1e6
        plain_us = best_of(max(1, args.repeats // 2), lambda: plain_forward(image, kernels)) * 1e6
        print(f"64x64x3 frame, predecessor layers (720 features), one thread, best of "
              f"{args.repeats}")
        print(f"brain-cnn (gathered im2col, one matmul):  {evo_us:10.1f} µs per pass")
        print(f"plain numpy, loop over pixels:            {plain_us:10.1f} µs per pass "
              f"({plain_us / evo_us:.0f}x brain-cnn)")
        forward = torch_forward(kernels)
        if forward is None:
            print("torch: not installed (pip install torch) - no comparison")
            return
        assert np.allclose(forward(image), expected, rtol=0, atol=1e-10)
        torch_us = best_of(args.repeats, lambda: [forward(image)
                                                  for _ in range(passes)]) / passes * 1e6
        print(f"torch conv2d (float64, 1 thread):         {torch_us:10.1f} µs per pass "
              f"(brain-cnn / torch = {evo_us / torch_us:.2f})")


if __name__ == "__main__":
    main()
