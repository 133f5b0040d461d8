"""The `[brain]` table of a NEAT brain: the capacity of its genome tables and the node
functions its genes may choose from."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evo_core import BrainConfig

__all__ = ["NEATConfig"]

ActivationName = Literal["sigmoid", "tanh", "relu", "linear"]


def _sigmoid_only() -> list[ActivationName]:
    return ["sigmoid"]


class NEATConfig(BrainConfig):
    """A network whose topology is in its genome: `max_nodes` node genes and `max_conns`
    connection genes at most (see evo_neat.genome)."""

    type: Literal["neat"] = "neat"
    max_nodes: int = Field(
        32, ge=2, le=4096, description="Capacity of the node table: inputs, outputs and every "
        "hidden node a genome may grow. The brain holds a max_nodes x max_nodes weight matrix "
        "per genome.")
    max_conns: int = Field(
        128, ge=1, le=1_000_000, description="Capacity of the connection table.")
    activations: list[ActivationName] = Field(
        default_factory=_sigmoid_only, min_length=1, description="The node functions a "
        "node gene's activation index chooses from (index 0 for new nodes). The paper's "
        "steepened sigmoid 1/(1+exp(-4.9x)) is sigmoid with response 4.9.")
    network: Literal["recurrent", "feedforward"] = Field(
        "recurrent", description="recurrent: every node updated once a step from the previous "
        "step's values, so a signal crosses one connection a step (neat-python's "
        "RecurrentNetwork; the NEAT C++ release's one activation per step, which the paper's "
        "pole-balancing runs use, recurrent links allowed). feedforward: the outputs reflect "
        "this step's inputs, as topological evaluation (neat-python's FeedForwardNetwork; the "
        "C++ release relaxes its XOR networks to their depth); max_nodes - inputs sweeps a "
        "step, so it costs that many times more.")
    delta_t: float = Field(
        0.05, gt=0, description="Euler step of a CTRNN node (one with a time constant tau > 0):"
        " y += delta_t/tau * (activation(z) - y), delta_t/tau capped at 1.")
