"""Placeholders are plain names only: a crossing's cell-id template with {split.__class__}
(format-string attribute access, which compiled unexpanded into the generated code), {0},
{split!r} or a stray brace is refused at compile with its JSON path; so is a text format of
jev's diagnostic with an attribute, index or conversion."""

from __future__ import annotations

import shutil

import pytest

from prereg.cli import main
from prereg.engines.multicorrect.spec_checks import _formats
from tests.conftest import ROOT

D17 = ROOT / "spec" / "studies" / "d17-multifact.yaml"
TEMPLATE = '"{split}-{pool.id}_h{hops.id}_{outcome.id}_{layout.id}"'


@pytest.fixture
def project(tmp_path):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    shutil.copy(ROOT / "spec" / "prereg.linkml.yaml", tmp_path / "spec")
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    return tmp_path


@pytest.mark.parametrize(
    "template, shown",
    [
        ('"{split.__class__}-{pool.id}_h{hops.id}_{outcome.id}_{layout.id}"', "{split.__class__}"),
        ('"{split}-{pool.id}_h{hops.id}_{outcome.id}_{layout.id}{0}"', "{0}"),
        ('"{split}-{pool.id}_h{hops.id}_{outcome.id}_{layout.id}-{pool.id.x}"', "{pool.id.x}"),
        ('"{split}-{pool.id}_h{hops.id}_{outcome.id}_{layout.id}}"', "}"),
        ('"{split}-{pool.id}_h{hops.id}_{outcome.id}_{layout.id}{"', "{"),
    ],
)
def test_a_cell_id_placeholder_that_is_not_a_plain_name_is_refused(
    project, capsys, template, shown
):
    text = D17.read_text(encoding="utf-8")
    assert text.count(TEMPLATE) >= 1
    (project / "spec" / "studies" / "d17-multifact.yaml").write_text(
        text.replace(TEMPLATE, template, 1), encoding="utf-8"
    )
    rc = main(["--project", str(project), "compile", "d17-multifact"])
    err = capsys.readouterr().err
    assert rc != 0 and "Traceback" not in err
    assert (
        "/crossings/0/id" in err
        and f"{shown!r} in the cell id template is not a placeholder" in err
    ), err
    assert not (project / "generated" / "d17_multifact").exists()


@pytest.mark.parametrize(
    "text, ok",
    [
        ("diag-{seed}-{split}-{index}", True),
        ("diag-{seed:04d}", True),
        ("diag-{seed.__class__}", False),
        ("diag-{seed.real}", False),
        ("diag-{seed[0]}", False),
        ("diag-{seed!r}", False),
        ("diag-{seed:{index}}", False),
        ("diag-{other}", False),
        ("diag-{", False),
    ],
)
def test_a_jev_text_format_takes_plain_names_only(text, ok):
    assert _formats(text, ("seed", "split", "index")) is ok
