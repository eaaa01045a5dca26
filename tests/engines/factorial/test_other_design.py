"""A second factorial design runs from its spec alone: rows placed by the observations (no
item manifest), a derived field comparing two fields, a proportion over a subset, first-success
attempts behind a scored-attempt filter, a one-sided test, Clopper-Pearson intervals; figures
and verdicts against an independent computation."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportions_ztest,
)

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "factorial" / "verifier-agreement.yaml"
STUDY = "verifier-agreement"
VERIFIERS = {"strict": 0.9, "lenient": 0.75, "llm": 0.7}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("verifier")
    (root / "spec" / "studies").mkdir(parents=True)
    shutil.copy(SPEC, root / "spec" / "studies" / f"{STUDY}.yaml")
    assert main(["--project", str(root), "compile"]) == 0
    return root


def judgements(seed: int, observed_share: float = 0.9) -> list[dict]:
    """Hand-made judgements: some tasks never judged, warm-up attempts, failed tries."""
    rng = random.Random(seed)
    out = []
    for verifier, p_agree in VERIFIERS.items():
        for language in ("python", "rust"):
            for n in range(40):
                task = f"{verifier}-{language}-{n}"
                if rng.random() > observed_share:
                    continue
                expected = rng.choice(["pass", "fail"])
                base = {
                    "taskId": task,
                    "verifier": verifier,
                    "language": language,
                    "expected": expected,
                }
                out.append({**base, "mode": "warmup", "verdict": expected, "try": 1})
                t = 1
                while rng.random() < 0.2:  # failed tries before the first success
                    out.append({**base, "mode": "graded", "verdict": None, "try": t})
                    t += 1
                agree = rng.random() < p_agree
                other = "fail" if expected == "pass" else "pass"
                out.append(
                    {**base, "mode": "graded", "verdict": expected if agree else other, "try": t}
                )
                # A later graded try never counts under first-success.
                out.append({**base, "mode": "graded", "verdict": other, "try": t + 1})
    rng.shuffle(out)
    return out


def counted(records):
    rows = {}
    for r in sorted(records, key=lambda r: r["try"]):
        if r["mode"] != "graded" or r["verdict"] is None:
            continue
        rows.setdefault(r["taskId"], r)
    return rows


def test_scores_match_an_independent_computation(project):
    obs = project / "judgements.jsonl"
    records = judgements(5)
    obs.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = project / "SCORE.json"
    assert (
        main(
            [
                "--project",
                str(project),
                STUDY,
                "score",
                "--observations",
                str(obs),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    rows = counted(records)
    assert doc["rows"] == {"registered": 240, "observed": len(rows)}
    for cell in doc["cells"]:
        v, lang = cell["levels"]["verifier"], cell["levels"]["language"]
        mine = [r for r in rows.values() if r["verifier"] == v and r["language"] == lang]
        k = sum(r["verdict"] == r["expected"] for r in mine)
        got = cell["metrics"]["agreement"]
        assert (got["k"], got["n"]) == (k, len(mine))
        lo, hi = proportion_confint(k, len(mine), alpha=0.05, method="beta")
        assert got["lower"] == pytest.approx(lo, abs=6e-5) and got["upper"] == pytest.approx(
            hi, abs=6e-5
        )
        assert cell["metrics"]["coverage"]["estimate"] == pytest.approx(len(mine) / 40, abs=6e-5)
        failing = [r for r in mine if r["expected"] == "fail"]
        fp = cell["metrics"]["false-pass"]
        assert (fp["k"], fp["n"]) == (sum(r["verdict"] == "pass" for r in failing), len(failing))
    ps = {}
    for lang in ("python", "rust"):
        c = next(x for x in doc["contrasts"] if x["id"] == f"strict-vs-llm-{lang}")
        a = [r for r in rows.values() if r["verifier"] == "strict" and r["language"] == lang]
        b = [r for r in rows.values() if r["verifier"] == "llm" and r["language"] == lang]
        k1, k2 = (sum(r["verdict"] == r["expected"] for r in x) for x in (a, b))
        _, p = proportions_ztest([k1, k2], [len(a), len(b)], alternative="larger")
        lo, hi = confint_proportions_2indep(
            k1, len(a), k2, len(b), method="newcomb", compare="diff", alpha=0.10
        )
        assert c["p"] == pytest.approx(p, rel=1e-3)
        assert c["lower"] == pytest.approx(lo, abs=6e-5) and c["upper"] == pytest.approx(
            hi, abs=6e-5
        )
        ps[lang] = p
    lenient = [r for r in rows.values() if r["verifier"] == "lenient" and r["expected"] == "fail"]
    k = sum(r["verdict"] == "pass" for r in lenient)
    _, upper = proportion_confint(k, len(lenient), alpha=0.05, method="beta")
    assert doc["verdicts"] == {
        "strict-beats-llm": "supported" if all(p < 0.05 for p in ps.values()) else "not-supported",
        "lenient-false-pass": "supported" if upper <= 0.3333 else "not-supported",
    }


def test_a_row_placed_in_two_cells_or_a_cell_with_too_many_rows_is_refused(
    project, tmp_path, capsys
):
    records = judgements(6)
    moved = dict(next(r for r in records if r["language"] == "python"))
    moved["language"] = "rust"
    obs = tmp_path / "a.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in [*records, moved]))
    code = main(
        [
            "--project",
            str(project),
            STUDY,
            "score",
            "--observations",
            str(obs),
            "--out",
            str(tmp_path / "S.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "in another cell on line" in err
    extra = [
        {
            "taskId": f"extra-{i}",
            "verifier": "llm",
            "language": "rust",
            "mode": "graded",
            "verdict": "pass",
            "expected": "pass",
            "try": 1,
        }
        for i in range(41)
    ]
    obs = tmp_path / "b.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in extra))
    code = main(
        [
            "--project",
            str(project),
            STUDY,
            "score",
            "--observations",
            str(obs),
            "--out",
            str(tmp_path / "S.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "cell m-rs has 41 distinct rows, the study registers 40" in err
    assert not (tmp_path / "S.json").exists()


def test_the_generated_record_class_reads_a_keyword_field(project):
    """A JSON field named like a Python keyword ('try') becomes the attribute try_."""
    import importlib.util
    import sys

    pkg = project / "generated" / "verifier_agreement"
    spec = importlib.util.spec_from_file_location(
        "va_generated", pkg / "__init__.py", submodule_search_locations=[str(pkg)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["va_generated"] = module
    spec.loader.exec_module(module)
    from va_generated import records

    path = project / "one.jsonl"
    path.write_text(json.dumps(judgements(1)[0]) + "\n")
    (rec,) = records.Judgement.read(path)
    assert rec.try_ == json.loads(path.read_text())["try"]
