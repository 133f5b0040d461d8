"""The FFNN in JAX (`IJaxTemplate`): the genome's layers and the forward pass, traceable.

The genome is read in the order `FFNNTemplate.build` reads it (every weight matrix, row-major,
then every bias), and each layer computes `activation(W @ x + b)` as `FFNN.forward`. jax is
imported inside the functions: it is an optional extra.
"""

from __future__ import annotations

from typing import Any

__all__ = ["jax_activation", "jax_forward", "jax_layers"]


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
        x = weight @ x
        if bias is not None:
            x = x + bias
        x = jax_activation(name)(x)
    return x
