"""`evo plot RUN --network`: the NEAT template's graph of a genome (`INetworkGraph`), the
drawing's depth layout, and the command on real runs (a NEAT run drawn, a CTRNN run refused in
one line)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import evo_in_process
from figure_checks import drawn_texts, legend_problems, panel_colours, png_size, text_problems
from gymnasium import spaces

from evo_core import INetworkGraph, NetworkGraph
from evo_core.results.network_plot import network_figure, network_layout
from evo_core.results.plot import save_figure
from evo_core.results.plot_style import PNG_DPI, TEXT_SIZE, PlotStyle
from evo_neat import GenomeLayout, NEATConfig, NEATTemplate
from evo_neat.innovation import add_connections, add_nodes

INPUTS, OUTPUTS = 3, 2


def neat_template() -> NEATTemplate:
    return NEATTemplate(NEATConfig(max_nodes=8, max_conns=14),
                        spaces.Box(-1.0, 1.0, (INPUTS,), dtype=np.float32),
                        spaces.Box(-1.0, 1.0, (OUTPUTS,), dtype=np.float64),
                        np.random.default_rng(0))


def grown_genome(layout: GenomeLayout) -> np.ndarray:
    """The minimal 3-2 network (innovations 0-5, weights 0.1 .. 0.6), connection 1 -> 3
    (row 1) split by node 5, then 5 -> 5, 4 -> 5 and 2 -> 5 added; and a connection gene to
    node 9, which the genome lacks."""
    tables = layout.minimal(1, INPUTS, OUTPUTS)
    tables.connections["weight"][0, :6] = np.arange(1, 7) / 10
    one = np.array([0])
    split = add_nodes(tables, one, np.array([1]), INPUTS + OUTPUTS, 6)
    added = add_connections(split.tables, np.zeros(4, dtype=np.intp),
                            np.array([5, 4, 2, 0]), np.array([5, 5, 5, 9]),
                            np.array([-0.5, 0.25, -2.0, 7.0]), split.counter)
    assert added.applied.all()
    genome: np.ndarray = layout.encode(added.tables)[0]
    return genome


def edges(graph: NetworkGraph) -> set[tuple[int, int, float, bool]]:
    return {(int(s), int(t), round(float(w), 9), bool(e)) for s, t, w, e in
            zip(graph.sources, graph.targets, graph.weights, graph.enabled, strict=True)}


def test_neat_graph_of_a_grown_genome_has_its_nodes_and_connections() -> None:
    template = neat_template()
    assert isinstance(template, INetworkGraph)
    graph = template.network_graph(grown_genome(template.layout))
    assert graph.keys.tolist() == [0, 1, 2, 3, 4, 5]
    assert graph.kinds == ("input",) * 3 + ("output",) * 2 + ("hidden",)
    assert graph.labels == ("in 0", "in 1", "in 2", "out 0", "out 1", "")
    # inputs i -> outputs 3, 4 with innovation o * 3 + i; 1 -> 3 split: disabled, 1 -> 5
    # with weight 1, 5 -> 3 with its weight; the link to the absent node 9 and the padding
    # rows are not drawn
    assert edges(graph) == {
        (0, 3, 0.1, True), (1, 3, 0.2, False), (2, 3, 0.3, True),
        (0, 4, 0.4, True), (1, 4, 0.5, True), (2, 4, 0.6, True),
        (1, 5, 1.0, True), (5, 3, 0.2, True),
        (5, 5, -0.5, True), (4, 5, 0.25, True), (2, 5, -2.0, True)}


def test_neat_graph_leaves_out_absent_nodes_and_their_connections() -> None:
    template = neat_template()
    genome = grown_genome(template.layout)
    tables = template.layout.decode(np, genome[None, :].copy())
    tables.nodes["used"][0, INPUTS + OUTPUTS] = 0.0  # the hidden node 5
    graph = template.network_graph(template.layout.encode(tables)[0])
    assert graph.keys.tolist() == [0, 1, 2, 3, 4]
    assert not ({5} & (set(graph.sources.tolist()) | set(graph.targets.tolist())))


def graph_of(kinds: str, links: list[tuple[int, int]], enabled: list[bool] | None = None
             ) -> NetworkGraph:
    """Nodes keyed 10, 11, ... of kinds "i", "h", "o" in that order; `links` by position."""
    names = {"i": "input", "h": "hidden", "o": "output"}
    ends = np.array(links, dtype=np.int64).reshape(-1, 2) + 10
    return NetworkGraph(keys=10 + np.arange(len(kinds)),
                        kinds=tuple(names[k] for k in kinds),  # type: ignore[misc]
                        sources=ends[:, 0], targets=ends[:, 1],
                        weights=np.linspace(-1.0, 1.0, len(links)),
                        enabled=np.ones(len(links), dtype=bool) if enabled is None
                        else np.array(enabled))


def test_layout_puts_hidden_nodes_in_columns_by_longest_path() -> None:
    # input 0, 1; hidden 2 (fed by an input), 3 (fed by 2 and by an input: the longer path
    # counts), 4 (fed by 3 only through a disabled link: depth 1); outputs 5, 6; back edges
    # 3 -> 2, an output into hidden 2, and self-loop 3 -> 3 ignored
    graph = graph_of("iihhhoo", [(0, 2), (2, 3), (1, 3), (3, 5), (3, 2), (5, 2), (3, 3),
                                 (3, 4), (1, 4), (4, 6)],
                     enabled=[True] * 7 + [False, True, True])
    layout = network_layout(graph)
    assert layout.columns.tolist() == [0, 0, 1, 2, 1, 3, 3]
    # the disabled 3 -> 4 goes back too, as drawn with --disabled
    assert layout.back().tolist() == [False, False, False, False, True, True, True,
                                      True, False, False]
    x = layout.positions[:, 0]
    assert x[0] < x[2] < x[3] < x[5]  # the hidden nodes between the inputs and the outputs


def test_layout_of_a_cycle_enters_it_where_an_input_feeds_it() -> None:
    # 1 -> 2 -> 3 -> 1, fed by input 0 at node 2: 2 first, then 3, then 1; 1 -> 2 goes back
    graph = graph_of("ihhho", [(1, 2), (2, 3), (3, 1), (0, 2), (1, 4)])
    layout = network_layout(graph)
    assert layout.columns.tolist() == [0, 3, 1, 2, 4]
    assert layout.back().tolist() == [True, False, False, False, False]


def train(folder: Path, brain: dict[str, object], optimizer: dict[str, object]) -> Path:
    config = folder / f"{brain['type']}.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 3, "generations": 3, "hall_of_fame_size": 2,
        "brain": brain, "optimizer": optimizer,
        "episodes": {"runs": 1, "max_steps": 20}, "champion": {"episodes": 0}}))
    run = folder / str(brain["type"])
    result = evo_in_process("train", str(config), "--out", str(run), "--quiet")
    assert result.returncode == 0, result.stderr
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three-generation CartPole runs: NEAT, growing fast (its champion has hidden nodes),
    and a CTRNN."""
    folder = tmp_path_factory.mktemp("network")
    return {"neat": train(folder, {"type": "neat", "max_nodes": 10, "max_conns": 20},
                          {"type": "neat", "population_size": 8, "add_node": 0.5,
                           "add_connection": 0.5}),
            "ctrnn": train(folder, {"type": "ctrnn", "number_neurons": 2},
                           {"type": "cma-es", "population_size": 4})}


def test_plot_network_of_a_neat_run_writes_png_and_pdf(runs: dict[str, Path],
                                                       tmp_path: Path) -> None:
    result = evo_in_process("plot", str(runs["neat"]), "--network")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(runs["neat"] / "network.png")
    assert (runs["neat"] / "network.png").read_bytes().startswith(b"\x89PNG")
    pdf = tmp_path / "net.pdf"
    result = evo_in_process("plot", str(runs["neat"]), "--network", "--hof", "2",
                            "--disabled", "--column", "--out", str(pdf))
    assert result.returncode == 0, result.stderr
    assert pdf.read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize("column", [False, True])
def test_the_network_figure_reads_back(tmp_path: Path, column: bool) -> None:
    """A grown genome (a self-loop, a back edge, a disabled gene), full width and column: the
    saved PNG's width, the drawing not blank, no text over another or cut off, the legend
    below it; every text at 8 pt but the node keys inside the nodes, which shrink with them
    (never below 5 pt)."""
    import matplotlib.pyplot as plt

    template = neat_template()
    graph = template.network_graph(grown_genome(template.layout))
    style = PlotStyle(column=column).for_output(tmp_path / "n.png")
    figure = network_figure(graph, ["CartPole-v1 · neat · neat", "run: best genome"], style,
                            show_disabled=True)
    try:
        keys = {str(key) for key in graph.keys}
        assert not text_problems(figure) and not legend_problems(figure)
        sizes = {text.get_fontsize() for text in drawn_texts(figure)
                 if text.get_text() not in keys}
        assert sizes == {TEXT_SIZE}
        assert all(5 <= text.get_fontsize() <= TEXT_SIZE for text in drawn_texts(figure))
        labels = [text.get_text() for text in figure.legends[0].get_texts()]
        assert labels == ["input", "hidden", "output", "weight > 0", "weight < 0", "recurrent",
                          "disabled"]
        save_figure(figure, tmp_path / "n.png", style)
        assert png_size(tmp_path / "n.png")[0] == int(style.width * PNG_DPI)
        assert panel_colours(tmp_path / "n.png", figure, figure.axes[0]) > 10
    finally:
        plt.close(figure)


def test_plot_network_of_a_brain_without_a_graph_is_one_line(runs: dict[str, Path]) -> None:
    result = evo_in_process("plot", str(runs["ctrnn"]), "--network")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'ctrnn'" in lines[0]
    assert "only brains that do (NEAT) can be drawn with --network" in lines[0]
    assert not (runs["ctrnn"] / "network.png").exists()


def test_network_options_without_network_are_one_line(runs: dict[str, Path]) -> None:
    result = evo_in_process("plot", str(runs["neat"]), "--hof", "1")
    assert result.returncode == 2
    assert result.stderr.strip() == "evo: error: --hof chooses the genome --network or " \
        "--maze draws; add one of them"
