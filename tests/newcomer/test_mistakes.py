"""The corpus of a user's mistakes: each is exit status 2, one `evo:` line per problem, no
traceback, and (for `evo train`) no run folder left behind.

Every case runs the `evo` command line on a config, a command line or a damaged copy of a small
trained run folder, in this process (conftest's `evo_in_process`: the environment, sys.path and
the plugin registry as a fresh `evo` process has them), at a fraction of the cost of starting one
per case; the real process runs where it matters (`trained`, the local-plugin round trip below).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SitePackages, brain_plugin_source, evo_in_process, run_evo

from evo_core.cli.main import main

GOOD: dict[str, Any] = {
    "environment": "CartPole-v1",
    "seed": 1,
    "generations": 2,
    "brain": {"type": "ctrnn", "number_neurons": 3},
    "optimizer": {"type": "cma-es", "population_size": 4},
    "episodes": {"runs": 1, "max_steps": 20},
}

GOOD_TOML = """\
environment = "CartPole-v1"
seed = 1
generations = 2
[brain]
type = "ctrnn"
number_neurons = 3
[optimizer]
type = "cma-es"
population_size = 4
[episodes]
runs = 1
max_steps = 20
"""


@dataclass
class Call:
    """One `evo` invocation and what its single line must say."""

    args: list[str]
    expect: list[str]
    env: dict[str, str] = field(default_factory=dict)
    lines: int = 1
    no_folder: Path | None = None


@dataclass
class Work:
    """A case's folder, with helpers that write configs and damage a trained run's copy."""

    root: Path
    trained: Path

    def config(self, text: str | None = None, **changes: Any) -> Path:
        """A TOML file of `text`, else GOOD with `changes` as JSON."""
        path = self.root / ("config.toml" if text is not None else "config.json")
        if text is not None:
            path.write_text(text)
        else:
            data = json.loads(json.dumps(GOOD))
            data.update(changes)
            path.write_text(json.dumps(data))
        return path

    def run(self) -> Path:
        copy = self.root / "run"
        shutil.copytree(self.trained, copy)
        return copy

    @property
    def out(self) -> Path:
        return self.root / "out"

    def train(self, config: Path, *extra: str, env: dict[str, str] | None = None,
              expect: list[str], lines: int = 1) -> Call:
        return Call(["train", str(config), "--out", str(self.out), "--quiet", *extra], expect,
                    env or {}, lines, self.out)

    def plugin(self, module: str, source: str) -> dict[str, str]:
        folder = self.root / "mods"
        folder.mkdir(exist_ok=True)
        (folder / f"{module}.py").write_text(textwrap.dedent(source))
        return {"PYTHONPATH": str(folder)}


def _edit_npz(path: Path, change: Callable[[dict[str, np.ndarray]], None]) -> None:
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    change(arrays)
    np.savez(path, **arrays)


def _edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _edit_meta(run: Path, change: Callable[[dict[str, Any]], None]) -> None:
    def edit(arrays: dict[str, np.ndarray]) -> None:
        meta = json.loads(arrays["meta"].tobytes().decode())
        change(meta)
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    _edit_npz(run / "checkpoint.npz", edit)


def _template_plugin(name: str, init: str = "super().__init__(*args, **kwargs)",
                     genome_size: str = "3") -> str:
    return f'''
    from typing import Literal
    from evo_core import BrainConfig, BrainTemplateBase, hookimpl

    class Config(BrainConfig):
        type: Literal["{name}"] = "{name}"

    class Template(BrainTemplateBase):
        config_model = Config
        def __init__(self, *args, **kwargs):
            {init}
        @property
        def genome_size(self):
            return {genome_size}
        def build(self, genome):
            raise NotImplementedError

    @hookimpl
    def evo_brain_templates():
        return [Template]
    '''


def _brain_config(w: Work, brain: str) -> Path:
    return w.config(brain={"type": brain})


# ---- config and command line ----------------------------------------------------------------

def sigma_inf(w: Work) -> Call:
    return w.train(w.config(), "--set", "optimizer.sigma=inf",
                   expect=["--set optimizer.sigma=inf: optimizer.sigma: must be a finite number"])


def connect_timeout_inf(w: Work) -> Call:
    config = w.config(GOOD_TOML + '[processing]\ntype = "dask"\naddress = "tcp://127.0.0.1:9"\n'
                      "connect_timeout = inf\n")
    return w.train(config, expect=[f"{config}: processing.connect_timeout: must be a finite"])


def huge_integer(w: Work) -> Call:
    config = w.config(GOOD_TOML.replace("seed = 1", "seed = 1" + "0" * 5000))
    return w.train(config, expect=[f"{config}: unreadable number"])


def huge_integer_set(w: Work) -> Call:
    return w.train(w.config(), "--set", "seed=1" + "0" * 5000, expect=["--set value"])


def deep_json(w: Work) -> Call:
    path = w.root / "deep.json"
    path.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    return w.train(path, expect=[f"{path}: nested too deeply"])


def environment_colons(w: Work) -> Call:
    config = w.config(environment="::::")
    return w.train(config, expect=[f"{config}: environment: '::::' is not an environment id"])


def environment_unknown(w: Work) -> Call:
    config = w.config(environment="NoSuchEnv-v0")
    return w.train(config, expect=[f"{config}: environment:", "NoSuchEnv"])


def dask_garbage(w: Work) -> Call:
    config = w.config(processing={"type": "dask", "address": "garbage!!"})
    return w.train(config, expect=["processing.address: no Dask scheduler answered at garbage!!"])


def dask_http(w: Work) -> Call:
    config = w.config(processing={"type": "dask", "address": "http://127.0.0.1:8786"})
    return w.train(config, expect=["processing.address: 'http://127.0.0.1:8786' is not a Dask"])


def out_under_a_file(w: Work) -> Call:
    (w.root / "afile").write_text("")
    out = w.root / "afile" / "run"
    return Call(["train", str(w.config()), "--out", str(out), "--quiet"],
                [f"{out}: cannot create the run folder"], no_folder=out)


def out_read_only(w: Work) -> Call:
    if os.geteuid() == 0:
        pytest.skip("root ignores permission bits; out_under_a_file covers an unwritable --out")
    w.out.mkdir()
    w.out.chmod(0o555)
    return Call(["train", str(w.config()), "--out", str(w.out), "--quiet"],
                [f"{w.out}: the folder is not writable"])


def typo_of_required_key(w: Work) -> Call:
    data = json.loads(json.dumps(GOOD))
    data["generatons"] = data.pop("generations")
    config = w.root / "typo.json"
    config.write_text(json.dumps(data))
    return w.train(config, expect=[f"{config}: generatons: unknown key (did you mean "
                                   "'generations'?)"])


def set_unknown_brain(w: Work) -> Call:
    return w.train(w.config(), "--set", "brain.type=ctrn",
                   expect=["--set brain.type=ctrn: brain.type: unknown brain type 'ctrn'"])


def plot_without_extension(w: Work) -> Call:
    return Call(["plot", str(w.run()), "--out", str(w.root / "plot.xyz")],
                ["cannot write '.xyz' images"])


def plot_out_under_a_file(w: Work) -> Call:
    (w.root / "afile").write_text("")
    return Call(["plot", str(w.run()), "--out", str(w.root / "afile" / "x.png")],
                ["x.png: cannot write the plot"])


def replay_negative_seed(w: Work) -> Call:
    return Call(["replay", str(w.run()), "--seed", "-1"],
                ["--seed: must be a whole number of 0 or more, got '-1'"])


def replay_hof_text(w: Work) -> Call:
    return Call(["replay", str(w.run()), "--hof", "abc"],
                ["argument --hof: must be a rank in the hall of fame, a whole number from 1 (1 "
                 "is the best), got 'abc'"])


def replay_episodes_text(w: Work) -> Call:
    return Call(["replay", str(w.run()), "--episodes", "abc"],
                ["argument --episodes: must be a whole number of at least 1, got 'abc'"])


def champion_test_wrapper_typo(w: Work) -> Call:
    test = {"environment": {"id": "CartPole-v1", "wrappers": [{"type": "scale-observatoin"}]},
            "min_return": 1}
    return w.train(w.config(stop={"champion_tests": [test]}), expect=[
        "stop.champion_tests[0].environment.wrappers[0].type: unknown wrapper type "
        "'scale-observatoin' (did you mean 'scale-observation'?); installed: ",
        "frame-stack", "scale-observation", "(see `evo list-wrappers`)"])


def champion_test_wrapper_unknown_key(w: Work) -> Call:
    test = {"environment": {"id": "CartPole-v1",
                            "wrappers": [{"type": "scale-observation", "scaled": 2}]},
            "min_return": 1}
    return w.train(w.config(stop={"champion_tests": [test]}), expect=[
        "stop.champion_tests[0].environment.wrappers[0].scaled: unknown key (did you mean "
        "'scale'?); allowed keys: offset, scale, type"])


def wrapper_scale_nan(w: Work) -> Call:
    text = GOOD_TOML.replace('environment = "CartPole-v1"', 'environment = { id = "CartPole-v1", '
                             'wrappers = [{ type = "scale-observation", scale = nan }] }')
    return w.train(w.config(text), expect=[
        "environment.wrappers[0].scale: must be a finite number or a valid list, got nan"])


def render_to_folder(w: Work) -> Call:
    return Call(["replay", str(w.run()), "--episodes", "1", "--render", str(w.root)],
                ["is a folder; give a file name"])


def render_under_a_file(w: Work) -> Call:
    (w.root / "afile").write_text("")
    return Call(["replay", str(w.run()), "--episodes", "1", "--render",
                 str(w.root / "afile" / "a.gif")], ["afile is a file, not a folder"])


# ---- damaged run folders ---------------------------------------------------------------------

def _binary_log(w: Work) -> Path:
    run = w.run()
    (run / "log.csv").write_bytes(bytes(range(256)) * 4)
    return run


def _junk_log(w: Work) -> Path:
    run = w.run()
    lines = (run / "log.csv").read_text().splitlines()
    lines[1] = "junk,row"
    (run / "log.csv").write_text("\n".join(lines) + "\n")
    return run


def plot_binary_log(w: Work) -> Call:
    return Call(["plot", str(_binary_log(w))], ["log.csv: unreadable"])


def plot_junk_log(w: Work) -> Call:
    return Call(["plot", str(_junk_log(w))], ["log.csv: line 2 is not a log row"])


def resume_binary_log(w: Work) -> Call:
    return Call(["resume", str(_binary_log(w)), "--generations", "3", "--quiet"],
                ["log.csv: unreadable"])


def resume_junk_log(w: Work) -> Call:
    return Call(["resume", str(_junk_log(w)), "--generations", "3", "--quiet"],
                ["log.csv: line 2 is not a log row"])


def best_wrong_shape(w: Work) -> Call:
    run = w.run()
    _edit_npz(run / "best.npz", lambda a: a.update(genome=a["genome"].reshape(1, -1)))
    return Call(["replay", str(run), "--episodes", "1"], ["best.npz: genome has shape (1, "])


def best_wrong_dtype(w: Work) -> Call:
    run = w.run()
    _edit_npz(run / "best.npz", lambda a: a.update(genome=np.array(["x"] * a["genome"].size)))
    return Call(["replay", str(run), "--episodes", "1"], ["best.npz: genome (<U1)"])


def best_fitness_array(w: Work) -> Call:
    run = w.run()
    _edit_npz(run / "best.npz", lambda a: a.update(fitness=np.zeros(3)))
    return Call(["replay", str(run), "--episodes", "1"], ["best.npz: genome (float64) and "
                                                          "fitness (float64, shape (3,))"])


def best_wrong_mask(w: Work) -> Call:
    run = w.run()
    _edit_npz(run / "best.npz", lambda a: a.update({"template.v_mask": np.zeros((7, 2), bool)}))
    return Call(["replay", str(run), "--episodes", "1"], ["best.npz: its saved brain state"])


def _edited_config(w: Work, change: Callable[[dict[str, Any]], None]) -> Path:
    run = w.run()
    _edit_json(run / "config.json", change)
    return run


def replay_neurons_edited(w: Work) -> Call:
    run = _edited_config(w, lambda c: c["brain"].update(number_neurons=5))
    return Call(["replay", str(run), "--episodes", "1"], ["best.npz: its saved brain state"])


def resume_neurons_edited(w: Work) -> Call:
    run = _edited_config(w, lambda c: c["brain"].update(number_neurons=5))
    return Call(["resume", str(run), "--generations", "3", "--quiet"],
                ["config.json: brain.number_neurons is 5 but the run was trained with 3"])


def replay_environment_edited(w: Work) -> Call:
    run = _edited_config(w, lambda c: c.update(environment="Acrobot-v1"))
    return Call(["replay", str(run), "--episodes", "1"], ["best.npz: its saved brain state"])


def resume_environment_edited(w: Work) -> Call:
    run = _edited_config(w, lambda c: c.update(environment="NoSuchEnv-v0"))
    return Call(["resume", str(run), "--generations", "3", "--quiet"],
                [f"{run / 'config.json'}: environment:"])


def checkpoint_streams_not_a_table(w: Work) -> Call:
    run = w.run()
    _edit_meta(run, lambda m: m.update(streams="garbage"))
    return Call(["resume", str(run), "--generations", "3", "--quiet"],
                ["checkpoint.npz: damaged: its meta entry's streams: 'garbage' is not a table"])


def checkpoint_streams_empty(w: Work) -> Call:
    run = w.run()
    _edit_meta(run, lambda m: m.update(streams={}))
    return Call(["resume", str(run), "--generations", "3", "--quiet"],
                ["checkpoint.npz: its optimizer or random-stream state is damaged"])


def checkpoint_streams_bad_state(w: Work) -> Call:
    run = w.run()
    _edit_meta(run, lambda m: m["streams"].update(
        optimizer={"bit_generator": "PCG64", "state": {"state": "x", "inc": 1}}))
    return Call(["resume", str(run), "--generations", "3", "--quiet"],
                ["checkpoint.npz: its optimizer or random-stream state is damaged"])


# ---- plugins ---------------------------------------------------------------------------------

def template_init_raises(w: Work) -> Call:
    env = w.plugin("boom_brain", _template_plugin("boom", init="raise RuntimeError('no GPU')"))
    return w.train(_brain_config(w, "boom"), env={**env, "EVO_PLUGINS": "boom_brain"},
                   expect=["brain 'boom' (local module boom_brain) cannot be built for "
                           "CartPole-v1: RuntimeError: no GPU"])


def genome_size_zero(w: Work) -> Call:
    env = w.plugin("zero_brain", _template_plugin("zero", genome_size="0"))
    return w.train(_brain_config(w, "zero"), env={**env, "EVO_PLUGINS": "zero_brain"},
                   expect=["brain 'zero' (local module zero_brain) reports genome_size 0"])


def genome_size_negative(w: Work) -> Call:
    env = w.plugin("neg_brain", _template_plugin("neg", genome_size="-3"))
    return w.train(_brain_config(w, "neg"), env={**env, "EVO_PLUGINS": "neg_brain"},
                   expect=["brain 'neg' (local module neg_brain) reports genome_size -3"])


def plugin_missing(w: Work) -> Call:
    return w.train(w.config(), env={"EVO_PLUGINS": "no_such_module"},
                   expect=["plugin module 'no_such_module'", "ModuleNotFoundError"])


def plugin_import_fails_check_brain(w: Work) -> Call:
    env = w.plugin("needs_torch", "raise ImportError('needs torch')\n")
    return Call(["--plugin", "needs_torch", "check-brain", "ctrnn"],
                ["plugin module 'needs_torch'", "ImportError: needs torch"], env)


def plugin_import_fails_replay(w: Work) -> Call:
    env = w.plugin("needs_torch", "raise ImportError('needs torch')\n")
    return Call(["--plugin", "needs_torch", "replay", str(w.run())],
                ["plugin module 'needs_torch'", "ImportError: needs torch"], env)


def replay_local_plugin_gone(w: Work) -> Call:
    env = w.plugin("lin_brain", brain_plugin_source("lin"))
    run = w.root / "linrun"
    trained = run_evo("--plugin", "lin_brain", "train", str(_brain_config(w, "lin")), "--out",
                      str(run), "--quiet", env=env)
    assert trained.returncode == 0, trained.stderr
    shutil.rmtree(w.root / "mods")
    return Call(["replay", str(run), "--episodes", "1"],
                ["the run used the module(s) lin_brain", "--plugin lin_brain"])


def _broken_site(w: Work) -> dict[str, str]:
    """An installed distribution whose plugin fails to import (it would provide 'lin')."""
    site = SitePackages(w.root / "site")
    site.root.mkdir()
    site.add("evo-lin", "evo_lin", "raise ImportError('needs torch')\n")
    env: dict[str, str] = site.env
    return env


def unknown_brain_names_broken_plugin(w: Work) -> Call:
    return w.train(_brain_config(w, "lin"), env=_broken_site(w),
                   expect=["brain.type: unknown brain type 'lin'", "failed to load",
                           "evo-lin 1.0", "ImportError: needs torch"])


def check_brain_names_broken_plugin(w: Work) -> Call:
    return Call(["check-brain", "lin"], ["no brain named 'lin'", "failed to load", "evo-lin 1.0"],
                _broken_site(w))


CASES: list[Callable[[Work], Call]] = [
    sigma_inf, connect_timeout_inf, huge_integer, huge_integer_set, deep_json, environment_colons,
    environment_unknown, dask_garbage, dask_http, out_under_a_file, out_read_only,
    typo_of_required_key, set_unknown_brain, plot_without_extension, plot_out_under_a_file,
    replay_negative_seed, replay_hof_text, replay_episodes_text, champion_test_wrapper_typo,
    champion_test_wrapper_unknown_key, wrapper_scale_nan,
    render_to_folder, render_under_a_file, plot_binary_log, plot_junk_log, resume_binary_log,
    resume_junk_log, best_wrong_shape, best_wrong_dtype, best_fitness_array, best_wrong_mask,
    replay_neurons_edited, resume_neurons_edited, replay_environment_edited,
    resume_environment_edited, checkpoint_streams_not_a_table, checkpoint_streams_empty,
    checkpoint_streams_bad_state, template_init_raises, genome_size_zero, genome_size_negative,
    plugin_missing, plugin_import_fails_check_brain, plugin_import_fails_replay,
    replay_local_plugin_gone, unknown_brain_names_broken_plugin, check_brain_names_broken_plugin,
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("trained")
    config = root / "config.json"
    config.write_text(json.dumps(GOOD))
    result = run_evo("train", str(config), "--out", str(root / "run"), "--quiet")
    assert result.returncode == 0, result.stderr
    return root / "run"


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_mistake_is_one_line(tmp_path: Path, trained: Path,
                             case: Callable[[Work], Call]) -> None:
    call = case(Work(tmp_path, trained))
    result = evo_in_process(*call.args, env=call.env, cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("evo:")]
    assert len(lines) == call.lines, result.stderr
    for text in call.expect:
        assert text in lines[0], result.stderr
    if call.no_folder is not None:
        assert not call.no_folder.exists(), f"{call.no_folder} was left behind"


def test_plot_without_extension_writes_a_png(tmp_path: Path, trained: Path) -> None:
    run = Work(tmp_path, trained).run()
    result = run_evo("plot", str(run), "--out", str(tmp_path / "myplot"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "myplot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_disk_full_while_checkpointing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    real_savez = np.savez

    def savez(file: Any, *args: Any, **kwargs: Any) -> None:
        name = os.readlink(f"/proc/self/fd/{file.fileno()}") if hasattr(file, "fileno") else ""
        if Path(name).name.startswith(".checkpoint.npz."):  # the checkpoint's temporary file
            file.write(b"PK half a file")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_savez(file, *args, **kwargs)

    monkeypatch.setattr(np, "savez", savez)
    config = tmp_path / "config.json"
    config.write_text(json.dumps(GOOD))
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("evo:")]
    assert len(lines) == 1, err
    assert "checkpoint.npz: cannot write (No space left on device)" in lines[0]
    assert not list(out.glob(".checkpoint.npz*"))
    assert not (out / "checkpoint.npz").exists()


def test_disk_full_while_creating_the_run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("evo_core.results.files.os.replace", full)
    config = tmp_path / "config.json"
    config.write_text(json.dumps(GOOD))
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("evo:")]
    assert len(lines) == 1 and "config.json: cannot write (No space left" in lines[0], err
    assert not out.exists()

