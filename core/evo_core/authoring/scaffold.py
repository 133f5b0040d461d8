"""`evo new-brain`: a ready, tested brain package in a minute.

The package works as written: it installs with `pip install -e`, appears in `evo list-brains`,
trains, and its own test runs evo's conformance checker. With `--from BRAIN` the brain is a
subclass of an installed brain's template and config, the usual start of a thesis variant.
"""

from __future__ import annotations

import importlib
import re
import string
from pathlib import Path

from evo_core._version import __version__
from evo_core.errors import UserError
from evo_core.plugins.registry import Component

__all__ = ["write_brain_package", "NAME_PATTERN"]

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

PYPROJECT = '''\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "brain-$name"
version = "0.1.0"
description = "The $name brain for evo."
readme = "README.md"
requires-python = ">=3.11"
dependencies = [$dependencies]

[project.optional-dependencies]
test = ["pytest>=8"]

# evo finds the brain through this entry point: the group `evo`, naming the plugin module.
[project.entry-points.evo]
$name = "$package.plugin"

[tool.setuptools]
# the package is at the project root: an editable install adds this folder to sys.path with a
# .pth line (setuptools' default for a flat layout, a meta path finder, warns on every install)
package-dir = { "" = "." }

[tool.setuptools.packages.find]
include = ["$package*"]

[tool.setuptools.package-data]
$package = ["py.typed"]
'''

INIT = '''\
"""brain-$name: the $name brain for evo."""

from $package.brain import ${cls}Config, ${cls}Template

__all__ = ["${cls}Config", "${cls}Template"]
'''

PLUGIN = '''\
"""The module the entry point names: it tells evo which templates this package provides."""

from typing import Any

from evo_core import hookimpl

from $package.brain import ${cls}Template


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [${cls}Template]
'''

BRAIN = '''\
"""$cls: a small recurrent network (an Elman network) to start from.

h <- tanh(W_in·x + W_rec·h + b), output = tanh(W_out·h): replace the math in `step` and the
genome layout in `genome_size` and `build` with your own.
"""

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from evo_core import BrainConfig, BrainTemplateBase


class ${cls}Config(BrainConfig):
    """A small recurrent network (edit this line: `evo list-brains` shows it)."""

    type: Literal["$name"] = "$name"
    hidden: int = Field(8, ge=1, description="Hidden units.")


class $cls:
    """One individual: its weights and its hidden state."""

    def __init__(self, w_in: NDArray[np.float64], w_rec: NDArray[np.float64],
                 bias: NDArray[np.float64], w_out: NDArray[np.float64],
                 template: "${cls}Template") -> None:
        self.w_in, self.w_rec, self.bias, self.w_out = w_in, w_rec, bias, w_out
        self.encode, self.decode = template.encoder, template.decoder
        self.reset()

    def reset(self) -> None:
        self.h = np.zeros(len(self.bias))

    def step(self, observation: Any) -> Any:
        x = self.encode(observation)
        self.h = np.tanh(self.w_in @ x + self.w_rec @ self.h + self.bias)
        return self.decode(np.tanh(self.w_out @ self.h))


class ${cls}Template(BrainTemplateBase[${cls}Config]):
    """Built once per experiment; BrainTemplateBase gives encoder/decoder and freezes it."""

    config_model = ${cls}Config

    @property
    def genome_size(self) -> int:
        h = self.config.hidden
        return h * self.input_size + h * h + h + self.output_size * h

    def build(self, genome: NDArray[np.float64]) -> $cls:
        h, i, o = self.config.hidden, self.input_size, self.output_size
        w_in, w_rec, bias, w_out = np.split(genome, np.cumsum([h * i, h * h, h]))
        return $cls(w_in.reshape(h, i).copy(), w_rec.reshape(h, h).copy(), bias.copy(),
                    w_out.reshape(o, h).copy(), self)
'''

BRAIN_FROM = '''\
"""$cls: a variant of the $base brain.

The config subclass adds fields; the template subclass changes how a genome becomes a brain.
Everything else (masks, genome layout, the step) is inherited from $base_package.
"""

from typing import Any, Literal

from numpy.typing import NDArray
from pydantic import Field

from $base_package import $base_config, $base_template


class ${cls}Config($base_config):
    """A variant of $base (edit this line: `evo list-brains` shows it)."""

    type: Literal["$name"] = "$name"  # type: ignore[assignment]
    example_option: float = Field(1.0, description="A new option of the variant; use it in "
                                  "build() below, or delete it.")


class ${cls}Template($base_template):
    config_model = ${cls}Config

    def build(self, genome: NDArray[Any]) -> Any:
        # Change how a genome becomes a brain here. The base class's build is the start.
        return super().build(genome)
'''

TEST = '''\
"""The $name brain against evo's plugin contract (evo check-brain $name runs the same)."""

from evo_core import check_brain

from $package import ${cls}Template


def test_conforms_to_the_evo_brain_contract() -> None:
    check_brain(${cls}Template).raise_for_failures()
'''

README = '''\
# brain-$name

The `$name` brain for [evo](https://pypi.org/project/evo-core/)$origin.

    pip install -e .          # evo list-brains now shows `$name`
    evo check-brain $name     # the plugin contract, and µs per make() and step()
    python -m pytest          # the same checks as a test

Use it in a config:

    [brain]
    type = "$name"
'''


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part) or "Brain"


def _exported(component: Component) -> tuple[str, str, str]:
    """(package, template class, config class) of an installed brain, if its package exports
    both at the top level."""
    template = component.cls
    config = component.config_model
    package_name = template.__module__.split(".")[0]
    package = importlib.import_module(package_name)
    if getattr(package, template.__name__, None) is not template or \
            getattr(package, config.__name__, None) is not config:
        raise UserError(
            f"--from {component.name}: package {package_name} does not export "
            f"{template.__name__} and {config.__name__} at its top level, so there is nothing "
            "stable to subclass; choose a brain whose package exports its template and config")
    return package_name, template.__name__, config.__name__


def write_brain_package(name: str, directory: Path, base: Component | None = None) -> Path:
    if not NAME_PATTERN.match(name):
        raise UserError(f"brain name {name!r}: use lowercase letters, digits and underscores, "
                        "starting with a letter (it becomes the config's `type` and part of "
                        "the package name)")
    package = f"brain_{name}"
    root = directory / f"brain-{name}"
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UserError(f"{root}: already exists; choose another name or --dir")
    major, minor = (int(part) for part in __version__.split(".")[:2])
    dependencies = [f"evo-core>={major}.{minor},<{major}.{minor + 1}", "numpy>=1.26",
                    "pydantic>=2.5"]
    values = {"name": name, "package": package, "cls": _class_name(name), "origin": ""}
    if base is not None:
        base_package, base_template, base_config = _exported(base)
        distribution = base.distribution
        dependencies.append(distribution)
        values.update(base=base.name, base_package=base_package, base_template=base_template,
                      base_config=base_config, origin=f", a variant of `{base.name}` "
                      f"({distribution})")
    values["dependencies"] = ", ".join(f'"{d}"' for d in dependencies)
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        f"{package}/__init__.py": INIT,
        f"{package}/plugin.py": PLUGIN,
        f"{package}/brain.py": BRAIN_FROM if base is not None else BRAIN,
        f"{package}/py.typed": "",
        f"tests/test_{package}.py": TEST,
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(string.Template(text).substitute(values), encoding="utf-8")
    return root
