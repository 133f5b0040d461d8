"""Many LSTMs stepped together: weights stacked along a first axis of rows, states (rows, hidden).

Row `i` computes exactly what `LSTM` computes for the same genome: `np.matmul` over stacked
matrices calls the same BLAS matrix-vector product per row as `w @ x`, and the gates are
elementwise in the same order (tests/test_batched_brains.py checks it bit for bit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from brain_lstm.brain import LSTMLayer, cell
from evo_core import ActionDecoder, ObservationEncoder

__all__ = ["LSTMBatch"]

FloatArray = NDArray[np.float64]


def _apply(matrices: FloatArray, vectors: FloatArray) -> FloatArray:
    product: FloatArray = np.matmul(matrices, vectors[:, :, None])[:, :, 0]
    return product


class LSTMBatch:
    """Hidden and cell states per layer, shape (rows, hidden), zero at `reset`. It gives a
    batch of some of its rows (`ISubsetBatch`)."""

    def __init__(self, layers: list[LSTMLayer], head: tuple[FloatArray, FloatArray | None] | None,
                 hidden: int, rows: int, encoder: ObservationEncoder,
                 decoder: ActionDecoder,
                 rebuild: Callable[[FloatArray], LSTMBatch] | None = None) -> None:
        """`rebuild` (the template's way to make a batch of genomes) lets it load genomes
        into rows (`IReloadableBatch`)."""
        self.layers = layers  # each array with a leading axis of rows
        self._rebuild = rebuild
        self.head = head
        self.hidden = hidden
        self.rows = rows
        self.encoder = encoder
        self.decoder = decoder
        self.reset()

    def reset(self, mask: NDArray[np.bool_] | None = None) -> None:
        if mask is None:
            self.h = [np.zeros((self.rows, self.hidden)) for _ in self.layers]
            self.c = [np.zeros((self.rows, self.hidden)) for _ in self.layers]
            return
        for h, c in zip(self.h, self.c):
            h[mask] = 0.0
            c[mask] = 0.0

    def subset(self, rows: NDArray[np.intp]) -> LSTMBatch:
        """A batch of rows `rows`: their weights and their hidden and cell states
        (`ISubsetBatch`)."""
        layers = [LSTMLayer(layer.w_ih[rows], layer.w_hh[rows],
                            None if layer.bias is None else layer.bias[rows])
                  for layer in self.layers]
        head = None if self.head is None else \
            (self.head[0][rows], None if self.head[1] is None else self.head[1][rows])
        kept = LSTMBatch(layers, head, self.hidden, len(rows), self.encoder, self.decoder,
                         self._rebuild)
        kept.h = [h[rows] for h in self.h]
        kept.c = [c[rows] for c in self.c]
        return kept

    def load(self, rows: NDArray[np.intp], genomes: FloatArray) -> None:
        """Rows `rows[i]` become the LSTM of `genomes[i]`: the arrays `make` builds, copied."""
        if self._rebuild is None:
            raise TypeError("an LSTMBatch made without its template loads no genome")
        new = self._rebuild(genomes)
        for layer, loaded in zip(self.layers, new.layers):
            layer.w_ih[rows] = loaded.w_ih
            layer.w_hh[rows] = loaded.w_hh
            if layer.bias is not None and loaded.bias is not None:
                layer.bias[rows] = loaded.bias
        if self.head is not None and new.head is not None:
            self.head[0][rows] = new.head[0]
            if self.head[1] is not None and new.head[1] is not None:
                self.head[1][rows] = new.head[1]

    def forward(self, x: FloatArray) -> FloatArray:
        n = self.hidden
        for index, layer in enumerate(self.layers):
            z = _apply(layer.w_ih, x)
            z += _apply(layer.w_hh, self.h[index])
            if layer.bias is not None:
                z += layer.bias
            self.c[index], self.h[index] = cell(z, self.c[index], n)
            x = self.h[index]
        if self.head is None:
            return x.copy()
        weight, bias = self.head
        out = _apply(weight, x)
        if bias is not None:
            out += bias
        return np.tanh(out)

    def step(self, observations: Any) -> Any:
        return self.decoder.batch(self.forward(self.encoder.batch(observations)))
