"""The `[brain]` table of a NEAT brain: the capacity of its genome tables and the node
functions its genes may choose from."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evo_core import BrainConfig, OptimizerConfig

__all__ = ["NEATConfig", "NEATOptimizerConfig"]

ActivationName = Literal["sigmoid", "tanh", "relu", "linear"]


def _sigmoid_only() -> list[ActivationName]:
    return ["sigmoid"]


class NEATConfig(BrainConfig):
    """NEAT's network, whose nodes and connections the NEAT optimizer grows (optimizer type
    "neat"); recurrent or feed-forward, plain or CTRNN nodes.

    The genome holds `max_nodes` node genes and `max_conns` connection genes at most
    (evo_neat.genome)."""

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
    response: float = Field(
        4.9, gt=0, le=100, description="Every node's response (its input sum's factor), as "
        "new nodes get it: 4.9 with sigmoid is the paper's steepened sigmoid "
        "1/(1+exp(-4.9x)); neat-python's sigmoid is response 5.")
    tau: float = Field(
        0.0, ge=0, le=1e6, description="A node's time constant as new nodes get it: 0 makes "
        "plain nodes (the genome's tau column is not read); > 0 makes CTRNN nodes (y moves "
        "towards activation(z) by delta_t/tau a step), whose tau the optimizer evolves (the "
        "research group's brain, neat-python 2.0's CTRNN).")
    outputs: Literal["unit", "signed"] = Field(
        "unit", description="The output nodes' range as the action decoder reads it: unit "
        "[0, 1] (sigmoid outputs, mapped onto the action's whole range as 2*o - 1, as the "
        "paper's pole runs map the output onto the whole force range), or signed [-1, 1] "
        "(tanh outputs).")
    delta_t: float = Field(
        0.05, gt=0, description="Euler step of a CTRNN node (one with a time constant tau > 0):"
        " y += delta_t/tau * (activation(z) - y), delta_t/tau capped at 1.")


class NEATOptimizerConfig(OptimizerConfig):
    """NEAT (Stanley & Miikkulainen 2002): topology and weights evolved together, for small
    networks whose structure is unknown; only with brain type "neat".

    Speciation by compatibility distance, explicit fitness sharing, crossover lined up by
    innovation number, structural mutations. Defaults are the paper's double-pole settings
    (population 150); where the paper is silent they are the NEAT C++ release's, and where
    neither says, evo's own (marked so)."""

    type: Literal["neat"] = "neat"
    population_size: int = Field(150, ge=2, description="Genomes per generation.")
    compatibility_threshold: float = Field(
        3.0, gt=0, description="delta_t: a genome joins the first species whose representative "
        "is closer than this (the paper: 3.0; 4.0 for its population of 1,000).")
    target_species: int = Field(
        0, ge=0, description="0: the threshold is fixed. > 0: after each generation's "
        "speciation the threshold moves by threshold_step towards this many species (the "
        "C++ release's adaptive threshold; Lehman's mazes: population / 15).")
    threshold_step: float = Field(0.3, gt=0, description="The adaptive threshold's step.")
    threshold_floor: float = Field(0.3, gt=0, description="The adaptive threshold's floor.")
    excess_coefficient: float = Field(1.0, ge=0, description="c1, of excess genes.")
    disjoint_coefficient: float = Field(1.0, ge=0, description="c2, of disjoint genes.")
    weight_coefficient: float = Field(
        0.4, ge=0, description="c3, of the matching genes' mean weight difference (the "
        "paper: 0.4; 3.0 for its population of 1,000).")
    small_genome: int = Field(
        20, ge=0, description="N (the larger genome's size) is taken as 1 below this many "
        "genes, as the paper allows for small genomes.")
    add_node: float = Field(0.03, ge=0, le=1, description="Probability that a child gets a "
                            "new node splitting one of its enabled connections.")
    add_connection: float = Field(0.05, ge=0, le=1, description="Probability that a child gets "
                                  "a new connection (0.3 in the paper's population of 1,000).")
    weight_mutation: float = Field(0.8, ge=0, le=1, description="Probability that a child's "
                                   "weights (and node biases) are mutated.")
    weight_perturbation: float = Field(
        0.9, ge=0, le=1, description="In a mutated child, each weight's probability of being "
        "perturbed uniformly by at most weight_power; otherwise it is replaced by a uniform "
        "value in [-weight_power, weight_power].")
    weight_power: float = Field(2.5, gt=0, description="The mutation's power (the C++ "
                                "release's pole runs: 2.5).")
    weight_limit: float = Field(8.0, gt=0, le=1e6, description="Weights and biases are capped "
                                "at +-this (the C++ release's cap).")
    initial_weight_range: float = Field(
        1.0, gt=0, le=1e6, description="First-generation weights, output biases and new "
        "connections' weights are uniform in +-this.")
    tau_mutation: float = Field(
        0.1, ge=0, le=1, description="For CTRNN nodes (brain.tau > 0): each node's "
        "probability, in a mutated child, of tau *= exp(N(0, tau_power)) (evo's choice).")
    tau_power: float = Field(0.2, gt=0, le=10, description="See tau_mutation.")
    mutate_only: float = Field(0.25, ge=0, le=1, description="Share of offspring made by "
                               "mutation without crossover (the paper: 25 %).")
    mate_only: float = Field(0.2, ge=0, le=1, description="Share of crossover children not "
                             "mutated after crossover (the C++ release: 0.2).")
    interspecies: float = Field(0.001, ge=0, le=1, description="Probability that a crossover's "
                                "second parent comes from any species (the paper: 0.001).")
    disabled_rate: float = Field(0.75, ge=0, le=1, description="A matching gene disabled in "
                                 "either parent is disabled in the child with this "
                                 "probability (the paper: 75 %).")
    survival_threshold: float = Field(
        0.2, gt=0, le=1, description="Share of each species (by fitness, at least two "
        "members where it has them) that may be a parent (the C++ release: 0.2).")
    elitism_species_size: int = Field(
        5, ge=0, description="A species with more members than this has its champion "
        "copied unchanged (the paper: more than five). The population's champion is always "
        "copied.")
    stagnation: int = Field(15, ge=1, description="A species whose best fitness has not "
                            "improved for this many generations has no offspring (the paper: "
                            "15), except the species_elitism best species.")
    species_elitism: int = Field(1, ge=0, description="The best species (by their best "
                                 "fitness) that stagnation never removes.")
    population_stagnation: int = Field(
        20, ge=0, description="When the population's best has not improved for this many "
        "generations, only the two best species reproduce, once (the paper: 20, to refocus "
        "the search); 0 never.")
