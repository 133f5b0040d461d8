"""The chain template: stage templates built once, and where each stage's genes sit.

Stage i is built for the previous stage's action space as its observation space (the first for
the environment's) and for `Box(-1, 1, (output_size,), float64)` as its action space (the last
for the environment's), each from its own child of the Generator the chain is given. The genome
is the stages' genomes concatenated in order. Template state is the union of the stages'
(`IStatefulTemplate`) states, each name prefixed with `stage<i>_`, so a CTRNN stage's masks are
saved and restored like a lone CTRNN's. A chain whose stages are all brains written once is one
itself (`ArrayChainTemplate`), with the batch and the JAX form the core derives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, cast

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.array_brain import ArrayBrain, array_brain
from evo_core.authoring.freezing import Frozen
from evo_core.authoring.rows_spaces import decode_rows, encode_rows
from evo_core.composition.brain import ChainBrain
from evo_core.composition.config import ChainConfig
from evo_core.contract.config_models import BrainConfig
from evo_core.contract.protocols import (
    IArrayBrain,
    IBrainTemplate,
    IGenomeLayoutTemplate,
    IStatefulTemplate,
)

__all__ = ["ArrayChainTemplate", "ChainTemplate", "stage_prefix", "written_once"]


def written_once(stages: tuple[IBrainTemplate, ...]) -> bool:
    """Whether a chain of `stages` is an `ArrayChainTemplate`: every stage written once
    (`IArrayBrain`), none drawing noise."""
    return all(isinstance(stage, IArrayBrain) and not stage.noise_size for stage in stages)


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
        self.observation_space = observation_space
        self.action_space = action_space
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
            if isinstance(template, IGenomeLayoutTemplate):
                # its genome only its own optimizer can search, and a chain's genome is one
                # vector for any optimizer: the stage would be searched blindly
                raise ValueError(f"brain.stages[{index}] ({stage.config.type}): its genome has "
                                 "a layout that only its own optimizer can search, so it "
                                 "cannot be a chain stage; use it as the whole brain")
            stages.append(template)
            observations = actions
        self._use_stages(stages)
        if type(self) is ChainTemplate and written_once(self.stages):
            # the registry builds every chain as a ChainTemplate, before its stages are known:
            # a chain of brains written once becomes one here (`ArrayChainTemplate`)
            object.__setattr__(self, "__class__", ArrayChainTemplate)

    def _use_stages(self, stages: list[IBrainTemplate]) -> None:
        """The stages and the genome offsets derived from them (a restored CTRNN stage may
        keep a different number of cells in its masks, so offsets follow the stages)."""
        self.stages = tuple(stages)
        self.offsets = tuple(int(n) for n in np.cumsum([0] + [t.genome_size for t in stages]))

    @property
    def genome_size(self) -> int:
        return self.offsets[-1]

    def check_genome(self, genome: NDArray[Any]) -> NDArray[np.float64]:
        """A contiguous float64 genome of the chain's size, or a ValueError naming the stages'
        sizes."""
        array = np.ascontiguousarray(genome, dtype=np.float64)
        if array.ndim != 1 or array.shape[0] != self.genome_size:
            raise ValueError(f"ChainTemplate: genome has shape {array.shape}, expected "
                             f"({self.genome_size},): the stages' genomes "
                             f"({', '.join(str(t.genome_size) for t in self.stages)}) in order")
        return array

    def make(self, genome: NDArray[np.float64]) -> ChainBrain:
        array = self.check_genome(genome)
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


def _prefix(index: int) -> str:
    return f"stage{index}."


def _stage_part(arrays: dict[str, Any], index: int) -> dict[str, Any]:
    prefix = _prefix(index)
    return {name[len(prefix):]: value for name, value in arrays.items()
            if name.startswith(prefix)}


def _inputs(index: int) -> str:
    """The state's name of the inputs stage `index` got in the last step (kept for its trace;
    not a stage's own name, which `_stage_part` would hand it)."""
    return f"stage{index}:inputs"


def _prefixed(arrays: dict[str, Any], index: int) -> dict[str, Any]:
    prefix = _prefix(index)
    return {prefix + name: value for name, value in arrays.items()}


class ArrayChainTemplate(ChainTemplate):
    """A chain of brains written once is itself a brain written once (`IArrayBrain`): a
    `ChainTemplate` whose stages are all `IArrayBrain`s without noise (`written_once`), which
    `ChainTemplate.__init__` makes it.

    Its parameters and states are its stages', each name prefixed `stage<i>.`; a step runs the
    stages in order, each stage's outputs becoming the next stage's inputs through the stage's
    action decoder and the next stage's observation encoder, as `ChainBrain` hands one stage's
    action to the next as its observation (the batch forms of decoders and encoders compute
    each row as the single call does). So a chain gets the batch and the JAX form the core
    derives, and its lone brain equals `ChainBrain` of the same stages bit for bit. A stage
    with noise keeps a chain a plain `ChainTemplate`: `ChainBrain` gives each stage its own
    child Generator, which the core's one stream of noise per row would not repeat."""

    @property
    def array_stages(self) -> tuple[IArrayBrain, ...]:
        """The stages, every one an `IArrayBrain` (`written_once` made this chain one): read at
        every step, so not checked again (an isinstance against a protocol costs microseconds)."""
        return cast(tuple[IArrayBrain, ...], self.stages)

    @property
    def encoder(self) -> Any:
        return self.array_stages[0].encoder

    @property
    def decoder(self) -> Any:
        return self.array_stages[-1].decoder

    @property
    def noise_size(self) -> int:
        return 0

    def make(self, genome: NDArray[np.float64]) -> ArrayBrain:  # type: ignore[override]
        return array_brain(self, self.check_genome(genome))

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        params: dict[str, Any] = {}
        for index, (stage, start, end) in enumerate(zip(self.array_stages, self.offsets,
                                                        self.offsets[1:])):
            params.update(_prefixed(stage.params(xp, genomes[:, start:end]), index))
        return params

    def initial_state(self, xp: Any, params: dict[str, Any]) -> dict[str, Any]:
        """The stages' states, and each later stage's inputs (zeros before the first step)."""
        state: dict[str, Any] = {}
        rows = next(iter(params.values())).shape[0]
        for index, stage in enumerate(self.array_stages):
            stage_params = _stage_part(params, index)
            state.update(_prefixed(stage.initial_state(xp, stage_params), index))
            if index:
                state[_inputs(index)] = xp.zeros((rows, stage.encoder.size))
        return state

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        stages = self.array_stages
        after: dict[str, Any] = {}
        outputs = inputs
        for index, stage in enumerate(stages):
            if index:
                inputs = after[_inputs(index)] = _handed_on(xp, stages[index - 1], stage,
                                                            outputs)
            stage_state, outputs = stage.forward(xp, _stage_part(params, index),
                                                 _stage_part(state, index), inputs, None)
            after.update(_prefixed(stage_state, index))
        return after, outputs

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """Each stage's trace, prefixed `stage<i>.`, of the inputs it got in the step."""
        traced: dict[str, Any] = {}
        for index, stage in enumerate(self.array_stages):
            given = state[_inputs(index)] if index else inputs
            traced.update(_prefixed(stage.trace(xp, _stage_part(params, index),
                                                _stage_part(state, index), given), index))
        return traced


def _handed_on(xp: Any, stage: IArrayBrain, following: IArrayBrain, outputs: Any) -> Any:
    """A stage's outputs as the next stage's inputs: decoded into the stage's action, encoded
    as the next stage's observation (in numpy, in an ONNX graph, or in JAX)."""
    if xp is np:
        return following.encoder.batch(stage.decoder.batch(outputs))
    return encode_rows(xp, following.encoder, decode_rows(xp, stage.decoder, outputs))
