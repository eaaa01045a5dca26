"""Logs as an evaluation harness writes them (tests/fixtures/harness/gsm.yaml): one sample file
per model without a model key (`per_file`), a dozen keys per record of which the study reads
two (`other_fields: ignore`), the outcome written 1.0/0.0. The paired difference lands exactly
on its threshold (130 - 120 of 200 is 1/20: `ge 0.05` holds, `gt` fails) and McNemar's P is
the exact binomial tail summed by hand in fractions."""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from math import comb

import pytest

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "harness" / "gsm.yaml"
BOTH, UP, DOWN = 110, 20, 10  # solved by both, by tuned alone, by base alone (of 200)


def _samples() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"base": [], "tuned": []}
    for d in range(200):
        if d < BOTH:
            solved = {"base": 1, "tuned": 1}
        elif d < BOTH + UP:
            solved = {"base": 0, "tuned": 1}
        elif d < BOTH + UP + DOWN:
            solved = {"base": 1, "tuned": 0}
        else:
            solved = {"base": 0, "tuned": 0}
        for m, em in solved.items():
            out[m].append(
                {
                    "doc_id": d,
                    "doc": {"question": f"Q{d}?", "answer": "#### 7"},
                    "target": "7",
                    "arguments": {"gen_args_0": {"arg_0": f"Q{d}?", "arg_1": {"until": ["\n\n"]}}},
                    "resps": [["The answer is 7" if em else "The answer is 8"]],
                    "filtered_resps": ["7" if em else "8"],
                    "filter": "strict-match",
                    "metrics": ["exact_match"],
                    "doc_hash": hashlib.sha256(str(d).encode()).hexdigest(),
                    "prompt_hash": "p",
                    "target_hash": "t",
                    "exact_match": float(em),
                }
            )
    return out


def _project(root, text):
    (root / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    (root / "spec" / "studies" / "gsm.yaml").write_text(text)
    assert main(["--project", str(root), "compile", "--quiet"]) == 0


def _write(root) -> list[str]:
    obs = []
    for m, recs in _samples().items():
        path = root / f"samples_gsm8k_{m}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
        obs += ["--observations", f"{m}={path}"]
    return obs


def _score(root, obs, code=0):
    out = root / "SCORE.json"
    args = ["--project", str(root), "gsm", "score", *obs, "--out", str(out), "--quiet"]
    assert main(args) == code
    return json.loads(out.read_text()) if code == 0 else None


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_harness_logs_as_they_come(tmp_path, op, verdict):
    text = SPEC.read_text()
    old = "quantity: estimate, op: ge, value: 0.05"
    assert text.count(old) == 1
    _project(tmp_path, text.replace(old, old.replace("op: ge", f"op: {op}")))
    doc = _score(tmp_path, _write(tmp_path))
    (c,) = doc["contrasts"]
    assert c["estimate"] == 0.05  # (130 - 120) / 200, exactly 1/20
    tail = Fraction(sum(comb(UP + DOWN, k) for k in range(UP, UP + DOWN + 1)), 2 ** (UP + DOWN))
    assert c["p"] == float(tail)
    assert doc["verdicts"]["tuned-better"] == verdict


def test_without_other_fields_ignore_the_keys_are_refused(tmp_path, capsys):
    _project(tmp_path, SPEC.read_text().replace("    other_fields: ignore\n", ""))
    _score(tmp_path, _write(tmp_path), code=2)
    err = capsys.readouterr().err
    assert "samples_gsm8k_base.jsonl:1: at /: unexpected field" in err


def test_a_named_field_is_still_checked(tmp_path, capsys):
    """Ignoring the other keys leaves the contract's own fields checked: a missing doc_id and
    an exact_match of 0.5 are refused at their lines."""
    _project(tmp_path, SPEC.read_text())
    obs = _write(tmp_path)
    path = tmp_path / "samples_gsm8k_tuned.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    del first["doc_id"]
    third = json.loads(lines[2])
    third["exact_match"] = 0.5
    lines[0], lines[2] = json.dumps(first) + "\n", json.dumps(third) + "\n"
    path.write_text("".join(lines))
    _score(tmp_path, obs, code=2)
    err = capsys.readouterr().err
    assert "samples_gsm8k_tuned.jsonl:1: " in err and "doc_id" in err
    assert "samples_gsm8k_tuned.jsonl:3: at /exact_match" in err


def test_columns_of_a_csv_or_parquet_export_ignored(tmp_path):
    """The same samples exported as tables with other columns (pandas' index column among
    them, and a list column in Parquet) give the same figures."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _project(tmp_path, SPEC.read_text())
    whole = _score(tmp_path, _write(tmp_path))
    samples = _samples()
    base = tmp_path / "base.csv"
    base.write_text(
        ",doc_id,target,exact_match\n"
        + "".join(
            f"{i},{r['doc_id']},7,{r['exact_match']}\n" for i, r in enumerate(samples["base"])
        )
    )
    tuned = tmp_path / "tuned.parquet"
    recs = samples["tuned"]
    pq.write_table(
        pa.table(
            {
                "doc_id": [r["doc_id"] for r in recs],
                "exact_match": [r["exact_match"] for r in recs],
                "filtered_resps": [r["filtered_resps"] for r in recs],
                "filter": [r["filter"] for r in recs],
            }
        ),
        tuned,
    )
    (tmp_path / "SCORE.json").unlink()
    (tmp_path / "SCORE.md").unlink()
    doc = _score(tmp_path, ["--observations", f"base={base}", "--observations", f"tuned={tuned}"])
    assert doc["contrasts"] == whole["contrasts"] and doc["verdicts"] == whole["verdicts"]


def test_other_fields_takes_two_words(tmp_path, capsys):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = SPEC.read_text().replace("other_fields: ignore", "other_fields: skip")
    (tmp_path / "spec" / "studies" / "gsm.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "other_fields" in err and "skip" in err
