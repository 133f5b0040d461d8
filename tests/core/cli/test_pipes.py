"""Output into a closed pipe (`evo schema | head`) ends quietly: status 0 or 141, no traceback.

Each command runs in its own interpreter (the failure is the interpreter's, at a write or at its
shutdown flush) with stdout the write end of a pipe whose read end is already closed, so every
write it makes fails as it would after `head` has exited.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evo_core.cli.pipes import BROKEN_PIPE

SWEEP = """\
environment = "CartPole-v1"
generations = 2
[brain]
type = "ctrnn"
[optimizer]
type = "cma-es"
population_size = 4
[sweep]
seeds = 3
grid = {"brain.number_neurons" = [2, 3]}
"""

COMMANDS = [
    ["schema"], ["list-brains", "--json"], ["list-brains"], ["list-optimizers"],
    ["list-handlers", "--json"], ["list-wrappers"], ["list-trackers", "--json"], ["--version"],
    ["--help"], ["train", "--help"], ["sweep", "SWEEP", "--dry-run"],
]


def test_every_command_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    sweep = tmp_path / "s.toml"
    sweep.write_text(SWEEP)
    started = []
    for command in COMMANDS:
        reader, writer = os.pipe()
        os.close(reader)  # the reader has gone before the first write
        args = [str(sweep) if word == "SWEEP" else word for word in command]
        started.append((command, writer, subprocess.Popen(
            [sys.executable, "-m", "evo_core.cli.main", *args], stdout=writer,
            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=dict(os.environ))))
    for command, writer, process in started:
        _, err = process.communicate(timeout=300)
        os.close(writer)
        assert process.returncode in {0, BROKEN_PIPE}, (command, process.returncode, err)
        assert "Traceback" not in err and "Exception ignored" not in err, (command, err)
        assert "BrokenPipe" not in err, (command, err)
