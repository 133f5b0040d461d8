"""`episodes.vectorize` takes the installed vectorizers' names: the core's modes register through
`evo_chunk_evaluators` like a plugin's, so a plugin's new value trains with no edit of the core,
and a value that is not installed is one line naming those that are."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import evo_in_process

#: a local plugin module: `vectorize = "each"` scores a chunk one candidate at a time with the
#: core's per-genome runner (so its results are "off"'s), and notes each chunk it is given
EACH = '''
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from evo_core import UserError, VectorizerConfig, hookimpl
from evo_core.evaluation.episodes import RunnerSpec


class EachConfig(VectorizerConfig):
    """Each candidate of a chunk on its own, with the core's per-genome runner."""

    type: Literal["each"] = "each"


def _nothing_to_register() -> None:
    pass


@dataclass(frozen=True)
class Each:
    config_model: ClassVar[Any] = EachConfig
    environments: ClassVar[Any] = {}
    register_environments: ClassVar[Any] = staticmethod(_nothing_to_register)

    config: Any
    environment: Any
    episodes: Any
    behaviour: Any = None

    def check(self, template: Any) -> None:
        if self.behaviour is not None:
            raise UserError('episodes.vectorize = "each" records no behaviour; remove [behaviour]')

    def build(self, template: Any) -> Any:
        return EachEvaluator(RunnerSpec(self.environment, self.episodes).build(template))


class EachEvaluator:
    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def evaluate(self, genome: Any, seed: int) -> Any:
        return self.runner.evaluate(genome, seed)

    def evaluate_many(self, genomes: Any, seeds: Any) -> Any:
        with Path("chunks.txt").open("a") as chunks:
            chunks.write(f"{len(genomes)}\\n")
        return [self.runner.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]

    def close(self) -> None:
        self.runner.close()


@hookimpl
def evo_chunk_evaluators() -> list[Any]:
    return [Each]
'''

CONFIG = '''environment = "CartPole-v1"
generations = 2
[brain]
type = "ffnn"
hidden_layers = [2]
[optimizer]
type = "cma-es"
population_size = 4
[episodes]
max_steps = 20
vectorize = "{vectorize}"
[champion]
episodes = 0
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "each_vectorizer.py").write_text(textwrap.dedent(EACH))
    return tmp_path


def train(folder: Path, vectorize: str, *plugin: str) -> list[str]:
    """log.csv's rows of a run of `vectorize`, its run folder's name the value."""
    (folder / f"{vectorize}.toml").write_text(CONFIG.format(vectorize=vectorize))
    result = evo_in_process(*plugin, "train", f"{vectorize}.toml", "--quiet", "--out",
                            vectorize, cwd=folder)
    assert result.returncode == 0, result.stderr
    return (folder / vectorize / "log.csv").read_text().splitlines()


def test_a_plugins_vectorize_value_trains_with_no_core_edit(folder: Path) -> None:
    """The plugin's evaluator is given every chunk, and scores as "off" does."""
    each = train(folder, "each", "--plugin", "each_vectorizer.py")
    assert [int(n) for n in (folder / "chunks.txt").read_text().split()] == [4, 4]
    off = train(folder, "off")
    assert len(each) == len(off) == 3
    columns = each[0].split(",")
    scores = [columns.index(name) for name in ("best", "mean")]
    assert [[row.split(",")[i] for i in scores] for row in each[1:]] == \
        [[row.split(",")[i] for i in scores] for row in off[1:]]


def test_list_vectorizers_and_schema_name_the_plugins_value(folder: Path) -> None:
    listed = evo_in_process("--plugin", "each_vectorizer.py", "list-vectorizers", "--json",
                            cwd=folder)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert list(rows)[:4] == ["off", "sync", "native", "envpool"]
    assert rows["each"]["description"] == \
        "Each candidate of a chunk on its own, with the core's per-genome runner."
    assert rows["each"]["distribution"] == "local module each_vectorizer.py"
    schema = evo_in_process("--plugin", "each_vectorizer.py", "schema", cwd=folder)
    vectorize = json.loads(schema.stdout)["$defs"]["EpisodesConfig"]["properties"]["vectorize"]
    assert vectorize["enum"][:4] == ["off", "sync", "native", "envpool"]
    assert "each" in vectorize["enum"]


@pytest.mark.parametrize(("value", "said"), [
    ("each", "episodes.vectorize: no vectorizer named 'each' is installed; installed: off, "
             "sync, native, envpool"),
    ("synk", "episodes.vectorize: no vectorizer named 'synk' is installed (did you mean "
             "'sync'?); installed: off, sync, native, envpool"),
    ("x" * 5000, "episodes.vectorize: no vectorizer named 'xxxxxxxxx"),
])
def test_a_value_that_is_not_installed_is_one_line(folder: Path, value: str, said: str) -> None:
    (folder / "c.toml").write_text(CONFIG.format(vectorize=value))
    result = evo_in_process("train", "c.toml", "--out", "run", cwd=folder)
    assert result.returncode == 2
    line = result.stderr.strip()
    assert line.startswith(f"evo: error: c.toml: {said}") and "\n" not in line, line
    assert "(see `evo list-vectorizers`)" in line and len(line) < 300
    assert not (folder / "run").exists()
