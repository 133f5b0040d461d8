"""Every example config validates and builds (template, optimizer, handler) without running."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from evo_core.config import read_config_file, validate_config
from evo_core.hooks.discovery import get_registry
from evo_core.running.experiment import build_experiment

EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


def test_there_are_examples_for_every_shipped_brain() -> None:
    brains = {read_config_file(path)["brain"]["type"] for path in EXAMPLES}
    assert {"ctrnn", "ffnn", "lstm"} <= brains


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_builds(path: Path) -> None:
    registry = get_registry()
    config = validate_config(read_config_file(path), registry, str(path))
    experiment = build_experiment(config, registry)
    assert experiment.template.genome_size > 0
    assert experiment.optimizer.ask().shape[1] == experiment.template.genome_size
    experiment.make_handler().close()
