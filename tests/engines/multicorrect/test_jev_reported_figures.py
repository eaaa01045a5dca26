"""The jev report shows what the source document says is reported.

The source (in Chinese) reports, beside exact-set accuracy and pooled micro P/R/F1, "the
largest probability of lists with no correct option and the number of refusals"
(无正确项列表的最大概率及拒答数); the study page adds the no-correct mean with its count and
refusals split by an empty or non-empty correct set, and says nothing is rounded unless
`rounding_decimals` is asked for. The expected figures are worked out by hand from the tiny
data set written here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.reports import Step, build_report, study_info
from prereg.reports.page import render_markdown
from tests.conftest import ROOT

STUDY = "jev-multicorrect"
# (request id, split, correct set, probabilities or None for a refusal)
ROWS = [
    ("v1", "validation", [0], [0.5, 0.25, 0.25]),
    ("v2", "validation", [], [0.5, 0.25, 0.25]),  # no correct option, largest p 0.5
    ("v3", "validation", [], None),  # refused, empty G
    ("t1", "test", [0, 1], [0.5, 0.25, 0.25]),
    ("t2", "test", [], [0.25, 0.25, 0.5]),  # no correct option, largest p 0.5
    ("t3", "test", [], [0.75, 0.125, 0.125]),  # no correct option, largest p 0.75
    ("t4", "test", [1], None),  # refused, non-empty G
    ("t5", "test", [], None),  # refused, empty G
]


def _write(folder: Path) -> dict[str, Path]:
    files = {k: folder / f"{k}.jsonl" for k in ("lists", "labels", "predictions")}
    with files["lists"].open("w") as lists, files["labels"].open("w") as labels:
        with files["predictions"].open("w") as preds:
            for rid, split, correct, p in ROWS:
                cands = ["A", "B", "C"]
                lists.write(json.dumps({"request_id": rid, "question": "q", "candidates": cands}))
                labels.write(json.dumps({"request_id": rid, "split": split, "correct": correct}))
                preds.write(
                    json.dumps({"request_id": rid, "refused": p is None, "probabilities": p})
                )
                for f in (lists, labels, preds):
                    f.write("\n")
    return files


def test_the_split_table_shows_no_correct_maxima_and_refusals_by_correct_set(tmp_path):
    files = _write(tmp_path)
    out = tmp_path / "REPORT.json"
    args = ["jev-multicorrect", "score"]
    for k, path in files.items():
        args += [f"--{k}", str(path)]
    args += ["--out", str(out)]
    assert main(["--project", str(ROOT), *args]) == 0
    info = study_info(Project(ROOT), STUDY)
    md = render_markdown(
        build_report(info, tmp_path, [Step("score", "score", args, args, 0, True)])
    )

    def row(label: str) -> list[str]:
        line = next(x for x in md.splitlines() if x.startswith(f"| {label} |"))
        return [c.strip() for c in line.strip("|").split("|")]

    # validation: v3 refused with G empty; test: t4 refused with G = {1}, t5 with G empty
    assert row("refusals")[2:4] == ["1", "2"]
    assert row("refusals of lists with no correct option")[2:4] == ["1", "1"]
    assert row("refusals of lists with a correct option")[2:4] == ["0", "1"]
    # answered lists with G empty: v2 (largest p 0.5); t2 (0.5) and t3 (0.75)
    assert row("answered lists with no correct option")[2:4] == ["1", "2"]
    assert row("no-correct confidence")[2:4] == ["0.5", "0.625"]
    assert row("no-correct confidence, highest")[2:4] == ["0.5", "0.75"]
    # no --rounding-decimals: the report says nothing was rounded
    assert re.search(r"rounding\**: none: figures as computed", md)
    assert "half up to None" not in md


def test_prereg_md_defines_every_figure_the_source_reports():
    """The source's list (exact-set accuracy, pooled micro precision/recall/F1, the share below
    the uniform probability under the strict ranking condition, the largest probability of
    lists with no correct option, refusals) each has a registered definition in PREREG.md."""
    from prereg.compiler.build import load_all, render_prereg_md

    (jev,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    text = render_prereg_md(jev)
    metrics = text[text.index("### Metrics") :]
    metrics = metrics[: metrics.index("\n#")]
    for mid in ("exact-set-accuracy", "micro-precision", "micro-recall", "micro-f1",
                "below-uniform-share", "no-correct-confidence", "refusals"):  # fmt: skip
        assert f"| `{mid}` |" in metrics, mid
    row = next(x for x in metrics.splitlines() if x.startswith("| `no-correct-confidence` |"))
    assert "the mean and the maximum of max_j p_j" in row
    row = next(x for x in metrics.splitlines() if x.startswith("| `below-uniform-share` |"))
    assert "strictly above every distractor" in row and "p_j &lt; 1/\\|G\\|" in row
    assert "not rounded unless rounding is asked for" in text
