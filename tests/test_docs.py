"""docs/writing-a-brain.md runs as written: every code block is executed or compared."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, overlay_venv, shell_prelude

DOC = ROOT / "docs" / "writing-a-brain.md"


def blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)


def test_every_block_is_runnable_or_a_file() -> None:
    for language, body in blocks(DOC.read_text()):
        first = body.splitlines()[0]
        assert language == "sh" or first.startswith(("# file: ", "# generated: ")), first


@pytest.mark.slow
def test_tutorial_runs(tmp_path: Path) -> None:
    python = overlay_venv(tmp_path / "venv")
    work = tmp_path / "work"
    work.mkdir()
    for _language, body in blocks(DOC.read_text()):
        first, _, rest = body.partition("\n")
        if first.startswith("# file: "):
            (work / first.removeprefix("# file: ").strip()).write_text(body)
        elif first.startswith("# generated: "):
            generated = work / first.removeprefix("# generated: ").strip()
            assert generated.read_text() == rest, \
                f"the tutorial's copy of {generated.name} is stale"
        else:
            result = subprocess.run(["bash", "-c", shell_prelude(python) + body], cwd=work,
                                    capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, f"{body}\n{result.stdout}\n{result.stderr}"
    assert (work / "runs" / "elman" / "best.npz").exists()
    assert (work / "runs" / "fixed" / "best.npz").exists()
