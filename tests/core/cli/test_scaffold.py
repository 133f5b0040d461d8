"""`evo new-brain` and `evo check-brain`: scaffolds that work, checks that catch mistakes."""

from __future__ import annotations

import csv
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import ROOT, evo_in_process, overlay_venv, run_evo, shell_prelude

from evo_core import ArrayBrainBatch, GroupedArrayBrainBatch, check_brain, jax_form
from evo_core.authoring.batching import make_batch
from evo_core.cli.main import main

LAYOUT = ["__init__.py", "config.py", "plugin.py", "py.typed", "template.py"]


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


OLD_STYLE = '''
"""A brain written the old way: a template whose `build` makes a brain object that steps."""

from typing import Literal

import numpy as np

from evo_core import BrainConfig, BrainTemplateBase, hookimpl


class OldstyleConfig(BrainConfig):
    """An Elman network written the old way."""

    type: Literal["oldstyle"] = "oldstyle"
    hidden: int = 3


class Oldstyle:
    def __init__(self, w_in, w_rec, w_out, template):
        self.w_in, self.w_rec, self.w_out, self.t = w_in, w_rec, w_out, template
        self.reset()

    def reset(self):
        self.h = np.zeros(len(self.w_rec))

    def step(self, observation):
        self.h = np.tanh(self.w_in @ self.t.encoder(observation) + self.w_rec @ self.h)
        return self.t.decoder(np.tanh(self.w_out @ self.h))


class OldstyleTemplate(BrainTemplateBase):
    config_model = OldstyleConfig

    @property
    def genome_size(self):
        h = self.config.hidden
        return h * (self.input_size + h + self.output_size)

    def build(self, genome):
        h, i = self.config.hidden, self.input_size
        w_in, w_rec, w_out = np.split(genome, [h * i, h * i + h * h])
        return Oldstyle(w_in.reshape(h, i), w_rec.reshape(h, h), w_out.reshape(-1, h), self)


@hookimpl
def evo_brain_templates():
    return [OldstyleTemplate]
'''


@pytest.fixture(scope="module")
def old_style(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the package `brain_oldstyle`: a brain written the old way."""
    folder = tmp_path_factory.mktemp("old_style")
    (folder / "brain_oldstyle").mkdir()
    (folder / "brain_oldstyle" / "__init__.py").write_text(OLD_STYLE)
    return folder


@pytest.mark.parametrize("base,overrides,kept", [
    (None, ["params", "initial_state", "forward", "trace"], ["build"]),
    ("ctrnn", ["generate_masks", "params"], ["build", "forward", "sigma"]),
    ("ffnn", ["params", "forward"], ["build"]),
    ("oldstyle", ["build"], ["params", "forward"]),
])
def test_scaffolded_brains_pass_the_checker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            old_style: Path, base: str | None,
                                            overrides: list[str], kept: list[str]) -> None:
    """The package works before it is installed; a template written once (the plain scaffold,
    a variant of the CTRNN or the FFNN) gets the derived batch and JAX form, and a `--from
    ctrnn` template overrides what the tutorial's CTRNN variant overrides, not `build`. A base
    written the old way (`build` only) is varied in `build`."""
    import importlib

    name = f"scaffold_{base or 'plain'}"
    written = evo_in_process("--plugin", "brain_oldstyle", "new-brain", name, "--dir",
                             str(tmp_path), *(["--from", base] if base else []),
                             env={"PYTHONPATH": str(old_style)})
    assert written.returncode == 0, written.stderr
    root = tmp_path / f"brain-{name}"
    template_py = (root / f"brain_{name}" / "template.py").read_text()
    for method in overrides:
        assert f"    def {method}(" in template_py
    for method in kept:
        assert f"def {method}(" not in template_py
    if base == "ctrnn":
        assert "`params(xp, genomes)`" in template_py and "`generate_masks(rng)`" in template_py
        assert "`sigma(xp, y)`" in template_py
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.syspath_prepend(str(old_style))
    package = importlib.import_module(f"brain_{name}")
    template_class = getattr(package, f"Scaffold{(base or 'plain').capitalize()}Template")
    report = check_brain(template_class)
    assert report.ok, str(report)
    space = gym.spaces.Box(-1.0, 1.0, (4,))
    template = template_class(template_class.config_model(), space, gym.spaces.Discrete(2),
                              np.random.default_rng(0))
    batch = make_batch(template, np.zeros((2, template.genome_size)), space,
                       gym.spaces.Discrete(2))
    written_once = base != "oldstyle"
    assert isinstance(batch, ArrayBrainBatch | GroupedArrayBrainBatch) == written_once
    if base is None:  # the plain scaffold declares that its functions broadcast
        assert isinstance(batch, GroupedArrayBrainBatch)
    assert (jax_form(template) is not None) == written_once
    plugin = importlib.import_module(f"brain_{name}.plugin")
    assert plugin.evo_brain_templates() == [package.__dict__[report.template.split(".")[-1]]]


def log_rows(run: Path) -> list[dict[str, str]]:
    """A run's log.csv without its wall-clock column."""
    with open(run / "log.csv", newline="") as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


@pytest.fixture(scope="module")
def scaffolds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plain scaffold (`brain-elman`) and a CTRNN variant (`brain-variant`), unchanged."""
    folder = tmp_path_factory.mktemp("scaffolds")
    assert main(["new-brain", "elman", "--dir", str(folder)]) == 0
    assert main(["new-brain", "variant", "--from", "ctrnn", "--dir", str(folder)]) == 0
    return folder


@pytest.mark.parametrize("mode", ["off", "sync", "native", "envpool", "jax"])
@pytest.mark.parametrize("name", ["elman", "variant"])
def test_the_scaffolded_brain_trains_in_every_vectorize_mode(
        scaffolds: Path, tmp_path: Path, name: str, mode: str) -> None:
    """The brain `evo new-brain` writes, and a CTRNN subclass, train unchanged with each
    `episodes.vectorize`: the batch and the JAX form are derived from their array functions."""
    environment = "CartPole-v1"
    if mode == "envpool":
        pytest.importorskip("envpool")
    if mode == "jax":
        pytest.importorskip("jax")
        pytest.importorskip("gymnax")
        environment = "gymnax/CartPole-v1"
    brain = 'hidden = 3' if name == "elman" else 'number_neurons = 3'
    config = tmp_path / "c.toml"
    config.write_text(f'environment = "{environment}"\ngenerations = 2\n[brain]\n'
                      f'type = "{name}"\n{brain}\n[optimizer]\ntype = "cma-es"\n'
                      'population_size = 4\n[episodes]\nmax_steps = 30\n'
                      f'vectorize = "{mode}"\n')
    result = evo_in_process("--plugin", f"brain_{name}.plugin", "train", str(config), "--out",
                            str(tmp_path / "run"), "--quiet",
                            env={"PYTHONPATH": str(scaffolds / f"brain-{name}")})
    assert result.returncode == 0, result.stderr
    rows = log_rows(tmp_path / "run")
    assert len(rows) == 2 and all(float(row["best"]) > 0 for row in rows), rows


def test_a_brain_written_the_old_way_trains_through_the_stacked_fallback(
        old_style: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A template with `build` only is stepped one brain per row (`StackedBatch`): sync
    trains it, with the same log as off."""
    import importlib

    from evo_core import StackedBatch

    monkeypatch.syspath_prepend(str(old_style))
    module = importlib.import_module("brain_oldstyle")
    space = gym.spaces.Box(-1.0, 1.0, (4,))
    template = module.OldstyleTemplate(module.OldstyleConfig(), space, gym.spaces.Discrete(2),
                                       np.random.default_rng(0))
    batch = make_batch(template, np.zeros((2, template.genome_size)), space,
                       gym.spaces.Discrete(2))
    assert isinstance(batch, StackedBatch) and jax_form(template) is None
    logs = []
    for mode in ("off", "sync"):
        config = tmp_path / f"{mode}.toml"
        config.write_text('environment = "CartPole-v1"\ngenerations = 2\n[brain]\n'
                          'type = "oldstyle"\n[optimizer]\ntype = "cma-es"\n'
                          'population_size = 4\n[episodes]\nmax_steps = 30\n'
                          f'vectorize = "{mode}"\n')
        result = evo_in_process("--plugin", "brain_oldstyle", "train", str(config), "--out",
                                str(tmp_path / mode), "--quiet",
                                env={"PYTHONPATH": str(old_style)})
        assert result.returncode == 0, result.stderr
        logs.append(log_rows(tmp_path / mode))
    assert len(logs[0]) == 2 and logs[0] == logs[1]


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
def test_scaffold_installs_lists_checks_and_trains(tmp_path: Path) -> None:
    """Both templates (a new brain and one from the CTRNN) in one virtualenv: one pip install
    and one listing for the two."""
    python = overlay_venv(tmp_path / "venv")
    names = ("elman", "variant")
    script = shell_prelude(python) + textwrap.dedent("""
        evo new-brain elman
        evo new-brain variant --from ctrnn
        pip install -e brain-elman -e brain-variant
        evo list-brains --json > listing.json
        python -m pytest -q -p no:cacheprovider brain-elman/tests brain-variant/tests \
            > tests.txt
        """)
    for name in names:
        (tmp_path / f"{name}.toml").write_text(
            f'environment = "CartPole-v1"\ngenerations = 2\n[brain]\ntype = "{name}"\n'
            '[optimizer]\ntype = "cma-es"\npopulation_size = 4\n')
        script += (f"evo check-brain {name} > check-{name}.txt\n"
                   f"evo train {name}.toml --out run-{name} --quiet\n")
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    listing = (tmp_path / "listing.json").read_text()
    assert "2 passed" in (tmp_path / "tests.txt").read_text()
    for name in names:
        assert f'"name": "{name}"' in listing
        assert "all checks passed" in (tmp_path / f"check-{name}.txt").read_text()
        assert len((tmp_path / f"run-{name}" / "log.csv").read_text().splitlines()) == 3


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
