"""The files of a run folder are hostile input: each test plants what a received folder could
hold at one of its names (a FIFO, a folder, a link, a sparse file claiming gigabytes, an .npz
whose zip directory lies or that expands a thousandfold) and runs the commands and API calls
that read it. The promise: no hang, no big allocation, one line naming the file and exit 2
(`UserError` from the API), nothing in the folder changed.

A FIFO test runs the command in a thread: should a reader block opening the FIFO (a
regression), the test opens the FIFO for writing until the reader gives up, so the suite never
hangs, and fails. Memory is measured with tracemalloc (numpy's arrays included), never by
allocating it: the files only claim their sizes (sparse files, lying zip directories).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from conftest import evo_in_process, npz

import evo_core.machine
from evo_core.api import Run, compare
from evo_core.errors import UserError
from evo_core.results.log_file import read_log

T = TypeVar("T")

CONFIG = {
    "environment": "CartPole-v1", "seed": 4, "generations": 2,
    "brain": {"type": "ctrnn", "number_neurons": 3},
    "optimizer": {"type": "mu-lambda", "population_size": 6, "mu": 2},
    "episodes": {"runs": 1, "max_steps": 20}, "processing": {"type": "sequential"}}
#: how long a command may take before it is taken to hang (they take well under a second)
HANG = 20.0
#: the most a command may allocate while it refuses a file (tracemalloc's peak; a resume's set-up
#: alone peaks at about 64 MiB); the attacks claim gigabytes
LITTLE = 256 * 2**20
GiB = 2**30


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reference")
    (folder / "c.json").write_text(json.dumps(CONFIG))
    result = evo_in_process("train", str(folder / "c.json"), "--out", str(folder / "run"),
                            "--quiet")
    assert result.returncode == 0, result.stderr
    trace = evo_in_process("replay", str(folder / "run"), "--episodes", "1", "--trace",
                           str(folder / "trace.npz"))
    assert trace.returncode == 0, trace.stderr
    return folder


@pytest.fixture
def run(reference: Path, tmp_path: Path) -> Path:
    shutil.copytree(reference / "run", tmp_path / "run")
    shutil.copy(reference / "trace.npz", tmp_path / "trace.npz")
    return tmp_path / "run"


def contents(run: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry's size and, for a regular file no bigger than a megabyte, its bytes."""
    return {p.name: (p.lstat().st_size, p.read_bytes() if p.is_file() and not p.is_symlink()
                     and p.stat().st_size < 2**20 else b"") for p in sorted(run.iterdir())}


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evo: ") and "Traceback" not in err, err
    return lines[0]


def refused(run: Path, *command: str) -> str:
    """The one line `evo COMMAND RUN ...` refuses with (exit 2), the folder left as it was."""
    before = contents(run)
    result = evo_in_process(command[0], str(run), *command[1:])
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert contents(run) == before
    return one_line(result.stderr)


def without_hanging(fifo: Path, call: Callable[[], T]) -> T:
    """`call()`, run in a thread. Still running after HANG seconds, it is blocked on the FIFO:
    the FIFO is opened for writing (which lets a blocked reader go on, to its end) until it
    ends, and the test fails."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG)
    hung = thread.is_alive()
    while thread.is_alive():
        with contextlib.suppress(OSError):  # ENXIO: no reader waiting right now
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(0.05)
    assert not hung, f"blocked on the FIFO {fifo}"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


@contextlib.contextmanager
def allocates_little() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < LITTLE, f"allocated {peak} bytes"


def machine_of(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """This machine's memory is `size`, whatever it really is: refusals must not depend on it."""
    monkeypatch.setattr(evo_core.machine, "machine_memory", lambda: size)


# ------------------------------------------------------------------ FIFOs, folders and links

RESUME = ("resume", "--generations", "3", "--quiet")
REPLAY = ("replay", "--episodes", "1")
#: a file of the run folder, and a command that reads it
READERS = [("config.json", RESUME), ("config.json", REPLAY), ("log.csv", RESUME),
           ("log.csv", ("plot",)), (".lock", RESUME), ("checkpoint.npz", RESUME),
           ("best.npz", REPLAY), ("hall_of_fame.npz", (*REPLAY, "--hof", "1"))]


@pytest.mark.parametrize("name,command", READERS)
def test_a_fifo_in_the_run_folder_is_refused_without_waiting(run: Path, name: str,
                                                             command: tuple[str, ...]) -> None:
    fifo = run / name
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    line = without_hanging(fifo, lambda: refused(run, *command))
    assert f"{fifo}: is a FIFO (named pipe), not a regular file" in line  # not "missing"


def test_a_fifo_config_json_is_named_not_called_missing_by_the_api(run: Path) -> None:
    fifo = run / "config.json"
    fifo.unlink()
    os.mkfifo(fifo)
    with pytest.raises(UserError, match=r"config\.json: is a FIFO"):
        without_hanging(fifo, lambda: Run.open(run))


def test_plot_and_compare_draw_a_run_whose_config_json_is_a_fifo(run: Path,
                                                                 tmp_path: Path) -> None:
    """The plot needs only log.csv (config.json gives the legend's title): it is drawn."""
    fifo = run / "config.json"
    fifo.unlink()
    os.mkfifo(fifo)
    result = without_hanging(fifo, lambda: evo_in_process("plot", str(run)))
    assert result.returncode == 0, result.stderr
    out = without_hanging(fifo, lambda: compare([run], tmp_path / "both.png"))
    assert out.stat().st_size > 0


def test_a_folder_at_log_csv_is_named(run: Path) -> None:
    (run / "log.csv").unlink()
    (run / "log.csv").mkdir()
    assert f"{run / 'log.csv'}: is a folder, not a regular file" in refused(run, "plot")


def test_a_link_at_best_npz_is_not_followed(run: Path, tmp_path: Path) -> None:
    (run / "best.npz").rename(tmp_path / "elsewhere.npz")
    (run / "best.npz").symlink_to(tmp_path / "elsewhere.npz")
    line = refused(run, *REPLAY)
    assert f"{run / 'best.npz'}: is a symbolic link" in line and "will not follow" in line


# ------------------------------------------------------------------ log.csv: bounded reads

def test_a_log_padded_with_a_hole_is_refused_at_the_hole(run: Path, monkeypatch) -> None:
    """A few valid rows, then 2 GB that are not on disk: each row is read with a bound, so the
    hole costs one row's memory, whatever the machine."""
    machine_of(monkeypatch, 128 * GiB)
    log = run / "log.csv"
    os.truncate(log, log.stat().st_size + 2 * GiB)
    expected = f"{log}: line 4 is longer than any row evo writes (4096 bytes)"
    with allocates_little():
        assert expected in refused(run, "plot")
        assert expected in refused(run, *RESUME)
        with pytest.raises(UserError, match="line 4 is longer than any row"):
            Run.open(run).log  # noqa: B018 - the property reads the file


def test_a_log_larger_than_memory_could_hold_is_refused_before_it_is_read(
        run: Path, monkeypatch) -> None:
    """6 GB (4 KB on disk): its rows would take 16 times that as dicts."""
    machine_of(monkeypatch, 4 * GiB)
    log = run / "log.csv"
    os.truncate(log, 6 * GiB)
    with allocates_little():
        line = refused(run, "plot")
        assert f"{log}: 6.0 GiB of rows needs about 96.0 GiB to read; this machine has " \
               "4.0 GiB" in line
        assert str(log) in refused(run, *RESUME)


def test_rows_are_read_as_before(run: Path) -> None:
    """A torn last row is left out, as it was when the log was read whole."""
    log = run / "log.csv"
    data = log.read_bytes()
    log.write_bytes(data[:-5])
    assert [row["generation"] for row in read_log(log)] == ["1"]
    log.write_bytes(data)
    assert [row["generation"] for row in read_log(log)] == ["1", "2"]


# ------------------------------------------------------------------ config.json

def test_a_sparse_config_json_is_refused_before_it_is_read(run: Path) -> None:
    config = run / "config.json"
    os.truncate(config, 100 * 2**20)
    with allocates_little():
        line = refused(run, *RESUME)
    assert f"{config}: 100.0 MiB, longer than any config.json evo writes (at most 64.0 MiB)" \
        in line


def test_a_config_json_nested_too_deeply_is_one_line(run: Path) -> None:
    (run / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    assert f"{run / 'config.json'}: unreadable" in refused(run, *REPLAY)


# ------------------------------------------------------------------ .npz: claims checked

def rebuild(path: Path, member: str, write: Callable[[zipfile.ZipFile, str], None]) -> None:
    """`path` again, its arrays as they were but `member`, which `write` writes."""
    arrays = npz(path)
    assert member in arrays
    path.unlink()
    with zipfile.ZipFile(path, "w") as archive:
        for name, value in arrays.items():
            if name == member:
                write(archive, f"{name}.npy")
            else:
                with archive.open(f"{name}.npy", "w") as handle:
                    np.lib.format.write_array(handle, value)


def claiming(size: int) -> Callable[[zipfile.ZipFile, str], None]:
    """A member of a few bytes whose header declares `size` bytes of float64 and whose entry in
    the zip directory claims them, from `size` / 1000 compressed bytes (within deflate's
    1032-fold)."""
    def write(archive: zipfile.ZipFile, name: str) -> None:
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f8", "fortran_order": False, "shape": (size // 8,)})
        archive.writestr(name, header.getvalue() + bytes(64), zipfile.ZIP_DEFLATED)
        info = archive.getinfo(name)
        info.file_size, info.compress_size = size + len(header.getvalue()), size // 1000
    return write


def zeros(size: int) -> Callable[[zipfile.ZipFile, str], None]:
    """A deflated member that really holds `size` bytes of zeros (float64), a thousandth of
    that compressed."""
    def write(archive: zipfile.ZipFile, name: str) -> None:
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w") as handle:
            np.lib.format.write_array_header_1_0(
                handle, {"descr": "<f8", "fortran_order": False, "shape": (size // 8,)})
            chunk = bytes(2**20)
            for _ in range(size // len(chunk)):
                handle.write(chunk)
    return write


#: a file, the member whose entry lies, and how it is read
LIARS = [("best.npz", "genome", REPLAY), ("hall_of_fame.npz", "genomes", (*REPLAY, "--hof", "1")),
         ("checkpoint.npz", "hall_of_fame.genomes", RESUME)]
API: list[tuple[str, str, Callable[[Run], object]]] = [
    ("best.npz", "genome", lambda run: run.best),
    ("hall_of_fame.npz", "genomes", lambda run: run.hall_of_fame),
    ("best.npz", "genome", lambda run: run.champion()),
    ("checkpoint.npz", "best.genome", lambda run: run.checkpointed_optimizer())]


@pytest.mark.parametrize("name,member,command", LIARS)
def test_an_npz_whose_directory_claims_terabytes_is_refused(run: Path, name: str, member: str,
                                                            command: tuple[str, ...]) -> None:
    """The zip directory claims a 2 TB member from 2 GB compressed: the file has a few KB."""
    rebuild(run / name, member, claiming(2 * 10**12))
    length = (run / name).stat().st_size
    with allocates_little():
        line = refused(run, *command)
    assert f"{run / name}: {member}: its 2000000000 compressed bytes would end at byte" in line
    assert f"but the file has {length}" in line


@pytest.mark.parametrize("name,member,read", API)
def test_the_api_refuses_an_npz_claiming_terabytes(run: Path, name: str, member: str,
                                                   read: Callable[[Run], object]) -> None:
    rebuild(run / name, member, claiming(2 * 10**12))
    opened = Run.open(run)
    with allocates_little(), pytest.raises(UserError, match=f"{name}: {member}: its "):
        read(opened)


def test_a_trace_whose_directory_claims_terabytes_is_refused(run: Path) -> None:
    trace = run.parent / "trace.npz"
    rebuild(trace, "reward", claiming(2 * 10**12))
    with allocates_little():
        line = refused(run, "plot", "--trace", str(trace))
    assert f"{trace}: reward: its 2000000000 compressed bytes" in line


def test_a_genome_of_deflated_zeros_is_refused_before_numpy_allocates(run: Path) -> None:
    """64 MB of zeros deflate to 64 KB: more than evo's arrays ever expand, refused before
    anything of it is allocated (the issue's 2.3 MB expanded to 2.6 GB the same way)."""
    rebuild(run / "best.npz", "genome", zeros(64 * 2**20))
    length = (run / "best.npz").stat().st_size
    assert length < 2**20
    with allocates_little():
        line = refused(run, *REPLAY)
        with pytest.raises(UserError, match="evo's arrays expand at most 128-fold"):
            Run.open(run).best  # noqa: B018
    assert f"{run / 'best.npz'}: its arrays would expand to 64.0 MiB" in line


def test_a_recompressed_run_folder_still_reads(run: Path) -> None:
    for name in ("best.npz", "hall_of_fame.npz"):
        arrays = npz(run / name)
        (run / name).unlink()
        np.savez_compressed(run / name, **arrays)
    opened = Run.open(run)
    assert opened.best.genome.shape == opened.hall_of_fame[0].genome.shape


def test_an_npz_beyond_the_machines_memory_is_refused(run: Path, monkeypatch) -> None:
    machine_of(monkeypatch, 1024)
    line = refused(run, *REPLAY)
    assert f"{run / 'best.npz'}: needs about" in line and "for its arrays; this machine has " \
        "1.0 KiB" in line


CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))
from evo_core.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_plot_of_a_sparse_6_gb_log_under_a_4_gb_cap_is_one_line(run: Path) -> None:
    """The issue's case as it was found, in a process of its own: 4 KB on disk took 12.7 GB,
    and under a 4 GB address-space cap the plot died with a MemoryError traceback."""
    log = run / "log.csv"
    os.truncate(log, 6 * GiB)
    result = subprocess.run([sys.executable, "-c", CAPPED, "plot", str(run)],
                            capture_output=True, text=True, timeout=HANG)
    assert result.returncode == 2 and str(log) in one_line(result.stderr)
