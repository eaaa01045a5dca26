"""`prereg export STUDY --format osf|prp-quant|json`: the registration laid out in the OSF
preregistration template's sections and the PRP-QUANT items, stamped with the spec digest.

The oracle is the spec itself, read with PyYAML (not prereg's loader): its digest recomputed
with rfc8785 and hashlib (the digest the design fixes: SHA-256 of the RFC 8785 canonical JSON of
the parsed spec), and every registered id and prose answer looked up in the export."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import rfc8785
import yaml

from prereg.cli import main

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ["d17-multifact", "s3-verifier-freeze", "jev-multicorrect"]
OSF = ["Study information", "Design plan", "Sampling plan", "Variables", "Analysis plan", "Other"]
PRP = ["Title and title page", "Abstract", "Introduction", "Method", "Analysis plan", "Other"]
# The items of the PRP-QUANT template (Bosnjak et al. 2021, American Psychologist,
# doi:10.1037/amp0000879; the template's version 2 as the task force publishes it), by code.
PRP_CODES = (
    [f"T{i}" for i in range(1, 13)] + [f"A{i}" for i in range(1, 5)]
    + [f"I{i}" for i in range(1, 5)] + [f"M{i}" for i in range(1, 16)]
    + [f"AP{i}" for i in range(1, 10)] + ["O1"]
)  # fmt: skip


def oracle_digest(spec: Path) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(yaml.safe_load(spec.read_text()))).hexdigest()


def squash(text: str) -> str:
    return " ".join(str(text).split())


def registered_ids(spec: dict) -> list[str]:
    """Ids a reviewer must find in the export as code or in bold: gates, families, metrics,
    record contracts, claims, scenarios, decision outcomes (hypotheses are headings)."""
    ids = []
    for key in ("gates", "families", "metrics", "record_contracts", "claims"):
        ids += [x["id"] for x in spec.get(key) or []]
    ids += [x["id"] for x in spec.get("scenarios") or []]
    ids += [o["id"] for o in (spec.get("decision") or {}).get("outcomes") or []]
    return ids


def export(project: Path, study: str, fmt: str, out: Path, capsys) -> str:
    code = main(["--project", str(project), "export", study, "--format", fmt, "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    return out.read_text(encoding="utf-8")


def sections(markdown: str) -> list[str]:
    return re.findall(r"^## \d+\. (.+)$", markdown, flags=re.M)


def item(markdown: str, title: str) -> str:
    """The text of the first ``### title`` item."""
    m = re.search(rf"^### {re.escape(title)}\n\n(.*?)(?=^### |^## |\Z)", markdown, re.M | re.S)
    assert m, title
    return m.group(1)


def check_markdown(text: str, spec_file: Path, heads: list[str]) -> None:
    decision_item = "AP7 Inference criteria" if heads == PRP else "Decision"
    spec = yaml.safe_load(spec_file.read_text())
    assert f"Spec digest: `{oracle_digest(spec_file)}`" in text
    assert sections(text) == heads
    flat = squash(text)
    for i in registered_ids(spec):
        assert f"`{i}`" in text or f"**{i}**" in text, i
    for h in spec.get("hypotheses") or []:
        assert re.search(rf"^#### {re.escape(h['id'])}: ", text, re.M), h["id"]
        # the rule in PREREG.md's words
        assert "Decision rule (supported when it holds):" in text or h.get("verdicts")
    reg = spec.get("registration") or {}
    for key in ("research_question", "rationale", "stopping_rule", "exclusions", "missing_data"):
        if reg.get(key):
            assert squash(reg[key]) in flat, key
    for a in spec.get("amendments") or []:
        assert re.search(rf"^\| {re.escape(str(a['version']))} \| ", text, re.M), a["version"]
    dec = spec.get("decision")
    if dec:
        decision = item(text, decision_item)
        if dec.get("rules"):
            assert f"Otherwise: **{dec['otherwise']}**." in decision
        else:  # no rule: one outcome, said once, no "tried in order" over nothing
            assert f"it is always **{dec['otherwise']}**." in decision
            assert "tried in order" not in decision and "Otherwise" not in decision
        for n, r in enumerate(dec.get("rules") or [], 1):
            assert f"- rule {n}: **{r['outcome']}** when" in decision


@pytest.mark.parametrize("study", STUDIES)
def test_each_format_of_each_study(project_copy, tmp_path, study, capsys):
    spec_file = project_copy / "spec" / "studies" / f"{study}.yaml"
    osf = export(project_copy, study, "osf", tmp_path / "osf.md", capsys)
    prp = export(project_copy, study, "prp-quant", tmp_path / "prp.md", capsys)
    check_markdown(osf, spec_file, OSF)
    check_markdown(prp, spec_file, PRP)
    doc = json.loads(export(project_copy, study, "json", tmp_path / "x.json", capsys))
    assert doc["specDigest"] == oracle_digest(spec_file)
    assert (doc["study"], doc["format"]) == (study, "prereg-export/1")
    assert [s["section"] for s in doc["osf"]] == OSF
    assert [s["section"] for s in doc["prpQuant"]] == PRP
    # the JSON holds the same answers the Markdown forms show, item by item
    for form, text in (("osf", osf), ("prpQuant", prp)):
        for s in doc[form]:
            for it in s["items"]:
                assert it["markdown"].strip(), (form, it["item"])
                assert f"### {it['item']}\n\n{it['markdown']}" in text


def test_prose_lands_in_its_item(project_copy, tmp_path, capsys):
    spec_file = project_copy / "spec" / "studies" / "s3-verifier-freeze.yaml"
    reg = yaml.safe_load(spec_file.read_text())["registration"]
    osf = export(project_copy, "s3-verifier-freeze", "osf", tmp_path / "o.md", capsys)
    prp = export(project_copy, "s3-verifier-freeze", "prp-quant", tmp_path / "p.md", capsys)
    assert squash(item(osf, "Research questions")) == squash(reg["research_question"])
    assert squash(item(osf, "Stopping rule")) == squash(reg["stopping_rule"])
    assert squash(item(osf, "Data exclusion")) == squash(reg["exclusions"])
    assert squash(item(prp, "I2 Objectives and research question(s)")) == squash(
        reg["research_question"]
    )
    assert squash(item(prp, "M6 Masking of participants and researchers")) == squash(
        reg["blinding"]
    )
    assert squash(reg["stopping_rule"]) in squash(item(prp, "M3 Sample size, power and precision"))
    assert squash(item(prp, "AP1 Criteria for post-data collection exclusion of participants,"
                             " if any")) == squash(reg["exclusions"])  # fmt: skip
    # every item of the template, in its order, under its code; one the spec cannot fill
    # says so
    codes = re.findall(r"^### ([A-Z]+\d+) ", prp, flags=re.M)
    assert codes == PRP_CODES
    assert squash(item(prp, "T7 IRB status")) == "Not registered in the spec."
    assert item(prp, "A1 Background").strip() == "See I1."


def test_an_example_project_and_the_starter(project_copy, tmp_path, capsys, monkeypatch):
    # an example study of another design, exported from a project of its own
    example = ROOT / "examples" / "paired-verifiers" / "spec" / "studies" / "paired-verifiers.yaml"
    shutil.copy(example, project_copy / "spec" / "studies")
    spec_file = project_copy / "spec" / "studies" / "paired-verifiers.yaml"
    text = export(project_copy, "paired-verifiers", "osf", tmp_path / "pv.md", capsys)
    check_markdown(text, spec_file, OSF)
    decision = item(text, "Decision")
    assert "- the gate `coverage` failed" in decision
    assert "- the verdict of `h1` is supported" in decision
    # the starter registers no registration record: its items say so, none is left out
    monkeypatch.chdir(tmp_path)
    assert main(["init", "my-study"]) == 0
    starter = export(tmp_path, "my-study", "prp-quant", tmp_path / "s.md", capsys)
    check_markdown(starter, tmp_path / "spec" / "studies" / "my-study.yaml", PRP)
    assert (
        item(starter, "I2 Objectives and research question(s)").strip()
        == "Not registered in the spec."
    )


def test_refusals_write_nothing(project_copy, tmp_path, capsys):
    base = ["--project", str(project_copy), "export"]
    out = tmp_path / "x.md"
    assert main([*base, "nope", "--format", "osf", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no study 'nope' under spec/studies/" in err and "d17-multifact" in err
    assert main([*base, "jev-multicorrect", "--format", "pdf", "--out", str(out)]) == 2
    assert "unknown format 'pdf'; choose one of osf, prp-quant, json" in capsys.readouterr().err
    assert not out.exists()
    out.write_text("keep")
    assert main([*base, "jev-multicorrect", "--format", "osf", "--out", str(out)]) == 2
    assert "refusing to overwrite it" in capsys.readouterr().err
    assert out.read_text() == "keep"
    # a spec that does not compile is refused with its problem, as compile refuses it
    spec = project_copy / "spec" / "studies" / "jev-multicorrect.yaml"
    spec.write_text(spec.read_text().replace("\ndecision:\n", "\ndecison:\n", 1))
    other = tmp_path / "y.md"
    assert main([*base, "jev-multicorrect", "--format", "json", "--out", str(other)]) == 2
    assert "decison" in capsys.readouterr().err
    assert not other.exists()


def test_without_out_the_form_is_printed_and_the_same(project_copy, tmp_path, capsys):
    written = export(project_copy, "jev-multicorrect", "prp-quant", tmp_path / "p.md", capsys)
    capsys.readouterr()
    argv = ["--project", str(project_copy), "export", "jev-multicorrect", "--format", "prp-quant"]
    assert main(argv) == 0
    assert capsys.readouterr().out == written
