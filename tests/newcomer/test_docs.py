"""The docs run as written: every shell block runs in a fresh `bash -c` that has only activated
a virtualenv (as the docs tell a reader to do once), files they show are written, files they
say a command generates are compared, and the output they show is what the command prints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, overlay_venv

TUTORIAL = ROOT / "docs" / "writing-a-brain.md"
MIGRATE = ROOT / "docs" / "migrating.md"
ACTIVATE = "source .venv/bin/activate"


def blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w+)\n(.*?)^```", text, flags=re.S | re.M)


def activated_venv(root: Path) -> Path:
    """A virtualenv seeing the test environment's packages, with `evo` and `pip` on its bin/
    as an installed evo has them. Returns its `activate` script."""
    python = overlay_venv(root)
    for name, command in (("evo", "-m evo_core.cli.main"), ("pip", "-m pip")):
        script = python.parent / name
        script.write_text(f'#!/bin/sh\nexec "{python}" {command} "$@"\n')
        script.chmod(0o755)
    activate: Path = python.parent / "activate"
    return activate


def run_doc(doc: Path, work: Path, activate: Path) -> None:
    """Run `doc`'s blocks in order in `work`: `sh` blocks as shell commands, `text` blocks are
    the stderr of the command before them, `# file:` blocks are written, `# generated:` blocks
    must equal the file."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONHOME"}}
    # quiet, offline-friendly pip: dependencies are already visible through the overlay
    env.update(PIP_NO_DEPS="1", PIP_QUIET="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    stderr = ""
    for language, body in blocks(doc.read_text()):
        first, _, rest = body.partition("\n")
        if first.startswith("# file: "):
            (work / first.removeprefix("# file: ").strip()).write_text(body)
        elif first.startswith("# generated: "):
            generated = work / first.removeprefix("# generated: ").strip()
            assert generated.read_text() == rest, f"{doc.name}'s copy of {generated} is stale"
        elif language == "text":
            assert stderr == body, f"{doc.name} shows output the command does not print"
        else:
            assert language == "sh", f"{doc.name}: a {language} block that is neither run nor "\
                "a file: start it with `# file: NAME` or `# generated: NAME`"
            result = subprocess.run(["bash", "-c", f'set -e\nsource "{activate}"\n{body}'],
                                    cwd=work, capture_output=True, text=True, timeout=300,
                                    env=env)
            assert result.returncode == 0, f"{body}\n{result.stdout}\n{result.stderr}"
            stderr = result.stderr


@pytest.mark.parametrize("doc", [TUTORIAL, MIGRATE], ids=lambda p: p.name)
def test_every_block_is_runnable_or_a_file(doc: Path) -> None:
    for language, body in blocks(doc.read_text()):
        first = body.splitlines()[0]
        assert language in {"sh", "text"} or first.startswith(("# file: ", "# generated: ")), \
            first


@pytest.mark.parametrize("doc", [TUTORIAL, MIGRATE], ids=lambda p: p.name)
def test_docs_use_bare_commands_after_activation(doc: Path) -> None:
    """One convention: activate `.venv` once (the docs say so), then bare evo, pip, python."""
    text = doc.read_text()
    assert ACTIVATE in text
    assert not any(".venv/bin/" in body for _, body in blocks(text))


def test_migrate_example_runs(tmp_path: Path) -> None:
    """docs/migrating.md's example, in a copy of the examples folder."""
    activate = activated_venv(tmp_path / "venv")
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    run_doc(MIGRATE, work, activate)
    assert (work / "cartpole.toml").exists()


@pytest.mark.slow
def test_tutorial_runs(tmp_path: Path) -> None:
    activate = activated_venv(tmp_path / "venv")
    work = tmp_path / "work"
    work.mkdir()
    run_doc(TUTORIAL, work, activate)
    assert (work / "runs" / "elman" / "best.npz").exists()
    assert (work / "runs" / "fixed" / "best.npz").exists()
