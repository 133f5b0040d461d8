"""brain-ctrnn: the worked examples of plugins/ctrnn/docs/math.md, a loop reference, masks, and
the template."""

from __future__ import annotations

import pickle
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import legacy_key
from gymnasium import spaces

from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from brain_ctrnn.masks import logarithmic_mask, make_mask
from evo_core import ArrayBrain, IRandomBrain
from evo_core.authoring.array_brain import NoisyArrayBrain

BOX2 = spaces.Box(-1, 1, (2,), dtype=np.float64)
FREE1 = spaces.Box(-np.inf, np.inf, (1,), dtype=np.float64)
FREE2 = spaces.Box(-np.inf, np.inf, (2,), dtype=np.float64)


def ctrnn(t: CTRNNTemplate, genome: Any) -> ArrayBrain:
    """`t.make(genome)`, typed as the lone brain the core derives."""
    brain = t.make(np.asarray(genome, dtype=np.float64))
    assert isinstance(brain, ArrayBrain)
    return brain


def noisy_ctrnn(t: CTRNNTemplate, genome: Any) -> NoisyArrayBrain:
    """`t.make(genome)` of a template with state noise, which takes Generators."""
    brain = ctrnn(t, genome)
    assert isinstance(brain, NoisyArrayBrain)
    return brain


def decoded(brain: ArrayBrain) -> SimpleNamespace:
    """The lone brain's matrices, vectors and bounds (row 0 of its parameters); `t` is T
    (N x outputs), the parameters hold its transpose."""
    p = {name: value[0] for name, value in brain.params.items()}
    return SimpleNamespace(v=p["v"], w=p["w"], t=p["t_transposed"].T, y0=p["y0"],
                           lower=p["lower"], upper=p["upper"])


def y_of(brain: ArrayBrain) -> np.ndarray:
    """The lone brain's y."""
    return np.asarray(brain.state["y"][0])


def template(observation=BOX2, action=FREE2, seed=0, **fields) -> CTRNNTemplate:
    return CTRNNTemplate(CTRNNConfig(**fields), observation, action, np.random.default_rng(seed))


def test_example_a() -> None:
    t = template(action=FREE1, number_neurons=3, delta_t=0.1, neuron_activation="tanh",
                 use_bias=True, optimize_y0=True, optimize_state_boundaries="global",
                 set_principle_diagonal_elements_of_W_negative=True)
    assert t.genome_size == 26
    brain = ctrnn(t, np.linspace(-1, 1, 26))
    p = decoded(brain)
    assert np.allclose(p.v, [[-1, -0.92, -0.84], [-0.76, -0.68, -0.6], [-0.52, -0.44, -0.36]])
    assert np.allclose(p.w, [[-0.28, -0.2, -0.12], [-0.04, -0.04, 0.12], [0.2, 0.28, -0.36]])
    assert np.allclose(p.t[:, 0], [0.44, 0.52, 0.6]) and np.allclose(p.y0, [0.68, 0.76, 0.84])
    assert np.allclose(p.lower, -0.92) and np.allclose(p.upper, 1.0)
    brain.reset()
    expected = [(0.79710448, (0.55438621, 0.69929932, 0.80509142)),
                (0.70377555, (0.33619886, 0.56687091, 0.72006982)),
                (0.58646971, (0.13346005, 0.44292579, 0.63870673))]
    for observation, (output, state) in zip([(0.5, -0.5), (1, 0), (0, 1)], expected):
        action = brain.step(np.array(observation))
        assert np.allclose(action, [output], atol=1e-8)
        assert np.allclose(y_of(brain), state, atol=1e-8)


def test_example_b() -> None:
    t = template(number_neurons=2, delta_t=0.5, neuron_activation="relu",
                 neuron_activation_inplace=True, use_bias=False, optimize_y0=False,
                 optimize_state_boundaries="fixed", clipping_range_min=-1, clipping_range_max=1,
                 set_principle_diagonal_elements_of_W_negative=False)
    assert t.genome_size == 12
    brain = ctrnn(t, np.linspace(-0.5, 0.7, 12))
    brain.reset()
    expected = [((-0.40047529, -0.48411660), (-0.64090909, -0.31363636)),
                ((-0.40047529, -0.48411660), (-0.64090909, -0.31363636)),
                ((0.11400631, 0.14083450), (0.15227273, 0.09772727))]
    for observation, (output, state) in zip([(1, 2), (1, 2), (-1, 0.5)], expected):
        assert np.allclose(brain.step(np.array(observation, dtype=float)), output, atol=1e-8)
        assert np.allclose(y_of(brain), state, atol=1e-8)


def test_genome_layout_is_row_major_v_w_t_y0_bounds() -> None:
    t = template(number_neurons=2, use_bias=False, optimize_y0=True,
                 optimize_state_boundaries="legacy",
                 set_principle_diagonal_elements_of_W_negative=False)
    p = decoded(ctrnn(t, np.arange(18.0)))
    assert np.array_equal(p.v, [[0, 1], [2, 3]]) and np.array_equal(p.w, [[4, 5], [6, 7]])
    assert np.array_equal(p.t, [[8, 9], [10, 11]]) and np.array_equal(p.y0, [12, 13])


def test_bias_weight_follows_each_neurons_inputs() -> None:
    t = template(number_neurons=2, use_bias=True, optimize_y0=False,
                 optimize_state_boundaries="fixed")
    p = decoded(ctrnn(t, np.arange(float(t.genome_size))))
    assert np.array_equal(p.v, [[0, 1, 2], [3, 4, 5]])  # third column: bias


def identity_brain(**fields):
    t = template(number_neurons=2, use_bias=False, optimize_y0=False, **fields)
    eye = np.eye(2).reshape(-1)
    return t, eye


def test_step_with_identity_matrices() -> None:
    t, eye = identity_brain(delta_t=1.0, neuron_activation="tanh",
                            optimize_state_boundaries="global",
                            set_principle_diagonal_elements_of_W_negative=False)
    brain = ctrnn(t, np.concatenate([eye, eye, eye, [100.0, 100.0]]))
    brain.reset()
    assert np.allclose(brain.step(np.ones(2)), np.tanh(1.0)) and np.allclose(y_of(brain), 1.0)
    brain.step(np.ones(2))
    assert np.allclose(y_of(brain), np.tanh(1.0) + 2)


def test_clipping_legacy() -> None:
    t, eye = identity_brain(delta_t=0.05, optimize_state_boundaries="legacy",
                            set_principle_diagonal_elements_of_W_negative=True)
    brain = ctrnn(t, np.concatenate([eye, eye, eye, [-10, -15, 10, 15]]))
    brain.reset()
    assert np.allclose(brain.step(np.array([1000.0, 1000.0])), np.tanh(10.0))
    assert np.array_equal(y_of(brain), [10, 10])


def test_clipping_per_neuron() -> None:
    t, eye = identity_brain(delta_t=0.05, optimize_state_boundaries="per_neuron")
    brain = ctrnn(t, np.concatenate([eye, eye, eye, [-4, -5, 2, 3]]))
    brain.reset()
    brain.step(np.array([1e5, 1e5]))
    assert np.array_equal(y_of(brain), [2, 3])
    brain.step(np.array([-1e5, -1e5]))
    assert np.array_equal(y_of(brain), [-4, -5])


@pytest.mark.parametrize("mode", ["global", "per_neuron", "legacy"])
def test_bounds_offset_centres_the_evolved_bounds(mode: str) -> None:
    """Bound genes of 0 are bounds of 0 (every state pinned at 0) without an offset, and the
    offset's ±1 with one; a gene moves its bound from there, on either side of the offset."""
    n = 3
    size = 2 if mode == "global" else 2 * n
    plain = template(number_neurons=n, optimize_state_boundaries=mode)
    offset = template(number_neurons=n, optimize_state_boundaries=mode, bounds_offset=1.0)
    assert [float(np.max(np.abs(b))) for b in plain._bounds(np, np.zeros((1, size)))] == [0.0, 0.0]
    low, high = offset._bounds(np, np.zeros((1, size)))
    assert np.all(np.asarray(low) == -1.0) and np.all(np.asarray(high) == 1.0)
    genes = np.zeros(size)
    genes[0], genes[-1] = 0.5, -0.25
    low, high = offset._bounds(np, genes[None, :])
    # legacy composes the intervals in turn: neuron 1's [-1, 1] cuts neuron 0's -1.5 back
    assert np.asarray(low).flat[0] == (-1.0 if mode == "legacy" else -1.5)
    assert np.asarray(high).flat[-1] == 0.75


@pytest.mark.parametrize("seed", range(20))
def test_legacy_fold_equals_sequential_clipping(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    t = template(number_neurons=n, optimize_state_boundaries="legacy")
    genes = rng.normal(0, 2, size=2 * n)
    low, high = (float(bound[0, 0]) for bound in t._bounds(np, genes[None, :]))
    for x in rng.normal(0, 4, size=50):
        y = x
        for lo, hi in zip(-np.abs(genes[:n]), np.abs(genes[n:])):
            y = min(max(y, lo), hi)
        assert min(max(x, low), high) == y


def test_genome_sizes_of_the_reference() -> None:
    t = template(spaces.Box(-1, 1, (3,)), spaces.Box(-1, 1, (3,)), number_neurons=2,
                 use_bias=False, optimize_y0=True, optimize_state_boundaries="legacy")
    assert t.genome_size == 22
    cartpole = gym.make("CartPole-v1")
    for n, size in ((10, 182), (50, 2902)):
        t = template(cartpole.observation_space, cartpole.action_space, number_neurons=n,
                     use_bias=True, optimize_y0=True, optimize_state_boundaries="global")
        assert t.genome_size == size


def test_wrong_genome_length_names_expected_size() -> None:
    t = template(number_neurons=3)
    with pytest.raises(ValueError, match=rf"expected \({t.genome_size},\)"):
        ctrnn(t, np.zeros(t.genome_size - 1))
    ctrnn(t, np.zeros(t.genome_size))


# ---------------------------------------------------------------- a straightforward reference


def reference_matrices(config: CTRNNConfig, masks, genome):
    """V, W and T filled cell by cell from the genome, masked and pruned; the genes used."""
    pos = 0
    mats = []
    for mask in masks:
        m = np.zeros(mask.shape)
        for r, c in zip(*np.nonzero(mask)):
            m[r, c] = genome[pos]
            pos += 1
        mats.append(m)
    v, w, t = mats
    for kind, m, param in ((config.v_mask, v, config.v_mask_param),
                           (config.w_mask, w, config.w_mask_param),
                           (config.t_mask, t, config.t_mask_param)):
        if kind == "learned":
            p = np.percentile(np.abs(m), param, method="higher")
            m[np.abs(m) < p] = 0
    if config.set_principle_diagonal_elements_of_W_negative:
        for i in range(config.number_neurons):
            if w[i, i] != 0:
                w[i, i] = -abs(w[i, i])
    return v, w, t, pos


def reference_bounds(config: CTRNNConfig, genome, pos: int):
    """Each neuron's (low, high) clipping bounds; the position after their genes."""
    n = config.number_neurons
    mode = config.optimize_state_boundaries
    o = config.bounds_offset
    if mode == "global":
        return [(-abs(o + genome[pos]), abs(o + genome[pos + 1]))] * n, pos + 2
    if mode in ("per_neuron", "legacy"):
        return ([(-abs(o + genome[pos + i]), abs(o + genome[pos + n + i])) for i in range(n)],
                pos + 2 * n)
    return [(config.clipping_range_min, config.clipping_range_max)] * n, pos


def reference_run(config: CTRNNConfig, masks, genome, observations, noise):
    """The step equations written out with loops over neurons and cells."""
    n = config.number_neurons
    v, w, t, pos = reference_matrices(config, masks, genome)
    y = np.array(genome[pos:pos + n]) if config.optimize_y0 else np.zeros(n)
    pos += n if config.optimize_y0 else 0
    mode = config.optimize_state_boundaries
    bounds, pos = reference_bounds(config, genome, pos)
    tau = [config.delta_t + abs(g) for g in genome[pos:pos + n]] if config.time_constants else None
    outputs = []
    for step, ob in enumerate(observations):
        u = list(ob) + ([1.0] if config.use_bias else [])
        a = [np.tanh(x) if config.neuron_activation == "tanh" else max(x, 0.0) for x in y]
        if config.neuron_activation_inplace:
            y = np.array(a)
        new = []
        for i in range(n):
            d = sum(w[i, j] * a[j] for j in range(n)) + sum(v[i, k] * u[k] for k in range(len(u)))
            if tau is not None:
                d = (d - y[i]) / tau[i]
            new.append(y[i] + config.delta_t * d)
        y = np.array(new) + noise[step]
        if mode == "legacy":
            for lo, hi in bounds:
                y = np.minimum(np.maximum(y, lo), hi)
        else:
            y = np.array([min(max(y[i], bounds[i][0]), bounds[i][1]) for i in range(n)])
        outputs.append([np.tanh(sum(t[i, k] * y[i] for i in range(n))) for k in range(t.shape[1])])
    return np.array(outputs), y


@pytest.mark.parametrize("seed", range(40))
def test_random_configs_match_the_loop_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    mask_choice = [("dense", 0.0), ("random", 0.5), ("logarithmic", 2.0), ("learned", 30.0)]
    masks: dict[str, Any] = {}
    for name in "vwt":
        kind, param = mask_choice[int(rng.integers(4))]
        masks[f"{name}_mask"], masks[f"{name}_mask_param"] = kind, param
    config = CTRNNConfig(
        number_neurons=int(rng.integers(1, 9)), delta_t=float(rng.uniform(0.01, 0.5)),
        neuron_activation=str(rng.choice(["tanh", "relu"])),
        neuron_activation_inplace=bool(rng.integers(2)), use_bias=bool(rng.integers(2)),
        optimize_y0=bool(rng.integers(2)),
        optimize_state_boundaries=str(rng.choice(["global", "per_neuron", "legacy", "fixed"])),
        set_principle_diagonal_elements_of_W_negative=bool(rng.integers(2)),
        time_constants=bool(rng.integers(2)), bounds_offset=float(rng.choice([0.0, 1.5])),
        parameter_perturbations=float(rng.choice([0.0, 0.1])), **masks)
    inputs, outputs = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    t = CTRNNTemplate(config, spaces.Box(-5, 5, (inputs,), dtype=np.float64),
                      spaces.Box(-np.inf, np.inf, (outputs,), dtype=np.float64), rng)
    genome = rng.normal(0, 1, t.genome_size)
    observations = rng.normal(0, 2, (15, inputs))
    noise_seed = int(rng.integers(1 << 30))
    noise = (np.random.default_rng(noise_seed).normal(0, config.parameter_perturbations,
                                                      (15, config.number_neurons))
             if config.parameter_perturbations else np.zeros((15, config.number_neurons)))
    expected, final = reference_run(config, [t.v_mask, t.w_mask, t.t_mask], genome,
                                    observations, noise)
    brain = ctrnn(t, genome)
    # only a noisy CTRNN takes a Generator (the runner makes none for the others)
    assert isinstance(brain, IRandomBrain) == bool(config.parameter_perturbations)
    if isinstance(brain, NoisyArrayBrain):
        brain.use_rng(np.random.default_rng(noise_seed))
    brain.reset()
    got = np.array([brain.step(ob) for ob in observations])
    assert np.allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert np.allclose(y_of(brain), final, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- masks


@pytest.mark.parametrize("shape,base,count", [
    ((10, 10), 2, 60), ((10, 10), 3, 40), ((20, 20), 4, 80), ((10, 4), 2, 40),
    ((10, 2), 2, 20), ((4, 10), 2, 36)])
def test_logarithmic_mask_counts(shape, base, count) -> None:
    mask = logarithmic_mask(shape[0], shape[1], base)
    assert mask.sum() == count
    if shape == (20, 20):
        assert (mask.sum(axis=1) == 4).all()


def test_logarithmic_anchor_quirk_is_kept() -> None:
    mask = logarithmic_mask(10, 10, 2)
    # anchor columns 0,1,2,3,4,4,5,6,7,8 (not the diagonal); the anchor cell itself is left out
    anchors = np.round(np.arange(10) * 9 / 10).astype(int)
    assert list(anchors) == [0, 1, 2, 3, 4, 4, 5, 6, 7, 8]
    assert not any(mask[r, c] for r, c in enumerate(anchors))


def test_random_mask_density_and_determinism() -> None:
    a = make_mask("random", 200, 200, 0.3, np.random.default_rng(7))
    b = make_mask("random", 200, 200, 0.3, np.random.default_rng(7))
    c = make_mask("random", 200, 200, 0.3, np.random.default_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert abs(a.mean() - 0.3) < 0.01


def test_template_masks_come_from_its_rng_and_bias_column_is_dense() -> None:
    fields = dict(number_neurons=12, v_mask="random", v_mask_param=0.2, w_mask="random",
                  w_mask_param=0.5, t_mask="logarithmic", t_mask_param=1.5)
    state = np.random.get_state()
    a = template(spaces.Box(-1, 1, (6,)), seed=3, **fields)
    b = template(spaces.Box(-1, 1, (6,)), seed=3, **fields)
    assert np.array_equal(legacy_key(np.random.get_state()), legacy_key(state))
    assert all(np.array_equal(a.saved_state()[k], b.saved_state()[k]) for k in a.saved_state())
    assert a.v_mask[:, -1].all() and a.v_mask.shape == (12, 7)
    assert a.genome_size == a.v_mask.sum() + a.w_mask.sum() + a.t_mask.sum() + 12 + 2


def test_learned_mask_prunes_small_weights() -> None:
    t = template(number_neurons=4, use_bias=False, optimize_y0=False,
                 optimize_state_boundaries="fixed", w_mask="learned", w_mask_param=50,
                 set_principle_diagonal_elements_of_W_negative=False)
    genome = np.zeros(t.genome_size)
    genome[4 * 2: 4 * 2 + 16] = np.arange(1, 17)
    w = decoded(ctrnn(t, genome)).w
    assert (w != 0).sum() == 8 and np.min(w) == 0 and np.min(np.abs(w[w != 0])) == 9


# ---------------------------------------------------------------- template behaviour


def test_template_is_frozen_and_read_only() -> None:
    t = template(number_neurons=5, w_mask="random", w_mask_param=0.5)
    with pytest.raises(AttributeError, match="immutable"):
        t.w_mask = np.ones((5, 5), dtype=bool)
    for array in (t.v_mask, t.w_mask, t.t_mask, t.v_index):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0
    clone = pickle.loads(pickle.dumps(t))
    with pytest.raises(ValueError, match="read-only"):
        clone.w_mask[0, 0] = True
    with pytest.raises(AttributeError):
        clone.offsets = None


def test_pickled_template_makes_identical_brains() -> None:
    rng = np.random.default_rng(1)
    t = template(spaces.Box(-1, 1, (4,)), spaces.Discrete(3), number_neurons=7,
                 w_mask="random", w_mask_param=0.4, parameter_perturbations=0.05)
    clone = pickle.loads(pickle.dumps(t))
    genome = rng.normal(size=t.genome_size)
    observations = rng.uniform(-1, 1, (30, 4))
    runs = []
    for tpl in (t, clone):
        brain = noisy_ctrnn(tpl, genome)
        brain.use_rng(np.random.default_rng(5))
        brain.reset()
        runs.append([brain.step(ob) for ob in observations] + [y_of(brain).tobytes()])
    assert runs[0] == runs[1]


def test_reset_makes_a_second_episode_identical() -> None:
    rng = np.random.default_rng(2)
    t = template(spaces.Box(-1, 1, (3,)), spaces.Box(-1, 1, (2,)), number_neurons=6,
                 parameter_perturbations=0.1, time_constants=True)
    brain = noisy_ctrnn(t, rng.normal(size=t.genome_size))
    observations = rng.uniform(-1, 1, (25, 3))
    episodes = []
    for _ in range(2):
        brain.use_rng(np.random.default_rng(11))
        brain.reset()
        episodes.append(np.array([brain.step(ob) for ob in observations]))
    assert np.array_equal(episodes[0], episodes[1])


def test_restore_rebuilds_the_same_template() -> None:
    t = template(number_neurons=6, w_mask="random", w_mask_param=0.5, seed=4)
    other = t.restore(t.saved_state())
    assert other.genome_size == t.genome_size and np.array_equal(other.w_mask, t.w_mask)


def test_normalisation_uses_finite_bounds_and_leaves_input_alone() -> None:
    big = float(np.finfo(np.float32).max)
    box = spaces.Box(np.array([-4.8, -big]), np.array([4.8, big]), dtype=np.float64)
    t = template(box, FREE1, number_neurons=1, use_bias=False, optimize_y0=False,
                 optimize_state_boundaries="fixed", clipping_range_min=-100,
                 clipping_range_max=100, normalize_input=True, normalize_input_target=2,
                 set_principle_diagonal_elements_of_W_negative=False, delta_t=1.0)
    brain = ctrnn(t, np.array([1.0, 0.0, 0.0, 1.0]))  # V = [1, 0]: y = first normalised input
    observation = np.array([2.4, 5.0])
    brain.reset()
    brain.step(observation)
    assert np.isclose(y_of(brain)[0], 1.0) and np.array_equal(observation, [2.4, 5.0])


def test_discrete_observations_are_one_hot() -> None:
    t = template(spaces.Discrete(3), spaces.Discrete(2), number_neurons=2)
    assert t.input_size == 3 and t.encoder.size == 4 and t.v_mask.shape == (2, 4)
    brain = ctrnn(t, np.zeros(t.genome_size))
    brain.reset()
    assert brain.step(2) in (0, 1)
