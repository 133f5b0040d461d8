"""evo: neuroevolution with brains as plugins.

The public API for plugin authors: the brain protocols, the config base models, the `hookimpl`
marker, the optional template base class and the space helpers.
"""

from evo_core._version import __version__
from evo_core.brain_config import BrainConfig, OptimizerConfig, ProcessingConfig, StrictModel
from evo_core.discovery import get_registry, load_registry
from evo_core.errors import UserError
from evo_core.hookspecs import hookimpl
from evo_core.protocols import IBrain, IBrainTemplate
from evo_core.spaces import action_decoder, observation_encoder
from evo_core.template_base import BrainTemplateBase

__all__ = [
    "__version__",
    "IBrain",
    "IBrainTemplate",
    "BrainConfig",
    "OptimizerConfig",
    "ProcessingConfig",
    "StrictModel",
    "BrainTemplateBase",
    "hookimpl",
    "observation_encoder",
    "action_decoder",
    "get_registry",
    "load_registry",
    "UserError",
]
