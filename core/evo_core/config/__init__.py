"""Reading, overriding and validating experiment config files."""

from evo_core.config.loading import apply_overrides, override_sources, read_config_file
from evo_core.config.schema import (
                                    EpisodesConfig,
                                    ExperimentConfig,
                                    experiment_model,
                                    validate_config,
)

__all__ = ["read_config_file", "apply_overrides", "override_sources", "EpisodesConfig",
           "ExperimentConfig", "experiment_model", "validate_config"]
