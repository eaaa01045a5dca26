"""prereg <study> diagnose end to end: the same bytes from one process, two worker processes
and a Dask cluster; a document that matches the shipped schema; the refusals."""

from __future__ import annotations

import json
import re
import shutil
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from prereg.cli import main
from prereg.diagnose.design import Design, refuse_unmodelled
from prereg.errors import UserError
from tests.conftest import ROOT
from tests.diagnose.helpers import AP, D17, compile_example

ARGS = ("--simulations", "300", "--seed", "3", "--scenario", "position-bias")


@pytest.fixture(scope="module")
def ap(tmp_path_factory) -> Path:
    return compile_example(tmp_path_factory.mktemp("ap"))


def diagnose(project: Path, out: Path, *extra) -> int:
    return main(["--project", str(project), AP, "diagnose", *ARGS, "--out", str(out), *extra])


def shipped_schema() -> dict:
    text = resources.files("prereg.diagnose").joinpath("diagnose.schema.json").read_text()
    return json.loads(text)


@pytest.fixture(scope="module")
def one(ap, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("one") / "DIAGNOSE.json"
    assert diagnose(ap, out) == 0
    return out


def test_same_bytes_with_two_worker_processes(ap, one, tmp_path):
    out = tmp_path / "DIAGNOSE.json"
    assert diagnose(ap, out, "--workers", "2") == 0
    assert out.read_bytes() == one.read_bytes()
    assert out.with_suffix(".md").read_bytes() == one.with_suffix(".md").read_bytes()


def test_same_bytes_on_a_dask_cluster(ap, one, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        out = tmp_path / "DIAGNOSE.json"
        assert diagnose(ap, out, "--scheduler", cluster.scheduler_address) == 0
    assert out.read_bytes() == one.read_bytes()


def test_the_document_matches_the_shipped_schema(one):
    doc = json.loads(one.read_text())
    jsonschema.Draft202012Validator(shipped_schema()).validate(doc)
    assert doc["schemaVersion"] == "prereg-diagnose/v1"
    assert doc["requested"] == ["position-bias"]
    # the claims' scenarios run too: h1-power needs position-effect at 0.16, and no-bias
    assert [(c["scenario"], c["effect"]) for c in doc["conditions"]] == [
        ("position-bias", None),
        ("position-effect", 0.16),
        ("no-bias", None),
    ]
    assert {c["id"]: c["method"] for c in doc["claims"]} == {
        "cell-half-width": "closed form",
        "a-vs-d-power": "exact",
        "h1-power": "simulation",
        "h1-false-positives": "simulation",
    }
    bad = dict(doc, simulations=0)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(shipped_schema()).validate(bad)


def test_a_family_gives_a_power_curve(ap, tmp_path):
    out = tmp_path / "D.json"
    rc = main(
        ["--project", str(ap), AP, "diagnose", "--simulations", "250", "--seed", "1",
         "--scenario", "position-effect", "--out", str(out)]
    )  # fmt: skip
    assert rc == 0
    doc = json.loads(out.read_text())
    (fam,) = doc["families"]
    h1 = next(c for c in fam["curves"] if c["hypothesis"] == "h1")
    shares = [p["share"] for p in h1["points"]]
    assert [p["effect"] for p in h1["points"]] == [0, 0.04, 0.08, 0.1, 0.12, 0.16, 0.2]
    assert shares[0] < 0.05 < 0.9 < shares[-1]
    assert 0.08 < h1["detectable"] < 0.2
    # a reported-only hypothesis has no rule and so no power: no curve (its share was 1 at
    # every effect, and DIAGNOSE.md called 0 its detectable effect)
    reported = [h for h in ("accuracy-a",) if h in {c["hypothesis"] for c in fam["curves"]}]
    assert reported == [] and len(fam["curves"]) == 3
    assert "accuracy-a (reported-only)" not in (tmp_path / "D.md").read_text()


def test_refusals(ap, tmp_path, capsys):
    out = tmp_path / "D.json"
    rc = main(["--project", str(ap), AP, "diagnose", "--simulations", "10", "--seed", "1",
               "--scenario", "nope", "--out", str(out)])  # fmt: skip
    assert rc == 2 and "unknown scenario 'nope'" in capsys.readouterr().err
    rc = main(["--project", str(ap), AP, "diagnose", "--simulations", "0", "--seed", "1",
               "--out", str(out)])  # fmt: skip
    assert rc == 2 and "--simulations" in capsys.readouterr().err
    rc = main(["--project", str(ap), AP, "diagnose", *ARGS, "--workers", "0", "--out", str(out)])
    assert rc == 2 and "--workers" in capsys.readouterr().err
    assert not out.exists()


def test_d17_reports_failing_claims(tmp_path, capsys):
    out = tmp_path / "D.json"
    rc = main(["--project", str(ROOT), D17, "diagnose", "--simulations", "250", "--seed", "2",
               "--scenario", "d17-finding", "--out", str(out)])  # fmt: skip
    assert rc == 0
    printed = capsys.readouterr().out
    assert "claim key-contrast-power: 0.7846 (exact): FAILS" in printed
    doc = json.loads(out.read_text())
    jsonschema.Draft202012Validator(shipped_schema()).validate(doc)
    holds = {c["id"]: c["holds"] for c in doc["claims"]}
    assert holds["key-cell-half-width"] and not holds["h1-power-at-013"]
    finding = doc["conditions"][0]
    verdicts = {h["id"]: h["verdicts"][0] for h in finding["hypotheses"]}
    assert verdicts["h1"]["share"] == 1.0 and verdicts["replication"]["share"] > 0.99
    md = out.with_suffix(".md").read_text()
    assert "Sizing claims" in md
    # a power claim is a conditional probability: its bar is kept (escaped for the table, as
    # PREREG.md writes it), not turned into a slash that reads as a division
    row = next(line for line in md.splitlines() if line.startswith("| `h1-power-at-013`"))
    assert row.startswith(
        "| `h1-power-at-013`: P(h1 supported \\| scenario `pool-c-contrastive-shift` at effect"
        " 0.13) ≥ 0.8 | "
    )
    # four cells: claim, figure, method, holds (an unescaped bar would make a fifth)
    assert len(re.split(r"(?<!\\)\|", row.strip("|"))) == 4, row
    assert "supported / scenario" not in md


def test_rules_reading_an_unmodelled_metric_are_refused():
    from types import SimpleNamespace

    from prereg.rules import Gate

    design = Design(
        cells=({"id": "c", "split": "test", "rows": 1, "levels": {}},),
        group_cell=np.zeros(1, dtype=np.int64),
        group_attributes={},
        group_rows=np.ones(1, dtype=np.int64),
        contributions={},
        unmodelled=frozenset({"calibrated"}),
    )
    rules = SimpleNamespace(
        ESTIMATES=(),
        CONTRASTS=(),
        GATES=(Gate("g", "calibrated", {}, "ge", 0.5, "insufficient"),),
    )
    with pytest.raises(UserError, match="does not determine"):
        refuse_unmodelled(design, rules)


@pytest.mark.parametrize("workers", [1, 2])
def test_fixed_sequence_testing_is_simulated(tmp_path, workers):
    """answer-position with h2 registered as tested only after h1 is supported: in every
    simulated study where h1 is not supported and no gate failed, h2 is not tested, so it is
    never supported without h1 (diagnose used to drop the sequence and test h2 regardless)."""
    from tests.engines.factorial.examples import run

    root = tmp_path / "p"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", root / "spec")
    spec = root / "spec" / "studies" / "answer-position.yaml"
    text = spec.read_text(encoding="utf-8")
    assert text.count("\n  - id: h2\n") == 1
    spec.write_text(
        text.replace("\n  - id: h2\n", "\n  - id: h2\n    tested_after: [h1]\n"), encoding="utf-8"
    )
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--simulations", 40, "--seed", 3, "--workers", workers, "--out", out]
    assert run(root, "answer-position", "diagnose", *args) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    seen_not_tested = 0
    for cond in doc["conditions"]:
        hyps = {
            h["id"]: {v["verdict"]: v["count"] for v in h["verdicts"]} for h in cond["hypotheses"]
        }
        h1, h2 = hyps["h1"], hyps["h2"]
        assert "not-tested" in h2
        assert h2.get("supported", 0) <= h1.get("supported", 0)
        seen_not_tested += h2["not-tested"]
    assert seen_not_tested > 0


def test_diagnose_md_writes_a_claim_as_a_conditional_probability(one):
    """DIAGNOSE.md's table of claims shows P(h1 supported | scenario ...) with its bar (escaped
    for the table, as PREREG.md escapes it), not a slash that reads as a division; rendered,
    the cell holds the bar and the table keeps its four columns."""
    from prereg.reports.markdown import render

    text = one.with_suffix(".md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `h1-power`"))
    assert "P(h1 supported \\| scenario `position-effect` at effect 0.16)" in row
    assert "supported / scenario" not in text
    html = render(text)
    assert "<td><code>h1-<wbr>power</code>: P(h1 supported | scenario <code>position-" in html
    head = next(line for line in text.splitlines() if line.startswith("| claim |"))
    assert head.count("|") == 5 and row.replace("\\|", "").count("|") == 5
