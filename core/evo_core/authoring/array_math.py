"""The arithmetic `IArrayBrain`s share, written once for numpy and `jax.numpy`.

`rows_matvec` is every row's own matrix times its own vector. In numpy it is one `np.matvec`
over the stacked matrices: one call for all rows, each row computed by the same routine as a
lone `w @ x`, so a batch row equals the lone brain bit for bit, whatever the number of rows
(measured at CartPole's sizes: `np.matmul` with the vectors as columns 10-30 % slower, an
elementwise product summed over the inputs 2-4x slower for 256 rows). Traced by JAX, a
matrix of few inputs is summed column by column instead: XLA on the CPU runs a batched
matrix-vector product as one tiny matrix product per row, while the column sum fuses with the
bias and the activation into one loop (the compiled CartPole rollout a fifth faster).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from evo_core.authoring.onnx_graph import OnnxNamespace

__all__ = ["ACTIVATIONS", "SMALL_INPUTS", "activation", "matvec_of", "rows_matvec",
           "with_diagonal"]

#: JAX sums the columns of matrices with at most this many inputs (see the module doc)
SMALL_INPUTS = 8

_matvec = np.matvec

#: The activations brains offer by name (`activation`)
ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear")


def rows_matvec(xp: Any, weights: Any, x: Any) -> Any:
    """`weights[i] @ x[i]` for every row: weights rows x out x in, x rows x in."""
    return matvec_of(xp)(weights, x)


def matvec_of(xp: Any) -> Callable[[Any, Any], Any]:
    """`rows_matvec` for the namespace `xp`, looked up once: numpy's `matvec` itself, which a
    brain's step calls with no Python in between (a step of a small brain is mostly the cost
    of its calls); an ONNX graph's (`authoring/onnx_graph.py`) its own; else JAX's."""
    if xp is np:
        return _matvec
    if isinstance(xp, OnnxNamespace):
        return xp.matvec
    return _jax_matvec


def _jax_matvec(weights: Any, x: Any) -> Any:
    import jax.numpy as jnp

    columns = weights.shape[-1]
    if columns == 0 or columns > SMALL_INPUTS:
        return jnp.matmul(weights, x[:, :, None])[:, :, 0]
    total = weights[:, :, 0] * x[:, 0:1]
    for column in range(1, columns):
        total = total + weights[:, :, column] * x[:, column:column + 1]
    return total


def with_diagonal(xp: Any, matrices: Any, values: Any) -> Any:
    """`matrices` (rows x N x N) with each row's diagonal replaced by `values` (rows x N), as a
    new array: numpy writes the N cells into a copy, JAX sets them (`.at`). Neither computes
    anything over the other cells (a `where` over the whole matrix cost a CTRNN of N = 200 a
    hundred microseconds per decoding, measured; the copy, ten)."""
    cells = np.arange(matrices.shape[-1])
    if xp is np:
        result = matrices.copy()
        result[:, cells, cells] = values
        return result
    return matrices.at[:, cells, cells].set(values)


def _relu(xp: Any, x: Any) -> Any:
    return xp.maximum(x, 0.0)


def _tanh(xp: Any, x: Any) -> Any:
    return xp.tanh(x)


def _sigmoid(xp: Any, x: Any) -> Any:
    """Written with tanh: a large negative input gives no overflow warning."""
    return (xp.tanh(x * 0.5) + 1.0) * 0.5


def _linear(xp: Any, x: Any) -> Any:
    return x


_FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    "relu": _relu, "tanh": _tanh, "sigmoid": _sigmoid, "linear": _linear}


def activation(name: str) -> Callable[[Any, Any], Any]:
    """The activation `name` (one of `ACTIVATIONS`) as a function of (xp, x): looked up once,
    where a brain is built, not at every step."""
    if name not in _FUNCTIONS:
        raise ValueError(f"unknown activation {name!r}; one of {', '.join(ACTIVATIONS)}")
    return _FUNCTIONS[name]
