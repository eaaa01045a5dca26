"""The score command: REPORT.json on a hand-computed fixture, and every refusal with FILE:LINE."""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from jev_helpers import CONSTANTS, FIXTURES, context

from prereg.digest import canonical_json
from prereg.engines.multicorrect import COMMANDS
from prereg.errors import UserError
from prereg.outputs import camel

SMALL = FIXTURES / "small"
DIGEST = "sha256:" + "ab" * 32
CTX = context(digest=DIGEST)


def _args(d: Path, out: Path, binary=True, rounding=None):
    return argparse.Namespace(
        lists=str(d / "lists.jsonl"),
        labels=str(d / "labels.jsonl"),
        predictions=str(d / "predictions.jsonl"),
        binary_outputs=str(d / "binary.jsonl") if binary else None,
        rounding_decimals=rounding,
        out=str(out),
    )


def _run(d: Path, out: Path, **kw) -> dict:
    assert COMMANDS["score"](CTX, _args(d, out, **kw)) == 0
    data = out.read_bytes()
    doc = json.loads(data)
    assert data == canonical_json(doc) + b"\n"  # canonical JSON plus newline
    assert gc.isenabled()
    return doc


# Hand computation (see tests/fixtures/jev/small): validation lists are exact for t in
# v1 (0.3, 0.6], v2 (0.2, 0.7], v3 never (refusal), v4 (0.1, 0.2]: the best count 2 first
# reached at 0.31.
VALIDATION = {
    "threshold": 0.31,
    "lists": 4,
    "answered": 3,
    "exact_count": 2,
    "exact_set_accuracy": 0.5,
    "tp": 3,
    "fp": 0,
    "fn": 2,
    "micro_precision": 1.0,
    "micro_recall": 0.6,
    "micro_f1": 0.75,
    "gap_mean": 20.0,  # v4: 100·(0.4 − 0.2)
    "gap_count": 1,
    "below_uniform_share": 2 / 3,  # v4: 0.3 and 0.2 < 1/3
    "below_uniform_count": 2,
    "below_uniform_options": 3,
    "below_uniform_lists": 1,
    "no_correct_mean_max": None,
    "no_correct_max": None,
    "no_correct_count": 0,
    "refusals": 1,
    "refusals_empty_correct": 1,
    "refusals_nonempty_correct": 0,
    "top_k_exact_share": 1.0,
    "top_k_exact_count": 1,
    "multi_correct_lists": 1,
}
TEST = {
    "threshold": 0.31,
    "lists": 3,
    "answered": 2,
    "exact_count": 0,
    "exact_set_accuracy": 0.0,
    "tp": 1,  # t1 selects {0}
    "fp": 1,  # t2 selects {0} with G empty
    "fn": 3,  # t1 misses 1; refusal t3 adds |G| = 2
    "micro_precision": 0.5,
    "micro_recall": 0.25,
    "micro_f1": 1 / 3,
    "gap_mean": 60.0,
    "gap_count": 1,
    "below_uniform_share": 0.5,
    "below_uniform_count": 1,
    "below_uniform_options": 2,
    "below_uniform_lists": 1,
    "no_correct_mean_max": 0.5,
    "no_correct_max": 0.5,
    "no_correct_count": 1,
    "refusals": 1,
    "refusals_empty_correct": 0,
    "refusals_nonempty_correct": 1,
    "top_k_exact_share": 1.0,
    "top_k_exact_count": 1,
    "multi_correct_lists": 1,
}
# bins: 0.1 -> [0, 0.1]; 0.15, 0.2 -> (0.1, 0.2]; 0.9 -> (0.8, 0.9]; 0.95 -> (0.9, 1]
ECE = (0.9 + 2 * 0.175 + 0.1 + 0.05) / 5  # 0.28
ECE_EXCL = (2 * 0.175 + 0.1 + 0.05) / 4  # 0.125


def _approx(expected: dict):
    """``expected`` (written with the engine's Python names) as REPORT.json spells it."""
    return {
        camel(k): (pytest.approx(v, abs=1e-12) if isinstance(v, float) else v)
        for k, v in expected.items()
    }


def test_report_matches_hand_computation(tmp_path):
    doc = _run(SMALL, tmp_path / "REPORT.json")
    assert doc["specDigest"] == DIGEST and doc["studyId"] == "jev-multicorrect"
    assert doc["schemaVersion"] == CONSTANTS["output-schemas"]["report"]
    assert doc["threshold"] == 0.31
    assert (doc["thresholdNumerator"], doc["thresholdDenominator"]) == (31, 100)
    assert doc["roundingDecimals"] is None
    assert doc["splits"]["validation"] == _approx(VALIDATION)
    assert doc["splits"]["test"] == _approx(TEST)
    assert doc["ece"] == pytest.approx(ECE, abs=1e-12)
    assert doc["eceExcludingFirstBin"] == pytest.approx(ECE_EXCL, abs=1e-12)
    assert doc["binaryOutputs"] == 5
    curve = doc["fitCurve"]
    assert [p["threshold"] for p in curve] == [k / 100 for k in range(101)]
    assert [p["exactCount"] for p in curve].index(2) == 31
    assert curve[31]["exactSetAccuracy"] == 0.5
    retro = doc["retrospectiveCurve"]
    assert retro["diagnosticOnly"] is True and retro["splits"] == ["validation", "test"]
    assert len(retro["points"]) == 101
    # pooled at 0.2: v4 and t1 are exact; v2 is not, its distractor at 0.2 being selected
    assert retro["points"][20]["exactCount"] == 2
    assert retro["points"][21]["exactCount"] == 1  # v2 in; v4 and t1 out; v1 not yet
    assert retro["points"][31]["exactCount"] == 2  # v1 and v2
    for name in ("lists", "labels", "predictions", "binary_outputs"):
        path = SMALL / f"{'binary' if name == 'binary_outputs' else name}.jsonl"
        data = path.read_bytes()
        assert doc["inputs"][camel(name)] == {
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        }


def test_rounded_report(tmp_path):
    doc = _run(SMALL, tmp_path / "R.json", rounding=2)
    assert doc["roundingDecimals"] == 2
    assert doc["splits"]["validation"]["belowUniformShare"] == 0.67
    assert doc["splits"]["test"]["microF1"] == 0.33
    assert doc["splits"]["test"]["gapMean"] == 60.0
    assert doc["ece"] == 0.28
    assert doc["eceExcludingFirstBin"] == 0.13  # 0.125 rounds half up
    assert doc["threshold"] == 0.31 and doc["splits"]["test"]["tp"] == 1


def test_without_binary_outputs_no_ece(tmp_path):
    doc = _run(SMALL, tmp_path / "R.json", binary=False)
    assert "ece" not in doc and "ece_excluding_first_bin" not in doc
    assert "binary_outputs" not in doc["inputs"]


def test_same_inputs_give_the_same_bytes(tmp_path):
    _run(SMALL, tmp_path / "a.json")
    _run(SMALL, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_existing_output_is_never_overwritten(tmp_path):
    out = tmp_path / "R.json"
    out.write_text("keep")
    with pytest.raises(UserError, match="already exists"):
        COMMANDS["score"](CTX, _args(SMALL, out))
    assert out.read_text() == "keep"
    # a folder that does not exist yet is created for the output
    COMMANDS["score"](CTX, _args(SMALL, tmp_path / "nowhere" / "R.json"))
    assert (tmp_path / "nowhere" / "R.json").is_file()


def test_bad_rounding_is_refused(tmp_path):
    with pytest.raises(UserError, match="rounding_decimals"):
        COMMANDS["score"](CTX, _args(SMALL, tmp_path / "R.json", rounding=-2))


# -- refusals --------------------------------------------------------------------------------


def _edit(tmp_path: Path, name: str, line: int | None, text: str | None, append: str | None = None):
    """Copy the small fixture and replace line ``line`` (1-based) of ``name`` by ``text``
    (None: delete it), or append ``append``."""
    d = tmp_path / "in"
    shutil.copytree(SMALL, d)
    p = d / name
    lines = p.read_text(encoding="utf-8").splitlines(keepends=True)
    if line is not None:
        if text is None:
            del lines[line - 1]
        else:
            lines[line - 1] = text + "\n"
    if append is not None:
        lines.append(append + "\n")
    p.write_text("".join(lines), encoding="utf-8")
    return d


def _problems(d: Path, tmp_path: Path) -> list[str]:
    out = tmp_path / "R.json"
    with pytest.raises(UserError) as e:
        COMMANDS["score"](CTX, _args(d, out))
    assert not out.exists()  # never a partial output
    assert gc.isenabled()  # the reader's pause of the collector is undone
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".R.json")]
    return e.value.problems or [e.value.message]


CASES = [
    # (file, line, replacement, expected FILE:LINE, expected text)
    (
        "labels.jsonl",
        5,
        '{"request_id": "v1", "split": "test", "correct": [0]}',
        "labels.jsonl:5",
        "splits must not overlap",
    ),
    (
        "predictions.jsonl",
        1,
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.4]}',
        "predictions.jsonl:1",
        "not aligned with the 3 candidates of",
    ),
    (
        "predictions.jsonl",
        1,
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.4, 1e999]}',
        "predictions.jsonl:1",
        "number 1e999 overflows a double",
    ),
    (
        "predictions.jsonl",
        2,
        '{"request_id": "v2", "refused": false, "probabilities": [0.6, 0.4, NaN]}',
        "predictions.jsonl:2",
        "NaN is not a JSON value",
    ),
    (
        "predictions.jsonl",
        2,
        '{"request_id": "v2", "refused": false, "probabilities": [1.5, -0.5, 0]}',
        "predictions.jsonl:2",
        "outside [0, 1]",
    ),
    (
        "predictions.jsonl",
        2,
        '{"request_id": "v2", "refused": false, "probabilities": [0.5, 0.3, 0.1]}',
        "predictions.jsonl:2",
        "not 1 within 1e-06",
    ),
    (
        "predictions.jsonl",
        2,
        '{"request_id": "zz", "refused": false, "probabilities": [0.5, 0.5]}',
        "predictions.jsonl:2",
        "'zz' is not in",
    ),
    (
        "labels.jsonl",
        2,
        '{"request_id": "v2", "split": "validation", "correct": [3]}',
        "labels.jsonl:2",
        "index 3 is out of range for 3 candidates",
    ),
    (
        "labels.jsonl",
        2,
        '{"request_id": "v2", "split": "validation", "split": "test", "correct": [0]}',
        "labels.jsonl:2",
        "duplicate key 'split'",
    ),
    (
        "labels.jsonl",
        2,
        '{"request_id": "v2", "split": "train", "correct": [0]}',
        "labels.jsonl:2",
        "'train' is not a split",
    ),
    (
        "labels.jsonl",
        2,
        '{"request_id": "v2", "split": "validation", "correct": [0, 0]}',
        "labels.jsonl:2",
        "listed twice",
    ),
    (
        "labels.jsonl",
        2,
        '{"request_id": "v2", "split": "validation", "correct": [true]}',
        "labels.jsonl:2",
        "integer indices",
    ),
    (
        "lists.jsonl",
        3,
        '{"request_id": "v3", "question": "q", "candidates": ["only one"]}',
        "lists.jsonl:3",
        "1 candidates, outside [2, 255]",
    ),
    (
        "lists.jsonl",
        3,
        '{"request_id": "v3", "question": "q", "candidates": ["a", "b"], "correct": [0]}',
        "lists.jsonl:3",
        "correct: unknown field",
    ),
    (
        "lists.jsonl",
        3,
        '{"request_id": "v3", "candidates": ["a", "b"]}',
        "lists.jsonl:3",
        "question: missing field",
    ),
    ("lists.jsonl", 3, '{"request_id": "v3", ', "lists.jsonl:3", "invalid JSON"),
    ("lists.jsonl", 3, "[1, 2]", "lists.jsonl:3", "expected a JSON object"),
    ("lists.jsonl", 3, "", "lists.jsonl:3", "empty line"),
    (
        "predictions.jsonl",
        3,
        '{"request_id": "v3", "refused": true, "probabilities": [0.5, 0.5]}',
        "predictions.jsonl:3",
        "a refusal must have null here",
    ),
    (
        "predictions.jsonl",
        3,
        '{"request_id": "v3", "refused": "no", "probabilities": null}',
        "predictions.jsonl:3",
        "expected true or false",
    ),
    (
        "predictions.jsonl",
        3,
        '{"request_id": "v3", "refused": false, "probabilities": [0.5, "0.5"]}',
        "predictions.jsonl:3",
        "expected a list of numbers",
    ),
    (
        "binary.jsonl",
        1,
        '{"request_id": "v1", "candidate_index": 0, "probability": 0.1, "label": 0}',
        "binary.jsonl:1",
        "label: 0 disagrees with the correct set",
    ),
    (
        "binary.jsonl",
        1,
        '{"request_id": "v1", "candidate_index": 7, "probability": 0.1, "label": 1}',
        "binary.jsonl:1",
        "7 is out of range",
    ),
    (
        "binary.jsonl",
        1,
        '{"request_id": "nope", "candidate_index": 0, "probability": 0.1, "label": 1}',
        "binary.jsonl:1",
        "'nope' is not in",
    ),
    (
        "binary.jsonl",
        2,
        '{"request_id": "v1", "candidate_index": 0, "probability": 0.1, "label": 1}',
        "binary.jsonl:2",
        "repeats line 1",
    ),
    (
        "binary.jsonl",
        2,
        '{"request_id": "v1", "candidate_index": 1, "probability": 1.01, "label": 0}',
        "binary.jsonl:2",
        "not a finite number in [0, 1]",
    ),
]


@pytest.mark.parametrize("name, line, text, where, what", CASES)
def test_each_problem_is_reported_with_file_and_line(tmp_path, name, line, text, where, what):
    d = _edit(tmp_path, name, line, text)
    problems = _problems(d, tmp_path)
    hits = [p for p in problems if p.startswith(str(d / where) + ":") and what in p]
    assert hits, problems


def test_missing_rows_are_reported_at_the_list_line(tmp_path):
    d = _edit(tmp_path, "predictions.jsonl", 2, None)  # v2 has no prediction
    problems = _problems(d, tmp_path)
    assert problems == [f"{d / 'lists.jsonl'}:2: request 'v2': no row in {d / 'predictions.jsonl'}"]
    d2 = tmp_path / "x"
    d2.mkdir()
    d3 = _edit(d2, "labels.jsonl", 4, None)
    assert _problems(d3, d2) == [
        f"{d3 / 'lists.jsonl'}:4: request 'v4': no row in {d3 / 'labels.jsonl'}"
    ]


def test_duplicate_request_ids_are_reported(tmp_path):
    d = _edit(
        tmp_path,
        "lists.jsonl",
        None,
        None,
        append='{"request_id": "v1", "question": "q", "candidates": ["a", "b"]}',
    )
    problems = _problems(d, tmp_path)
    assert problems == [f"{d / 'lists.jsonl'}:8: request_id: 'v1' appears more than once"]


def test_all_problems_are_reported_together_in_file_order(tmp_path):
    d = _edit(
        tmp_path,
        "predictions.jsonl",
        1,
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.4]}',
    )
    lab = (d / "labels.jsonl").read_text().replace('"correct": [0, 1, 2]', '"correct": [9]')
    (d / "labels.jsonl").write_text(lab)
    problems = _problems(d, tmp_path)
    assert len(problems) == 2
    assert problems[0].startswith(f"{d / 'labels.jsonl'}:4:")
    assert problems[1].startswith(f"{d / 'predictions.jsonl'}:1:")


def test_a_split_with_no_lists_is_refused(tmp_path):
    d = tmp_path / "in"
    shutil.copytree(SMALL, d)
    for name in ("lists.jsonl", "labels.jsonl", "predictions.jsonl", "binary.jsonl"):
        p = d / name
        p.write_text("".join(x for x in p.read_text().splitlines(True) if '"t' not in x))
    with pytest.raises(UserError, match="no row has split 'test'"):
        COMMANDS["score"](CTX, _args(d, tmp_path / "R.json"))


def test_unreadable_and_malformed_files(tmp_path):
    d = tmp_path / "in"
    shutil.copytree(SMALL, d)
    (d / "predictions.jsonl").unlink()
    (d / "labels.jsonl").write_bytes(b'\xff{"request_id": "v1"}\n')
    problems = _problems(d, tmp_path)
    assert any("labels.jsonl:1: not valid UTF-8" in p for p in problems)
    assert any("predictions.jsonl: cannot read the file" in p for p in problems)


EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "jev"


def test_the_bundled_example_is_what_its_script_makes(tmp_path):
    spec = importlib.util.spec_from_file_location("jev_make_sample", EXAMPLE / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make(tmp_path)
    for name in ("lists.jsonl", "labels.jsonl", "predictions.jsonl", "binary.jsonl"):
        assert (tmp_path / name).read_bytes() == (EXAMPLE / name).read_bytes(), name


def test_the_bundled_example_scores(tmp_path):
    ex = EXAMPLE
    args = argparse.Namespace(
        lists=str(ex / "lists.jsonl"),
        labels=str(ex / "labels.jsonl"),
        predictions=str(ex / "predictions.jsonl"),
        binary_outputs=str(ex / "binary.jsonl"),
        rounding_decimals=2,
        out=str(tmp_path / "R.json"),
    )
    assert COMMANDS["score"](CTX, args) == 0
    doc = json.loads((tmp_path / "R.json").read_text())
    assert doc["splits"]["validation"]["lists"] + doc["splits"]["test"]["lists"] == 320
    assert doc["splits"]["validation"]["exactCount"] == max(
        p["exactCount"] for p in doc["fitCurve"]
    )


@pytest.mark.parametrize("lists", ["missing", "empty"])
def test_unusable_lists_give_one_problem_not_one_per_line(tmp_path, capsys, lists):
    """A missing or empty lists file is one problem; the other files' records are not each
    reported as 'not in' it."""
    from prereg.cli import main
    from tests.conftest import ROOT

    ex = ROOT / "examples" / "jev"
    path = tmp_path / "lists.jsonl"
    if lists == "empty":
        path.write_text("")
    code = main(
        [
            "jev-multicorrect",
            "score",
            "--lists",
            str(path),
            "--labels",
            str(ex / "labels.jsonl"),
            "--predictions",
            str(ex / "predictions.jsonl"),
            "--out",
            str(tmp_path / "REPORT.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "1 problem(s)" in err and "is not in" not in err
    assert not (tmp_path / "REPORT.json").exists()
