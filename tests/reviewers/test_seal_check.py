"""prereg seal, and prereg check of sealed registered content against amendments.

Everything runs on copies of unsealed projects (the repository's registered studies are sealed;
the copies drop the seals and seal again as each test needs).
"""

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
from tests.conftest import d17_written_cells, write_d17_cells

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "compile-basic" / "project"
D17 = "spec/studies/d17-multifact.yaml"
EXAMPLE = "spec/studies/example-probe.yaml"


@pytest.fixture
def golden_copy(tmp_path) -> Path:
    dst = tmp_path / "golden"
    shutil.copytree(GOLDEN, dst, ignore=shutil.ignore_patterns("__pycache__", "*.seal.json"))
    return dst


@pytest.fixture
def project_copy(project_copy) -> Path:
    """The repository's project without its seals: these tests seal it themselves."""
    for seal in (project_copy / "spec" / "studies").glob("*.seal.json"):
        seal.unlink()
    return project_copy


STUDIES = ("d17-multifact", "s3-verifier-freeze", "jev-multicorrect")


def seal_others(project: Path, but: str) -> None:
    """Seal every registered study but ``but`` (a registered study must be sealed)."""
    for study in STUDIES:
        if study != but:
            assert run(project, "seal", study) == 0


def run(project: Path, *args: str) -> int:
    return main(["--project", str(project), *args])


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count))


def line_of(path: Path, needle: str) -> int:
    lines = path.read_text().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if needle in line)


def cell_index(project: Path, cell_id: str) -> int:
    # An independent reading of the spec (PyYAML's safe loader; cell ids are plain strings).
    spec = yaml.safe_load((project / D17).read_text())
    return [c["id"] for c in spec["cells"]].index(cell_id)


def amend(path: Path, version: str, paths: list[str], status: str | None = None) -> None:
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("version: "):
            lines[i] = f'version: "{version}"\n'
        if status and line.startswith("status: "):
            lines[i] = f"status: {status}\n"
    text = "".join(lines)
    entry = (
        f'  - version: "{version}"\n    date: "2026-11-30"\n'
        f"    rationale: A declared change.\n    paths: {json.dumps(paths)}\n"
    )
    if "\namendments:\n" not in text:
        path.write_text(text + "amendments:\n" + entry)
        return
    # after the last amendment: before the next top-level key, or at the end
    import re

    start = text.index("\namendments:\n") + len("\namendments:\n")
    following = re.search(r"^[a-z_]+:", text[start:], re.MULTILINE)
    at = start + following.start() if following else len(text)
    path.write_text(text[:at] + entry + text[at:])


# -- sealing ----------------------------------------------------------------------------------


def test_seal_writes_canonical_registered_content_with_its_digest(project_copy, capsys):
    assert run(project_copy, "seal", "d17-multifact") == 0
    out = capsys.readouterr().out
    target = project_copy / "spec/studies/d17-multifact.seal.json"
    version = yaml.safe_load((project_copy / D17).read_text())["version"]
    assert f"sealed d17-multifact version {version}: spec/studies/d17-multifact.seal.json" in out
    raw = target.read_bytes()
    seal = json.loads(raw)
    assert raw == rfc8785.dumps(seal) + b"\n"
    assert sorted(seal) == ["content", "digest", "format", "study", "version"]
    assert (seal["study"], seal["version"]) == ("d17-multifact", version)
    assert seal["digest"] == "sha256:" + hashlib.sha256(rfc8785.dumps(seal["content"])).hexdigest()
    assert seal["digest"] in out
    content = seal["content"]
    for key in ("title", "description", "source_document", "version", "status", "amendments"):
        assert key not in content
    assert all("description" not in b for b in content["budget"])
    # the seal pins the cells the crossings register, one by one
    assert [c["rows"] for c in content["cells"]] == [c["rows"] for c in d17_written_cells()]
    assert "crossings" not in content
    assert content["constants"][0] == {"id": "generator-id", "value": "d17-multifact/v1"}
    # the seal is not a spec: compile and check still see three studies and pass
    seal_others(project_copy, "d17-multifact")
    assert run(project_copy, "check") == 0
    assert "generated/ matches the specs" in capsys.readouterr().out


def test_seal_is_never_overwritten(project_copy, capsys):
    assert run(project_copy, "seal", "jev-multicorrect") == 0
    target = project_copy / "spec/studies/jev-multicorrect.seal.json"
    before = target.read_bytes()
    capsys.readouterr()
    assert run(project_copy, "seal", "jev-multicorrect") == 2
    assert "already exists; refusing to overwrite it" in capsys.readouterr().err
    assert target.read_bytes() == before


def test_seal_refuses_an_unknown_study(project_copy, capsys):
    assert run(project_copy, "seal", "nope") == 2
    assert "no spec for study 'nope'" in capsys.readouterr().err


def test_sealing_a_draft_registers_it_in_one_command(project_copy, capsys):
    seal_others(project_copy, "jev-multicorrect")
    spec = project_copy / "spec/studies/jev-multicorrect.yaml"
    # back to a draft: version 1.0, no amendment (a draft has none)
    text = spec.read_text()
    start = text.index("\namendments:\n") + 1
    spec.write_text(text[:start] + text[text.index("registration:\n", start) :])
    spec.write_text(
        re.sub(r'^version: "[0-9.]+"$', 'version: "1.0"', spec.read_text(), count=1, flags=re.M)
    )
    edit(spec, "status: amended", "status: draft  # until the reviewers agree")
    assert run(project_copy, "compile", "jev-multicorrect") == 0
    before = spec.read_text().splitlines()
    capsys.readouterr()
    assert run(project_copy, "seal", "jev-multicorrect") == 0
    out = capsys.readouterr().out.splitlines()
    # only the status line changed, its comment kept
    after = spec.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [
        (
            "status: draft  # until the reviewers agree",
            "status: registered  # until the reviewers agree",
        )
    ]
    assert out[0].startswith("registered jev-multicorrect: status set to registered")
    assert out[1].startswith("sealed jev-multicorrect version")
    assert out[-1].startswith("next: commit spec/studies/jev-multicorrect.yaml, ") and len(out) == 3
    seal = json.loads((project_copy / "spec/studies/jev-multicorrect.seal.json").read_text())
    assert seal["study"] == "jev-multicorrect"
    # generated/ was compiled again: check holds with the seal and the registered status
    assert run(project_copy, "check") == 0
    assert (
        'STATUS = "registered"'
        in (project_copy / "generated/jev_multicorrect/__init__.py").read_text()
    )


# -- check ------------------------------------------------------------------------------------


def test_holm_alpha_change_needs_an_amendment(golden_copy, capsys):
    spec = golden_copy / EXAMPLE
    assert run(golden_copy, "seal", "example-probe") == 0
    assert run(golden_copy, "check") == 0
    edit(
        spec,
        "{id: pool-pairs, adjustment: holm, alpha: 0.05}",
        "{id: pool-pairs, adjustment: holm, alpha: 0.025}",
    )
    line = line_of(spec, "{id: pool-pairs")
    said = (
        f"{EXAMPLE}:{line}: at /families/0/alpha: registered content changed since the seal of "
        "version 1.1 and no later amendment declares it (family_alpha_changed): Previously family "
        '"pool-pairs" (holm) tested at alpha 0.05; it now tests at 0.025. Declare '
        "/families/0/alpha or /families[pool-pairs]/alpha in a new amendment's paths."
    )
    # compile refuses first, as every study command would, and writes nothing
    generated = {p: p.read_bytes() for p in (golden_copy / "generated").rglob("*") if p.is_file()}
    capsys.readouterr()
    assert run(golden_copy, "compile") == 2
    err = capsys.readouterr().err
    assert "sealed registered content changed without an amendment declaring it" in err
    assert said in err
    assert generated == {
        p: p.read_bytes() for p in (golden_copy / "generated").rglob("*") if p.is_file()
    }
    # check says the same (the spec is edited, generated/ not)
    assert run(golden_copy, "check") == 1
    out = capsys.readouterr().out
    assert said in out
    assert "1 problem(s) with sealed registered content" in out

    amend(spec, "1.2", ["/families/0/alpha"])
    assert run(golden_copy, "compile") == 0
    capsys.readouterr()
    assert run(golden_copy, "check") == 0, capsys.readouterr().out
    prereg_md = (golden_copy / "generated/example_probe/PREREG.md").read_text()
    history = prereg_md[prereg_md.index("## Amendment history") :]
    assert "| 1.1 | 2026-11-01 | Raised the rows of a cell. |" in history
    assert "| 1.2 | 2026-11-30 | A declared change. |" in history
    # each amendment's paths listed after the table, one a line
    assert "Paths amended in 1.1:\n\n- `/cells/0/rows`\n" in history
    assert "Paths amended in 1.2:\n\n- `/families/0/alpha`\n" in history


def test_an_id_path_or_a_parent_path_declares_a_change(golden_copy, capsys):
    spec = golden_copy / EXAMPLE
    assert run(golden_copy, "seal", "example-probe") == 0
    edit(spec, "alpha: 0.05}", "alpha: 0.01}")
    amend(spec, "1.2", ["/families[pool-pairs]"])
    assert run(golden_copy, "compile") == 0
    assert run(golden_copy, "check") == 0, capsys.readouterr().out


def test_an_amendment_not_after_the_sealed_version_does_not_count(golden_copy, capsys):
    spec = golden_copy / EXAMPLE
    assert run(golden_copy, "seal", "example-probe") == 0
    edit(spec, "alpha: 0.05}", "alpha: 0.01}")
    # the existing amendment 1.1 is the sealed version: naming the path there is not enough
    edit(spec, "paths: [/cells/0/rows]", "paths: [/cells/0/rows, /families/0/alpha]")
    capsys.readouterr()
    assert run(golden_copy, "compile") == 2
    assert "at /families/0/alpha: registered content changed" in capsys.readouterr().err
    assert run(golden_copy, "check") == 1
    assert "at /families/0/alpha: registered content changed" in capsys.readouterr().out


def test_cell_rows_and_pool_verb_need_an_amendment_naming_each_path(project_copy, capsys):
    spec = project_copy / D17
    write_d17_cells(spec)  # the same registration, written cell by cell
    assert run(project_copy, "compile") == 0
    assert run(project_copy, "seal", "d17-multifact") == 0
    seal_others(project_copy, "d17-multifact")
    moved_from = "tst-pool-a_h1_missing-contrastive_equalized"
    moved_to = "tst-pool-a_h1_yes_equalized"
    i_from, i_to = cell_index(project_copy, moved_from), cell_index(project_copy, moved_to)
    # move 20 rows between two test cells (the totals stay right) and change a pool verb
    edit(
        spec,
        f"{{id: {moved_from}, split: test, rows: 220,",
        f"{{id: {moved_from}, split: test, rows: 200,",
    )
    edit(
        spec,
        f"{{id: {moved_to}, split: test, rows: 110,",
        f"{{id: {moved_to}, split: test, rows: 130,",
    )
    edit(spec, '{role: contrastive, text: "bypasses"}', '{role: contrastive, text: "deflects"}')
    capsys.readouterr()
    assert run(project_copy, "compile") == 2  # compile refuses first, with check's lines
    refused = capsys.readouterr().err
    assert f'Previously 220 rows, cell "{moved_from}" now has 200.' in refused
    assert run(project_copy, "check") == 1
    out = capsys.readouterr().out
    assert f"{D17}:{line_of(spec, moved_from + ', split: test')}: at /cells/{i_from}/rows:" in out
    assert f'Previously 220 rows, cell "{moved_from}" now has 200.' in out
    assert f"at /cells/{i_to}/rows:" in out
    assert f'Previously 110 rows, cell "{moved_to}" now has 130.' in out
    word_line = line_of(spec, '{role: contrastive, text: "deflects"}')
    assert f"{D17}:{word_line}: at /pools/0/words/3/text:" in out
    assert 'Previously pool "pool-a" used "bypasses" as contrastive; it now uses "deflects".' in out
    assert "3 problem(s) with sealed registered content" in out

    # an amendment naming two of the three paths leaves the third undeclared
    # (versions 2.x: after every amendment the study's spec already declares)
    amend(spec, "2.0", [f"/cells/{i_from}/rows", "/pools[pool-a]/words[contrastive]"], "amended")
    capsys.readouterr()
    assert run(project_copy, "compile") == 2
    assert f"at /cells/{i_to}/rows:" in capsys.readouterr().err
    assert run(project_copy, "check") == 1
    out = capsys.readouterr().out
    assert f"at /cells/{i_to}/rows:" in out
    assert f"at /cells/{i_from}/rows:" not in out and "/pools/0/words" not in out
    assert "1 problem(s) with sealed registered content" in out

    amend(spec, "2.1", [f"/cells[{moved_to}]/rows"])
    assert run(project_copy, "compile") == 0
    capsys.readouterr()
    assert run(project_copy, "check") == 0, capsys.readouterr().out


def test_editing_prose_alone_never_fails(project_copy, capsys):
    spec = project_copy / D17
    for study in ("d17-multifact", "s3-verifier-freeze", "jev-multicorrect"):
        assert run(project_copy, "seal", study) == 0
    original = spec.read_text()
    edit(spec, "title: D17-MF multi-fact reasoning probe", "title: The D17-MF probe")
    edit(spec, "title: Wording pool", "title: Pool of words")
    edit(
        spec,
        "{id: calls, value: 16000, unit: calls, description: Study call budget.}",
        "{id: calls, value: 16000, unit: calls, description: Calls.}",
    )
    edit(spec, "  Synthetic reachability items test", "  Synthetic items test")
    spec.write_text("# A new comment.\n" + spec.read_text())
    assert run(project_copy, "compile") == 0
    capsys.readouterr()
    assert run(project_copy, "check") == 0, capsys.readouterr().out
    old = project_copy / "old.yaml"
    old.write_text(original)
    assert main(["diff", str(old), str(spec)]) == 0
    out = capsys.readouterr().out
    assert "0 registered changes, 4 editorial changes" in out


def test_a_hand_edited_seal_fails_check(project_copy, capsys):
    assert run(project_copy, "seal", "jev-multicorrect") == 0
    target = project_copy / "spec/studies/jev-multicorrect.seal.json"
    seal = json.loads(target.read_bytes())
    seal["content"]["constants"][1]["value"] = 0.01
    target.write_bytes(rfc8785.dumps(seal) + b"\n")
    capsys.readouterr()
    assert run(project_copy, "check") == 1
    assert (
        "spec/studies/jev-multicorrect.seal.json: at /digest: the sealed content does not match "
        "its digest (the seal was edited by hand)"
    ) in capsys.readouterr().out


def test_a_seal_without_its_spec_fails_check(project_copy, capsys):
    assert run(project_copy, "seal", "jev-multicorrect") == 0
    target = project_copy / "spec/studies/jev-multicorrect.seal.json"
    seal = json.loads(target.read_bytes())
    seal["study"] = "gone"
    (project_copy / "spec/studies/gone.seal.json").write_bytes(rfc8785.dumps(seal) + b"\n")
    capsys.readouterr()
    assert run(project_copy, "check") == 1
    out = capsys.readouterr().out
    assert (
        "spec/studies/gone.seal.json: seals study 'gone' but spec/studies/gone.yaml does not exist"
    ) in out


def test_lowering_the_version_below_the_seal_fails(golden_copy, capsys):
    spec = golden_copy / EXAMPLE
    assert run(golden_copy, "seal", "example-probe") == 0
    text = spec.read_text().replace('version: "1.1"\n', 'version: "1.0"\n', 1)
    text = text.replace("\namendments:\n", "\n# amendments dropped\n")
    text = text[: text.index("# amendments dropped")]
    spec.write_text(text.replace("status: amended", "status: registered"))
    capsys.readouterr()
    assert run(golden_copy, "compile") == 2
    said = "at /version: version 1.0 is older than the sealed version 1.1"
    assert said in capsys.readouterr().err
    assert run(golden_copy, "check") == 1
    assert said in capsys.readouterr().out


def test_a_sealed_study_refuses_to_run_after_an_undeclared_registered_change(tmp_path, capsys):
    """The seal holds at run time: a study command refuses (located), not only `check`."""
    from tests.conftest import ROOT

    project = tmp_path / "ap"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    spec = project / "spec" / "studies" / "answer-position.yaml"
    edit(spec, "status: draft", "status: registered")
    assert run(project, "compile") == 0
    assert run(project, "seal", "answer-position") == 0
    items = tmp_path / "items.jsonl"
    assert run(project, "answer-position", "items", "--out", str(items)) == 0
    edit(spec, "margin: -0.05", "margin: -0.10")
    line = line_of(spec, "margin: -0.10")
    at = f"spec/studies/answer-position.yaml:{line}: at /hypotheses/2/contrasts/0/margin"
    capsys.readouterr()
    # compile refuses the change first (nothing written) ...
    assert run(project, "compile") == 2
    assert at in capsys.readouterr().err
    # ... and a study command refuses it too, with the generated code of the sealed spec
    out = tmp_path / "items2.jsonl"
    assert run(project, "answer-position", "items", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "spec changed since the last compile" in err
    assert not out.exists()
    # the seal holds at run time too: a seal altered after compiling stops every command
    edit(spec, "margin: -0.10", "margin: -0.05")
    assert run(project, "compile") == 0
    target = project / "spec/studies/answer-position.seal.json"
    original = target.read_bytes()
    sealed = json.loads(original)
    sealed["content"]["title"] = "Another title"
    target.write_bytes(rfc8785.dumps(sealed) + b"\n")
    capsys.readouterr()
    assert run(project, "answer-position", "items", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "spec/studies/answer-position.seal.json: at /digest: the sealed content does not" in err
    assert not out.exists()
    assert run(project, "compile") == 2  # and compile says the same before writing
    assert "the sealed content does not match its digest" in capsys.readouterr().err
    target.write_bytes(original)
    # Editing prose only never blocks a run.
    edit(spec, "title: Answer-position bias", "title: Answer position bias")
    assert run(project, "compile") == 0
    assert run(project, "answer-position", "items", "--out", str(out)) == 0
