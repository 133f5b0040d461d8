"""Many FFNNs evaluated together: each layer's matrices stacked along a first axis of rows.

Row `i` computes exactly what `FFNN` computes for the same genome: `np.matmul` over stacked
matrices calls the same BLAS matrix-vector product per row as `weight @ x`, and biases and
activations are elementwise (tests/test_batched_brains.py checks it bit for bit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from brain_ffnn.brain import Activation
from evo_core import ActionDecoder, ObservationEncoder

__all__ = ["FFNNBatch"]

FloatArray = NDArray[np.float64]


class FFNNBatch:
    """Stateless, like `FFNN`: `reset` has nothing to do. Given `rebuild` (the template's way
    to make a batch of genomes) it loads genomes into rows (`IReloadableBatch`); it gives a
    batch of some of its rows (`ISubsetBatch`)."""

    def __init__(self, layers: list[tuple[FloatArray, FloatArray | None, Activation]],
                 encoder: ObservationEncoder, decoder: ActionDecoder,
                 rebuild: Callable[[FloatArray], FFNNBatch] | None = None) -> None:
        self.layers = layers  # weights (rows, out, in), biases (rows, out) or None
        self.encoder = encoder
        self.decoder = decoder
        self._rebuild = rebuild

    def load(self, rows: NDArray[np.intp], genomes: FloatArray) -> None:
        """Rows `rows[i]` become the FFNN of `genomes[i]`: the arrays `make` builds, copied."""
        if self._rebuild is None:
            raise TypeError("an FFNNBatch made without its template loads no genome")
        for (weight, bias, _), (new_weight, new_bias, _) in zip(self.layers,
                                                                self._rebuild(genomes).layers):
            weight[rows] = new_weight
            if bias is not None and new_bias is not None:
                bias[rows] = new_bias

    def subset(self, rows: NDArray[np.intp]) -> FFNNBatch:
        """A batch of rows `rows` (their layers copied: nothing else to carry over)."""
        return FFNNBatch([(weight[rows], None if bias is None else bias[rows], activation)
                          for weight, bias, activation in self.layers],
                         self.encoder, self.decoder, self._rebuild)

    def reset(self, mask: NDArray[np.bool_] | None = None) -> None:
        pass

    def forward(self, x: FloatArray) -> FloatArray:
        for weight, bias, activation in self.layers:
            x = np.matmul(weight, x[:, :, None])[:, :, 0]
            if bias is not None:
                x += bias
            x = activation(x)
        return x

    def step(self, observations: Any) -> Any:
        return self.decoder.batch(self.forward(self.encoder.batch(observations)))
