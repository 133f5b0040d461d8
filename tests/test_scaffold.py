"""`evo new-brain` and `evo check-brain`: scaffolds that work, checks that catch mistakes."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, overlay_venv, run_evo, shell_prelude

from evo_core import check_brain
from evo_core.cli.main import main

LAYOUT = ["__init__.py", "brain.py", "config.py", "plugin.py", "py.typed", "template.py"]


def test_new_brain_writes_a_package(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-brain", "my_rnn", "--dir", str(tmp_path)]) == 0
    root = tmp_path / "brain-my_rnn"
    assert capsys.readouterr().out.strip() == str(root)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == sorted(["README.md", "pyproject.toml", "tests/test_brain_my_rnn.py",
                            *(f"brain_my_rnn/{name}" for name in LAYOUT)])
    pyproject = (root / "pyproject.toml").read_text()
    assert 'my_rnn = "brain_my_rnn.plugin"' in pyproject and 'name = "brain-my_rnn"' in pyproject
    assert "from evo_core import check_brain" in (root / "tests/test_brain_my_rnn.py").read_text()
    for path in root.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")


def test_the_scaffold_has_the_layout_of_the_brain_plugins(tmp_path: Path) -> None:
    assert main(["new-brain", "same", "--dir", str(tmp_path)]) == 0
    scaffold = {p.name for p in (tmp_path / "brain-same" / "brain_same").iterdir()}
    for plugin in ("ctrnn", "ffnn", "lstm"):
        package = ROOT / "plugins" / plugin / f"brain_{plugin}"
        assert set(LAYOUT) <= {p.name for p in package.iterdir()}, plugin
    assert scaffold == set(LAYOUT)


@pytest.mark.parametrize("base,overrides,kept", [
    (None, ["build"], []),
    ("ctrnn", ["generate_masks", "parameters"], ["build"]),
    ("ffnn", ["build"], []),
])
def test_scaffolded_brains_pass_the_checker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            base: str | None, overrides: list[str],
                                            kept: list[str]) -> None:
    """The package works before it is installed; a `--from ctrnn` template overrides what the
    tutorial's CTRNN variant overrides, not `build`."""
    import importlib

    name = f"scaffold_{base or 'plain'}"
    assert main(["new-brain", name, "--dir", str(tmp_path), *(["--from", base] if base else [])
                 ]) == 0
    root = tmp_path / f"brain-{name}"
    template_py = (root / f"brain_{name}" / "template.py").read_text()
    for method in overrides:
        assert f"    def {method}(" in template_py
    for method in kept:
        assert f"def {method}(" not in template_py
    if base == "ctrnn":
        assert "`parameters(genome)`" in template_py and "`generate_masks(rng)`" in template_py
    monkeypatch.syspath_prepend(str(root))
    package = importlib.import_module(f"brain_{name}")
    report = check_brain(getattr(package, f"Scaffold{(base or 'plain').capitalize()}Template"))
    assert report.ok, str(report)
    plugin = importlib.import_module(f"brain_{name}.plugin")
    assert plugin.evo_brain_templates() == [package.__dict__[report.template.split(".")[-1]]]


@pytest.mark.parametrize("args,message", [
    (["new-brain", "My-Brain"], "lowercase letters, digits and underscores"),
    (["new-brain", "x", "--from", "ctrn"], "no brain named 'ctrn' is installed (did you mean "
                                          "'ctrnn'?)"),
])
def test_new_brain_mistakes(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                            message: str) -> None:
    assert main([*args, "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not any(tmp_path.iterdir())


def test_new_brain_refuses_an_existing_folder(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "brain-x").mkdir()
    (tmp_path / "brain-x" / "mine.py").write_text("")
    assert main(["new-brain", "x", "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("base", [None, "ctrnn"])
def test_scaffold_installs_lists_checks_and_trains(tmp_path: Path, base: str | None) -> None:
    python = overlay_venv(tmp_path / "venv")
    name = "variant" if base else "elman"
    script = shell_prelude(python) + textwrap.dedent(f"""
        evo new-brain {name} {'--from ' + base if base else ''}
        pip install -e brain-{name}
        evo list-brains --json > listing.json
        evo check-brain {name} > check.txt
        python -m pytest -q -p no:cacheprovider brain-{name}/tests > tests.txt
        printf 'environment = "CartPole-v1"\\ngenerations = 2\\n[brain]\\ntype = "{name}"\\n\
[optimizer]\\ntype = "cma-es"\\npopulation_size = 4\\n' > c.toml
        evo train c.toml --out run --quiet
        """)
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f'"name": "{name}"' in (tmp_path / "listing.json").read_text()
    assert "all checks passed" in (tmp_path / "check.txt").read_text()
    assert "1 passed" in (tmp_path / "tests.txt").read_text()
    assert len((tmp_path / "run" / "log.csv").read_text().splitlines()) == 3


BAD_BRAINS = {
    "writable": ("""
        class Template:
            config_model = Config
            def __init__(self, config, observation_space, action_space, rng):
                self.observation_space, self.action_space = observation_space, action_space
                self.weights = np.zeros(3)
                self.decoder = action_decoder(action_space)
            genome_size = 3
            def make(self, genome):
                if len(genome) != 3:
                    raise ValueError("expected 3 genes")
                return Brain(self)
        """, "the template is immutable", "attributes can be set on the template"),
    "global_rng": ("""
        class Template(BrainTemplateBase):
            config_model = Config
            genome_size = 3
            def build(self, genome):
                np.random.random()
                return Brain(self)
        """, "no draws from numpy's global RNG", "drew from numpy's global RNG"),
    "no_length_check": ("""
        class Template(BrainTemplateBase):
            config_model = Config
            genome_size = 3
            def make(self, genome):
                return Brain(self)
        """, "make() rejects a wrong genome length", "accepted a genome of 2 genes"),
    "stateful": ("""
        class Stateful(Brain):
            count = 0
            def step(self, observation):
                Stateful.count += 1
                return self.t.decoder(np.sin(Stateful.count + np.arange(self.t.decoder.size)))
        class Template(BrainTemplateBase):
            config_model = Config
            genome_size = 3
            def build(self, genome):
                return Stateful(self)
        """, "reset() makes a rerun identical", "differs from the first"),
    "bad_action": ("""
        class Wrong(Brain):
            def step(self, observation):
                return 99
        class Template(BrainTemplateBase):
            config_model = Config
            genome_size = 3
            def build(self, genome):
                return Wrong(self)
        """, "step() gives valid actions for Box(4) -> Discrete(3)", "not in Discrete(3)"),
}

PRELUDE = """
from typing import Literal
import numpy as np
from evo_core import BrainConfig, BrainTemplateBase, action_decoder

class Config(BrainConfig):
    type: Literal["bad"] = "bad"

class Brain:
    def __init__(self, t):
        self.t = t
    def reset(self):
        pass
    def step(self, observation):
        return self.t.decoder(np.zeros(self.t.decoder.size))
"""


def bad_template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> Any:
    """The class `Template` of a module written from `source` (importable, so picklable)."""
    import importlib

    (tmp_path / f"{name}.py").write_text(PRELUDE + textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name).Template


@pytest.mark.parametrize("case", sorted(BAD_BRAINS))
def test_check_brain_catches_mistakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      case: str) -> None:
    source, check_name, message = BAD_BRAINS[case]
    report = check_brain(bad_template(tmp_path, monkeypatch, f"bad_{case}", source))
    failed = {c.name: c.message for c in report.failures()}
    assert check_name in failed, str(report)
    assert message in failed[check_name]
    with pytest.raises(AssertionError, match=r"how|use|call|must|restore|derive|map|check"):
        report.raise_for_failures()


def test_check_brain_rejects_config_without_defaults(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    report = check_brain(bad_template(tmp_path, monkeypatch, "needy", """
        class Needy(BrainConfig):
            type: Literal["needy"] = "needy"
            size: int
        class Template(BrainTemplateBase):
            config_model = Needy
        """))
    assert not report.ok and "does not validate with its defaults" in report.checks[0].message


def test_check_brain_command(tmp_path: Path) -> None:
    result = run_evo("check-brain", "lstm")
    assert result.returncode == 0 and "all checks passed" in result.stdout
    assert "make()" in result.stdout and "µs" in result.stdout
    (tmp_path / "bad_brains.py").write_text(
        PRELUDE + textwrap.dedent(BAD_BRAINS["global_rng"][0]) +
        "\nfrom evo_core import hookimpl\n@hookimpl\ndef evo_brain_templates():\n"
        "    return [Template]\n")
    result = run_evo("--plugin", "bad_brains", "check-brain", "bad",
                     env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1 and "FAIL no draws from numpy's global RNG" in result.stdout
    assert run_evo("check-brain", "nope").returncode == 2
