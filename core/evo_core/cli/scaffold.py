"""`evo new-brain`: a ready, tested brain package in a minute.

The package works as written: it installs with `pip install -e`, appears in `evo list-brains`,
trains in every `episodes.vectorize` mode, and its own test runs evo's conformance checker. Its
modules are those of evo's own brain plugins (`config.py`, `template.py`, `plugin.py`), so what a
reader learns in one brain holds in every other. The brain is written once, as array functions
over rows (`IArrayBrain`): the core derives the lone brain, the batch and the JAX form from them.
With `--from BRAIN` the config and template subclass an installed brain's, the usual start of a
thesis variant.
"""

from __future__ import annotations

import importlib
import re
import string
import textwrap
from dataclasses import dataclass
from pathlib import Path

from evo_core._version import __version__
from evo_core.authoring.array_template import ArrayBrainTemplate
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

from $package.config import ${cls}Config
from $package.template import ${cls}Template

__all__ = ["${cls}Config", "${cls}Template"]
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
"""The $name brain, written once: array functions over rows, from which evo derives every form.

A small recurrent (Elman) network: h <- tanh(W_in·x + W_rec·h + b), output = tanh(W_out·h).
Replace the math in `forward` with your own, and the genome layout in `genome_size` and
`params` to match.

Every function works on a leading axis of rows (row i belongs to genome i) and computes with
`xp`, which is numpy or jax.numpy: evo runs the same functions for one brain (`make()`), for a
whole chunk of genomes at once (`episodes.vectorize`) and compiled by JAX (`"jax"`). They
return new arrays and write into none they are given. ArrayBrainTemplate gives the template
`input_size`, `output_size`, the observation `encoder` and the action `decoder`, checks genome
lengths, and freezes the template when construction ends.
"""

from typing import Any, Literal

from $package.config import ${cls}Config
from evo_core import ArrayBrainTemplate, rows_matvec


class ${cls}Template(ArrayBrainTemplate[${cls}Config]):
    """The genome is W_in, W_rec, b and W_out, each flattened row by row."""

    config_model = ${cls}Config

    @property
    def genome_size(self) -> int:
        h = self.config.hidden
        return h * self.input_size + h * h + h + self.output_size * h

    def broadcasts_rows(self) -> Literal[True]:
        """Declares that `initial_state` and `forward` work over any number of leading row
        axes (evo_core.IGroupedArrayBrain): a candidate's episodes then share one copy of its
        weights in the batch. Delete this method if your math names one row axis (`z[:, :n]`
        rather than `z[..., :n]`, a shape from `shape[0]`); `evo check-brain` tells."""
        return True

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        """Genomes (rows x genome_size) cut into each row's matrices and bias."""
        h, i, o = self.config.hidden, self.input_size, self.output_size
        rows = genomes.shape[0]
        w_in, w_rec, bias, w_out = xp.split(genomes, [h * i, h * i + h * h, h * i + h * h + h],
                                            axis=1)
        return {"w_in": w_in.reshape(rows, h, i), "w_rec": w_rec.reshape(rows, h, h),
                "bias": bias, "w_out": w_out.reshape(rows, o, h)}

    def initial_state(self, xp: Any, params: dict[str, Any]) -> dict[str, Any]:
        """The hidden state h (rows x hidden) every episode starts from: zeros."""
        return {"h": xp.zeros_like(params["bias"])}

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        """One step of every row: `inputs` are the encoded observations (rows x input_size),
        the outputs (rows x output_size, in [-1, 1]) become actions through the decoder."""
        h = xp.tanh(rows_matvec(xp, params["w_in"], inputs)
                    + rows_matvec(xp, params["w_rec"], state["h"]) + params["bias"])
        return {"h": h}, xp.tanh(rows_matvec(xp, params["w_out"], h))

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """What `evo replay --trace` and `--show-neurons` show after a step, by name: the
        state and what is computed from it (nothing the step need keep)."""
        h = state["h"]
        return {"hidden": h, "output": xp.tanh(rows_matvec(xp, params["w_out"], h))}
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

Everything else is inherited from $base_package.
$derived"""

$imports

from $base_package import $base_template
from $package.config import ${cls}Config


class ${cls}Template($base_template):
    config_model = ${cls}Config
$overrides'''


@dataclass(frozen=True)
class Hook:
    """One method a `--from` template may override: a line of the module's docstring that says
    what it does, and, where the template writes it, its code and the imports that needs."""

    guidance: str
    code: str = ""
    imports: tuple[str, ...] = ()


_NUMPY = ("import numpy as np", "from numpy.typing import NDArray")  # in isort's order

#: The methods a `--from` template overrides or names. A brain written once (`IArrayBrain`) is
#: varied in its masks where it draws some (the CTRNN, whose step has its own hook, `sigma`),
#: else in its step, and always in its decoding; a brain with only `build` (the old way) in
#: `build`.
HOOKS: dict[str, Hook] = {
    "generate_masks": Hook(
        "`generate_masks(rng)` chooses which cells of each matrix take genes (the masks are "
        "saved with every run, so a replay rebuilds exactly these)", '''
    def generate_masks(self, rng: np.random.Generator) -> dict[str, NDArray[np.bool_]]:
        # Start from the base's masks and change them, for example
        # w_mask = masks["w_mask"].copy(); np.fill_diagonal(w_mask, False). Draw only from `rng`.
        masks: dict[str, NDArray[np.bool_]] = super().generate_masks(rng)
        return masks
''', _NUMPY),
    "params": Hook(
        "`params(xp, genomes)` turns the genomes (rows x genome_size) into each row's arrays, "
        "with `xp` numpy or jax.numpy", '''
    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        # Start from the base's decoding and change it with new arrays (xp may be jax.numpy,
        # whose arrays cannot be written), for example {**params, NAME: xp.where(..., params[
        # NAME])} for one of the base's names. self.config.example_option is here.
        params: dict[str, Any] = super().params(xp, genomes)
        return params
''', ("from typing import Any",)),
    "forward": Hook(
        "`forward(xp, params, state, inputs, noise)` is one step of every row: (the next "
        "state, the outputs); the batch and the JAX form follow it", '''
    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        # Start from the base's step and change it, for example its outputs.
        # self.config.example_option is here.
        state, outputs = super().forward(xp, params, state, inputs, noise)
        return state, outputs
''', ("from typing import Any",)),
    "sigma": Hook(
        "`sigma(xp, y)` is the neuron activation the step applies (another activation, one "
        "method); the batch and the JAX form follow it"),
    "build": Hook(
        "`build(genome)` turns a checked genome into a brain", '''
    def build(self, genome: NDArray[np.float64]) -> Any:
        # Start from the base's brain and change how a genome becomes one.
        # self.config.example_option is here.
        return super().build(genome)
''', ("from typing import Any", *_NUMPY)),
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
`template.py` (the brain, written once: the genome layout, the decoding into arrays and the
step, over rows), `plugin.py` (the module the entry point names).

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


def _hooks(base_template: type) -> tuple[list[str], list[str]]:
    """(the methods of `HOOKS` a `--from` template overrides, those its docstring names
    besides), from what the base's classes define themselves (not the core's base classes,
    whose `build`, `params` and `forward` only raise or derive): `generate_masks` and `params`
    for the CTRNN (naming `forward` and `sigma`), `params` and `forward` for another brain
    written once, `build` for a brain written the old way."""
    defined = {name for klass in base_template.__mro__
               if klass not in (ArrayBrainTemplate, BrainTemplateBase, object)
               for name in vars(klass)}
    if not {"params", "forward"} <= defined:
        return ["build"], []
    step = [] if "generate_masks" in defined else ["forward"]
    written = [name for name in ("generate_masks", "params") if name in defined] + step
    return written, [name for name in ("forward", "sigma") if name in defined and
                     name not in written]


def _imports(hooks: list[str]) -> str:
    """The import lines the overrides need, the standard library's group first."""
    lines = list(dict.fromkeys(line for hook in hooks for line in HOOKS[hook].imports))
    groups = [[line for line in lines if "numpy" not in line],
              [line for line in lines if "numpy" in line]]
    return "\n\n".join("\n".join(group) for group in groups if group)


#: What the `--from` template's docstring says of the forms evo derives from the base
DERIVED = {
    True: "\nevo derives the lone brain, the batch of `episodes.vectorize` and the JAX form from "
          "these\nfunctions, so the variant keeps every fast path; `evo check-brain` compares "
          "them.\n",
    False: "\n$base is written the old way (`build` only): evo steps a chunk of its brains "
           "one brain per\nrow (the stacked fallback), correct but without a batch's speed, "
           "and has no JAX form of it.\n",
}


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
    modules = {"__init__": INIT, "config": CONFIG, "template": TEMPLATE}
    if base is not None:
        base_package, base_template, base_config = _exported(base)
        distribution = base.distribution
        dependencies.append(distribution)
        written, named = _hooks(base.cls)
        values.update(base=base.name, base_package=base_package, base_template=base_template,
                      base_config=base_config, origin=f", a variant of `{base.name}` "
                      f"({distribution})",
                      guidance="\n".join(textwrap.fill(f"- {HOOKS[hook].guidance}.", 96,
                                                        subsequent_indent="  ")
                                          for hook in written + named),
                      derived=string.Template(DERIVED[written != ["build"]]).substitute(
                          base=base.name),
                      imports=_imports(written),
                      overrides="".join(HOOKS[hook].code for hook in written))
        modules = {"__init__": INIT_FROM, "config": CONFIG_FROM, "template": TEMPLATE_FROM}
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
