"""Engines are plug-ins: one written outside runtime/, registered through a real entry point
(a dist-info folder importlib.metadata finds on the path, no pip), compiles and runs a study;
without it on the path the study's engine is unknown; a broken plug-in is a located error."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.engines import registry
from tests.conftest import ROOT, run_prereg

STUDY = "my-study"

SPEC = """\
id: my-study
version: "1.0"
title: A study run by an engine from outside prereg
status: draft
engine: my-engine
splits:
  - {id: main, code: m}
constants:
  - id: greeting
    description: What the engine says, how often, and to which split's people.
    value:
      word: Hello
      times: 2
      split: main
commands:
  - id: greet
    handler: greet
    summary: greet someone as the spec says
    arguments:
      - {name: --name, kind: option, type: string, required: true, help: who to greet}
"""

PLUGIN = {
    "myengine/__init__.py": '"""A throwaway prereg engine."""\n',
    "myengine/plugin.py": """\
        from prereg.engines.base import Engine

        ENGINE = Engine(
            kind="my-engine",
            summary="Greets people the way the study's constants say.",
            module="myengine.commands",
            schema="myengine:constants.schema.json",
            checks="myengine.checks:checks",
        )
        """,
    "myengine/commands.py": """\
        def greet(ctx, args):
            g = ctx.config["constants"]["greeting"]
            words = " ".join([f"{g['word']}, {args.name}!"] * g["times"])
            print(f"{words} ({ctx.study_id} {ctx.version}, split {g['split']})")
            return 0


        COMMANDS = {"greet": greet}
        """,
    "myengine/checks.py": """\
        from prereg.engines.checking import SpecNames


        def checks(spec):
            names = SpecNames(spec)
            names.split("greeting", ["split"], names.constants["greeting"]["split"])
            return names.problems
        """,
}

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["greeting"],
    "properties": {
        "greeting": {
            "type": "object",
            "required": ["word", "times", "split"],
            "additionalProperties": False,
            "properties": {
                "word": {"type": "string", "minLength": 1},
                "times": {"type": "integer", "minimum": 1},
                "split": {"type": "string"},
            },
        }
    },
}


def _write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _distribution(site: Path, name: str, entry_points: str) -> None:
    """A dist-info folder: what pip would leave, enough for importlib.metadata."""
    _write(
        site,
        {
            f"{name}-0.1.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
            f"{name}-0.1.dist-info/entry_points.txt": f"[prereg.engines]\n{entry_points}\n",
        },
    )


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A folder with the plug-in package and its registration, as a site folder would hold."""
    site = tmp_path / "site"
    _write(site, PLUGIN)
    (site / "myengine" / "constants.schema.json").write_text(json.dumps(SCHEMA, indent=2))
    _distribution(site, "myengine", "my-engine = myengine.plugin:ENGINE")
    return site


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "spec" / "studies").mkdir(parents=True)
    (project / "spec" / "studies" / f"{STUDY}.yaml").write_text(SPEC, encoding="utf-8")
    (project / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", project / "generated")
    return project


def _prereg(*args, site: Path | None):
    env = {"PYTHONPATH": str(site)} if site is not None else {"PYTHONPATH": ""}
    return run_prereg(*args, env=env)


def test_a_plugin_outside_runtime_compiles_and_runs_a_study(site: Path, project: Path):
    c = _prereg("--project", project, "compile", site=site)
    assert c.returncode == 0, c.stderr
    assert "compiled 1 study: my-study;" in c.stdout  # the study id, not its package
    init = (project / "generated" / "my_study" / "__init__.py").read_text()
    assert 'ENGINE = "my-engine"' in init and 'ENGINE_MODULE = "myengine.commands"' in init

    r = _prereg("--project", project, STUDY, "greet", "--name", "Ada", site=site)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Hello, Ada! Hello, Ada! (my-study 1.0, split main)\n"

    # the study's constants change what the engine does, after a recompile
    spec = project / "spec" / "studies" / f"{STUDY}.yaml"
    spec.write_text(SPEC.replace("word: Hello", "word: Hi").replace("times: 2", "times: 1"))
    assert _prereg("--project", project, "compile", site=site).returncode == 0
    r = _prereg("--project", project, STUDY, "greet", "--name", "Ada", site=site)
    assert r.stdout == "Hi, Ada! (my-study 1.0, split main)\n"


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            ("times: 2", 'times: "2"'),
            'spec/studies/my-study.yaml:13: at /constants/0/value/times: expected integer, got "2"'
            " (engine my-engine, constant greeting)",
        ),
        (
            ("split: main", "split: other"),
            "spec/studies/my-study.yaml:14: at /constants/0/value/split: names split 'other', "
            "which the spec does not declare (splits: main) (engine my-engine, constant greeting)",
        ),
    ],
)
def test_the_plugins_schema_and_checks_run_at_compile_time(site, project, edit, message):
    spec = project / "spec" / "studies" / f"{STUDY}.yaml"
    spec.write_text(SPEC.replace(*edit), encoding="utf-8")
    c = _prereg("--project", project, "compile", site=site)
    assert c.returncode == 2
    assert message in c.stderr
    assert "Traceback" not in c.stderr
    assert not (project / "generated" / "my_study").exists()


def test_without_the_plugin_the_engine_is_unknown_and_nothing_is_written(project: Path):
    c = _prereg("--project", project, "compile", site=None)
    assert c.returncode == 2
    assert c.stderr.startswith("error: the specs have problems; nothing was written\n")
    assert (
        "spec/studies/my-study.yaml:5: at /engine: unknown engine 'my-engine' (registered: "
        + ", ".join(registry.kinds())
        + ")"
    ) in c.stderr
    assert "Traceback" not in c.stderr
    assert sorted(p.name for p in (project / "generated").iterdir()) == ["prereg.schema.json"]


def test_a_compiled_study_whose_plugin_is_gone_refuses_to_run(site: Path, project: Path):
    assert _prereg("--project", project, "compile", site=site).returncode == 0
    r = _prereg("--project", project, STUDY, "greet", "--name", "Ada", site=None)
    assert r.returncode == 2
    assert (
        "error: spec/studies/my-study.yaml: study 'my-study' uses an unknown engine 'my-engine'"
    ) in r.stderr
    assert "Traceback" not in r.stderr


# -- broken plug-ins ----------------------------------------------------------------------------


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Put a site folder on this process's path (and take it off again)."""
    site = tmp_path / "broken-site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    registry.reset()
    yield site
    for name in [m for m in sys.modules if m.split(".")[0] in ("brokenengine", "myengine")]:
        del sys.modules[name]
    registry.reset()


BROKEN = {
    "import error": (
        {"brokenengine/__init__.py": "", "brokenengine/plugin.py": "import no_such_module\n"},
        "broken-thing = brokenengine.plugin:ENGINE",
        "entry point broken-thing = brokenengine.plugin:ENGINE (group prereg.engines, distribution"
        " brokenengine 0.1): cannot be loaded: ModuleNotFoundError: No module named"
        " 'no_such_module'",
    ),
    "not an engine": (
        {"brokenengine/__init__.py": "", "brokenengine/plugin.py": "ENGINE = {'kind': 'x'}\n"},
        "broken-thing = brokenengine.plugin:ENGINE",
        "entry point broken-thing = brokenengine.plugin:ENGINE (group prereg.engines, distribution"
        " brokenengine 0.1): names a dict, not a prereg.engines.base.Engine",
    ),
    "name is not the kind": (
        {
            "brokenengine/__init__.py": "",
            "brokenengine/plugin.py": "from prereg.engines.base import Engine\n"
            "ENGINE = Engine(kind='other-thing', summary='s', module='brokenengine')\n",
        },
        "broken-thing = brokenengine.plugin:ENGINE",
        "entry point broken-thing = brokenengine.plugin:ENGINE (group prereg.engines, distribution"
        " brokenengine 0.1): describes engine 'other-thing'; the entry point's name must be its"
        " kind",
    ),
    "duplicate kind": (
        {
            "brokenengine/__init__.py": "",
            "brokenengine/plugin.py": "from prereg.engines.base import Engine\n"
            "ENGINE = Engine(kind='reachability-probe', summary='s', module='brokenengine')\n",
        },
        "reachability-probe = brokenengine.plugin:ENGINE",
        "entry point reachability-probe = prereg.engines.reachability.plugin:ENGINE (group"
        " prereg.engines, distribution prereg 0.1.0): engine 'reachability-probe' is already"
        " registered by entry point reachability-probe = brokenengine.plugin:ENGINE (group"
        " prereg.engines, distribution brokenengine 0.1)",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_plugin_is_a_located_error_not_a_traceback(case, installed, capsys):
    files, entry_point, message = BROKEN[case]
    _write(installed, files)
    _distribution(installed, "brokenengine", entry_point)
    code = main(["--project", str(ROOT), "compile", "jev-multicorrect"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("error: the engine plug-in is broken; fix or uninstall it\n")
    assert f"  {message}\n" in err
    assert "Traceback" not in err + out


def test_the_built_in_engines_are_registered_through_entry_points():
    import importlib.metadata

    import jsonschema

    eps = {
        ep.name: ep.value
        for ep in importlib.metadata.entry_points(group=registry.GROUP)
        if ep.dist is not None and ep.dist.name == "prereg"
    }
    assert (
        eps.items()
        >= {
            "cluster-power-freeze": "prereg.engines.clusterpower.plugin:ENGINE",
            "multicorrect-scoring": "prereg.engines.multicorrect.plugin:ENGINE",
            "reachability-probe": "prereg.engines.reachability.plugin:ENGINE",
        }.items()
    )
    assert set(eps) <= set(registry.kinds())
    for kind, engine in registry.registry().items():
        assert engine.kind == kind and engine.problems() == []
        if engine.schema is not None:
            schema = engine.config_schema()
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object"


def test_discovering_the_engines_imports_no_engine_code():
    """Plug-in modules are cheap: the registry, the schemas and the checks of the built-in
    engines load without numpy (a command imports its engine when it runs)."""
    probe = (
        "import sys\n"
        "from prereg.engines import registry\n"
        "for e in registry.registry().values(): e.config_schema()\n"
        "print('numpy' in sys.modules)\n"
    )
    r = __import__("subprocess").run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "False\n"


# -- a plug-in that owns its commands ------------------------------------------------------

OWNING = {
    **PLUGIN,
    "myengine/plugin.py": """\
        from prereg.engines.base import Engine

        ENGINE = Engine(
            kind="my-engine",
            summary="Greets people the way the study's constants say.",
            module="myengine.commands",
            schema="myengine:constants.schema.json",
            checks="myengine.checks:checks",
            standard_commands="myengine.standard:commands",
        )
        """,
    "myengine/standard.py": """\
        import os


        def commands(spec):
            kind = os.environ.get("MYENGINE_NAME_TYPE", "string")
            return [
                {
                    "id": "greet",
                    "handler": "greet",
                    "summary": "greet someone",
                    "arguments": [
                        {"name": "--name", "kind": "option", "type": kind, "required": True,
                         "help": "who to greet"},
                    ],
                }
            ]
        """,
    "myengine/checks.py": """\
        from prereg.engines.checking import Argument, command_problems


        def checks(spec):
            return command_problems(spec, "my-engine", {"greet": [Argument("--name", ("string",))]})
        """,
}


@pytest.fixture
def owning_site(tmp_path: Path) -> Path:
    site = tmp_path / "owning-site"
    _write(site, OWNING)
    (site / "myengine" / "constants.schema.json").write_text(json.dumps(SCHEMA, indent=2))
    _distribution(site, "myengine", "my-engine = myengine.plugin:ENGINE")
    return site


def _owning(*args, site: Path, **env):
    # the plug-in's folder first, then the path this test runs prereg from
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
    return run_prereg(*args, env={"PYTHONPATH": path, **env})


def _spec_with(project: Path, commands: str) -> Path:
    spec = project / "spec" / "studies" / f"{STUDY}.yaml"
    spec.write_text(SPEC.split("commands:\n", 1)[0] + commands, encoding="utf-8")
    return spec


def _line(spec: Path, needle: str) -> int:
    return next(n for n, x in enumerate(spec.read_text().splitlines(), 1) if needle in x)


def test_a_plugins_standard_commands_run_without_a_commands_block(owning_site, project):
    _spec_with(project, "")
    assert _owning("--project", project, "compile", site=owning_site).returncode == 0
    r = _owning("--project", project, STUDY, "greet", "--name", "Ada", site=owning_site)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Hello, Ada! Hello, Ada! (my-study 1.0, split main)\n"


def test_the_plugins_checks_see_an_override_and_report_it_where_it_is_written(owning_site, project):
    # the override's own argument: reported at that argument's line
    spec = _spec_with(
        project,
        "commands:\n  - id: greet\n    arguments:\n"
        "      - {name: --name, kind: option, type: integer, required: true, help: who}\n",
    )
    c = _owning("--project", project, "compile", site=owning_site)
    assert c.returncode == 2
    line = _line(spec, "type: integer")
    assert (
        f"spec/studies/my-study.yaml:{line}: at /commands/0/arguments/0/type: command 'greet':"
        " handler 'greet' reads --name as string, not integer"
    ) in c.stderr, c.stderr
    # an override that keeps the engine's arguments compiles and greets
    _spec_with(project, "commands:\n  - {id: greet, summary: say hello}\n")
    assert _owning("--project", project, "compile", site=owning_site).returncode == 0
    r = _owning("--project", project, STUDY, "greet", "--name", "Bo", site=owning_site)
    assert r.stdout == "Hello, Bo! Hello, Bo! (my-study 1.0, split main)\n"


def test_a_plugins_broken_standard_command_is_reported_as_the_engines(owning_site, project):
    spec = _spec_with(project, "commands:\n  - {id: greet, summary: say hello}\n")
    env = {"MYENGINE_NAME_TYPE": "integer"}
    c = _owning("--project", project, "compile", site=owning_site, **env)
    assert c.returncode == 2
    line = _line(spec, "{id: greet, summary: say hello}")
    assert (
        f"spec/studies/my-study.yaml:{line}: at /commands/0: command 'greet': handler 'greet'"
        " reads --name as string, not integer (the arguments it keeps of the engine's command"
        " 'greet')"
    ) in c.stderr, c.stderr
    _spec_with(project, "")  # no spec entry: the engine's own command is named
    c = _owning("--project", project, "compile", site=owning_site, **env)
    assert c.returncode == 2
    assert (
        "at /engine: command 'greet': handler 'greet' reads --name as string, not integer (the"
        " engine's own command 'greet')"
    ) in c.stderr, c.stderr
