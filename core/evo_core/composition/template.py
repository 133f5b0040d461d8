"""The chain template: stage templates built once, and where each stage's genes sit.

Stage i is built for the previous stage's action space as its observation space (the first for
the environment's) and for `Box(-1, 1, (output_size,), float64)` as its action space (the last
for the environment's), each from its own child of the Generator the chain is given. The genome
is the stages' genomes concatenated in order. Template state is the union of the stages'
(`IStatefulTemplate`) states, each name prefixed with `stage<i>_`, so a CTRNN stage's masks are
saved and restored like a lone CTRNN's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.freezing import Frozen
from evo_core.composition.brain import ChainBrain
from evo_core.composition.config import ChainConfig
from evo_core.contract.config_models import BrainConfig
from evo_core.contract.protocols import IBrainTemplate, IStatefulTemplate

__all__ = ["ChainTemplate", "stage_prefix"]


def stage_prefix(index: int) -> str:
    """What a stage's template-state names are prefixed with."""
    return f"stage{index}_"


class ChainTemplate(Frozen):
    """Stage templates, in order, and the genome offsets that split a genome among them."""

    config_model: ClassVar[type[BrainConfig]] = ChainConfig

    def __init__(self, config: ChainConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator) -> None:
        if not isinstance(config, ChainConfig):
            raise TypeError(f"ChainTemplate needs a ChainConfig, got {type(config).__name__}")
        self.config = config
        stages: list[IBrainTemplate] = []
        observations = observation_space
        for index, (stage, child) in enumerate(zip(config.stages,
                                                   rng.spawn(len(config.stages)))):
            actions = action_space if stage.output_size is None else \
                gym.spaces.Box(-1.0, 1.0, (stage.output_size,), np.float64)
            try:
                template: IBrainTemplate = stage.template_class(stage.config, observations,
                                                                actions, child)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"brain.stages[{index}] ({stage.config.type}): {exc}") from None
            stages.append(template)
            observations = actions
        self._use_stages(stages)

    def _use_stages(self, stages: list[IBrainTemplate]) -> None:
        """The stages and the genome offsets derived from them (a restored CTRNN stage may
        keep a different number of cells in its masks, so offsets follow the stages)."""
        self.stages = tuple(stages)
        self.offsets = tuple(int(n) for n in np.cumsum([0] + [t.genome_size for t in stages]))

    @property
    def genome_size(self) -> int:
        return self.offsets[-1]

    def make(self, genome: NDArray[np.float64]) -> ChainBrain:
        array = np.ascontiguousarray(genome, dtype=np.float64)
        if array.ndim != 1 or array.shape[0] != self.genome_size:
            raise ValueError(f"ChainTemplate: genome has shape {array.shape}, expected "
                             f"({self.genome_size},): the stages' genomes "
                             f"({', '.join(str(t.genome_size) for t in self.stages)}) in order")
        return ChainBrain([stage.make(array[start:end]) for stage, start, end in
                           zip(self.stages, self.offsets, self.offsets[1:])])

    def saved_state(self) -> dict[str, NDArray[Any]]:
        state: dict[str, NDArray[Any]] = {}
        for index, stage in enumerate(self.stages):
            if isinstance(stage, IStatefulTemplate):
                for name, array in stage.saved_state().items():
                    state[stage_prefix(index) + name] = array
        return state

    def restore(self, state: Mapping[str, NDArray[Any]]) -> ChainTemplate:
        """Each stateful stage restored from its prefixed names; a name no stage claims means
        the state belongs to another chain."""
        stateful = [index for index, stage in enumerate(self.stages)
                    if isinstance(stage, IStatefulTemplate)]
        claimed = {name for name in state
                   if any(name.startswith(stage_prefix(index)) for index in stateful)}
        stray = sorted(set(state) - claimed)
        if stray:
            raise ValueError(f"the saved state has {', '.join(stray)}, which no stateful stage "
                             "of this chain owns")
        stages = list(self.stages)
        for index in stateful:
            prefix = stage_prefix(index)
            part = {name[len(prefix):]: array for name, array in state.items()
                    if name.startswith(prefix)}
            stage: Any = stages[index]
            try:
                stages[index] = stage.restore(part)
            except (KeyError, TypeError, ValueError) as exc:
                raise type(exc)(f"brain.stages[{index}] ({self.config.stages[index].config.type})"
                                f": {exc}") from None

        return self.derive(lambda template: template._use_stages(stages))
