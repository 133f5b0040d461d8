"""The layering that docs/architecture.md states, checked on the source: no import cycles, only
the package imports the doc's table allows, and an `evo_core` namespace of plugin-author API.

Imports are read with `ast`, so every import counts: inside functions, and under
`if TYPE_CHECKING:` too.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

CORE = ROOT / "core"
DOC = ROOT / "docs" / "architecture.md"
#: every package of every distribution under plugins/ (brains, evo-qd, evo-tensorboard, and any
#: added later): a folder beside the distribution's pyproject.toml that holds __init__.py
PLUGIN_PACKAGES = sorted(p.parent for p in (ROOT / "plugins").glob("*/*/__init__.py")
                         if (p.parent.parent / "pyproject.toml").is_file())
#: the packages whose names `evo_core` may re-export: the contract and what brain authors use
AUTHOR_PACKAGES = {"contract", "authoring", "errors", "_version"}
#: host-side packages: importing `evo_core` must not load them
HOST_PACKAGES = {"hooks", "config", "environments", "results", "running", "evaluation",
                 "search", "processes", "optimizers", "handlers", "cli"}


def module_files(root: Path, package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of `package` (a folder under `root`)."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def all_modules() -> dict[str, Path]:
    modules = module_files(CORE, CORE / "evo_core")
    for package in PLUGIN_PACKAGES:
        modules.update(module_files(package.parent, package))
    return modules


MODULES = all_modules()


def imports_of(name: str, path: Path) -> set[str]:
    """The modules of MODULES that module `name` imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            # `from package import module` imports the module; `from module import name` the module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                       for alias in node.names]
        else:
            continue
        found.update(target for target in targets if target in MODULES)
    found.discard(name)
    return found


GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a closed path, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for child in sorted(graph.get(node, ())):
            if state.get(child) == 1:
                return [*path[path.index(child):], child]
            if child not in state:
                cycle = visit(child)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def package_of(module: str) -> str:
    """`evo_core.running.training` -> `running`; `evo_core.errors` -> `errors`; the namespace's
    own `__init__` -> `evo_core`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def allowed_imports() -> dict[str, set[str]]:
    """The doc's table: package -> the packages it may import."""
    text = DOC.read_text()
    section = text.split("## Which package may import which", 1)[1]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 2 or cells[0] in ("package", "---"):
            if table and not line.startswith("|"):
                break  # the end of the table
            continue
        (package,) = re.findall(r"`([\w.]+)`", cells[0])
        assert package not in table, f"{package} has two rows in {DOC.name}"
        table[package] = set(re.findall(r"`([\w.]+)`", cells[1]))
    return table


ALLOWED = allowed_imports()


def core_packages() -> set[str]:
    return {package_of(name) for name in MODULES if name.split(".")[0] == "evo_core"}


def test_the_table_was_read() -> None:
    assert {"contract", "running", "cli", "evo_core"} <= set(ALLOWED)
    assert ALLOWED["contract"] == {"errors"}


def test_no_import_cycles_between_modules() -> None:
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_table_covers_exactly_the_packages_of_evo_core() -> None:
    assert set(ALLOWED) == core_packages(), (
        f"docs/architecture.md's import table and core/evo_core differ: "
        f"{sorted(set(ALLOWED) ^ core_packages())}; give every package (and top-level module) a "
        "row saying what it may import, and describe it under Packages")
    unknown = set().union(*ALLOWED.values()) - set(ALLOWED)
    assert not unknown, f"the table allows imports of unknown packages: {unknown}"


def test_every_module_is_described_under_packages() -> None:
    """Each module of evo_core is named in its package's row of the doc's package table (a
    subpackage, such as `config/migrate/`, may be named as a whole)."""
    text = DOC.read_text().split("## Packages", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in text.splitlines():
        cells = line.split("|")
        if line.startswith("| `") and len(cells) > 3:
            rows.update(dict.fromkeys(re.findall(r"`([\w.]+)`", cells[1]), cells[2]))
    missing = [name for name, path in MODULES.items()
               if name.startswith("evo_core.") and path.name != "__init__.py"
               and not described(name.split(".")[1:], rows)]
    assert not missing, f"docs/architecture.md's package table does not describe {missing}"


def described(parts: list[str], rows: dict[str, str]) -> bool:
    """Whether the module `evo_core.<parts>` is named in the package table `rows`."""
    if len(parts) == 1:  # a top-level module has a row of its own
        return parts[0] in rows
    row = rows.get(parts[0], "")
    return f"{parts[1]}/" in row or f"{'/'.join(parts[1:])}.py" in row


def test_the_table_itself_is_layered() -> None:
    cycle = find_cycle(ALLOWED)
    assert cycle is None, "the table allows a cycle: " + " -> ".join(cycle or [])


def test_every_import_is_allowed_by_the_table() -> None:
    wrong = []
    for name, targets in GRAPH.items():
        if name.split(".")[0] != "evo_core":
            continue
        source = package_of(name)
        for target in sorted(targets):
            package = package_of(target)
            if package != source and package not in ALLOWED.get(source, set()):
                wrong.append(f"{name} imports {target} ({source} may not import {package})")
    assert not wrong, "\n".join(wrong)


def test_every_plugin_distribution_is_checked() -> None:
    distributions = {p.parent.name for p in (ROOT / "plugins").glob("*/pyproject.toml")}
    assert {package.parent.name for package in PLUGIN_PACKAGES} == distributions
    assert {"qd", "tensorboard", "ctrnn"} <= distributions


def test_plugins_use_the_namespace_only() -> None:
    wrong = [f"{name} imports {target}" for name, path in MODULES.items()
             if name.split(".")[0] != "evo_core"
             for target in sorted(imports_of(name, path))
             if target.startswith("evo_core.")]
    assert not wrong, "\n".join(wrong)


def exported_from() -> dict[str, str]:
    """Name -> the module `evo_core/__init__.py` imports it from."""
    sources = {}
    for node in ast.parse(MODULES["evo_core"].read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                sources[alias.asname or alias.name] = node.module
    return sources


def test_the_namespace_exports_only_plugin_author_api() -> None:
    import evo_core

    sources = exported_from()
    assert set(evo_core.__all__) <= set(sources), "evo_core defines names of its own"
    wrong = {name: sources[name] for name in evo_core.__all__
             if package_of(sources[name]) not in AUTHOR_PACKAGES}
    assert not wrong, f"evo_core re-exports host-side names: {wrong}"
    public = {name for name in vars(evo_core) if not name.startswith("_")}
    public -= {package_of(name) for name in MODULES if name.startswith("evo_core.")}
    assert public == set(evo_core.__all__) - {"__version__"}


def test_the_documented_namespace_is_the_real_one() -> None:
    import evo_core

    text = DOC.read_text()
    section = text.split("## The `evo_core` namespace", 1)[1].split("\n## ", 1)[0]
    listing = section.split("\n- ", 1)[1]  # the bullet list
    documented = set(re.findall(r"`(\w+)`", listing))
    assert documented == set(evo_core.__all__), (
        f"docs/architecture.md lists {sorted(documented - set(evo_core.__all__))} that evo_core "
        f"lacks, and lacks {sorted(set(evo_core.__all__) - documented)}")


def test_importing_the_namespace_loads_no_host_code() -> None:
    code = "import sys, evo_core; print(' '.join(m for m in sys.modules if m.startswith('evo_')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    assert "evo_core.contract.protocols" in loaded
    host = [name for name in loaded if package_of(name) in HOST_PACKAGES]
    assert not host, f"`import evo_core` loads host-side modules: {host}"


def test_a_command_imports_what_it_runs_only() -> None:
    """`evo` builds every command's parser, so what a command module imports at its top every
    command pays for at start-up: `evo --help` and `evo list-brains` load no command's run."""
    code = ("import sys\nfrom evo_core.cli.main import main\ntry:\n    main(sys.argv[1:])\n"
            "finally:\n    print(' '.join(sys.modules), file=sys.stderr)")
    running = ("evo_core.running.session", "evo_core.api", "evo_core.sweeps.sweeping",
               "evo_core.results.plot", "evo_core.config.migrate", "evo_core.cli.running",
               "matplotlib", "distributed", "jax")
    for command in (["--help"], ["list-brains"]):
        result = subprocess.run([sys.executable, "-c", code, *command], capture_output=True,
                                text=True, check=True)
        loaded = set(result.stderr.split())
        assert "evo_core.cli.commands.plot" in loaded
        assert not loaded.intersection(running), (command, sorted(loaded.intersection(running)))
