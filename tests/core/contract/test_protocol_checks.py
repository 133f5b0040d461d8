"""Discovery checks every class a plugin returns against its kind's runtime-checkable protocol
(`issubclass`), so a missing method is reported when the plugin loads, naming the plugin."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from evo_core import IHandler, IInProcessHandler, IOptimizer, UserError
from evo_core.handlers.mp import MPHandler
from evo_core.handlers.sequential import SequentialHandler
from evo_core.hooks.discovery import load_registry
from evo_core.optimizers.cma_es import CMAES
from evo_core.optimizers.mu_lambda import MuLambda

OPTIMIZER = '''
from typing import Literal
from evo_core import OptimizerConfig, hookimpl

class HalfConfig(OptimizerConfig):
    type: Literal["half"] = "half"

class Half:
    config_model = HalfConfig
    def __init__(self, config, genome_size, rng): ...
    def ask(self): ...
    def tell(self, fitnesses): ...
    {more}

@hookimpl
def evo_optimizers():
    return [Half]
'''


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_an_optimizer_without_state_is_refused_when_its_plugin_loads(folder: Path) -> None:
    (folder / "half_optimizer.py").write_text(textwrap.dedent(OPTIMIZER.format(more="")))
    with pytest.raises(UserError, match=r"Half does not implement evo_core\.IOptimizer: it "
                                        r"lacks state\(\), load_state\(\)"):
        load_registry(local_modules=["half_optimizer"])


def test_an_optimizer_with_every_method_loads(folder: Path) -> None:
    more = "def state(self): ...\n    def load_state(self, state): ..."
    (folder / "whole_optimizer.py").write_text(textwrap.dedent(OPTIMIZER.format(more=more)))
    registry = load_registry(local_modules=["whole_optimizer"])
    assert registry.get("optimizer", "half").cls.__name__ == "Half"


def test_a_hook_returning_none_is_reported(folder: Path) -> None:
    (folder / "none_hook.py").write_text(textwrap.dedent('''
        from evo_core import hookimpl

        @hookimpl
        def evo_optimizers():
            return None
    '''))
    with pytest.raises(UserError, match=r"evo_optimizers\(\) returned None, expected a list"):
        load_registry(local_modules=["none_hook"])


def test_the_built_ins_satisfy_their_protocols() -> None:
    assert issubclass(CMAES, IOptimizer) and issubclass(MuLambda, IOptimizer)
    assert issubclass(SequentialHandler, IInProcessHandler)
    assert issubclass(MPHandler, IHandler) and not issubclass(MPHandler, IInProcessHandler)
