"""Shared fixtures: fake installed distributions, and running the `evo` command."""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

# importing envpool (tests' `pytest.importorskip("envpool")`, as test_vectorize's do) makes a
# fixed /tmp/envpool-jumanji-matplotlib, never removed, unless MPLCONFIGDIR is set: set to the
# folder matplotlib uses anyway, as evo_core's own import of envpool does
# (evaluation/vector_envs.py)
if "MPLCONFIGDIR" not in os.environ:
    import matplotlib

    os.environ["MPLCONFIGDIR"] = matplotlib.get_configdir()


def requires(*modules: str, reason: str) -> pytest.MarkDecorator:
    """The skip mark of tests that need `modules` (top-level names), found without importing
    them. `pytest.importorskip` at a test module's top imports the module in every test worker
    at collection, where only the worker that runs the module's tests needs it: jax, gymnax,
    brax, envpool and mlflow were 13 s of the 20 s each of the suite's three workers spent
    collecting. The tests import them where they use them."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    return pytest.mark.skipif(bool(missing), reason=reason)


@dataclass
class EvoResult:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> object:
        return json.loads(self.stdout)


def run_evo(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 300) -> EvoResult:
    """Run `python -m evo_core.cli.main ARGS` in a fresh interpreter (as a user would)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "evo_core.cli.main", *args], capture_output=True,
                          text=True, env=full_env, cwd=cwd, timeout=timeout)
    return EvoResult(proc.returncode, proc.stdout, proc.stderr)


def evo_in_process(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None
                   ) -> EvoResult:
    """`run_evo`'s twin in this process, for what needs no process boundary: `main(args)` with
    `env` set (PYTHONPATH put on sys.path), in `cwd`, the plugin registry built afresh, stdout
    and stderr captured, and afterwards the environment, sys.path, the registry cache and the
    modules loaded from the case's folders as they were. A fraction of a second where starting
    an `evo` process costs seconds."""
    import contextlib
    import io

    from evo_core.cli.main import main
    from evo_core.hooks import discovery

    folders = [Path(entry) for entry in (env or {}).get("PYTHONPATH", "").split(os.pathsep)
               if entry]
    if cwd is not None:
        folders.append(cwd)
    saved_environment, saved_path = dict(os.environ), list(sys.path)
    saved_modules, saved_cache = set(sys.modules), dict(discovery._cache)
    previous = Path.cwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.update({k: v for k, v in (env or {}).items() if k != "PYTHONPATH"})
        sys.path[:0] = [str(folder) for folder in folders if folder != cwd]
        discovery._cache.clear()
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit_:  # argparse exits with status 2, as in a process
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        os.chdir(previous)
        os.environ.clear()
        os.environ.update(saved_environment)
        sys.path[:] = saved_path
        discovery._cache.clear()
        discovery._cache.update(saved_cache)
        for name in set(sys.modules) - saved_modules:  # the case's own plugin modules
            file = Path(getattr(sys.modules[name], "__file__", None) or "/")
            if any(file.is_relative_to(folder) for folder in folders):
                del sys.modules[name]
    return EvoResult(code, out.getvalue(), err.getvalue())


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C restored where the suite was started with it ignored. A shell without job control
    starts a background command (`pytest ... &`, nohup) with SIGINT ignored; Python then keeps
    it ignored, every process a test starts inherits that, and the tests of Ctrl-C (in this
    process and in the `evo` processes they interrupt) would fail for how the suite was
    launched, not for what evo does. With Python's own handler here, children start with the
    default disposition again."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    _session_bytecode_cache(config)


#: the session's bytecode folder, made by the process that runs the session (not a worker)
_BYTECODE: list[str] = []


def _session_bytecode_cache(config: pytest.Config) -> None:
    """Where Python may not write bytecode (PYTHONDONTWRITEBYTECODE, as some containers set
    it), every process compiles evo's sources again when it imports them: 0.3 s of the 1.1 s
    an `evo list-brains` takes here, paid by each of the suite's hundreds of `evo` processes
    and workers. The suite then writes bytecode into a folder of its own (PYTHONPYCACHEPREFIX,
    which the workers and every process they start inherit), never beside the sources.

    In a virtualenv that folder is the virtualenv's own `evo-suite-bytecode`, kept for the
    next session like the bytecode pip wrote at install (Python checks each file against its
    source): removing the 20,000 files of a whole suite took 10 to 30 s after its last test
    here. Outside a virtualenv it is a temporary folder, removed when the session ends
    (`pytest_unconfigure`)."""
    if hasattr(config, "workerinput") or not sys.dont_write_bytecode:
        return  # a worker inherits the variables; or bytecode is written as usual
    if sys.prefix != sys.base_prefix and os.access(sys.prefix, os.W_OK):
        folder = os.path.join(sys.prefix, "evo-suite-bytecode")
        os.makedirs(folder, exist_ok=True)
    else:
        folder = tempfile.mkdtemp(prefix="evo-suite-bytecode-")
        _BYTECODE.append(folder)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    sys.dont_write_bytecode = False
    sys.pycache_prefix = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _BYTECODE:
        shutil.rmtree(folder, ignore_errors=True)
    if not hasattr(config, "workerinput"):
        # pytest removes its session folders (tmp_path_retention_policy) but not their parent,
        # /tmp/pytest-of-USER, left empty: removed when nothing else (another session) is in it
        import getpass

        with contextlib.suppress(OSError):
            os.rmdir(Path(tempfile.gettempdir(), f"pytest-of-{getpass.getuser()}"))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores. Many tests wait (on the `evo` processes they
    start, on clusters, on timeouts), so one worker per core left the cores idle a fifth of the
    time: on 2 idle cores the suite took 606 s with 2 workers and 535 s with 3 (194 % CPU)."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker, the slow tests first (in their order), then the rest: the
    workers then end together, filling the last minutes with short tests, instead of one
    waiting on a long test that started last. A run in one process keeps the files' order."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def evo() -> Callable[..., EvoResult]:
    return run_evo


@pytest.fixture(autouse=True, scope="session")
def _private_signing_secret(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """CMA-ES checkpoints are signed with a per-user secret; the suite keeps its own, not ~'s
    (subprocesses inherit the variable)."""
    previous = os.environ.get("EVO_SECRET_DIR")
    os.environ["EVO_SECRET_DIR"] = str(tmp_path_factory.mktemp("evo-secret"))
    yield
    if previous is None:
        del os.environ["EVO_SECRET_DIR"]
    else:
        os.environ["EVO_SECRET_DIR"] = previous


#: JAX's persistent compilation cache for the suite: its settings' environment variables, and
#: their names and values in `jax.config` (the folder's is the session's own)
JAX_CACHE_SETTINGS: dict[str, tuple[str, float | int | None]] = {
    "JAX_COMPILATION_CACHE_DIR": ("jax_compilation_cache_dir", None),
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": ("jax_persistent_cache_min_compile_time_secs",
                                                   0.0),
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": ("jax_persistent_cache_min_entry_size_bytes", 0)}


@pytest.fixture(autouse=True, scope="session")
def _jax_compilation_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One JAX compilation cache for this worker's tests and the processes they start
    (subprocesses inherit the variables), every program cached however small: the JAX tests
    compile the same rollouts again in every run they train, resume and replay, and brax's
    physics takes seconds to compile. The cached programs are the ones XLA compiled, so results
    are the same; on one core the JAX tests took 127 s without it and 90 s with it."""
    folder = str(tmp_path_factory.mktemp("jax-cache"))
    previous = {name: os.environ.get(name) for name in JAX_CACHE_SETTINGS}
    jax = sys.modules.get("jax")  # imported while collecting: its settings were read then
    for name, (setting, value) in JAX_CACHE_SETTINGS.items():
        os.environ[name] = folder if value is None else str(value)
        if jax is not None:
            jax.config.update(setting, folder if value is None else value)
    yield
    for name, before in previous.items():
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
    shutil.rmtree(folder, ignore_errors=True)  # megabytes of programs: not kept as pytest's


class SitePackages:
    """A folder that looks like site-packages: modules plus `*.dist-info` with entry points."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def add(self, dist: str, module: str, source: str, version: str = "1.0",
            requires: tuple[str, ...] = (), entry_name: str | None = None) -> None:
        (self.root / f"{module}.py").write_text(textwrap.dedent(source))
        info = self.root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        metadata = ["Metadata-Version: 2.1", f"Name: {dist}", f"Version: {version}"]
        metadata += [f"Requires-Dist: {r}" for r in requires]
        (info / "METADATA").write_text("\n".join(metadata) + "\n")
        (info / "entry_points.txt").write_text(f"[evo]\n{entry_name or module} = {module}\n")

    @property
    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": os.pathsep.join([str(self.root), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture
def site(tmp_path: Path) -> SitePackages:
    root = tmp_path / "site"
    root.mkdir()
    return SitePackages(root)


def brain_plugin_source(name: str, class_name: str = "Template") -> str:
    """A minimal working brain plugin (a linear policy), written against the contract only."""
    return f'''
    from typing import Literal
    import numpy as np
    from evo_core import BrainConfig, BrainTemplateBase, hookimpl

    class {class_name}Config(BrainConfig):
        """A linear policy for tests."""
        type: Literal["{name}"] = "{name}"
        scale: float = 1.0

    class Linear:
        def __init__(self, w, template):
            self.w, self.t = w, template
        def reset(self):
            pass
        def step(self, observation):
            return self.t.decoder(np.tanh(self.w @ self.t.encoder(observation)))

    class {class_name}(BrainTemplateBase):
        config_model = {class_name}Config
        @property
        def genome_size(self):
            return self.input_size * self.output_size
        def build(self, genome):
            return Linear(genome.reshape(self.output_size, self.input_size), self)

    @hookimpl
    def evo_brain_templates():
        return [{class_name}]
    '''


def overlay_venv(root: Path) -> Path:
    """A new virtualenv that also sees everything installed in the test environment (through a
    .pth file), so that `pip install -e` into it is fast, offline and leaves the test
    environment untouched. Returns its python."""
    import sysconfig
    import venv

    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    purelib = subprocess.run([str(python), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    parent = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    # `import` lines of a .pth run at start-up; addsitedir also processes the parent's own .pth
    # files, which is where editable installs live
    lines = [f"import site; site.addsitedir({path!r})" for path in sorted(parent)]
    Path(purelib, "_evo_test_overlay.pth").write_text("\n".join(lines) + "\n")
    return python


def shell_prelude(python: Path) -> str:
    """Bash functions standing in for `evo` and `pip` inside an overlay venv."""
    return (f'evo() {{ "{python}" -m evo_core.cli.main "$@"; }}\n'
            f'pip() {{ "{python}" -m pip "$@" -q --no-deps '
            '--disable-pip-version-check; }\n'
            f'python() {{ "{python}" "$@"; }}\nset -e\n')


#: log.csv's columns that identical runs share (everything but wall time)
FITNESS = ["generation", "evaluations", "best", "mean", "std", "worst", "best_ever", "steps"]


@contextlib.contextmanager
def bench_script(filename: str, module_name: str) -> Iterator[ModuleType]:
    """bench/`filename` as the module `module_name` (bench/neat.py's own name would hide
    neat-python's package), with bench/ on the path for its `_seeds`; both taken away
    afterwards."""
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(module_name, ROOT / "bench" / filename)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[module_name]
        sys.modules.pop("_seeds", None)
        sys.path.remove(str(ROOT / "bench"))


def fitness_rows(run: Path) -> list[list[str]]:
    """The FITNESS columns of a run's log.csv, row by row, as written."""
    with open(run / "log.csv", newline="") as handle:
        return [[row[c] for c in FITNESS] for row in csv.DictReader(handle)]


def npz(path: Path) -> dict[str, np.ndarray]:
    """Every array of an .npz, loaded without pickle."""
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


def wait_until(condition: Callable[[], object], what: str, bound: float = 120.0) -> None:
    """Wait for an event (a file a process writes, a process ending) by looking every 10 ms;
    `bound` only keeps a broken test from hanging forever, it is no timing assertion."""
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


@pytest.fixture(scope="session")
def dask_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of one local Dask cluster (two single-threaded worker processes) that the
    tests comparing results across handlers share: starting and stopping one per test costs
    seconds each. Tests of the handler's own local cluster (`workers = N`) keep making theirs."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({"temporary-directory": str(tmp_path_factory.mktemp("dask"))}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=":0") as cluster:
        yield str(cluster.scheduler_address)


def legacy_key(state: object) -> np.ndarray:
    """The key array of numpy's global RandomState state (`np.random.get_state()`), which the
    stubs of numpy 2.4 and 2.5 type differently: tests check that evo never draws from it."""
    assert isinstance(state, tuple)
    return np.asarray(state[1])


def evo_process(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "evo_core.cli.main", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_rows(run: Path, rows: int, process: subprocess.Popen[str], timeout: float = 120
                  ) -> None:
    started = time.time()
    deadline = started + timeout
    while time.time() < deadline and process.poll() is None:
        log = run / "log.csv"
        # rows left by an earlier process do not count: the log must be this process's
        if log.exists() and log.stat().st_mtime > started and \
                len(log.read_text().splitlines()) - 1 >= rows:
            return
        time.sleep(0.01)
    raise AssertionError(f"the run did not reach {rows} generations")
