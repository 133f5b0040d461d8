"""Attacks on a run folder's files by editing them: an .npz whose header declares a huge array,
every checkpoint value set to something wrong, and CMA-ES state signed for another run. Each
test performs the attack and asserts the promise: one `evo:` line naming the file and the field,
exit 2, and the run folder as it was (nothing half-written, no NaN reaching hall_of_fame.npz)."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import npz

from evo_core import UserError
from evo_core.api import Run
from evo_core.cli.main import main

CONFIG = {
    "environment": "CartPole-v1", "seed": 4, "generations": 3,
    "brain": {"type": "ctrnn", "number_neurons": 3},
    "optimizer": {"type": "mu-lambda", "population_size": 10, "mu": 4},
    "episodes": {"runs": 1, "max_steps": 30}, "processing": {"type": "sequential"},
    "behaviour": {"source": "observation", "max_length": 3}, "novelty": {"archive_size": 50}}

Arrays = dict[str, Any]


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evo: ") and "Traceback" not in err, err
    return lines[0]


def trained(folder: Path, **changes: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "c.json"
    config.write_text(json.dumps({**CONFIG, **changes}))
    out = folder / "run"
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained(tmp_path_factory.mktemp("reference"))


@pytest.fixture
def run(reference: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(reference, copy)
    return copy


def contents(run: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(run.iterdir()) if path.is_file()}


def rewrite(path: Path, arrays: Arrays) -> None:
    path.unlink()
    np.savez(path, **arrays)


# ------------------------------------------------------------------ an array larger than its file


def huge_member(name: str, shape: tuple[int, ...]) -> bytes:
    """An .npy member whose header declares `shape` of float64 but holds 64 bytes."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return header.getvalue() + bytes(64)


def test_a_small_best_npz_declaring_a_huge_genome_is_refused_before_allocating(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    arrays = npz(run / "best.npz")
    (run / "best.npz").unlink()
    with zipfile.ZipFile(run / "best.npz", "w") as archive:
        for name, value in arrays.items():
            if name != "genome":
                with archive.open(f"{name}.npy", "w") as member:
                    np.lib.format.write_array(member, value)
        archive.writestr("genome.npy", huge_member("genome", (1_500_000_000,)))
    assert (run / "best.npz").stat().st_size < 4096
    before = contents(run)
    assert main(["replay", str(run), "--episodes", "1"]) == 2
    line = one_line(capsys.readouterr().err)
    assert str(run / "best.npz") in line and "declares shape (1500000000,)" in line
    with pytest.raises(UserError, match="12000000000 bytes"):
        Run.open(run).best  # noqa: B018 - the property reads the file
    assert contents(run) == before


def test_a_compressed_member_expanding_beyond_deflate_is_refused(run: Path) -> None:
    arrays = npz(run / "hall_of_fame.npz")
    (run / "hall_of_fame.npz").unlink()
    np.savez_compressed(run / "hall_of_fame.npz", **arrays)
    assert len(Run.open(run).hall_of_fame) == len(arrays["fitness"])  # compressed reads
    data = bytearray((run / "hall_of_fame.npz").read_bytes())
    with zipfile.ZipFile(run / "hall_of_fame.npz") as archive:
        info = archive.getinfo("genomes.npy")
    # the central directory's uncompressed size of the member, claimed 2 GB
    entry = data.rindex(b"PK\x01\x02", 0, data.index(b"genomes.npy", info.header_offset + 40))
    data[entry + 24:entry + 28] = (2_000_000_000).to_bytes(4, "little")
    (run / "hall_of_fame.npz").write_bytes(bytes(data))
    with pytest.raises(UserError, match="declares 2000000000 bytes from"):
        Run.open(run).hall_of_fame  # noqa: B018


# ------------------------------------------------------------------ edited checkpoint values


def meta_edit(change: Callable[[dict[str, Any]], None]) -> Callable[[Arrays], None]:
    def edit(arrays: Arrays) -> None:
        meta = json.loads(arrays["meta"].tobytes())
        change(meta)
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    return edit


def array_edit(name: str, change: Callable[[Any], Any]) -> Callable[[Arrays], None]:
    def edit(arrays: Arrays) -> None:
        arrays[name] = change(arrays[name])
    return edit


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(meta: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        table = meta
        for key in parents:
            table = table[key]
        table[last] = value
    return change


EDITS: dict[str, tuple[Callable[[Arrays], None], str]] = {
    "stream state -1": (meta_edit(_set("streams.optimizer.state.state", -1)),
                        "streams.optimizer: not a PCG64 state"),
    "stream of another generator": (meta_edit(_set("streams.evaluation.bit_generator",
                                                   "MT19937")), "streams.evaluation"),
    "generation -3": (meta_edit(_set("generation", -3)), "generation is -3"),
    "generation 2.5": (meta_edit(_set("generation", 2.5)), "damaged"),
    "generation 1e999": (meta_edit(_set("generation", float("inf"))), "damaged"),
    "evaluations -5": (meta_edit(_set("evaluations", -5)), "evaluations is -5"),
    "seconds NaN": (meta_edit(_set("seconds", float("nan"))), "seconds is nan"),
    "log rows": (meta_edit(_set("log.rows", 2)), "log covers 2 rows"),
    "log null": (meta_edit(_set("log", None)), "its meta entry's log: None is not a table"),
    "stop record without [stop]": (meta_edit(_set("stop", {"solved": 1, "test_episodes": 0})),
                                   "stop is {'solved': 1, 'test_episodes': 0}, but config.json "
                                   "has no [stop] table"),
    "one parent row": (array_edit("optimizer.parents", lambda a: a[:1]), "optimizer.parents"),
    "NaN parents": (array_edit("optimizer.parents", lambda a: np.full_like(a, np.nan)),
                    "optimizer.parents"),
    "parent fitness length": (array_edit("optimizer.parent_fitness", lambda a: a[:2]),
                              "optimizer.parent_fitness"),
    "archive width 99": (array_edit("novelty.archive", lambda a: np.zeros((len(a), 99))),
                         "novelty.archive has shape"),
    "hall-of-fame fitness length": (array_edit("hall_of_fame.fitness", lambda a: a[:1]),
                                    "hall_of_fame.fitness"),
    "hall-of-fame generation length": (array_edit("hall_of_fame.generation",
                                                  lambda a: np.concatenate([a, a])),
                                       "hall_of_fame.generation"),
    "hall-of-fame generation 99": (array_edit("hall_of_fame.generation",
                                              lambda a: np.full_like(a, 99)),
                                   "generations outside 1..3"),
    "NaN hall of fame": (array_edit("hall_of_fame.genomes", lambda a: np.full_like(a, np.nan)),
                         "hall_of_fame.genomes holds genes that are not finite"),
    "hall of fame too wide": (array_edit("hall_of_fame.genomes",
                                         lambda a: np.zeros((len(a), 99))),
                              "hall_of_fame.genomes has shape"),
    "hall of fame too long": (array_edit("hall_of_fame.genomes", lambda a: np.zeros((11, 35))),
                              "hall_of_fame"),
    "NaN best": (array_edit("best.genome", lambda a: np.full_like(a, np.nan)), "best.genome"),
    "short best": (array_edit("best.genome", lambda a: a[:2]), "best.genome has shape (2,)"),
    "best generation": (array_edit("best.generation", lambda a: np.int64(0)),
                        "best.generation"),
    "best fitness": (array_edit("best.fitness", lambda a: np.float64(np.inf)), "best.fitness"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_checkpoint_value_is_one_line_naming_the_field(
        run: Path, capsys: pytest.CaptureFixture[str], edit: str) -> None:
    change, field = EDITS[edit]
    arrays = npz(run / "checkpoint.npz")
    change(arrays)
    rewrite(run / "checkpoint.npz", arrays)
    before = contents(run)
    assert main(["resume", str(run), "--generations", "5", "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert str(run / "checkpoint.npz") in line and field in line, line
    after = contents(run)
    assert after == before  # nothing written, the log and the hall of fame untouched
    assert np.isfinite(npz(run / "hall_of_fame.npz")["genomes"]).all()


def test_the_unedited_copy_resumes(run: Path) -> None:
    assert main(["resume", str(run), "--generations", "4", "--quiet"]) == 0
    assert len(Run.open(run).log) == 4


# ------------------------------------------------------------------ signed state of another run


def test_cma_es_state_signed_for_another_run_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cma = {"optimizer": {"type": "cma-es", "population_size": 8}, "novelty": None,
           "behaviour": None, "generations": 2}
    first = trained(tmp_path / "a", **cma)
    second = trained(tmp_path / "b", **cma, seed=5)
    theirs, ours = npz(first / "checkpoint.npz"), npz(second / "checkpoint.npz")
    ours["optimizer.pickle"] = theirs["optimizer.pickle"]
    meta, their_meta = (json.loads(arrays["meta"].tobytes()) for arrays in (ours, theirs))
    meta["optimizer"] = their_meta["optimizer"]  # its genuine signature, made for run a
    ours["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    rewrite(second / "checkpoint.npz", ours)
    before = contents(second)
    assert main(["resume", str(second), "--generations", "3", "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert str(second / "checkpoint.npz") in line and "for this run" in line
    assert contents(second) == before
    # run a's own state still resumes run a
    assert main(["resume", str(first), "--generations", "3", "--quiet"]) == 0
