"""Hostile plugins and environments, performed for real: who is blamed, and what evo survives.

- A plugin that calls `sys.exit()` or runs argparse at import (or in its hook) is reported broken
  like any failing plugin; `evo list-brains` and `evo train` carry on.
- A brain that raises SystemExit or KeyboardInterrupt ends the run with the usual brain error and
  failed_genome.npz; only a real signal is an interrupt.
- An environment that raises in reset or step is named as the culprit, not the brain.
- A template that pickle cannot handle is refused before the run folder, naming the attribute.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SitePackages, brain_plugin_source, evo_in_process, run_evo

#: A brain plugin whose config says where it misbehaves: `raise_in` one of its calls ("" for
#: none) with `exception` ("exit": SystemExit(7), "interrupt": KeyboardInterrupt), or `hold` an
#: unpicklable object in its template. `touch` is a file it creates on its first step.
HOSTILE_BRAIN = '''
import os
import threading
import time
from typing import Literal

import numpy as np

from evo_core import BrainConfig, BrainTemplateBase, hookimpl


class HostileConfig(BrainConfig):
    """A linear policy that misbehaves on request."""

    type: Literal["hostile"] = "hostile"
    raise_in: Literal["", "make", "reset", "step"] = ""
    exception: Literal["exit", "interrupt"] = "exit"
    hold: Literal["", "lock", "lambda"] = ""
    touch: str = ""
    step_seconds: float = 0.0


def misbehave(config, call):
    if config.raise_in == call:
        if config.exception == "exit":
            raise SystemExit(7)
        raise KeyboardInterrupt("raised by the brain")


class Linear:
    def __init__(self, w, template):
        self.w, self.t = w, template

    def reset(self):
        misbehave(self.t.config, "reset")

    def step(self, observation):
        config = self.t.config
        if config.touch and not os.path.exists(config.touch):
            open(config.touch, "w").close()
        time.sleep(config.step_seconds)
        misbehave(config, "step")
        return self.t.decoder(np.tanh(self.w @ self.t.encoder(observation)))


class Helper:
    """Where an unpicklable object hides: one level below the template."""

    def __init__(self, hold):
        self.name = "helper"
        if hold == "lock":
            self.guard = threading.Lock()
        elif hold == "lambda":
            self.guard = lambda x: x


class HostileTemplate(BrainTemplateBase):
    config_model = HostileConfig

    def __init__(self, config, observation_space, action_space, rng):
        super().__init__(config, observation_space, action_space, rng)
        self.helper = Helper(config.hold)

    @property
    def genome_size(self):
        return self.input_size * self.output_size

    def build(self, genome):
        misbehave(self.config, "make")
        return Linear(genome.reshape(self.output_size, self.input_size), self)


@hookimpl
def evo_brain_templates():
    return [HostileTemplate]
'''

#: Environments that raise in reset or step (after a few steps), registered on import, so that
#: "hostile_envs:BadReset-v0" makes gymnasium import this module (in workers too).
HOSTILE_ENVS = '''
import gymnasium as gym
import numpy as np


class Bad(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), dtype=np.float64)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, fail_in):
        self.fail_in = fail_in
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if self.fail_in == "reset":
            raise ValueError("the simulator lost its licence")
        self.t = 0
        return np.zeros(3), {}

    def step(self, action):
        self.t += 1
        if self.fail_in == "step" and self.t == 3:
            raise RuntimeError("physics exploded")
        if self.fail_in == "exit" and self.t == 3:
            raise SystemExit(5)
        return np.full(3, 0.1), 1.0, False, self.t >= 10, {}


for name in ("reset", "step", "exit"):
    gym.register(f"Bad{name.capitalize()}-v0", entry_point=Bad, kwargs={"fail_in": name},
                 disable_env_checker=True)
'''

SEQUENTIAL = {"type": "sequential"}
MP = {"type": "mp", "workers": 2, "start_method": "fork"}


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    """A folder on PYTHONPATH holding the hostile brain and environments."""
    folder = tmp_path / "modules"
    folder.mkdir()
    (folder / "hostile_brain.py").write_text(HOSTILE_BRAIN)
    (folder / "hostile_envs.py").write_text(HOSTILE_ENVS)
    return folder


def train(tmp_path: Path, plugins: Path, brain: dict[str, Any], processing: dict[str, Any],
          environment: str = "CartPole-v1", generations: int = 2,
          in_process: bool | None = None) -> tuple[Any, Path]:
    """`evo train` of the hostile plugins; in this process for the sequential handler (nothing
    to isolate: the brain runs in evo's process either way), else as a real command."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": environment, "seed": 1, "generations": generations,
        "brain": brain, "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"max_steps": 20}, "processing": processing}))
    out = tmp_path / "run"
    runner = evo_in_process if (processing == SEQUENTIAL if in_process is None
                                else in_process) else run_evo
    result = runner("train", str(config), "--quiet", "--out", str(out),
                    env={"PYTHONPATH": str(plugins), "EVO_PLUGINS": "hostile_brain"})
    return result, out


def last_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert lines, "nothing on stderr"
    return lines[-1]


def assert_failed_genome(out: Path, candidate: int) -> None:
    with np.load(out / "failed_genome.npz", allow_pickle=False) as failed:
        assert int(failed["candidate"]) == candidate and int(failed["generation"]) == 1
        assert failed["genome"].ndim == 1


# ------------------------------------------------------------------ plugins that exit on import


EXITING_PLUGINS = {
    "brain-exits": ("evo_exits", "import sys\nsys.exit()\n", "called sys.exit()"),
    "brain-argparse": ("evo_argparse", '''
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--gpu", action="store_true")
        parser.parse_args()
        ''', "called sys.exit(2) after printing"),
    "brain-hook-exits": ("evo_hook_exits", '''
        import sys
        from evo_core import hookimpl
        @hookimpl
        def evo_brain_templates():
            sys.exit(3)
        ''', "evo_brain_templates() raised SystemExit: the plugin called sys.exit(3)"),
    "brain-ctrl-c": ("evo_ctrl_c", "raise KeyboardInterrupt\n", "KeyboardInterrupt"),
}


def add_exiting_plugins(site: SitePackages) -> None:
    for dist, (module, source, _) in EXITING_PLUGINS.items():
        site.add(dist, module, source)
    site.add("brain-linear", "evo_linear", brain_plugin_source("linear"))
    site.add("brain-chatty", "evo_chatty",
             'print("chatty brains loading")\n' + textwrap.dedent(brain_plugin_source("chatty")))


def test_plugins_that_exit_at_import_are_broken_and_listing_carries_on(
        site: SitePackages) -> None:
    add_exiting_plugins(site)
    result = run_evo("list-brains", "--json", env=site.env)
    assert result.returncode == 0, result.stderr
    rows = {row["distribution"]: row for row in result.json()}
    for dist, (_, _, reason) in EXITING_PLUGINS.items():
        assert rows[dist]["status"] == "broken", rows[dist]
        assert reason in rows[dist]["description"] and "\n" not in rows[dist]["description"]
    assert "unrecognized arguments: list-brains --json" in rows["brain-argparse"]["description"]
    assert rows["brain-linear"]["status"] == "ok"
    assert rows["brain-chatty"]["status"] == "ok"  # what it printed went to stderr, not the JSON
    assert "chatty brains loading" in result.stderr
    assert any(row["name"] == "ctrnn" and row["status"] == "ok" for row in rows.values())
    assert "Traceback" not in result.stderr


def test_training_carries_on_past_plugins_that_exit(site: SitePackages, tmp_path: Path) -> None:
    add_exiting_plugins(site)
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "generations": 1, "brain": {"type": "linear"},
        "optimizer": {"type": "cma-es", "population_size": 4}, "episodes": {"max_steps": 10}}))
    result = run_evo("train", str(config), "--quiet", "--out", str(tmp_path / "run"),
                     env=site.env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(tmp_path / "run")
    assert "Traceback" not in result.stderr


def test_strict_mode_reports_an_exiting_plugin_as_an_error(site: SitePackages) -> None:
    site.add("brain-exits", "evo_exits", "import sys\nsys.exit(4)\n")
    result = run_evo("--strict", "list-brains", env=site.env)
    assert result.returncode == 2
    assert "brain-exits" in last_line(result.stderr)
    assert "called sys.exit(4)" in last_line(result.stderr)


# ------------------------------------------------------------------ brains that exit or interrupt


@pytest.mark.parametrize("processing,call,exception", [
    (SEQUENTIAL, "step", "exit"), (SEQUENTIAL, "reset", "exit"), (SEQUENTIAL, "make", "exit"),
    (SEQUENTIAL, "step", "interrupt"), (MP, "step", "exit"), (MP, "make", "interrupt"),
], ids=["sequential-step-exit", "sequential-reset-exit", "sequential-make-exit",
        "sequential-step-interrupt", "mp-step-exit", "mp-make-interrupt"])
def test_brain_raising_systemexit_or_keyboardinterrupt_is_a_brain_error(
        tmp_path: Path, plugins: Path, processing: dict[str, Any], call: str,
        exception: str) -> None:
    brain = {"type": "hostile", "raise_in": call, "exception": exception}
    result, out = train(tmp_path, plugins, brain, processing)
    assert result.returncode == 1, result.stderr  # not 7, not 130
    line = last_line(result.stderr)
    raised = ("SystemExit: 7" if exception == "exit"
              else "KeyboardInterrupt: raised by the brain")
    assert line.startswith(f"evo: error: brain 'hostile' (local module hostile_brain) raised "
                           f"{raised} on generation 1, candidate 0"), line
    assert "no generation finished" in line
    assert "interrupted" not in result.stderr and "worker process" not in result.stderr
    assert "hostile_brain.py" in result.stderr  # the brain's traceback, for its author
    assert_failed_genome(out, 0)


def test_a_real_ctrl_c_still_interrupts(tmp_path: Path, plugins: Path) -> None:
    touched = tmp_path / "stepping"
    brain = {"type": "hostile", "touch": str(touched), "step_seconds": 0.01}
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "generations": 50, "brain": brain,
        "optimizer": {"type": "cma-es", "population_size": 4}}))
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "evo_core.cli.main", "train", str(config), "--quiet", "--out",
         str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=str(plugins), EVO_PLUGINS="hostile_brain"))
    try:
        while not touched.exists():  # the brain is stepping
            assert process.poll() is None, process.communicate()[1]
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert "interrupted (SIGINT)" in last_line(stderr)
    assert not (out / "failed_genome.npz").exists()


# ------------------------------------------------------------------ environments that raise


@pytest.mark.parametrize("processing,environment,call,raised", [
    (SEQUENTIAL, "hostile_envs:BadReset-v0", "reset",
     "ValueError: the simulator lost its licence"),
    (SEQUENTIAL, "hostile_envs:BadStep-v0", "step", "RuntimeError: physics exploded"),
    (SEQUENTIAL, "hostile_envs:BadExit-v0", "step", "SystemExit: 5"),
    (MP, "hostile_envs:BadReset-v0", "reset", "ValueError: the simulator lost its licence"),
    (MP, "hostile_envs:BadStep-v0", "step", "RuntimeError: physics exploded"),
], ids=["sequential-reset", "sequential-step", "sequential-exit", "mp-reset", "mp-step"])
def test_environment_that_raises_is_blamed_not_the_brain(
        tmp_path: Path, plugins: Path, processing: dict[str, Any], environment: str, call: str,
        raised: str) -> None:
    result, out = train(tmp_path, plugins, {"type": "ctrnn", "number_neurons": 2}, processing,
                        environment=environment)
    assert result.returncode == 1, result.stderr
    line = last_line(result.stderr)
    assert line.startswith(f"evo: error: environment {environment!r} raised {raised} in "
                           f"{call}() on generation 1, candidate 0"), line
    assert "brain" not in line and "ctrnn" not in line
    assert "hostile_envs.py" in result.stderr  # the environment's traceback
    assert_failed_genome(out, 0)


def test_brain_error_is_still_the_brains_in_a_working_environment(
        tmp_path: Path, plugins: Path) -> None:
    brain = {"type": "hostile", "raise_in": "step"}
    result, _ = train(tmp_path, plugins, brain, SEQUENTIAL, environment="hostile_envs:BadStep-v0")
    assert "evo: error: brain 'hostile'" in last_line(result.stderr)


# ------------------------------------------------------------------ templates pickle cannot send


@pytest.mark.parametrize("processing,hold,error", [
    (MP, "lock", "TypeError: cannot pickle '_thread.lock' object"),
    # the lambda by name: pickle's own words for it differ between Pythons ("Can't pickle local
    # object" on 3.11 and 3.12, "Can't get local object" on 3.13)
    (MP, "lambda", "local object 'Helper.__init__.<locals>.<lambda>'"),
    ({"type": "dask", "workers": 1}, "lock", "TypeError: cannot pickle '_thread.lock' object"),
], ids=["mp-lock", "mp-lambda", "dask-lock"])
def test_unpicklable_template_is_refused_before_the_run_folder(
        tmp_path: Path, plugins: Path, processing: dict[str, Any], hold: str,
        error: str) -> None:
    # refused before any worker starts, so in this process
    result, out = train(tmp_path, plugins, {"type": "hostile", "hold": hold}, processing,
                        in_process=True)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("evo: error: brain 'hostile' (local module hostile_brain): "
                               f"processing.type = {processing['type']!r} sends the template")
    assert "template.helper.guard cannot be pickled" in lines[0] and error in lines[0]
    assert not out.exists()


def test_unpicklable_template_is_fine_in_process(tmp_path: Path, plugins: Path) -> None:
    result, out = train(tmp_path, plugins, {"type": "hostile", "hold": "lock"}, SEQUENTIAL,
                        generations=1)
    assert result.returncode == 0, result.stderr
    assert (out / "best.npz").exists()


def test_find_unpicklable_names_the_deepest_part() -> None:
    import threading

    from evo_core.evaluation.picklable import find_unpicklable

    class Slotted:
        __slots__ = ("inner",)

        def __init__(self) -> None:
            self.inner = {"ok": [1, 2], "bad": [3, threading.Lock()]}

    assert find_unpicklable({"a": np.zeros(3)}, "x") is None
    found = find_unpicklable([Slotted()], "x")  # a local class: itself not picklable
    assert found is not None and found.path == "x[0].inner['bad'][1]"
    assert "_thread.lock" in found.error
    cycle: list[Any] = []
    cycle.append(cycle)
    cycle.append(threading.Lock())
    found = find_unpicklable(cycle, "c")
    assert found is not None and found.path == "c[1]"


def test_interrupts_are_told_apart() -> None:
    from evo_core.interrupts import Interrupted, is_interrupt, marked_interrupts, wrapped_interrupt

    before = signal.getsignal(signal.SIGINT)
    assert is_interrupt(Interrupted()) and not is_interrupt(SystemExit(1))
    wrapped = ValueError("a library's error")  # what pydantic makes of an interrupt it met
    wrapped.__cause__ = Interrupted()
    assert is_interrupt(wrapped) and wrapped_interrupt(wrapped) is wrapped.__cause__
    assert wrapped_interrupt(Interrupted()) is None and wrapped_interrupt(ValueError()) is None
    assert is_interrupt(KeyboardInterrupt())  # Python's own handler: cannot tell, so it is
    with marked_interrupts():
        assert not is_interrupt(KeyboardInterrupt())  # evo's handler would have raised Interrupted
        assert is_interrupt(Interrupted())
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler runs between bytecodes; this is never waited out
    assert signal.getsignal(signal.SIGINT) is before



def test_a_ctrl_c_in_clean_up_that_must_finish_is_raised_after_it() -> None:
    from evo_core.interrupts import Interrupted, deferred_interrupts, marked_interrupts

    before = signal.getsignal(signal.SIGINT)
    finished: list[str] = []
    with pytest.raises(Interrupted), deferred_interrupts():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the signal is handled (recorded) here, and the block goes on
        finished.append("kills")
        with pytest.raises(Interrupted), marked_interrupts():  # the part that may be cut
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        finished.append("joins")
    assert finished == ["kills", "joins"]
    assert signal.getsignal(signal.SIGINT) is before
    with deferred_interrupts():  # no signal, nothing raised
        finished.append("quiet")


@pytest.mark.slow
@pytest.mark.parametrize("brain,culprit", [
    ({"type": "hostile", "raise_in": "step", "exception": "interrupt"},
     "brain 'hostile' (local module hostile_brain) raised KeyboardInterrupt: raised by the brain"),
    ({"type": "hostile", "raise_in": "reset", "exception": "exit"},
     "brain 'hostile' (local module hostile_brain) raised SystemExit: 7"),
], ids=["interrupt", "exit"])
def test_dask_workers_report_a_brains_systemexit_and_keyboardinterrupt(
        tmp_path: Path, plugins: Path, brain: dict[str, Any], culprit: str) -> None:
    """In a Dask worker the brain runs in a thread that no signal reaches, and a task that
    raised must not be retried as if its worker had died."""
    result, out = train(tmp_path, plugins, brain, {"type": "dask", "workers": 1})
    assert result.returncode == 1, result.stderr
    line = last_line(result.stderr)
    assert line.startswith(f"evo: error: {culprit} on generation 1, candidate 0"), line
    assert "interrupted" not in result.stderr
    assert_failed_genome(out, 0)
