"""The grouped batch of an `IGroupedArrayBrain` (authoring/array_grouped.py): rows of one genome
share its parameters, and every row acts bit for bit as the per-row batch's, through what the
batched runner does to a batch (masked resets, genomes loaded into rows, subsets)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pytest
from gymnasium import spaces

from brain_cnn import CNNConfig, CNNTemplate, ConvLayerConfig
from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core import ArrayBrainBatch, GroupedArrayBrainBatch, IGroupedArrayBrain, array_batch
from evo_core.authoring.array_grouped import grouped_batch, groups_rows
from evo_core.authoring.batching import make_batch
from evo_core.authoring.conformance import batch_mismatch

OBSERVATIONS = spaces.Box(-1, 1, (3,), dtype=np.float32)
ACTIONS = spaces.Box(-5, 5, (2,), dtype=np.float64)


class Accumulating(FFNNTemplate):
    """An FFNN whose outputs are summed over the episode, plus noise: a state of rows and a
    draw of rows, written over leading axes as `IGroupedArrayBrain` asks (and declared again:
    it overrides `forward`)."""

    def broadcasts_rows(self) -> Literal[True]:
        return True

    @property
    def noise_size(self) -> int:
        return 2

    def initial_state(self, xp: Any, params: dict[str, Any]) -> dict[str, Any]:
        rows = params["w0"].shape[:-2]
        return {"sum": xp.zeros((*rows, self.output_size))}

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        total = state["sum"] + self.layers(xp, params, inputs)[-1] + 0.1 * noise
        return {"sum": total}, total


def template(kind: type[FFNNTemplate] = FFNNTemplate) -> Any:
    return kind(FFNNConfig(hidden_layers=[6, 5]), OBSERVATIONS, ACTIONS,
                np.random.default_rng(0))


def test_only_a_declaring_template_gets_the_grouped_batch() -> None:
    assert isinstance(template(), IGroupedArrayBrain)
    assert isinstance(make_batch(template(), np.zeros((4, template().genome_size)),
                                 OBSERVATIONS, ACTIONS), GroupedArrayBrainBatch)
    image = spaces.Box(0, 255, (6, 5, 1), dtype=np.uint8)
    cnn = CNNTemplate(CNNConfig(layers=[ConvLayerConfig(features=2, kernel_size=2)]), image,
                      ACTIONS, np.random.default_rng(0))
    assert not isinstance(cnn, IGroupedArrayBrain)
    assert isinstance(make_batch(cnn, np.zeros((4, cnn.genome_size)), image, ACTIONS),
                      ArrayBrainBatch)


def test_a_chunks_rows_are_a_dense_grid_of_its_genomes() -> None:
    """Each candidate's episodes in consecutive rows, as the runner fills a batch: one group
    per genome, its parameters once, inputs and outputs reshaped, not copied."""
    brain = template()
    distinct = np.random.default_rng(1).normal(0, 1, (5, brain.genome_size))
    batch = grouped_batch(brain, np.repeat(distinct, 4, axis=0))
    assert batch.width == 4 and batch.params["w1"].shape == (5, 1, 5, 6)
    assert batch._dense and np.array_equal(batch.groups, np.repeat(np.arange(5), 4))
    ragged = grouped_batch(brain, distinct[[0, 1, 0, 2, 0]])
    assert ragged.width == 3 and not ragged._dense
    assert ragged.groups.tolist() == [0, 1, 0, 2, 0] and ragged.slots.tolist() == [0, 0, 1, 0, 2]


def _generators(rows: int, seed: int) -> list[np.random.Generator | None]:
    return [np.random.default_rng(seed + row) for row in range(rows)]


@pytest.mark.parametrize("kind", [FFNNTemplate, Accumulating])
@pytest.mark.parametrize("order", ["dense", "ragged"])
def test_grouped_rows_act_as_the_per_row_batch_bit_for_bit(
        kind: type[FFNNTemplate], order: Literal["dense", "ragged"]) -> None:
    """Stepped, reset by mask, loaded with a genome the batch holds and with a new one, cut to
    a subset: every action equals the per-row batch's exactly."""
    brain = template(kind)
    rng = np.random.default_rng(2)
    distinct = rng.normal(0, 1, (4, brain.genome_size))
    index = np.repeat(np.arange(4), 3) if order == "dense" else rng.integers(0, 4, 12)
    genomes = distinct[index]
    grouped, per_row = grouped_batch(brain, genomes), array_batch(brain, genomes)
    batches: list[Any] = [grouped, per_row]
    random = brain.noise_size > 0

    def restart(mask: np.ndarray | None, seed: int) -> None:
        for batch in batches:
            if random:
                rngs = _generators(len(batch.rngs), seed)
                batch.use_rngs([g if mask is None or mask[row] else None
                                for row, g in enumerate(rngs)])
            batch.reset(mask)

    def steps(count: int) -> None:
        for _ in range(count):
            observations = rng.uniform(-1, 1, (len(batches[0].rngs), 3)).astype(np.float32)
            first, second = (batch.step(observations) for batch in batches)
            assert np.array_equal(first, second)

    restart(None, 10)
    steps(4)
    restart(np.arange(12) % 5 == 1, 20)
    steps(3)
    rows = np.array([0, 7, 11], dtype=np.intp)
    loaded = np.stack([distinct[3], rng.normal(0, 1, brain.genome_size), distinct[3]])
    for batch in batches:
        batch.load(rows, loaded)
    restart(np.isin(np.arange(12), rows), 30)
    steps(3)
    kept = np.array([0, 2, 3, 7, 8, 11], dtype=np.intp)
    batches = [batch.subset(kept) for batch in batches]
    assert isinstance(batches[0], GroupedArrayBrainBatch)
    steps(3)
    restart(np.arange(6) == 2, 40)
    steps(3)


def test_groups_no_row_holds_are_let_go() -> None:
    """A genome whose rows all took another leaves the batch with them: its parameters are
    not kept (nor stepped) for the rest of the chunk."""
    brain = template()
    distinct = np.random.default_rng(3).normal(0, 1, (3, brain.genome_size))
    batch = grouped_batch(brain, np.repeat(distinct, 2, axis=0))
    batch.load(np.array([0, 1], dtype=np.intp), distinct[[2, 2]])
    assert batch.params["w0"].shape[0] == 2 and batch.width == 4
    assert batch.subset(np.array([2], dtype=np.intp)).params["w0"].shape[0] == 1


class Indexing(FFNNTemplate):
    """Overrides `forward` with arithmetic that names one row axis: not grouped."""

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        outputs = self.layers(xp, params, inputs)[-1]
        return state, xp.concatenate([outputs[:, :1], outputs[:, 1:]], axis=1)


class Vouching(Indexing):
    """Declares again below the override."""

    def broadcasts_rows(self) -> Literal[True]:
        return True


def test_a_declaration_vouches_for_the_functions_of_its_class() -> None:
    """A subclass that writes its own `forward` is stepped row by row, acting as `make()`,
    until it declares again."""
    assert groups_rows(template()) and groups_rows(template(Accumulating))
    indexing = template(Indexing)
    assert isinstance(indexing, IGroupedArrayBrain) and not groups_rows(indexing)
    genomes = np.random.default_rng(4).normal(0, 1, (4, indexing.genome_size))[[0, 0, 1, 1]]
    batch = make_batch(indexing, genomes, OBSERVATIONS, ACTIONS)
    assert isinstance(batch, ArrayBrainBatch)
    assert batch_mismatch(indexing, genomes, OBSERVATIONS, ACTIONS, seed=1) is None
    assert groups_rows(template(Vouching))
