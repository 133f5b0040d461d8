"""Plugin discovery against real (fake-installed) distributions."""

from __future__ import annotations

import pytest
from conftest import SitePackages, brain_plugin_source, run_evo


def listing(site: SitePackages, *extra: str) -> dict[str, dict[str, str]]:
    result = run_evo("list-brains", "--json", *extra, env=site.env)
    assert result.returncode == 0, result.stderr
    rows = result.json()
    assert isinstance(rows, list)
    return {row["name"]: row for row in rows}


def test_good_plugin_is_listed_and_validates(site: SitePackages, tmp_path) -> None:
    site.add("brain-linear", "evo_linear", brain_plugin_source("linear"), version="2.3")
    rows = listing(site)
    assert rows["linear"] == {"name": "linear", "distribution": "brain-linear", "version": "2.3",
                              "status": "ok", "description": "A linear policy for tests."}
    assert rows["ctrnn"]["status"] == "ok"  # the installed plugins are unaffected
    schema = run_evo("schema", env=site.env)
    assert schema.returncode == 0 and '"linear"' in schema.stdout


def test_broken_plugins_are_reported_and_others_keep_working(site: SitePackages) -> None:
    site.add("brain-linear", "evo_linear", brain_plugin_source("linear"))
    site.add("brain-crash", "evo_crash", "raise RuntimeError('no GPU here')\n")
    # discovery goes by distribution name, so brain-zdup comes second and loses "linear"
    site.add("brain-zdup", "evo_dup", brain_plugin_source("linear", "Other"))
    site.add("brain-badsig", "evo_badsig", '''
        from evo_core import hookimpl
        @hookimpl
        def evo_brain_templates(unexpected_argument):
            return []
        ''')
    site.add("brain-future", "evo_future", brain_plugin_source("future"),
             requires=("numpy", "evo-core>=99.0"))
    site.add("brain-raises", "evo_raises", '''
        from evo_core import hookimpl
        @hookimpl
        def evo_brain_templates():
            raise KeyError("missing")
        ''')
    site.add("brain-nomodel", "evo_nomodel", '''
        from evo_core import hookimpl
        class T:
            def make(self, genome): ...
        @hookimpl
        def evo_brain_templates():
            return [T]
        ''')
    rows = listing(site)
    by_dist = {row["distribution"]: row for row in rows.values()}
    assert rows["linear"]["distribution"] == "brain-linear"
    assert rows["ctrnn"]["status"] == "ok"
    assert by_dist["brain-crash"]["status"] == "broken"
    assert "RuntimeError: no GPU here" in by_dist["brain-crash"]["description"]
    assert by_dist["brain-zdup"]["status"] == "broken"
    assert "already registered by brain-linear 1.0" in by_dist["brain-zdup"]["description"]
    assert by_dist["brain-badsig"]["status"] == "broken"
    assert "unexpected_argument" in by_dist["brain-badsig"]["description"]
    assert by_dist["brain-future"]["status"] == "incompatible"
    assert "requires evo-core>=99.0" in by_dist["brain-future"]["description"]
    assert "future" not in rows  # incompatible plugins are not imported
    assert by_dist["brain-raises"]["status"] == "broken"
    assert "KeyError" in by_dist["brain-raises"]["description"]
    assert by_dist["brain-nomodel"]["status"] == "broken"
    assert "config_model" in by_dist["brain-nomodel"]["description"]
    for row in rows.values():
        assert "\n" not in row["description"]


def test_table_output_shows_broken_plugin_with_reason(site: SitePackages) -> None:
    site.add("brain-crash", "evo_crash", "import numpy\nraise ImportError('needs torch')\n")
    result = run_evo("list-brains", env=site.env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "DESCRIPTION"]
    crash = next(line for line in lines if "brain-crash" in line)
    assert "broken" in crash and "needs torch" in crash


@pytest.mark.parametrize("how", ["flag", "env"])
def test_strict_mode_makes_a_broken_plugin_fatal(site: SitePackages, how: str) -> None:
    site.add("brain-crash", "evo_crash", "raise RuntimeError('no GPU here')\n")
    env = dict(site.env)
    args = ["list-brains"]
    if how == "flag":
        args = ["--strict", *args]
    else:
        env["EVO_STRICT_PLUGINS"] = "1"
    result = run_evo(*args, env=env)
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("evo: error: plugin") and "brain-crash" in last and "no GPU here" in last
    assert "Traceback" in result.stderr  # plugin authors get to see where it broke


def test_unknown_hook_is_reported(site: SitePackages) -> None:
    site.add("brain-typo", "evo_typo", '''
        from evo_core import hookimpl
        @hookimpl
        def evo_brain_template():
            return []
        ''')
    rows = listing(site)
    row = next(r for r in rows.values() if r["distribution"] == "brain-typo")
    assert row["status"] == "broken" and "evo_brain_template" in row["description"]


def test_local_module_plugin(site: SitePackages, tmp_path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my_brains.py").write_text(
        __import__("textwrap").dedent(brain_plugin_source("mine")))
    env = {"PYTHONPATH": str(tmp_path / "mine")}
    result = run_evo("--plugin", "my_brains", "list-brains", "--json", env=env)
    assert result.returncode == 0, result.stderr
    rows = result.json()
    assert isinstance(rows, list)
    names = {row["name"]: row for row in rows}
    assert names["mine"]["distribution"] == "local module my_brains"


def test_version_lists_plugins(site: SitePackages) -> None:
    site.add("brain-linear", "evo_linear", brain_plugin_source("linear"), version="2.3")
    result = run_evo("--version", env=site.env)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("evo-core ")
    assert "brain-linear 2.3" in lines and any(line.startswith("brain-ctrnn ") for line in lines)


def test_registry_in_process(site: SitePackages, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from evo_core.hooks.discovery import load_registry

    site.add("brain-linear", "evo_linear", brain_plugin_source("linear"))
    monkeypatch.syspath_prepend(str(site.root))
    registry = load_registry()
    assert {"ctrnn", "linear"} <= set(registry.names("brain"))
    # the built-ins come first, then what installed plugins (evo-qd's) add
    assert registry.names("optimizer")[:2] == ["cma-es", "mu-lambda"]
    assert "sequential" in registry.names("processing")
    sys.modules.pop("evo_linear", None)
