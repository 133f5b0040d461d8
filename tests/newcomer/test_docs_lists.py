"""The lists the docs keep are the code's: every list a page or the README states (the hooks,
the protocols, the site's pages, the example configs, each plugin's modules, the benchmarks,
the API reference, the version) is read from the page and compared with what the repository
holds, found in the code itself. Nothing here names an expected member: a hook, a protocol, a
page, an example or a module added to the code fails the test until the docs list it too."""

from __future__ import annotations

import importlib.util
import inspect
import re
import tomllib
from pathlib import Path

from conftest import ROOT

import evo_core
from evo_core.contract import hookspecs, protocols

DOCS = ROOT / "docs"


def table_after(page: Path, heading: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table after the line `heading` of
    `page`, its header and rule left out."""
    lines = page.read_text().splitlines()
    assert heading in lines, f"{page.name} has no heading {heading!r}"
    rows: list[list[str]] = []
    for line in lines[lines.index(heading) + 1:]:
        if line.startswith("|"):
            rows.append([cell.strip().replace("\\|", "|")
                         for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))])
        elif rows:
            break
    assert len(rows) > 2, f"no table under {heading!r} in {page.name}"
    return rows[2:]


def code_names(cell: str) -> list[str]:
    """The `code` spans of a table cell, in order."""
    return re.findall(r"`([^`]+)`", cell)


def first_names(rows: list[list[str]]) -> list[str]:
    """Each row's first cell, a single `code` span."""
    names = []
    for row in rows:
        spans = code_names(row[0])
        assert len(spans) == 1, f"a first cell that is not one name: {row[0]!r}"
        names.append(spans[0])
    return names


def test_the_hooks_listed_are_the_hook_specifications() -> None:
    specified = [name for name, function in inspect.getmembers(hookspecs, inspect.isfunction)
                 if hasattr(function, f"{hookspecs.PROJECT}_spec")]
    listed = first_names(table_after(DOCS / "plugin-api.md", "## The hooks"))
    assert specified and sorted(listed) == sorted(specified)


def protocols_table() -> list[str]:
    """The protocol names of the table in contract/protocols.py's docstring (an RST simple
    table: a name too long for its column goes on in the next line's first column)."""
    doc = protocols.__doc__ or ""
    rules = [i for i, line in enumerate(doc.splitlines()) if line.startswith("====")]
    assert len(rules) == 3, "protocols.py's table has a header and two rules"
    width = len(doc.splitlines()[rules[0]].split(" ")[0])
    names: list[str] = []
    for line in doc.splitlines()[rules[1] + 1:rules[2]]:
        first = line[:width].strip()
        if first.startswith("`"):
            names.append(first)
        elif first:
            names[-1] += first  # the rest of a long name
    return [name.strip("`") for name in names]


def test_the_protocols_listed_are_the_contracts_table() -> None:
    table = protocols_table()
    assert all(inspect.isclass(getattr(protocols, name)) for name in table)
    listed = first_names(table_after(DOCS / "plugin-api.md", "## The protocols"))
    assert sorted(listed) == sorted(table)


def test_every_page_is_in_the_sites_nav_once() -> None:
    """mkdocs.yml's nav (the block from `nav:` to the file's end: its last key) names each
    file of docs/ once, as `- path.md` or `- Title: path.md`."""
    config = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^docs_dir: docs$", config, re.M)
    nav = config[config.index("\nnav:\n"):]
    assert not re.search(r"^\w", nav[len("\nnav:\n"):], re.M), "nav is mkdocs.yml's last key"
    pages = re.findall(r"^\s+- (?:[^\n]*: )?([\w/.-]+\.md)$", nav, re.M)
    files = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert sorted(pages) == files and len(pages) == len(set(pages))


def test_the_readmes_links_lead_to_files() -> None:
    text = (ROOT / "README.md").read_text()
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)]+)\)", text)
             if "://" not in link]
    assert links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README.md links to {missing}"


def test_the_example_configs_listed_are_the_files_and_say_what_they_hold() -> None:
    rows = table_after(DOCS / "examples.md", "# Example configs")
    files = sorted(path.name for path in (ROOT / "examples").iterdir())
    assert sorted(first_names(rows)) == files
    for row in rows:
        path = ROOT / "examples" / code_names(row[0])[0]
        if path.suffix != ".toml":
            continue
        config = tomllib.loads(path.read_text())
        environment = config["environment"]
        brain = config["brain"]["type"]
        if brain == "chain":
            brain += ": " + ", ".join(stage["type"] for stage in config["brain"]["stages"])
        said = [code_names(cell) for cell in row[1:4]]
        assert said == [[environment if isinstance(environment, str) else environment["id"]],
                        [brain], [config["optimizer"]["type"]]], path.name


def plugin_package(folder: Path) -> Path:
    """The one package of a plugin's distribution (the folder beside its pyproject.toml that
    holds an __init__.py)."""
    packages = [path.parent for path in folder.glob("*/__init__.py")]
    assert len(packages) == 1, f"{folder} holds {packages}"
    return packages[0]


def test_each_plugins_modules_are_listed() -> None:
    rows = table_after(DOCS / "layout.md", "## The plugins")
    listed = {first_names([row])[0]: code_names(row[3]) for row in rows}
    folders = sorted(f"plugins/{path.parent.name}"
                     for path in (ROOT / "plugins").glob("*/pyproject.toml"))
    assert sorted(listed) == folders
    for folder, modules in listed.items():
        package = plugin_package(ROOT / folder)
        files = sorted(path.name for path in package.glob("*.py") if path.name != "__init__.py")
        assert sorted(modules) == files, folder
    distributions = {first_names([row])[0]: code_names(row[1])[0] for row in rows}
    for folder, name in distributions.items():
        with open(ROOT / folder / "pyproject.toml", "rb") as handle:
            assert tomllib.load(handle)["project"]["name"] == name, folder


def test_the_benchmarks_listed_are_the_scripts() -> None:
    rows = table_after(DOCS / "layout.md", "## Benchmarks")
    listed = sorted(name for row in rows for name in code_names(row[0]))
    scripts = sorted(path.name for path in (ROOT / "bench").glob("*.py")
                     if not path.name.startswith("_"))
    assert listed == scripts


def test_the_api_reference_documents_the_namespace_once() -> None:
    identifiers = [found for page in sorted((DOCS / "reference").glob("*.md"))
                   for found in re.findall(r"^::: evo_core\.(\S+)$", page.read_text(), re.M)]
    # the names of the namespace, not its submodules (`::: evo_core.api`)
    namespace = [name for name in identifiers
                 if "." not in name and importlib.util.find_spec(f"evo_core.{name}") is None]
    assert sorted(namespace) == sorted(evo_core.__all__)
    assert len(namespace) == len(set(namespace))


def cff_value(key: str) -> str:
    """A top-level scalar of CITATION.cff (`key: value`, quotes removed)."""
    found = re.search(rf"^{key}: (.+)$", (ROOT / "CITATION.cff").read_text(), re.M)
    assert found, f"CITATION.cff has no {key}"
    return found.group(1).strip().strip('"')


def test_citation_and_changelog_name_the_version() -> None:
    assert cff_value("cff-version") == "1.2.0" and cff_value("version") == evo_core.__version__
    for pyproject in (ROOT / "plugins").glob("*/pyproject.toml"):
        with open(pyproject, "rb") as handle:
            assert tomllib.load(handle)["project"]["version"] == evo_core.__version__, pyproject
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = cff_value("date-released")
    assert f"## [{evo_core.__version__}] - {released}\n" in changelog


def test_the_commands_listed_are_the_commands() -> None:
    """Each command of `evo` (its parser's subcommands) is named in docs/commands.md's table,
    and the table names no other."""
    import argparse

    from evo_core.cli.main import build_parser

    actions = [action for action in build_parser()._actions
               if isinstance(action, argparse._SubParsersAction)]
    commands = sorted(name for action in actions for name in action.choices)
    rows = table_after(DOCS / "commands.md", "# Commands")
    listed = sorted({found for row in rows for span in code_names(row[0])
                     for found in re.findall(r"^evo ([a-z][a-z-]*)", span)})
    assert commands and listed == commands
