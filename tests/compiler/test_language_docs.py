"""The language documented: every element described, docs/language.md rendered and checked."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from prereg.cli import main
from prereg.compiler import langdoc
from prereg.compiler.project import Project
from prereg.errors import UserError
from tests.conftest import ROOT

LANGUAGE = ROOT / "spec" / "prereg.linkml.yaml"
DOCS = ROOT / "docs" / "language.md"


def _schema() -> dict:
    # Read with PyYAML, independently of prereg's loader.
    return yaml.safe_load(LANGUAGE.read_text(encoding="utf-8"))


def _undescribed(schema: dict) -> list[str]:
    out = []
    for name, body in (schema.get("classes") or {}).items():
        body = body or {}
        if not str(body.get("description") or "").strip():
            out.append(f"class {name}")
        for slot, spec in (body.get("attributes") or {}).items():
            if not str((spec or {}).get("description") or "").strip():
                out.append(f"slot {name}.{slot}")
    for name, body in (schema.get("enums") or {}).items():
        if not str((body or {}).get("description") or "").strip():
            out.append(f"enum {name}")
        for value, vbody in ((body or {}).get("permissible_values") or {}).items():
            if not str((vbody or {}).get("description") or "").strip():
                out.append(f"value {name}.{value}")
    for name, body in (schema.get("types") or {}).items():
        if not str((body or {}).get("description") or "").strip():
            out.append(f"type {name}")
    return out


def test_every_class_slot_enum_value_and_type_has_a_description():
    schema = _schema()
    assert schema["classes"] and schema["enums"] and schema["types"]
    assert _undescribed(schema) == []


def test_the_description_check_names_an_element_without_one():
    schema = _schema()
    schema["classes"]["Cell"]["attributes"]["colour"] = {"range": "string"}
    schema["enums"]["Adjustment"]["permissible_values"]["bonferroni"] = {}
    assert _undescribed(schema) == ["slot Cell.colour", "value Adjustment.bonferroni"]


def test_committed_reference_is_what_the_language_renders():
    assert langdoc.render_docs(Project(ROOT)) == DOCS.read_bytes()


def _sections(text: str) -> dict[str, str]:
    """Each ``### Name`` heading's section text."""
    parts = re.split(r"^### (\S+)\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_reference_lists_every_class_slot_enum_value_and_type():
    schema = _schema()
    sections = _sections(DOCS.read_text(encoding="utf-8"))
    for name, body in schema["classes"].items():
        assert name in sections, name
        assert (body.get("description") or "").split()[0] in sections[name]
        for slot, spec in (body.get("attributes") or {}).items():
            spec = spec or {}
            row = re.search(
                rf"^\| `{re.escape(slot)}` \| ([^|]+) \| (yes)? \| (yes)? \| (.*) \|$",
                sections[name],
                re.M,
            )
            assert row, f"{name}.{slot}"
            rng, required, listed, rest = row.groups()
            assert (spec.get("range") or "string") in rng, f"{name}.{slot}"
            assert bool(required) == bool(spec.get("required")), f"{name}.{slot}"
            assert bool(listed) == bool(spec.get("multivalued")), f"{name}.{slot}"
            if spec.get("pattern"):
                assert spec["pattern"].replace("|", "\\|") in rest, f"{name}.{slot}"
    for name, body in schema["enums"].items():
        assert name in sections, name
        for value in body["permissible_values"]:
            assert f"| `{value}` |" in sections[name], f"{name}.{value}"
    for name in schema["types"]:
        assert name in sections, name


def test_every_link_of_the_reference_points_at_a_heading():
    text = DOCS.read_text(encoding="utf-8")
    headings = {h.lower() for h in re.findall(r"^#{2,3} (\S+)$", text, re.M)}
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert links and links <= headings, sorted(links - headings)
    # A class's range links to its section (Study.cells is a list of Cell).
    study = _sections(text)["Study"]
    assert re.search(r"^\| `cells` \| \[Cell\]\(#cell\) \|  \| yes \|", study, re.M)


def test_rendering_is_byte_identical_across_processes_and_hash_seeds():
    code = (
        "import sys; from pathlib import Path; from prereg.compiler import langdoc;"
        "from prereg.compiler.project import Project;"
        f"sys.stdout.buffer.write(langdoc.render_docs(Project(Path({str(ROOT)!r}))))"
    )
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True))
    assert outs[0].returncode == 0, outs[0].stderr
    assert outs[0].stdout == outs[1].stdout == DOCS.read_bytes()


@pytest.fixture
def project_with_docs(project_copy):
    (project_copy / "docs").mkdir()
    shutil.copy(DOCS, project_copy / "docs" / "language.md")
    shutil.copy(ROOT / langdoc.EXAMPLES, project_copy / langdoc.EXAMPLES)
    return project_copy


def test_check_language_refuses_docs_the_language_no_longer_renders(project_with_docs, capsys):
    src = project_with_docs / "spec/prereg.linkml.yaml"
    old = "description: The partitions of the study's rows"
    text = src.read_text(encoding="utf-8")
    assert old in text.replace('"', "")
    src.write_text(
        text.replace("The partitions of the study's rows", "How the rows are partitioned"),
        encoding="utf-8",
    )
    assert main(["--project", str(project_with_docs), "check", "--language"]) == 1
    out = capsys.readouterr().out
    assert (
        "stale or edited: docs/language.md does not match spec/prereg.linkml.yaml"
        " (run `prereg compile --language`)"
    ) in out
    assert "-| `splits` | [Split](#split) |  | yes |  | The partitions of" in out
    assert "+| `splits` | [Split](#split) |  | yes |  | How the rows are partitioned" in out
    # Regenerating makes the project current again (schema and reference both).
    assert main(["--project", str(project_with_docs), "compile", "--language"]) == 0
    assert "wrote docs/language.md" in capsys.readouterr().out
    assert main(["--project", str(project_with_docs), "check", "--language"]) == 0
    assert "How the rows are partitioned" in (project_with_docs / "docs/language.md").read_text()


def test_check_language_refuses_missing_or_edited_docs(project_with_docs, capsys):
    docs = project_with_docs / "docs/language.md"
    docs.write_text(docs.read_text(encoding="utf-8") + "A hand-written line.\n", encoding="utf-8")
    assert main(["--project", str(project_with_docs), "check", "--language"]) == 1
    out = capsys.readouterr().out
    assert "stale or edited: docs/language.md" in out and "-A hand-written line." in out
    docs.unlink()
    assert main(["--project", str(project_with_docs), "check", "--language"]) == 1
    assert (
        "missing: docs/language.md (the language renders it; run `prereg compile --language`"
        in capsys.readouterr().out
    )


def test_a_range_the_schema_does_not_define_is_refused():
    source = {"classes": {"Study": {"attributes": {"cells": {"range": "Cel"}}}}}
    with pytest.raises(
        UserError, match=r"lang\.yaml: slot 'cells' of class 'Study' has range 'Cel'"
    ):
        langdoc.model(source, "lang.yaml")


def test_colliding_anchors_are_refused():
    source = {"classes": {"Level": {}}, "enums": {"level": {"permissible_values": {}}}}
    with pytest.raises(UserError, match="enum 'level' has the same anchor"):
        langdoc.model(source, "lang.yaml")


def test_prose_is_escaped_outside_code_spans_only():
    assert langdoc.md("spec/studies/<id>.yaml, `prereg <study-id>`") == (
        "spec/studies/&lt;id>.yaml, `prereg <study-id>`"
    )
    assert langdoc.md("a | b, `x|y`, *not bold*, tested_after, _lone_") == (
        "a \\| b, `x\\|y`, \\*not bold\\*, tested_after, \\_lone\\_"
    )
    assert langdoc.code("^(a|b)$") == "`^(a\\|b)$`"
