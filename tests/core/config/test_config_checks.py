"""The config's checks run in one place and in their documented order
(running/config_checks.py): a config with several mistakes is told the first one, always."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from evo_core.config.schema import ExperimentConfig, validate_config
from evo_core.contract.protocols import IBrainTemplate
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.running.config_checks import Sizes, check_config

#: each mistake the checks find, in their order, with the start of the line it is told in
MISTAKES: dict[str, tuple[dict[str, Any], str]] = {
    "tables": ({"novelty": {}}, "c.toml: [novelty] needs a [behaviour] table"),
    "champion": ({"stop": {"champion_tests": [{"environment": "MountainCar-v0",
                                               "min_return": 0.0}]}},
                 "c.toml: stop.champion_tests[0]: environment 'MountainCar-v0' has the spaces"),
    "vectorizer": ({}, "c.toml: the vectorizer refuses the template"),
    "pickling": ({"processing": {"type": "mp", "workers": 1}},
                 "brain 'ffnn' ("),
}


class Template:
    """A template that cannot travel to other processes (it holds a lambda)."""

    genome_size = 1

    def __init__(self) -> None:
        self.hold = lambda: None

    def make(self, genome: Any) -> Any:
        raise AssertionError("no brain is made by a check")


class Evaluators:
    """A vectorizer's factory whose check refuses the template when told to."""

    def __init__(self, refuse: bool) -> None:
        self.refuse = refuse

    def check(self, template: IBrainTemplate) -> None:
        if self.refuse:
            raise UserError("the vectorizer refuses the template")

    def build(self, template: IBrainTemplate) -> Any:
        raise AssertionError("nothing is built by a check")


class Optimizer:
    """An optimizer told fitness only (no descriptors)."""

    def ask(self) -> NDArray[np.float64]:
        raise AssertionError("nothing is asked by a check")

    def tell(self, fitnesses: NDArray[np.float64]) -> None:
        raise AssertionError("nothing is told by a check")

    def state(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        raise AssertionError("no state is loaded by a check")


def config_with(mistakes: list[str]) -> ExperimentConfig:
    data: dict[str, Any] = {"environment": "CartPole-v1", "generations": 1,
                            "brain": {"type": "ffnn"},
                            "optimizer": {"type": "cma-es", "population_size": 2}}
    for name in mistakes:
        data.update(MISTAKES[name][0])
    return validate_config(data, get_registry(), "c.toml")


def check(mistakes: list[str]) -> Sizes:
    registry = get_registry()
    return check_config(config_with(mistakes), registry, registry.get("brain", "ffnn"),
                        Template(), Optimizer(),
                        Evaluators("vectorizer" in mistakes), "c.toml")


@pytest.mark.parametrize("first", list(MISTAKES))
def test_the_first_mistake_in_the_checks_order_is_told(first: str) -> None:
    order = list(MISTAKES)
    mistakes = order[order.index(first):]
    with pytest.raises(UserError) as caught:
        check(mistakes)
    assert str(caught.value).startswith(MISTAKES[first][1]), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_config_without_mistakes_passes_every_check() -> None:
    assert check([]) == Sizes(None, None)
