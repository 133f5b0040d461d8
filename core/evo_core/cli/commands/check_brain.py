"""`evo check-brain NAME`: the conformance checks on an installed brain."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError, create_model

from evo_core import check_brain
from evo_core.contract.config_models import BrainConfig
from evo_core.errors import UserError
from evo_core.hooks.registry import Registry

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check-brain", help="check an installed brain against the plugin contract",
        description="Build the brain NAME for several observation and action spaces and check "
        "the contract: config defaults, genome_size, make() length check, valid actions, "
        "reset() (after use_rng for brains that draw random numbers), pickling, "
        "restore(saved_state()), immutability, no global RNG. Space pairs the brain declines "
        "(TypeError or ValueError when built) are listed as not supported; at least one must "
        "build. Prints µs per make() and step(). Exit status 1 if a check fails. Also "
        "importable: evo_core.check_brain. `chain` without --config checks a chain of every "
        "installed brain.")
    parser.add_argument("name", help="a brain type listed by `evo list-brains`")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="check the [brain] table of this config file (TOML or JSON) "
                        "instead of the brain's defaults")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from evo_core.composition.config import CHAIN
    from evo_core.composition.defaults import default_chain
    from evo_core.hooks.discovery import get_registry

    registry = get_registry()
    component = registry.get("brain", args.name)
    config: BrainConfig | None = None
    title = f"brain {args.name!r}"
    if args.config is not None:
        config = _brain_table(args.config, args.name, registry)
        title += f" as configured in {args.config}"
    elif args.name == CHAIN:
        config, left_out = default_chain(registry)
        stages = " -> ".join(stage.config.type for stage in config.stages)
        title += f" of {stages}"
        if left_out:
            title += f" (left out, they need to be first: {', '.join(left_out)})"
    report = check_brain(component.cls, config)
    origin = f"{component.distribution} {component.version}".strip()
    origin = f"{origin}: {report.template}" if origin else report.template
    print(report.render(f"{title} ({origin})"))
    return 0 if report.ok else 1


def _brain_table(path: Path, name: str, registry: Registry) -> BrainConfig:
    """The validated [brain] table of a config file, which must be of brain `name`."""
    from evo_core.config.loading import read_config_file
    from evo_core.config.messages import render_errors

    data = read_config_file(path)
    brain = data.get("brain")
    if not isinstance(brain, dict):
        raise UserError(f"{path}: has no [brain] table to check")
    if brain.get("type") != name:
        raise UserError(f"{path}: brain.type is {brain.get('type')!r}, not {name!r}; check "
                        f"`evo check-brain {brain.get('type')} --config {path}` instead")
    # a model of the [brain] table alone, so that errors name brain.field
    brain_model: Any = registry.components["brain"][name].config_model
    model: type[BaseModel] = create_model("BrainTable", brain=(brain_model, ...))
    try:
        table = model.model_validate({"brain": brain}, context={"registry": registry})
    except ValidationError as exc:
        raise UserError(render_errors(exc, {"brain": brain}, registry, str(path), model)) \
            from None
    config = table.brain  # type: ignore[attr-defined]
    assert isinstance(config, BrainConfig)
    return config
