"""The README's brain example works as written: listed, validated and trained; the configs
the README and the pages its reference moved to show validate; the shell blocks activate once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, run_evo


def readme_block(marker: str) -> str:
    text = (ROOT / "README.md").read_text()
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        if block.startswith(marker):
            return str(block)
    raise AssertionError(f"no python block starting with {marker!r} in README.md")


def test_readme_brain_trains(tmp_path: Path) -> None:
    source = readme_block("# my_brains.py")
    (tmp_path / "my_brains.py").write_text(source)
    code = [line for line in source.splitlines() if line.strip() and not line.startswith("#")]
    assert len(code) <= 30  # the README promises a brain in 30 lines
    config = tmp_path / "elman.toml"
    config.write_text('environment = "CartPole-v1"\ngenerations = 2\n[brain]\ntype = "elman"\n'
                      '[optimizer]\ntype = "cma-es"\npopulation_size = 4\n'
                      '[episodes]\nmax_steps = 50\n')
    env = {"PYTHONPATH": str(tmp_path)}
    listed = run_evo("--plugin", "my_brains", "list-brains", env=env)
    assert listed.returncode == 0
    assert "elman" in listed.stdout and "one-layer Elman" in listed.stdout
    result = run_evo("--plugin", "my_brains", "train", str(config), "--quiet", "--out",
                     str(tmp_path / "run"), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(tmp_path / "run")
    rows = (tmp_path / "run" / "log.csv").read_text().splitlines()
    assert len(rows) == 3


#: the pages whose TOML blocks are whole configs (the README's reference moved there)
CONFIG_PAGES = ("configuration.md", "environments.md", "chains.md")


def test_documented_configs_validate() -> None:
    import tomllib

    from evo_core.config import validate_config
    from evo_core.hooks.discovery import get_registry

    for page in CONFIG_PAGES:
        text = (ROOT / "docs" / page).read_text()
        configs = [block for block in re.findall(r"```toml\n(.*?)```", text, flags=re.S)
                   if "environment =" in block]
        assert configs, page
        for block in configs:
            validate_config(tomllib.loads(block), get_registry(), page)


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md",
                                  "docs/development.md"])
def test_readme_activates_once_then_uses_bare_commands(page: str) -> None:
    """The quick start activates `.venv` after setting up; every command after it is bare."""
    activate = "source .venv/bin/activate"
    text = (ROOT / page).read_text()
    shell = list(re.findall(r"```sh\n(.*?)```", text, flags=re.S))
    assert "bash scripts/setup.sh" in shell[0] and activate in shell[0]
    assert not any(".venv/bin/" in body.replace(activate, "") for body in shell)
    for body in shell:
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        at = next((i for i, line in enumerate(lines) if line.startswith(activate)), 0)
        before = lines[:at]
        assert not any(re.match(r"(evo|pip|python)\b", line) for line in before), body


def test_the_site_shows_the_readmes_brain() -> None:
    """docs/plugin-api.md includes the README's brain section (one text, two places): the
    section's markers are in the README, around the brain that test_readme_brain_trains runs."""
    text = (ROOT / "README.md").read_text()
    section = text.split("--8<-- [start:brain]", 1)[1].split("--8<-- [end:brain]", 1)[0]
    assert "# my_brains.py" in section
    assert '--8<-- "README.md:brain"' in (ROOT / "docs" / "plugin-api.md").read_text()
