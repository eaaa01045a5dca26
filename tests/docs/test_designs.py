"""docs/designs.md: every yaml fragment compiles as written. Each block follows an HTML comment
naming it: `common` (the head of every study), `frame NAME` (a study's factors, cells, log
contract and attempts) or `design NAME on FRAME` (merged onto its frame: lists appended, other
values set); each design is compiled as a study of its own, and `prereg compile` must accept
it with no error. The page's JSON lines are parsed too, one per contract of each frame in order, and each must
hold the fields its contract declares."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from prereg.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "designs.md"
BLOCK = re.compile(r"<!-- (?P<name>[^>]*?) -->\n```yaml\n(?P<body>.*?)```\n", re.S)
JSON_LINE = re.compile(r"```json\n(?P<line>.*?)\n```\n", re.S)
DESIGNS = ("factorial", "paired", "non-inferiority", "equivalence", "continuous")
DESIGNS += ("paired-equivalence",)
DESIGNS += (
    "calibration",
    "selective",
    "brier-comparison",
    "clustered",
    "trend",
    "interaction",
    "size-trend",
    "preference",
    "verifier-ranking",
    "agreement",
    "agreement-stages",
    "pass-at-k",
    "pass-at-several-k",
    "pass-at-k-lower-bound",
)
DESIGNS += ("friedman", "metric-correlation", "metric-comparison")
DESIGNS += ("wide-equivalence", "judge-means")


def fragments() -> tuple[dict, dict[str, dict], dict[str, tuple[str, dict]]]:
    text = PAGE.read_text(encoding="utf-8")
    assert text.count("```yaml\n") == len(BLOCK.findall(text)), "a yaml block without its name"
    common, frames, designs = None, {}, {}
    for m in BLOCK.finditer(text):
        words, body = m["name"].split(), yaml.safe_load(m["body"])
        if words == ["common"]:
            common = body
        elif words[0] == "frame" and len(words) == 2:
            frames[words[1]] = body
        elif words[0] == "design" and len(words) == 4 and words[2] == "on":
            designs[words[1]] = (words[3], body)
        else:  # pragma: no cover - the page names every block one of three ways
            raise AssertionError(f"unknown block name {m['name']!r}")
    assert common is not None
    return common, frames, designs


def merged(*parts: dict) -> dict:
    out: dict = {}
    for part in parts:
        for key, value in part.items():
            if isinstance(value, list) and isinstance(out.get(key), list):
                out[key] = out[key] + value
            else:
                out[key] = value
    return out


def test_the_page_has_every_common_design_and_is_linked_from_the_readme():
    _, frames, designs = fragments()
    assert set(designs) == set(DESIGNS)
    assert all(frame in frames for frame, _ in designs.values())
    assert "docs/designs.md" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("design", DESIGNS)
def test_each_design_compiles(tmp_path, design, capsys):
    common, frames, designs = fragments()
    frame, body = designs[design]
    spec = merged(common, frames[frame], body)
    spec["id"] = design
    studies = tmp_path / "spec" / "studies"
    studies.mkdir(parents=True)
    (studies / f"{design}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    code = main(["--project", str(tmp_path), "compile"])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "generated" / design.replace("-", "_") / "rules.py").exists()


def test_each_log_line_holds_its_frames_fields():
    _, frames, _ = fragments()
    lines = [json.loads(m["line"]) for m in JSON_LINE.finditer(PAGE.read_text(encoding="utf-8"))]
    # one line per contract of each frame, in order (an item manifest's, then the log's)
    contracts = [c for frame in frames.values() for c in frame["record_contracts"]]
    assert len(lines) == len(contracts)
    for record, contract in zip(lines, contracts, strict=True):
        assert set(record) == {f["name"] for f in contract["fields"]}


def test_the_size_trend_is_scored_as_the_page_says(tmp_path):
    """The size-trend design scored on a log whose math grades average 0.2, 0.3, 0.4 and 0.5
    over the sizes (each size's ten marks are the mean plus deviations that cancel in pairs):
    the rise per step is exactly 0.05 (0.15·0.3 + 0.05·0.1), which meets `ge 0.05` though the
    float is below it. The linear contrasts are statsmodels' OLS t_test on one indicator per
    size (pooled variance), the Cochran-Armitage z is the formula by hand, and the adjusted P
    values are statsmodels' Holm over the four."""
    import random

    import numpy as np
    import statsmodels.api as sm
    from scipy.stats import norm
    from statsmodels.stats.multitest import multipletests

    common, frames, designs = fragments()
    frame, body = designs["size-trend"]
    spec = merged(common, frames[frame], body)
    spec["id"] = "size-trend"
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "size-trend.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(tmp_path), "compile"]) == 0
    sizes = ["s1b", "s3b", "s8b", "s70b"]
    means = {"math": [20, 30, 40, 50], "code": [30, 33, 41, 60]}  # hundredths
    rnd = random.Random(22)
    rows = []
    for bench, targets in means.items():
        for j, size in enumerate(sizes):
            half = [rnd.randint(-12, 12) for _ in range(5)]
            marks = [targets[j] + d for d in half + [-d for d in half]]
            for i, mark in enumerate(marks):
                right = rnd.random() < (0.3, 0.45, 0.6, 0.8)[j]
                rows.append((f"{bench}-t{i}", size, bench, right, mark / 100))
    log = tmp_path / "runs.jsonl"
    keys = ("task", "size", "bench", "correct", "grade")
    log.write_text("".join(json.dumps(dict(zip(keys, r, strict=True))) + "\n" for r in rows))
    out = tmp_path / "S.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "size-trend", "score", *args]) == 0
    doc = json.loads(out.read_text())
    got = {a["id"]: a for a in doc["analyses"]}
    c = np.array([-0.15, -0.05, 0.05, 0.15])
    raw = []
    for bench in means:
        sel = [r for r in rows if r[2] == bench]
        x = np.array([r[4] for r in sel])
        design = np.array([[float(r[1] == s) for s in sizes] for r in sel])
        test = sm.OLS(x, design).fit().t_test(c[None, :])
        t = float(np.ravel(test.tvalue)[0])
        raw.append(float(np.ravel(test.pvalue)[0]) / 2 if t > 0 else 1 - float(test.pvalue) / 2)
        assert got[f"grade-trend-{bench}"]["statistic"] == pytest.approx(t, rel=1e-9)
    for bench in means:
        k = np.array([sum(r[3] for r in rows if r[2] == bench and r[1] == s) for s in sizes])
        n, s = np.full(4, 10), np.arange(4.0)
        pbar = k.sum() / n.sum()
        trend = (s * (k - n * pbar)).sum()
        spread = (n * (s - s.mean()) ** 2).sum()
        z = trend / np.sqrt(pbar * (1 - pbar) * spread)
        assert got[f"acc-trend-{bench}"]["statistic"] == pytest.approx(z, rel=1e-12)
        raw.append(float(norm.sf(z)))
    adjusted = multipletests(raw, method="holm")[1]
    order = ["grade-trend-math", "grade-trend-code", "acc-trend-math", "acc-trend-code"]
    for name, want in zip(order, adjusted, strict=True):
        assert got[name]["adjustedP"] == pytest.approx(float(want), rel=1e-9)
    math_rise = got["grade-trend-math"]
    assert math_rise["estimate"] < 0.05 and math_rise["exact"]["estimate"] == "1/20"
    (held,) = doc["quantifiers"]["bigger-better"]
    assert held["metBy"] == ["math"] and held["notMetBy"] == ["code"]  # code: 0.049, 1 - P
    assert doc["verdicts"] == {"bigger-better": "not-supported"}


def test_the_agreement_stages_reach_the_outcome_the_page_says(tmp_path):
    """The agreement-stages design scored on 20 items: ann and the judge (cat) agree with a
    linear-weighted kappa of exactly 3/5 (33/40 observed against 9/16 expected agreement:
    (33/40 - 9/16)/(1 - 9/16) = 3/5), which meets `ge 0.6`; its lower 90% bound is
    statsmodels' kappa - z(0.95)·std_kappa; the panel's lower bound is scipy's bootstrap
    percentile over the items (same PCG64 draws) of statsmodels' Fleiss kappa. Judge supported,
    panel short of 0.5: the third rule decides."""
    import numpy as np
    from scipy.stats import bootstrap, norm
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

    ann = [2, 1, 2, 2, 0, 1, 1, 0, 0, 2, 0, 0, 1, 1, 1, 1, 2, 2, 1, 2]
    cat = [2, 1, 2, 1, 0, 2, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 0, 1, 2]
    bob = [2, 1, 2, 1, 0, 2, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 1, 1, 1]
    common, frames, designs = fragments()
    frame, body = designs["agreement-stages"]
    spec = merged(common, frames[frame], body)
    spec["id"] = "stages"
    spec["crossings"] = [{"id": "{rater}", "rows": 20, "factors": ["rater"]}]
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "stages.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(tmp_path), "compile"]) == 0
    log = tmp_path / "ratings.jsonl"
    lines = [
        json.dumps({"item": f"d{i:02d}", "rater": r, "label": v[i]})
        for i in range(20)
        for r, v in (("ann", ann), ("bob", bob), ("cat", cat))
    ]
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "S.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "stages", "score", *args]) == 0
    doc = json.loads(out.read_text())
    got = {a["id"]: a for a in doc["analyses"]}
    table = np.zeros((3, 3))
    for a, b in zip(ann, cat, strict=True):
        table[a, b] += 1
    ref = cohens_kappa(table, wt="linear")
    assert got["kappa-judge"]["exact"]["estimate"] == "3/5"
    low = ref.kappa - norm.ppf(0.95) * ref.std_kappa
    assert got["kappa-judge"]["lower"] == pytest.approx(low, rel=1e-9)
    x = np.array([ann, bob, cat], dtype=float).T
    boot = bootstrap(
        (np.arange(20),),
        lambda i: fleiss_kappa(aggregate_raters(x[i.astype(int)])[0]),
        n_resamples=2000, method="percentile", confidence_level=0.9,
        rng=np.random.Generator(np.random.PCG64(20261203)), vectorized=False,
    )  # fmt: skip
    assert got["panel"]["lower"] == pytest.approx(boot.confidence_interval.low, rel=1e-12)
    assert got["panel"]["lower"] < 0.5
    assert doc["verdicts"] == {"judge-agrees": "supported", "panel-agrees": "not-supported"}
    assert doc["decision"]["outcome"] == "judge-with-audit"

    # diagnose: the bootstrap kappa's truth is Fleiss' kappa of the scenario, by hand: a pair of
    # raters agrees with chance Σ π_c (a² + (1 − a)²/2), a label's share is π_j a + (1 − π_j)(1 − a)/2
    dg = tmp_path / "D.json"
    dargs = ["--scenario", "careful-judge", "--simulations", "10", "--seed", "3", "--out", str(dg)]
    assert main(["--project", str(tmp_path), "stages", "diagnose", *dargs, "--quiet"]) == 0
    (cond,) = json.loads(dg.read_text())["conditions"]
    truth = {a["id"]: a.get("truth") for a in cond["analyses"]}
    prevalence, acc = np.array([0.3, 0.3, 0.4]), 0.85
    agree = acc**2 + (1 - acc) ** 2 / 2
    share = prevalence * acc + (1 - prevalence) * (1 - acc) / 2
    pe = float((share**2).sum())
    assert truth["panel"] == pytest.approx((agree - pe) / (1 - pe), abs=5e-7)  # to 6 places


def test_pass_at_several_k_takes_each_k(tmp_path):
    """The pass-at-several-k design scored on 20 problems of 10 samples whose passes are 0, 1,
    ..., as listed (60 of 200: pass@1 exactly 3/10, which meets `ge 0.3`): each analysis is
    Chen et al.'s estimator at its own k, 1 - C(n - c, k)/C(n, k) averaged over problems, by
    hand in fractions."""
    from fractions import Fraction
    from math import comb

    passes = [0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 4, 5]
    assert sum(passes) == 60
    common, frames, designs = fragments()
    frame, body = designs["pass-at-several-k"]
    spec = merged(common, frames[frame], body)
    spec["id"] = "several-k"
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "several-k.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(tmp_path), "compile"]) == 0
    log = tmp_path / "samples.csv"
    rows = ["problem,sample,model,passed"]
    for j, c in enumerate(passes):
        rows += [f"p{j:02d},{s},m1,{'true' if s <= c else 'false'}" for s in range(1, 11)]
    log.write_text("\n".join(rows) + "\n")
    out = tmp_path / "S.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "several-k", "score", *args]) == 0
    doc = json.loads(out.read_text())
    got = {a["id"]: a for a in doc["analyses"]}
    assert list(got) == ["pass1", "pass5", "pass10"]
    for k in (1, 5, 10):
        want = sum(1 - Fraction(comb(10 - c, k), comb(10, k)) for c in passes) / len(passes)
        assert got[f"pass{k}"]["options"] == {"k": k}
        assert Fraction(got[f"pass{k}"]["exact"]["estimate"]) == want
    assert Fraction(got["pass1"]["exact"]["estimate"]) == Fraction(3, 10)
    # by hand: pass@5 = 1999/2520 (about 0.79) and pass@10 = 18/20 (two problems never pass)
    assert Fraction(got["pass10"]["exact"]["estimate"]) == Fraction(9, 10)
    assert doc["verdicts"] == {"solves-at-k": "supported"}


def _score_pass_at_k_lower_bound(tmp_path, passes, value=None):
    common, frames, designs = fragments()
    frame, body = designs["pass-at-k-lower-bound"]
    spec = merged(common, frames[frame], body)
    spec["id"] = "lower-bound"
    if value is not None:
        spec["hypotheses"][0]["rule"]["compare"]["value"] = value
    (tmp_path / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    (tmp_path / "spec" / "studies" / "lower-bound.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(tmp_path), "compile"]) == 0
    log = tmp_path / "samples.jsonl"
    lines = []
    for j, c in enumerate(passes):
        for s in range(1, 11):
            row = {"problem": f"p{j:02d}", "sample": s, "model": "m1", "passed": s <= c}
            lines.append(json.dumps(row) + "\n")
    log.write_text("".join(lines))
    out = tmp_path / "S.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "lower-bound", "score", *args]) == 0
    doc = json.loads(out.read_text())
    (row,) = doc["analyses"]
    return doc, row


def test_pass_at_k_lower_bound_is_the_t_bound_over_problems(tmp_path):
    """The pass-at-k-lower-bound design on 20 problems of 10 samples: the lower bound is
    scipy's one-sample t over the per-problem pass@5 values (Chen et al.'s product form),
    one-sided at 95%; the estimate is the exact mean of 1 - C(10 - c, 5)/C(10, 5). A threshold
    written as the bound's own decimal meets `ge`; the next float above it does not."""
    from fractions import Fraction
    from math import comb

    import numpy as np
    from scipy import stats

    passes = [3, 9, 8, 2, 5, 9, 7, 10, 9, 1, 9, 0, 7, 4, 8, 3, 3, 7, 8, 8]
    doc, row = _score_pass_at_k_lower_bound(tmp_path / "a", passes)
    want = sum(1 - Fraction(comb(10 - c, 5), comb(10, 5)) for c in passes) / 20
    assert Fraction(row["exact"]["estimate"]) == want == Fraction(9, 10)
    per = [1.0 - float(np.prod(1 - 5 / np.arange(10 - c + 1, 11))) for c in passes]
    t = stats.ttest_1samp(per, 0.5, alternative="greater")
    assert row["lower"] == pytest.approx(t.confidence_interval(0.95).low, rel=1e-12)
    assert row["upper"] is None
    assert row["statistic"] == pytest.approx(t.statistic, rel=1e-10)
    assert row["p"] == pytest.approx(t.pvalue, rel=1e-8)
    assert row["df"] == 19 and row["counts"]["problems"] == 20
    assert doc["verdicts"] == {"solves-surely": "supported"}
    bound = row["lower"]
    doc, _ = _score_pass_at_k_lower_bound(tmp_path / "b", passes, value=bound)
    assert doc["verdicts"] == {"solves-surely": "supported"}
    doc, _ = _score_pass_at_k_lower_bound(tmp_path / "c", passes, float(np.nextafter(bound, 1)))
    assert doc["verdicts"] == {"solves-surely": "not-supported"}


def test_pass_at_k_exactly_on_the_null_margin(tmp_path):
    """Nine problems never pass (pass@5 = 0), nine always (1) and two pass once in ten (1 -
    C(9,5)/C(10,5) = 1/2, by hand): pass@5 = (9 + 1)/20 = 1/2 exactly, on the margin 0.5, so
    t = 0 and the one-sided P is exactly 1/2; the lower bound is below 0.5."""
    doc, row = _score_pass_at_k_lower_bound(tmp_path, [0] * 9 + [10] * 9 + [1, 1])
    assert row["exact"]["estimate"] == "1/2"
    assert row["statistic"] == 0.0 and row["p"] == 0.5
    assert row["lower"] < 0.5
    assert doc["verdicts"] == {"solves-surely": "not-supported"}


def test_paired_equivalence_on_its_margin(tmp_path):
    """The paired-equivalence design on 60 pairs (20 items under each of three hint levels):
    36 both right, 3 only the new system, 6 only the old one, 15 neither; the difference
    (3 - 6)/60 is exactly -0.05, the lower margin, so that test's z is 0 and its P 1/2. The
    upper test's z is Tango's score statistic with the constrained maximum likelihood found
    numerically by scipy (p10 = p01 + 0.05 maximising the multinomial likelihood)."""
    import math

    from scipy.optimize import minimize_scalar
    from scipy.stats import norm

    common, frames, designs = fragments()
    frame, body = designs["paired-equivalence"]
    spec = merged(common, frames[frame], body)
    spec["id"] = "paired-eq"
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "paired-eq.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(tmp_path), "compile"]) == 0
    kinds = [(True, True)] * 36 + [(True, False)] * 3 + [(False, True)] * 6 + [(False, False)] * 15
    lines = []
    for i, (new, old) in enumerate(kinds):
        hints, item = ("k0", "k1", "k4")[i // 20], f"q{i % 20:02d}"
        for system, right in (("new", new), ("old", old)):
            record = {"item": item, "system": system, "hints": hints, "attempt": 1}
            record.update(correct=right, score=None, confidence=None, repo="acme/parser")
            lines.append(json.dumps(record))
    log = tmp_path / "runs.jsonl"
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "S.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "paired-eq", "score", *args]) == 0
    doc = json.loads(out.read_text())
    got = {a["id"]: a for a in doc["analyses"]}
    assert got["not-lower"]["statistic"] == 0.0 and got["not-lower"]["p"] == 0.5
    n, n10, n01, delta = 60, 3, 6, 0.05

    def minus_log_likelihood(p01):
        p10 = p01 + delta
        return -(n10 * math.log(p10) + n01 * math.log(p01) + 51 * math.log(1 - p10 - p01))

    p01 = minimize_scalar(minus_log_likelihood, bounds=(1e-9, 0.475 - 1e-9), method="bounded",
                          options={"xatol": 1e-12}).x  # fmt: skip
    z = (n10 - n01 - n * delta) / math.sqrt(n * (2 * p01 + delta * (1 - delta)))
    assert got["not-higher"]["statistic"] == pytest.approx(z, rel=1e-6)
    assert got["not-higher"]["p"] == pytest.approx(float(norm.cdf(z)), rel=1e-5)
    assert doc["verdicts"] == {"same-on-items": "not-supported"}
