"""`evo new-brain`: a ready, tested brain package in a minute.

The package works as written: it installs with `pip install -e`, appears in `evo list-brains`,
trains, and its own test runs evo's conformance checker. Its modules are those of evo's own brain
plugins (`config.py`, `template.py`, `brain.py`, `plugin.py`), so what a reader learns in one
brain holds in every other. With `--from BRAIN` the config and template subclass an installed
brain's, the usual start of a thesis variant.
"""

from __future__ import annotations

import importlib
import re
import string
import textwrap
from pathlib import Path

from evo_core._version import __version__
from evo_core.authoring.template_base import BrainTemplateBase
from evo_core.errors import UserError
from evo_core.hooks.registry import Component

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

from $package.brain import $cls
from $package.config import ${cls}Config
from $package.template import ${cls}Template

__all__ = ["$cls", "${cls}Config", "${cls}Template"]
'''

PLUGIN = '''\
"""The module the entry point names: it tells evo which templates this package provides."""

from typing import Any

from $package.template import ${cls}Template
from evo_core import hookimpl


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [${cls}Template]
'''

CONFIG = '''\
"""The `[brain]` table of the $name brain: every field has a default and is validated."""

from typing import Literal

from pydantic import Field

from evo_core import BrainConfig


class ${cls}Config(BrainConfig):
    """A small recurrent network (edit this line: `evo list-brains` shows it)."""

    type: Literal["$name"] = "$name"
    hidden: int = Field(8, ge=1, description="Hidden units.")
'''

TEMPLATE = '''\
"""The $name template: built once per experiment, it lays out the genome and makes brains.

BrainTemplateBase gives it `input_size`, `output_size`, the observation `encoder` and the action
`decoder`, checks genome lengths, and freezes the template when construction ends.
"""

import numpy as np
from numpy.typing import NDArray

from $package.brain import $cls
from $package.config import ${cls}Config
from evo_core import BrainTemplateBase


class ${cls}Template(BrainTemplateBase[${cls}Config]):
    """The genome is W_in, W_rec, b and W_out, each flattened row by row."""

    config_model = ${cls}Config

    @property
    def genome_size(self) -> int:
        h = self.config.hidden
        return h * self.input_size + h * h + h + self.output_size * h

    def build(self, genome: NDArray[np.float64]) -> $cls:
        h, i, o = self.config.hidden, self.input_size, self.output_size
        w_in, w_rec, bias, w_out = np.split(genome, np.cumsum([h * i, h * h, h]))
        return $cls(w_in.reshape(h, i).copy(), w_rec.reshape(h, h).copy(), bias.copy(),
                    w_out.reshape(o, h).copy(), self.encoder, self.decoder)
'''

BRAIN = '''\
"""$cls: one individual of a small recurrent (Elman) network to start from.

h <- tanh(W_in·x + W_rec·h + b), output = tanh(W_out·h): replace the math in `step` with your
own, and the genome layout in template.py to match.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


class $cls:
    """Its weights and its hidden state; evo calls `reset()` before every episode."""

    def __init__(self, w_in: FloatArray, w_rec: FloatArray, bias: FloatArray,
                 w_out: FloatArray, encode: Callable[[Any], FloatArray],
                 decode: Callable[[FloatArray], Any]) -> None:
        self.w_in, self.w_rec, self.bias, self.w_out = w_in, w_rec, bias, w_out
        self.encode, self.decode = encode, decode
        self.reset()

    def reset(self) -> None:
        self.h = np.zeros(len(self.bias))

    def step(self, observation: Any) -> Any:
        x = self.encode(observation)
        self.h = np.tanh(self.w_in @ x + self.w_rec @ self.h + self.bias)
        return self.decode(np.tanh(self.w_out @ self.h))
'''

INIT_FROM = '''\
"""brain-$name: the $name brain for evo, a variant of $base."""

from $package.config import ${cls}Config
from $package.template import ${cls}Template

__all__ = ["${cls}Config", "${cls}Template"]
'''

CONFIG_FROM = '''\
"""The `[brain]` table of $name: every field of $base, and the variant's own."""

from typing import Literal

from pydantic import Field

from $base_package import $base_config


class ${cls}Config($base_config):
    """A variant of $base (edit this line: `evo list-brains` shows it)."""

    type: Literal["$name"] = "$name"  # type: ignore[assignment]
    example_option: float = Field(1.0, description="A new option of the variant; use it in "
                                  "template.py, or delete it.")
'''

TEMPLATE_FROM = '''\
"""The $name template: $base's, changed where the variant differs.

Override what the variant changes:
$guidance

Everything else (the genome layout, saved state, the brain and its step) is inherited from
$base_package.
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

from $base_package import $base_template
from $package.config import ${cls}Config


class ${cls}Template($base_template):
    config_model = ${cls}Config
$overrides'''

BRAIN_FROM = '''\
"""The brains of $name are $base's own: the variant changes the set-up and what a genome
means (template.py), not the step.

To change the step as well, subclass $base's brain class here and return it from
`${cls}Template.build`; `evo check-brain $name` checks it like any brain.
"""
'''

#: The methods a `--from` template overrides, in order, if the base template has them: the CTRNN
#: draws its sparsity in `generate_masks` and decodes a genome in `parameters`, so a variant
#: changes those and keeps `build`; a base without them (FFNN, LSTM) changes `build`.
HOOKS: dict[str, tuple[str, str]] = {
    "generate_masks": (
        "`generate_masks(rng)` chooses which cells of each matrix take genes (the masks are "
        "saved with every run, so a replay rebuilds exactly these)", '''
    def generate_masks(self, rng: np.random.Generator) -> dict[str, NDArray[np.bool_]]:
        # Start from the base's masks and change them, for example
        # w_mask = masks["w_mask"].copy(); np.fill_diagonal(w_mask, False). Draw only from `rng`.
        masks: dict[str, NDArray[np.bool_]] = super().generate_masks(rng)
        return masks
'''),
    "parameters": (
        "`parameters(genome)` turns a checked genome into the network's matrices", '''
    def parameters(self, genome: NDArray[np.float64]) -> Any:
        # Start from the base's decoding and change it, for example
        # dataclasses.replace(decoded, w=...). self.config.example_option is here.
        decoded = super().parameters(genome)
        return decoded
'''),
    "build": (
        "`build(genome)` turns a checked genome into a brain", '''
    def build(self, genome: NDArray[np.float64]) -> Any:
        # Start from the base's brain and change how a genome becomes one.
        # self.config.example_option is here.
        return super().build(genome)
'''),
}

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

One module per job, as in evo's own brain plugins: `config.py` (the `[brain]` table),
`template.py` (built once per experiment: the genome layout), `brain.py` (one individual:
`reset` and `step`), `plugin.py` (the module the entry point names).

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


def _hooks(base_template: type) -> list[str]:
    """The methods of `HOOKS` the base's template class defines itself (not BrainTemplateBase,
    whose `build` only raises): `parameters` and `generate_masks` for the CTRNN, else `build`."""
    defined = {name for klass in base_template.__mro__
               if klass not in (BrainTemplateBase, object) for name in vars(klass)}
    chosen: list[str] = [name for name in ("generate_masks", "parameters") if name in defined]
    return chosen or ["build"]


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
    modules = {"__init__": INIT, "config": CONFIG, "template": TEMPLATE, "brain": BRAIN}
    if base is not None:
        base_package, base_template, base_config = _exported(base)
        distribution = base.distribution
        dependencies.append(distribution)
        hooks = _hooks(base.cls)
        values.update(base=base.name, base_package=base_package, base_template=base_template,
                      base_config=base_config, origin=f", a variant of `{base.name}` "
                      f"({distribution})",
                      guidance="\n".join(textwrap.fill(f"- {HOOKS[hook][0]}.", 96,
                                                        subsequent_indent="  ")
                                          for hook in hooks),
                      overrides="".join(HOOKS[hook][1] for hook in hooks))
        modules = {"__init__": INIT_FROM, "config": CONFIG_FROM, "template": TEMPLATE_FROM,
                   "brain": BRAIN_FROM}
    values["dependencies"] = ", ".join(f'"{d}"' for d in dependencies)
    files = {"pyproject.toml": PYPROJECT, "README.md": README}
    files.update({f"{package}/{module}.py": text for module, text in modules.items()})
    files.update({f"{package}/plugin.py": PLUGIN, f"{package}/py.typed": "",
                  f"tests/test_{package}.py": TEST})
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(string.Template(text).substitute(values), encoding="utf-8")
    return root
