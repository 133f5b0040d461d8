"""jax is an optional extra: nothing imports it until a JAX form or environment is used, and a
config asking for `vectorize = "jax"` without evo-jax is one line naming the extra."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import pytest

from evo_core import UserError
from evo_core.config import validate_config
from evo_core.hooks.discovery import get_registry


def test_plugins_and_namespace_do_not_import_jax() -> None:
    code = ("import sys, evo_core, brain_ctrnn, brain_ffnn, brain_lstm\n"
            "from evo_core.hooks.discovery import get_registry\n"
            "get_registry()\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in ('jax', 'gymnax', 'brax')]"
            ", sorted(m for m in sys.modules if m.startswith(('jax', 'gymnax')))[:5]")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_vectorize_jax_without_the_plugin_names_the_extra() -> None:
    """The schema takes the installed vectorizers' names: without evo-jax, "jax" is refused
    when the config is validated, in one line naming the extra that installs it."""
    registry = get_registry()
    components: Any = {kind: dict(found) for kind, found in registry.components.items()}
    del components["vectorizer"]["jax"]
    without = dataclasses.replace(registry, components=components)
    with pytest.raises(UserError) as raised:
        validate_config({
            "environment": "CartPole-v1", "generations": 1, "brain": {"type": "ffnn"},
            "optimizer": {"type": "cma-es", "population_size": 4},
            "episodes": {"vectorize": "jax"}}, without, "c.toml")
    message = str(raised.value)
    assert message.startswith("c.toml: episodes.vectorize = \"jax\" needs the plugin") and \
        "pip install 'evo-core[jax]'" in message and "\n" not in message
