"""Nothing hangs, nothing is left running: environments that hang, Ctrl-C and kill -9, performed.

Environments that hang come from a local module (`slow_env:...` ids, imported by gymnasium in
the main process and in every worker). Bounds on waiting are generous and only there so that a
regression fails instead of hanging the suite; no assertion measures speed.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until

from evo_core.authoring.memory import check_population_fits, format_bytes
from evo_core.cli.main import main
from evo_core.errors import UserError
from evo_core.handlers.dask import DaskConfig, DaskHandler
from evo_core.processes.scheduler_probe import tcp_endpoint

#: Upper bound for anything that should end "within seconds"; only a hang exceeds it.
HANG = 120.0

SLOW_ENV = '''
    """Environments that hang in reset or step (always, or once the file `hang` exists)."""
    import os
    import time

    import gymnasium as gym
    import numpy as np


    class Slow(gym.Env):
        def __init__(self, hang_in="step", flag=None):
            self.observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float64)
            self.action_space = gym.spaces.Discrete(2)
            self.hang_in, self.flag, self.t = hang_in, flag, 0

        def _maybe_hang(self, where):
            if where == self.hang_in and (self.flag is None or os.path.exists(self.flag)):
                open(f"stuck-{os.getpid()}", "w").close()
                time.sleep(3600)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            self.t = 0
            self._maybe_hang("reset")
            return np.zeros(3), {}

        def step(self, action):
            self._maybe_hang("step")
            self.t += 1
            return np.zeros(3), 1.0, self.t >= 10, False, {}


    gym.register("HangStep-v0", entry_point="slow_env:Slow", kwargs={"hang_in": "step"})
    gym.register("HangReset-v0", entry_point="slow_env:Slow", kwargs={"hang_in": "reset"})
    gym.register("HangOnFlag-v0", entry_point="slow_env:Slow",
                 kwargs={"hang_in": "step", "flag": "hang"})
    '''


# ----------------------------------------------------------------- processes


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return fields[0].decode(), int(fields[1])


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                children.setdefault(stat[1], []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    """The pids still running (in this container zombies are not reaped: they count as gone)."""
    return {pid for pid in pids if (stat := _stat(pid)) is not None and stat[0] != "Z"}


class Training:
    """`evo train` in its own session (so a signal to its group reaches nothing else)."""

    def __init__(self, folder: Path, config: dict[str, Any], *extra: str) -> None:
        (folder / "slow_env.py").write_text(textwrap.dedent(SLOW_ENV))
        (folder / "c.json").write_text(json.dumps(config))
        self.folder, self.run = folder, folder / "run"
        # its temporary files and folders go here, and must be gone at the end; short, since a
        # socket's path (the fork server's) has to fit in 108 bytes
        self.tmp = Path(tempfile.mkdtemp(prefix="evo-test-"))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "evo_core.cli.main", "train", "c.json", "--quiet", "--out",
             "run", *extra], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True,
            env=dict(os.environ, TMPDIR=str(self.tmp),
                     PYTHONPATH=os.pathsep.join([str(folder), *sys.path])))
        self.seen: set[int] = set()

    def generations(self) -> int:
        log = self.run / "log.csv"
        return max(0, len(log.read_text().splitlines()) - 1) if log.exists() else 0

    def watch(self) -> None:
        """Remember every descendant seen so far (the test checks that each one ends)."""
        self.seen |= descendants(self.process.pid)

    def wait_for(self, condition, what: str) -> None:
        def check() -> bool:
            self.watch()
            assert self.process.poll() is None, self.process.communicate()[1]
            return bool(condition())
        wait_until(check, what)

    def finish(self) -> tuple[int, str]:
        try:
            _, err = self.process.communicate(timeout=HANG)
        finally:
            self.kill()
        return self.process.returncode, err

    def kill(self) -> None:
        """Whatever the test's outcome: nothing it started survives it."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        for pid in alive(self.seen):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def training(tmp_path: Path) -> Iterator[list[Training]]:
    started: list[Training] = []
    yield started
    for run in started:
        run.kill()
        shutil.rmtree(run.tmp, ignore_errors=True)
        if run.process.stdout:
            run.process.stdout.close()
        if run.process.stderr:
            run.process.stderr.close()


def config(environment: str, processing: dict[str, Any], generations: int = 3,
           **extra: Any) -> dict[str, Any]:
    return {"environment": environment, "seed": 3, "generations": generations,
            "checkpoint_every": 1, "brain": {"type": "ctrnn", "number_neurons": 3},
            "optimizer": {"type": "cma-es", "population_size": 6},
            "episodes": {"runs": 1}, "processing": processing, **extra}


# ----------------------------------------------------------------- Dask addresses


class Listener:
    """A TCP listener on 127.0.0.1 that is not a Dask scheduler: it says nothing, or sends
    `greeting` to each connection, and holds connections open until stopped."""

    def __init__(self, greeting: bytes | None) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.greeting, self.stopped = greeting, threading.Event()
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.address = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.connections.append(connection)
            if self.greeting is not None:
                connection.sendall(self.greeting)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()
        for connection in self.connections:
            connection.close()
        self.server.close()


class HTTPListener:
    """A real HTTP server: it waits for a request, so to a Dask client it is silent."""

    def __init__(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      http.server.BaseHTTPRequestHandler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.address = f"tcp://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


GARBAGE = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"


@pytest.fixture(params=["silent", "http", "garbage", "huge-frame"])
def not_dask(request) -> Iterator[str]:
    listener: Any = {"silent": lambda: Listener(None), "http": HTTPListener,
                "garbage": lambda: Listener(GARBAGE),
                # a well-formed frame length that asks for 3 EiB
                "huge-frame": lambda: Listener((3 << 60).to_bytes(8, "little"))}[request.param]()
    try:
        yield listener.address
    finally:
        listener.stop()


def test_an_address_that_does_not_speak_dask_is_refused_in_time(not_dask: str) -> None:
    outcome: list[BaseException | None] = []

    def connect() -> None:
        try:
            DaskHandler(DaskConfig(address=not_dask, connect_timeout=1.0), None).close()  # type: ignore[arg-type]
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001
            outcome.append(exc)

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(HANG)
    assert outcome, f"connecting to {not_dask} hangs"
    error = outcome[0]
    assert isinstance(error, UserError), repr(error)
    message = str(error)
    assert "\n" not in message and "processing.address" in message and not_dask in message


def test_the_command_line_refuses_a_listener_that_sends_garbage(tmp_path: Path) -> None:
    listener = Listener(GARBAGE)
    try:
        (tmp_path / "c.json").write_text(json.dumps(config(
            "CartPole-v1", {"type": "dask", "address": listener.address,
                            "connect_timeout": 1.0})))
        result = subprocess.run(
            [sys.executable, "-m", "evo_core.cli.main", "train", "c.json", "--quiet", "--out",
             "run"], cwd=tmp_path, capture_output=True, text=True, timeout=HANG)
    finally:
        listener.stop()
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and listener.address in lines[0] and "Dask" in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_scheduler_addresses_are_parsed_for_the_probe() -> None:
    assert tcp_endpoint("tcp://10.0.0.5:8786") == ("10.0.0.5", 8786)
    assert tcp_endpoint("10.0.0.5") == ("10.0.0.5", 8786)
    assert tcp_endpoint("tcp://[::1]:9000") == ("::1", 9000)
    assert tcp_endpoint("tls://10.0.0.5:8786") is None


# ----------------------------------------------------------------- memory


@pytest.mark.parametrize("override, field", [
    ("optimizer.population_size=1000000000", "optimizer.population_size = 1000000000"),
    ("brain.number_neurons=100000", "brain.number_neurons = 100000")])
def test_sizes_beyond_the_machine_are_refused_up_front(tmp_path: Path, capsys, monkeypatch,
                                                       override: str, field: str) -> None:
    import evo_core.machine

    # a machine of 24 GiB, whatever this one has: the test must not depend on its size
    monkeypatch.setattr(evo_core.machine, "machine_memory", lambda: 24 * 2**30)
    (tmp_path / "c.json").write_text(json.dumps(config("CartPole-v1", {"type": "sequential"})))
    out = tmp_path / "run"
    assert main(["train", str(tmp_path / "c.json"), "--quiet", "--out", str(out),
                 "--set", override]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and field in lines[0] and "needs about" in lines[0], lines
    assert "this machine has 24.0 GiB" in lines[0]
    assert not out.exists()


def test_population_estimate() -> None:
    check_population_fits(100, 1000, available=3 * 8 * 100 * 1000)
    with pytest.raises(UserError, match=r"needs about 2\.2 TiB for genomes of 100 genes; this "
                       r"machine has 1\.0 GiB"):
        check_population_fits(10**9, 100, available=2**30)
    assert format_bytes(1536) == "1.5 KiB" and format_bytes(3 * 2**60) == "3.0 EiB"


# ----------------------------------------------------------------- task_timeout


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_task_timeout_must_be_a_positive_finite_number(tmp_path: Path, capsys,
                                                       value: str) -> None:
    (tmp_path / "c.json").write_text(json.dumps(config("CartPole-v1", {"type": "sequential"})))
    assert main(["train", str(tmp_path / "c.json"), "--quiet", "--out", str(tmp_path / "run"),
                 "--set", f"processing.task_timeout={value}"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "task_timeout" in lines[0], lines
    assert not (tmp_path / "run").exists()


def check_timed_out(code: int, err: str, environment: str, run: Path) -> None:
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("evo: error: generation 1, candidate "), last
    assert f"environment {environment!r}" in last and "processing.task_timeout = 1 s" in last
    assert "Traceback" not in err
    assert (run / "config.json").exists()


def test_sequential_task_timeout_ends_a_run_that_hangs_in_reset(
        tmp_path: Path, training: list[Training]) -> None:
    run = Training(tmp_path, config("slow_env:HangReset-v0", {"type": "sequential",
                                                              "task_timeout": 1.0}))
    training.append(run)
    code, err = run.finish()
    check_timed_out(code, err, "slow_env:HangReset-v0", run.run)


@pytest.mark.slow
@pytest.mark.parametrize("processing", [
    {"type": "mp", "workers": 2, "start_method": "fork"},
    {"type": "dask", "workers": 2}], ids=["mp", "dask"])
def test_parallel_task_timeout_ends_a_run_that_hangs_in_step(
        tmp_path: Path, training: list[Training], processing: dict[str, Any]) -> None:
    run = Training(tmp_path, config("slow_env:HangStep-v0", {**processing,
                                                             "task_timeout": 1.0}))
    training.append(run)

    def ended() -> bool:
        run.watch()
        return run.process.poll() is not None

    wait_until(ended, "the run to end")
    code, err = run.finish()
    check_timed_out(code, err, "slow_env:HangStep-v0", run.run)
    wait_until(lambda: not alive(run.seen), "the workers to end")
    assert not list(run.tmp.iterdir())


# ----------------------------------------------------------------- Ctrl-C


@pytest.mark.slow
@pytest.mark.parametrize("interrupts, processing", [
    (1, {"type": "mp", "workers": 2, "start_method": "fork"}),
    (2, {"type": "mp", "workers": 2, "start_method": "fork"}),
    (1, {"type": "dask", "workers": 2})], ids=["mp", "mp-twice", "dask"])
def test_ctrl_c_ends_a_run_whose_worker_is_stuck(tmp_path: Path, training: list[Training],
                                                 interrupts: int,
                                                 processing: dict[str, Any]) -> None:
    run = Training(tmp_path, config("slow_env:HangOnFlag-v0", processing, generations=1000))
    training.append(run)
    run.wait_for(lambda: run.generations() >= 1, "the first generation")
    (tmp_path / "hang").touch()
    run.wait_for(lambda: list(tmp_path.glob("stuck-*")), "a worker to be stuck in step")
    os.killpg(run.process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    if interrupts == 2:
        # training has handled the first once it drew fitness.png (it does so on an interrupt,
        # before shutting the workers down): the second lands in that shutdown's wait
        run.wait_for(lambda: (run.run / "fitness.png").exists(), "the first Ctrl-C handled")
        os.killpg(run.process.pid, signal.SIGINT)
    code, err = run.finish()
    assert code == 130, err
    last = err.strip().splitlines()[-1]
    assert "interrupted (SIGINT)" in last and "continue with: evo resume" in last, err
    assert "Traceback" not in err
    assert (run.run / "checkpoint.npz").exists()
    wait_until(lambda: not alive(run.seen), "the workers to end")
    assert not list(run.tmp.iterdir())


# ----------------------------------------------------------------- kill -9


@pytest.mark.slow
@pytest.mark.parametrize("processing", [
    {"type": "mp", "workers": 2, "start_method": "fork"},
    {"type": "mp", "workers": 2, "start_method": "forkserver"},
    {"type": "dask", "workers": 2}], ids=["mp-fork", "mp-forkserver", "dask"])
def test_kill_9_leaves_no_worker_and_no_folder(tmp_path: Path, training: list[Training],
                                               processing: dict[str, Any]) -> None:
    run = Training(tmp_path, config("CartPole-v1", processing, generations=100000))
    training.append(run)
    run.wait_for(lambda: run.generations() >= 1, "the first generation")
    run.watch()
    assert alive(run.seen), "no worker process was seen"
    run.process.send_signal(signal.SIGKILL)
    run.process.wait()
    wait_until(lambda: not alive(run.seen), "the workers of a killed run to end")
    assert not list(run.tmp.iterdir())  # no /tmp/evo-mp-*, /tmp/pymp-*, dask-scratch-space
