"""evo: neuroevolution with brains as plugins.

This namespace is the plugin authors' API: the protocols a brain, optimizer, processing handler or
environment wrapper implements, the config base models of their tables (experiment trackers' too),
the `hookimpl` marker, what a brain author uses (the optional template base class, the space
helpers, the conformance checker), the signed-state store of optimizers whose state has no array
form (`seal_state`, `open_state`), the bound on the genes an optimizer samples (`gene_limit`,
`sampling_problem`), the episode rules every engine applies (`EpisodeRules`) and `UserError`.
Host-side code (discovery, the engine, run folders, the command line, `evo_core.api` for
notebooks and scripts) lives in the subpackages; `docs/architecture.md` maps them.
"""

from evo_core._version import __version__
from evo_core.authoring.array_brain import ArrayBrain, ArrayBrainBatch, array_batch, array_brain
from evo_core.authoring.array_grouped import GroupedArrayBrainBatch
from evo_core.authoring.array_jax import jax_form
from evo_core.authoring.array_math import activation, matvec_of, rows_matvec, with_diagonal
from evo_core.authoring.array_onnx import onnx_form
from evo_core.authoring.array_template import ArrayBrainTemplate
from evo_core.authoring.batching import ReloadingStackedBatch, StackedBatch
from evo_core.authoring.conformance import BrainReport, check_brain
from evo_core.authoring.freezing import Frozen
from evo_core.authoring.gene_limits import DEVIATIONS, gene_limit, sampling_problem
from evo_core.authoring.memory import memory_available, memory_shortfall
from evo_core.authoring.restarts import (
    NextRun,
    RestartRule,
    Restarts,
    RestartsConfig,
    next_run,
    restarts_state,
    restored_restarts,
    run_budget,
)
from evo_core.authoring.rows_spaces import jax_decode, jax_encode, jax_space_support
from evo_core.authoring.signed_state import check_signing_secret, open_state, seal_state
from evo_core.authoring.spaces import (
    ActionDecoder,
    ObservationEncoder,
    action_decoder,
    observation_encoder,
    with_bias,
)
from evo_core.authoring.template_base import BrainTemplateBase
from evo_core.authoring.tracker_hooks import TrackerHooks, ending_status, tracker_hooks
from evo_core.contract.config_models import (
    BrainConfig,
    OptimizerConfig,
    ProcessingConfig,
    StrictModel,
    TrackerConfig,
    VectorizerConfig,
    WrapperConfig,
)
from evo_core.contract.episode_rules import EpisodeRules
from evo_core.contract.hookspecs import hookimpl
from evo_core.contract.observation_statistics import (
    EvaluationContext,
    ObservationNormalizer,
    ObservationStatistics,
    combine,
    normalize,
)
from evo_core.contract.protocols import (
    ArchiveGrid,
    EvaluationResult,
    IArrayBrain,
    IBatchEvaluator,
    IBatchTemplate,
    IBehaviourState,
    IBrain,
    IBrainBatch,
    IBrainFactory,
    IBrainTemplate,
    IBrainTemplateClass,
    IChunkEvaluatorClass,
    IChunkEvaluatorFactory,
    IContextEvaluator,
    IContextHandler,
    IDescriptorOptimizer,
    IEvaluator,
    IEvaluatorFactory,
    IGenomeLayoutTemplate,
    IGroupedArrayBrain,
    IHandler,
    IHandlerClass,
    IInProcessHandler,
    IJaxEnvironment,
    IJaxTemplate,
    ILayoutOptimizerClass,
    INetworkGraph,
    IObservationLabels,
    IOnnxTemplate,
    IOptimizer,
    IOptimizerClass,
    IPlanarMap,
    IRandomBrain,
    IRandomBrainBatch,
    IReloadableBatch,
    IRewindableOptimizer,
    IRun,
    IRunConfig,
    IStatefulTemplate,
    ISubsetBatch,
    ITraceableBrain,
    ITracker,
    ITrackersTable,
    IVectorBehaviourState,
    IWrapperClass,
    NetworkGraph,
    NodeKind,
)
from evo_core.contract.trust import NamesCode, NamesPath, Resource, machine_cores
from evo_core.errors import UserError

__all__ = [
    "__version__",
    # the contract
    "IBrain", "IRandomBrain", "IBrainTemplate", "IStatefulTemplate", "IArrayBrain",
    "IGroupedArrayBrain", "IBatchTemplate",
    "IBrainBatch", "IRandomBrainBatch", "IReloadableBatch", "ISubsetBatch", "IBatchEvaluator",
    "IBrainTemplateClass", "IOptimizer", "IRewindableOptimizer", "IOptimizerClass", "IHandler",
    "IHandlerClass", "IEvaluator", "IEvaluatorFactory",
    "EvaluationResult", "IWrapperClass", "IDescriptorOptimizer", "IBehaviourState",
    "IVectorBehaviourState",
    "IPlanarMap", "IObservationLabels",
    "IBrainFactory", "IInProcessHandler", "IRun", "IRunConfig", "ITracker", "ITrackersTable",
    "ITraceableBrain", "IGenomeLayoutTemplate", "ILayoutOptimizerClass",
    "INetworkGraph", "NetworkGraph", "NodeKind", "ArchiveGrid",
    "IJaxTemplate", "IJaxEnvironment", "IChunkEvaluatorFactory", "IChunkEvaluatorClass",
    "IOnnxTemplate",
    # the episode rules every engine applies, a plugin's chunk evaluator's too
    "EpisodeRules",
    # the observation normaliser every engine applies and gathers for, a plugin's too
    "IContextHandler", "IContextEvaluator", "EvaluationContext", "ObservationNormalizer",
    "ObservationStatistics", "combine", "normalize",
    "BrainConfig", "OptimizerConfig", "ProcessingConfig", "TrackerConfig", "WrapperConfig",
    "VectorizerConfig", "StrictModel",
    # what a config value can make evo do (a received run folder's values are checked by it)
    "NamesCode", "NamesPath", "Resource", "machine_cores",
    "hookimpl",
    # for tracker authors: the four event hooks of a tracker, from its table and its tracker
    "tracker_hooks", "TrackerHooks", "ending_status",
    # for brain authors: a brain written once (IArrayBrain) and what the core derives from it
    "ArrayBrainTemplate", "ArrayBrain", "ArrayBrainBatch", "GroupedArrayBrainBatch",
    "array_brain", "array_batch",
    "jax_form", "onnx_form", "activation", "matvec_of", "rows_matvec", "with_diagonal",
    "BrainTemplateBase", "Frozen", "observation_encoder", "action_decoder", "with_bias",
    "ObservationEncoder",
    "ActionDecoder", "StackedBatch", "ReloadingStackedBatch", "check_brain",
    "BrainReport", "memory_shortfall", "memory_available", "jax_encode", "jax_decode",
    "jax_space_support",
    # for optimizer authors: state with no array form, signed; how far genes may go
    "seal_state", "open_state", "check_signing_secret", "gene_limit", "sampling_problem",
    "DEVIATIONS",
    # for optimizer authors: CMA-ES's IPOP and BIPOP restarts (the config fields, the schedule)
    "RestartsConfig", "RestartRule", "Restarts", "NextRun", "next_run", "run_budget",
    "restarts_state", "restored_restarts",
    "UserError",
]
