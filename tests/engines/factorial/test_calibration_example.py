"""The calibration-cells example runs from its spec alone (rows from the observations), and
every figure and verdict agrees with an independent computation from the raw records: ECE as a
plain loop over the registered bins, sklearn's roc_auc_score, Hanley-McNeil by hand, the
bootstrap redrawn from its documented algorithm."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from tests.engines.factorial.examples import (
    by_id,
    example_project,
    read_jsonl,
    run,
    scored,
    write_jsonl,
)

STUDY = "calibration-cells"
MODELS, DOMAINS = ("m1", "m2"), ("math", "law", "code")
EDGES = [i / 10 for i in range(11)]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return example_project(tmp_path_factory.mktemp("calibration"), STUDY)


def score(project, obs, tag):
    return scored(project, STUDY, obs, tag, items=False)


def first_attempts(obs):
    """Attempt 1 of each registered row (rows of unregistered domains left out)."""
    out = {}
    for rec in read_jsonl(obs):
        if rec["domain"] not in DOMAINS or rec["attempt"] != 1:
            continue
        out[rec["rowId"]] = rec
    return list(out.values())


def ece_loop(conf, correct):
    """Bins closed on the right; the first bin [0, 0.1] is closed on both sides."""
    total = 0.0
    for b in range(10):
        lo, hi = EDGES[b], EDGES[b + 1]
        ix = [i for i, c in enumerate(conf) if (lo < c <= hi) or (b == 0 and c == 0.0)]
        if ix:
            acc = sum(correct[i] for i in ix) / len(ix)
            mc = sum(conf[i] for i in ix) / len(ix)
            total += len(ix) / len(conf) * abs(acc - mc)
    return total


def hanley_mcneil(a, npos, nneg, z=1.959963984540054):
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = math.sqrt(
        (a * (1 - a) + (npos - 1) * (q1 - a * a) + (nneg - 1) * (q2 - a * a)) / (npos * nneg)
    )
    return max(0.0, a - z * se), min(1.0, a + z * se)


def scored_rows(recs, model, domain=None):
    return [
        r
        for r in recs
        if r["model"] == model
        and (domain is None or r["domain"] == domain)
        and r["status"] == "answered"
        and r["confidence"] is not None
    ]


def check(doc, recs):
    e = by_id(doc["estimates"])
    eces = {}
    aurocs = {}
    for m in MODELS:
        for d in DOMAINS:
            rows = scored_rows(recs, m, d)
            conf = [r["confidence"] for r in rows]
            y = [bool(r["correct"]) for r in rows]
            x = ece_loop(conf, y)
            eces[m, d] = x
            assert e[f"ece-{m}-{d}"]["estimate"] == pytest.approx(x, abs=6e-5)
            assert e[f"ece-{m}-{d}"]["n"] == len(rows)
            a = roc_auc_score(y, conf)
            lo, hi = hanley_mcneil(a, sum(y), len(y) - sum(y))
            aurocs[m, d] = lo
            got = e[f"auroc-{m}-{d}"]
            assert got["estimate"] == pytest.approx(a, abs=6e-5)
            assert (got["lower"], got["upper"]) == (
                pytest.approx(lo, abs=6e-5),
                pytest.approx(hi, abs=6e-5),
            )
            assert (got["positives"], got["negatives"]) == (sum(y), len(y) - sum(y))
            cell = next(c for c in doc["cells"] if c["cell"] == f"tst-{m}-{d}")
            assert cell["metrics"]["ece"]["estimate"] == pytest.approx(x, abs=6e-5)
        # the pooled ECE and its bootstrap (one draw of n indexes per resample)
        rows = scored_rows(recs, m)
        conf = np.array([r["confidence"] for r in rows])
        y = np.array([bool(r["correct"]) for r in rows])
        rng = np.random.Generator(np.random.PCG64(5))
        boots = []
        for _ in range(500):
            ix = rng.integers(0, conf.size, conf.size)
            boots.append(ece_loop(conf[ix].tolist(), y[ix].tolist()))
        lo, hi = np.quantile(boots, [0.05, 0.95])
        got = e[f"ece-{m}"]
        assert got["estimate"] == pytest.approx(ece_loop(conf.tolist(), y.tolist()), abs=6e-5)
        assert (got["lower"], got["upper"]) == (
            pytest.approx(lo, abs=6e-5),
            pytest.approx(hi, abs=6e-5),
        )
    counts = {}
    for r in recs:
        key = (r["model"], r["domain"])
        counts[key] = counts.get(key, 0) + (
            r["status"] == "answered" and r["confidence"] is not None
        )
    gated = any(counts.get((m, d), 0) / 200 < 0.9 for m in MODELS for d in DOMAINS)
    assert doc["gated"] == gated
    h1 = all(
        sum(math.floor(eces[m, d] * 1000 + 0.5) / 1000 <= 0.1 for d in DOMAINS) >= 2 for m in MODELS
    )
    h2 = all(aurocs[m, d] >= 0.6 for m in MODELS for d in DOMAINS)
    want = {
        "h1": "supported" if h1 else "not-supported",
        "h2": "supported" if h2 else "not-supported",
    }
    if gated:
        want = {k: "inconclusive" for k in want}
    want["ece-overall"] = "reported-only"
    assert doc["verdicts"] == want


@pytest.mark.parametrize("scenario, seed", [("calibrated", 2), ("overconfident-m2", 3)])
def test_scores_agree_with_an_independent_computation(project, scenario, seed):
    obs = project / f"{scenario}.jsonl"
    assert (
        run(project, STUDY, "simulate", "--scenario", scenario, "--seed", seed, "--out", obs) == 0
    )
    doc = score(project, obs, scenario)
    check(doc, first_attempts(obs))
    if scenario == "overconfident-m2":
        assert doc["verdicts"]["h2"] == "not-supported"


@pytest.mark.parametrize("right, verdict", [(170, "supported"), (169, "not-supported")])
def test_ece_at_the_threshold_after_the_registered_rounding(project, right, verdict):
    # model m1: in math and law every row states 0.95 and `right` of 200 are correct, so ECE is
    # |right/200 - 0.95|: 0.1 exactly at 170 (rounded to three decimals it meets <= 0.1), 0.105
    # at 169; every other cell is perfectly calibrated at 0.5 with half right. A rerun of row
    # 1 (attempt 2) never counts, and a row of an unregistered domain is ignored and counted.
    recs = []
    for m in MODELS:
        for d in DOMAINS:
            for n in range(1, 201):
                skewed = m == "m1" and d in ("math", "law")
                conf = 0.95 if skewed else 0.5
                correct = n <= right if skewed else n % 2 == 0
                recs.append(
                    {
                        "rowId": f"{m}-{d}-{n}",
                        "attempt": 1,
                        "model": m,
                        "domain": d,
                        "status": "answered",
                        "correct": correct,
                        "confidence": conf,
                    }
                )
    recs.append({**recs[0], "attempt": 2, "correct": False, "confidence": 0.0})
    recs.append({**recs[0], "rowId": "stray", "domain": "poetry"})
    obs = write_jsonl(project / f"edge-{right}.jsonl", recs)
    doc = score(project, obs, f"edge-{right}")
    assert doc["verdicts"]["h1"] == verdict
    assert doc["rows"]["ignoredRecords"] == 1
    check(doc, first_attempts(obs))


def test_a_confidence_outside_the_bins_is_refused(project, capsys):
    recs = [
        {
            "rowId": "r1",
            "attempt": 1,
            "model": "m1",
            "domain": "math",
            "status": "answered",
            "correct": True,
            "confidence": 0.5,
        }
    ]
    obs = write_jsonl(project / "bad.jsonl", recs)
    # the contract bounds confidence to [0, 1], the bins' range: a 1.5 fails the contract first
    recs[0]["confidence"] = 1.5
    write_jsonl(obs, recs)
    assert (
        run(project, STUDY, "score", "--observations", obs, "--out", project / "bad.SCORE.json")
        != 0
    )
    assert "confidence" in capsys.readouterr().err
    assert not (project / "bad.SCORE.json").exists()


def test_a_null_confidence_or_a_missing_row_is_unobserved(project):
    # status refused, a null confidence and an absent record all leave a row unobserved: in
    # cell m2-law 21 rows are so (7 of each), coverage 179/200 < 0.9, so every tested verdict
    # is inconclusive while the report-only one stays reported
    recs = []
    for m in MODELS:
        for d in DOMAINS:
            for n in range(1, 201):
                rec = {
                    "rowId": f"{m}-{d}-{n}",
                    "attempt": 1,
                    "model": m,
                    "domain": d,
                    "status": "answered",
                    "correct": n % 3 != 0,
                    "confidence": 0.3 + (n % 7) / 10,
                }
                if (m, d) == ("m2", "law") and n <= 21:
                    if n <= 7:
                        rec["status"] = "refused"
                    elif n <= 14:
                        rec["confidence"] = None
                    else:
                        continue
                recs.append(rec)
    obs = write_jsonl(project / "missing.jsonl", recs)
    doc = score(project, obs, "missing")
    cell = next(c for c in doc["cells"] if c["cell"] == "tst-m2-law")
    assert cell["observed"] == 179 and cell["rows"] == 200
    assert doc["gated"] is True
    assert doc["verdicts"] == {
        "h1": "inconclusive",
        "h2": "inconclusive",
        "ece-overall": "reported-only",
    }
    check(doc, first_attempts(obs))
