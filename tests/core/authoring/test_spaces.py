"""Observation encoding and action decoding for every supported space; inputs never modified."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from evo_core import action_decoder, observation_encoder


def frozen_copy_check(value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    before = value.copy()
    value.setflags(write=False)  # any write attempt raises
    return value, before


def test_box_flattens_and_copies() -> None:
    space = spaces.Box(-1, 1, shape=(2, 3), dtype=np.float32)
    encode = observation_encoder(space)
    obs, before = frozen_copy_check(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = encode(obs)
    assert encode.size == 6 and out.dtype == np.float64 and out.shape == (6,)
    assert np.array_equal(out, np.arange(6))
    out[0] = 99  # the result is the brain's own
    assert np.array_equal(obs, before)


def test_box_normalisation_only_bounded_dimensions() -> None:
    big = float(np.finfo(np.float32).max)
    space = spaces.Box(np.array([-4.8, -big, -np.inf, 0.0]), np.array([4.8, big, np.inf, 10.0]),
                       dtype=np.float64)
    encode = observation_encoder(space, normalize_target=2.0)
    obs, before = frozen_copy_check(np.array([2.4, 5.0, -7.0, 10.0]))
    out = encode(obs)
    # 2.4 in [-4.8, 4.8] -> 1.0; float32-max and infinite bounds pass unchanged; 10 in [0, 10] -> 2
    assert np.allclose(out, [1.0, 5.0, -7.0, 2.0])
    assert np.array_equal(obs, before)


def test_discrete_is_one_hot_with_start() -> None:
    encode = observation_encoder(spaces.Discrete(4, start=1))
    assert encode.size == 4
    assert np.array_equal(encode(3), [0, 0, 1, 0])
    assert np.array_equal(encode(np.int64(1)), [1, 0, 0, 0])


def test_multidiscrete_and_multibinary_observations() -> None:
    encode = observation_encoder(spaces.MultiDiscrete([2, 3]))
    assert encode.size == 5 and np.array_equal(encode(np.array([1, 2])), [0, 1, 0, 0, 1])
    binary = observation_encoder(spaces.MultiBinary(3))
    assert np.array_equal(binary(np.array([1, 0, 1], dtype=np.int8)), [1, 0, 1])


def test_tuple_and_dict_concatenate_in_order() -> None:
    space = spaces.Tuple((spaces.Discrete(2), spaces.Box(-1, 1, (2,))))
    encode = observation_encoder(space)
    obs, before = frozen_copy_check(np.array([0.5, -0.5], dtype=np.float32))
    assert encode.size == 4 and np.allclose(encode((1, obs)), [0, 1, 0.5, -0.5])
    assert np.array_equal(obs, before)
    dict_space = spaces.Dict({"a": spaces.Discrete(2), "b": spaces.Box(-1, 1, (1,))})
    encode = observation_encoder(dict_space)
    assert np.allclose(encode({"b": np.array([0.25]), "a": 0}), [1, 0, 0.25])


def test_discrete_action_argmax_first_on_ties() -> None:
    decode = action_decoder(spaces.Discrete(3, start=-1))
    out, before = frozen_copy_check(np.array([0.2, 0.9, 0.9]))
    assert decode.size == 3 and decode(out) == 0
    assert spaces.Discrete(3, start=-1).contains(decode(out))
    assert np.array_equal(out, before)


def test_multidiscrete_action_argmax_per_part() -> None:
    space = spaces.MultiDiscrete([2, 3])
    decode = action_decoder(space)
    action = decode(np.array([0.1, 0.5, 0.3, -1.0, 0.2]))
    assert decode.size == 5 and np.array_equal(action, [1, 0]) and space.contains(action)


def test_box_action_maps_finite_bounds_and_keeps_infinite() -> None:
    space = spaces.Box(np.array([-2.0, 0.0, -np.inf], np.float32),
                       np.array([2.0, 10.0, np.inf], np.float32), dtype=np.float32)
    decode = action_decoder(space)
    out, before = frozen_copy_check(np.array([0.5, -1.0, 7.5]))
    action = decode(out)
    assert action.dtype == np.float32 and np.allclose(action, [1.0, 0.0, 7.5])
    assert space.contains(action) and np.array_equal(out, before)
    # outputs beyond [-1, 1] still give valid actions
    assert space.contains(decode(np.array([5.0, -3.0, 0.0])))


def test_box_action_reshapes() -> None:
    space = spaces.Box(-1, 1, shape=(2, 2), dtype=np.float64)
    decode = action_decoder(space)
    action = decode(np.array([0.1, 0.2, 0.3, 0.4]))
    assert action.shape == (2, 2) and np.allclose(action, [[0.1, 0.2], [0.3, 0.4]])


def test_half_bounded_box_action_is_clipped_to_its_bound() -> None:
    space = spaces.Box(np.array([0.0]), np.array([np.inf]), dtype=np.float64)
    decode = action_decoder(space)
    assert decode(np.array([-3.0]))[0] == 0.0 and decode(np.array([3.0]))[0] == 3.0


def test_composite_actions() -> None:
    space = spaces.Tuple((spaces.Discrete(2), spaces.Box(-1, 1, (1,))))
    decode = action_decoder(space)
    action = decode(np.array([0.0, 1.0, 0.5]))
    assert decode.size == 3 and space.contains(action) and action[0] == 1
    dict_space = spaces.Dict({"go": spaces.Discrete(2), "bits": spaces.MultiBinary(2)})
    decoded = action_decoder(dict_space)(np.array([1.0, 0.0, 0.3, -0.3]))
    assert dict_space.contains(decoded)


def test_unsupported_space_is_named() -> None:
    with pytest.raises(TypeError, match="Text is not supported as an observation space"):
        observation_encoder(spaces.Text(5))
