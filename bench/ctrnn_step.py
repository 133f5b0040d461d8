"""CTRNN step and make cost against a plain dense-numpy CTRNN loop measured in the same run.

    python bench/ctrnn_step.py [--steps 20000] [--repeats 5]

CartPole-sized input (Box(4) + bias) and output (Discrete(2)), tanh, `global` clipping, y0
evolved, dense masks. The plain loop is the least a hand-written CTRNN must do per step:
preallocated matrices, the bias as a matrix column, no framework. Goals: step ratio
<= 1.2, make() <= 50 µs at N = 50. Best of `--repeats` runs, to dampen noise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _timing import best_of, step_benchmark_setup
from threadpoolctl import threadpool_limits

from brain_ctrnn import CTRNNConfig, CTRNNTemplate


def plain_loop(v: Any, w: Any, t: Any, y0: Any, low: Any, high: Any, observations: Any,
               dt: float) -> int:
    """The baseline: one CTRNN step per observation, written directly."""
    y = y0.copy()
    u = np.ones(v.shape[1])
    tt = np.ascontiguousarray(t.T)
    actions = 0
    for observation in observations:
        u[:-1] = observation
        dy = w @ np.tanh(y) + v @ u
        y = y + dt * dy
        np.maximum(y, low, out=y)
        np.minimum(y, high, out=y)
        actions += int(np.tanh(tt @ y).argmax())
    return actions


def kernel_comparison(n: int, density: float, rng: np.random.Generator,
                      repeats: int) -> tuple[float, float]:
    """µs per W·a product: dense matmul vs a numpy sparse product (gather, multiply, bincount)
    on a random mask of the given density; this decides the CTRNN's kernel choice."""
    mask = rng.random((n, n)) < density
    w = np.where(mask, rng.normal(size=(n, n)), 0.0)
    rows, cols = np.nonzero(mask)
    values = w[rows, cols]
    a = rng.normal(size=n)
    count = 20000

    def dense() -> None:
        for _ in range(count):
            w @ a

    def sparse() -> None:
        for _ in range(count):
            np.bincount(rows, weights=values * a[cols], minlength=n)

    return (best_of(repeats, dense) / count * 1e6, best_of(repeats, sparse) / count * 1e6)


def step_row(n: int, repeats: int, steps: int, env: Any, rng: np.random.Generator,
             observations: Any) -> None:
    """One table row: evo's step, the plain loop and make() for N = n."""
    config = CTRNNConfig(number_neurons=n, delta_t=0.05, optimize_state_boundaries="global")
    template = CTRNNTemplate(config, env.observation_space, env.action_space, rng)
    genome = rng.normal(0, 0.5, template.genome_size)
    brain = template.make(genome)
    p = {name: value[0] for name, value in template.params(np, genome[None, :]).items()}

    def evo_steps() -> None:
        brain.reset()
        for observation in observations:
            brain.step(observation)

    def plain_steps() -> None:
        plain_loop(p["v"], p["w"], p["t_transposed"].T, p["y0"], p["lower"], p["upper"],
                   observations, config.delta_t)

    makes = 2000

    def make_many() -> None:
        for _ in range(makes):
            template.make(genome)

    evo_time = best_of(repeats, evo_steps) / steps * 1e6
    plain_time = best_of(repeats, plain_steps) / steps * 1e6
    make_time = best_of(repeats, make_many) / makes * 1e6
    print(f"{n:>4} {template.genome_size:>6} {evo_time:>12.2f} {plain_time:>9.2f} "
          f"{evo_time / plain_time:>6.2f} {make_time:>8.1f}")


def main() -> None:
    args, env, rng, observations = step_benchmark_setup(__doc__.splitlines()[0])
    print(f"{'N':>4} {'genes':>6} {'evo step µs':>12} {'plain µs':>9} {'ratio':>6} "
          f"{'make µs':>8}")
    for n in (10, 50, 200):
        step_row(n, args.repeats, args.steps, env, rng, observations)
    print("\nW·a kernel, µs per product (10% dense random mask)")
    print(f"{'N':>4} {'dense':>7} {'sparse':>7}")
    for n in (10, 50, 200):
        dense, sparse = kernel_comparison(n, 0.1, rng, args.repeats)
        print(f"{n:>4} {dense:>7.2f} {sparse:>7.2f}")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
