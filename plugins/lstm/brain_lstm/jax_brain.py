"""The LSTM in JAX (`IJaxTemplate`): the genome's layers, the state (h, c per layer), the step.

The genome is read in the order `LSTMTemplate.build` reads it (per layer: W_ih, W_hh, then the
input and the recurrent bias, summed), and each step computes the gates as `cell` does: input,
forget, cell and output blocks of `hidden`, then an optional tanh head. jax is imported inside
the functions: it is an optional extra.
"""

from __future__ import annotations

from typing import Any

__all__ = ["jax_forward", "jax_init_state", "jax_params"]


def jax_params(genome: Any, layer_inputs: list[int], hidden: int, use_bias: bool,
               head_outputs: int | None) -> dict[str, Any]:
    position = 0

    def take(count: int) -> Any:
        nonlocal position
        part = genome[position:position + count]
        position += count
        return part

    h = hidden
    layers = []
    for inputs in layer_inputs:
        w_ih = take(4 * h * inputs).reshape(4 * h, inputs)
        w_hh = take(4 * h * h).reshape(4 * h, h)
        bias = take(4 * h) + take(4 * h) if use_bias else None
        layers.append((w_ih, w_hh, bias))
    head = None
    if head_outputs is not None:
        weight = take(head_outputs * h).reshape(head_outputs, h)
        head = (weight, take(head_outputs) if use_bias else None)
    return {"layers": layers, "head": head}


def jax_init_state(layers: int, hidden: int) -> tuple[Any, Any]:
    import jax.numpy as jnp

    zeros = jnp.zeros((layers, hidden), dtype=jnp.result_type(float))
    return zeros, zeros


def _sigmoid(x: Any) -> Any:
    import jax.numpy as jnp

    return 1.0 / (1.0 + jnp.exp(-x))


def jax_forward(params: dict[str, Any], state: tuple[Any, Any], x: Any, hidden: int
                ) -> tuple[tuple[Any, Any], Any]:
    import jax.numpy as jnp

    n = hidden
    hs, cs = state
    new_h, new_c = [], []
    for index, (w_ih, w_hh, bias) in enumerate(params["layers"]):
        z = w_ih @ x + w_hh @ hs[index]
        if bias is not None:
            z = z + bias
        i, f, o = _sigmoid(z[:n]), _sigmoid(z[n:2 * n]), _sigmoid(z[3 * n:])
        g = jnp.tanh(z[2 * n:3 * n])
        c = f * cs[index] + i * g
        x = o * jnp.tanh(c)
        new_h.append(x)
        new_c.append(c)
    state = (jnp.stack(new_h), jnp.stack(new_c))
    if params["head"] is None:
        return state, x
    weight, bias = params["head"]
    out = weight @ x
    if bias is not None:
        out = out + bias
    return state, jnp.tanh(out)
