"""The chain `evo check-brain chain` checks when given no config: every installed brain.

A chain has no useful default (its stages are the point), so the check composes what is
installed: each brain with its default config, in name order, every stage but the last handing
on 8 values. A brain that cannot take such a vector (an image brain) can only be the first
stage; the first of those leads and the others are left out.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from pydantic import ValidationError

from evo_core.composition.config import CHAIN, ChainConfig
from evo_core.contract.protocols import IGenomeLayoutTemplate
from evo_core.hooks.registry import Registry

__all__ = ["default_chain", "HANDED_ON"]

#: output_size of every stage but the last in the default chain
HANDED_ON = 8


def default_chain(registry: Registry) -> tuple[ChainConfig, list[str]]:
    """The chain of every installed brain whose defaults validate and that can be a stage (not
    one with a genome layout, NEAT's), and the names left out for needing to be first."""
    vector = gym.spaces.Box(-1.0, 1.0, (HANDED_ON,), np.float64)
    middle: list[str] = []
    front: list[str] = []
    for name in sorted(registry.names("brain")):
        if name == CHAIN:
            continue
        component = registry.components["brain"][name]
        try:
            config = component.config_model.model_validate({})
            template = component.cls(config, vector, vector, np.random.default_rng(0))
        except ValidationError:
            continue
        except (TypeError, ValueError):
            front.append(name)
            continue
        if isinstance(template, IGenomeLayoutTemplate):
            continue   # only its own optimizer searches its genome: never a stage (NEAT)
        middle.append(name)
    names = front[:1] + middle
    stages: list[dict[str, Any]] = [{"type": name, "output_size": HANDED_ON}
                                    for name in names[:-1]]
    stages += [{"type": name} for name in names[-1:]]
    left_out = front[1:]
    config = ChainConfig.model_validate({"type": CHAIN, "stages": stages},
                                        context={"registry": registry})
    return config, left_out
