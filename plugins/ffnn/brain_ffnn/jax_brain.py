"""The FFNN in JAX (`IJaxTemplate`): the genome's layers and the forward pass, traceable.

The genome is read in the order `FFNNTemplate.build` reads it (every weight matrix, row-major,
then every bias), and each layer computes `activation(W @ x + b)` as `FFNN.forward`. jax is
imported inside the functions: it is an optional extra.

A layer of few inputs computes `W @ x` as a sum of its columns scaled by the inputs
(`SMALL_INPUTS`): the evaluator maps the brain over thousands of rows, each with its own weights,
and XLA on the CPU runs such a batched matrix-vector product as one tiny matrix product per row,
while the column sum fuses into one elementwise loop with the layer's bias and activation
(measured on CartPole, 4 -> 8 -> 2, 256 rows: the compiled rollout a fifth faster).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SMALL_INPUTS", "jax_activation", "jax_forward", "jax_layers", "jax_matvec"]

#: layers with at most this many inputs sum their weight columns instead of a matrix product
SMALL_INPUTS = 8


def jax_activation(name: str) -> Any:
    import jax.numpy as jnp

    if name == "relu":
        return lambda x: jnp.maximum(x, 0.0)
    if name == "tanh":
        return jnp.tanh
    return lambda x: x


def jax_layers(genome: Any, shapes: list[tuple[int, int]], use_bias: bool
               ) -> list[tuple[Any, Any]]:
    """[(weight, bias or None)] per layer, sliced from the genome as `build` slices it."""
    position = 0
    weights = []
    for rows, cols in shapes:
        weights.append(genome[position:position + rows * cols].reshape(rows, cols))
        position += rows * cols
    biases: list[Any] = []
    for rows, _ in shapes:
        if use_bias:
            biases.append(genome[position:position + rows])
            position += rows
        else:
            biases.append(None)
    return list(zip(weights, biases))


def jax_forward(layers: list[tuple[Any, Any]], activations: list[str], x: Any) -> Any:
    for (weight, bias), name in zip(layers, activations):
        x = jax_matvec(weight, x)
        if bias is not None:
            x = x + bias
        x = jax_activation(name)(x)
    return x


def jax_matvec(weight: Any, x: Any) -> Any:
    """`weight @ x` for one row (see the module doc for why few inputs are summed)."""
    columns = weight.shape[1]
    if columns == 0 or columns > SMALL_INPUTS:
        return weight @ x
    total = weight[:, 0] * x[0]
    for column in range(1, columns):
        total = total + weight[:, column] * x[column]
    return total
