"""Three more designs written from the docs alone by a newcomer (tests/fixtures/newcomer/), each
compiled, scored from data as an export writes it with the decisive figure placed exactly on
its threshold, checked against an independent oracle, and diagnosed:

- sizetrend.yaml: quality rising over four ordered model sizes, Jonckheere–Terpstra (exact and
  tie-corrected normal), from a Parquet file pandas wrote. The exact null distribution here is
  the convolution of Mann–Whitney counts (not the q-multinomial the method uses); with four
  groups of four, J = 66 gives P = 648601/12612600 just above 0.05 and J = 67 just below, so
  `p le 0.05` straddles them; P is below the decimal of its own float, which an exact
  comparison sees and a float one does not. Tied data have no exact P: SCORE.md says why;
- essayicc.yaml: three raters' 1–7 scores of 10 essays, an R export (`write.csv`, quoted
  strings, `NA`); ICC(2,1) exactly 3/4 (`ge 0.75` holds, `gt` fails), the F test and the
  McGraw–Wong intervals from scipy's F quantiles, the mean squares from statsmodels' ANOVA;
  essays missing a score are left out as units, and the gate on them holds at exactly 9 of 10;
- passbound.yaml: pass@5 of 10 samples per problem with the one-sided t over problems
  (pass-at-k-t), from JSONL; a pass@5 of exactly 1/2 on the margin gives t = 0 and P = 1/2
  (`p lt 0.05` fails), 3/5 meets `ge 0.6` and not `gt`; the t, P and bound are scipy's
  ttest_1samp, the standard error the exactly rounded one."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from prereg.cli import main
from tests.conftest import FIXTURES

NEWCOMER = FIXTURES / "newcomer"


def _project(root: Path, name: str, text: str | None = None) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    text = (NEWCOMER / f"{name}.yaml").read_text() if text is None else text
    (root / "spec" / "studies" / f"{name}.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _score(root: Path, name: str, log: Path) -> tuple[dict, str]:
    out = root / f"{log.stem}.SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), name, "score", *args]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


def _diagnose(root: Path, name: str, n: int = 200) -> dict:
    out = root / "DIAGNOSE.json"
    args = ["--project", str(root), name, "diagnose", "--quiet", "--simulations", str(n)]
    assert main([*args, "--seed", "3", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    return {a["id"]: a for a in cond["analyses"]}


def _swap(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# -- Jonckheere–Terpstra over ordered model sizes -------------------------------------------------

SIZES = ("s1b", "s3b", "s8b", "s70b")
J66 = [
    [2.35, 2.7, 3.05, 7.25],
    [2.0, 3.4, 4.45, 5.15],
    [4.1, 4.8, 6.55, 6.9],
    [3.75, 5.5, 5.85, 6.2],
]
J67 = [
    [2.0, 3.4, 3.75, 5.85],
    [2.35, 2.7, 4.8, 5.15],
    [4.1, 5.5, 6.55, 6.9],
    [3.05, 4.45, 6.2, 7.25],
]


def _parquet(root: Path, groups, name: str) -> Path:
    import pandas as pd

    rows = [
        {"prompt": f"{size}-p{i + 1}", "size": size, "quality": v}
        for size, values in zip(SIZES, groups, strict=True)
        for i, v in enumerate(values)
    ]
    path = root / f"{name}.parquet"
    pd.DataFrame(rows).to_parquet(path, index=False)
    return path


def _mann_whitney_counts(m: int, n: int) -> dict[int, int]:
    """Arrangements of m x's and n y's by U = #(x < y): the largest is a y (U gains m) or an x."""
    table = {(0, j): {0: 1} for j in range(n + 1)} | {(i, 0): {0: 1} for i in range(m + 1)}
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            out: dict[int, int] = {}
            for u, c in table[(i, j - 1)].items():
                out[u + i] = out.get(u + i, 0) + c
            for u, c in table[(i - 1, j)].items():
                out[u] = out.get(u, 0) + c
            table[(i, j)] = out
    return table[(m, n)]


def _jt_null(sizes) -> dict[int, int]:
    """J's null counts: each group against the union of the earlier ones is a Mann–Whitney U."""
    dist, seen = {0: 1}, sizes[0]
    for s in sizes[1:]:
        new: dict[int, int] = {}
        for a, c in dist.items():
            for b, d in _mann_whitney_counts(seen, s).items():
                new[a + b] = new.get(a + b, 0) + c * d
        dist, seen = new, seen + s
    return dist


def _jt(groups) -> tuple[Fraction, Fraction, Fraction]:
    """J, its null mean and its tie-corrected variance (Hollander & Wolfe, eq. 6.19)."""
    from collections import Counter

    values = [[Fraction(str(v)) for v in g] for g in groups]
    j = Fraction(0)
    for a in range(len(values)):
        for b in range(a + 1, len(values)):
            for x in values[a]:
                for y in values[b]:
                    j += 1 if x < y else Fraction(1, 2) if x == y else 0
    n = [len(g) for g in values]
    big = sum(n)
    t = list(Counter(v for g in values for v in g).values())

    def s(xs, f):
        return sum(f(x) for x in xs)

    var = (
        Fraction(
            big * (big - 1) * (2 * big + 5)
            - s(n, lambda m: m * (m - 1) * (2 * m + 5))
            - s(t, lambda u: u * (u - 1) * (2 * u + 5)),
            72,
        )
        + Fraction(
            s(n, lambda m: m * (m - 1) * (m - 2)) * s(t, lambda u: u * (u - 1) * (u - 2)),
            36 * big * (big - 1) * (big - 2),
        )
        + Fraction(s(n, lambda m: m * (m - 1)) * s(t, lambda u: u * (u - 1)), 8 * big * (big - 1))
    )
    return j, Fraction(big * big - s(n, lambda m: m * m), 4), var


def test_the_oracle_null_distribution_is_every_arrangement_counted():
    from itertools import permutations

    counts: dict[int, int] = {}
    for perm in set(permutations([0, 0, 0, 1, 1, 1, 2, 2])):
        at = [[i for i, g in enumerate(perm) if g == k] for k in range(3)]
        j = sum(1 for a in range(3) for b in range(a + 1, 3) for x in at[a] for y in at[b] if x < y)
        counts[j] = counts.get(j, 0) + 1
    assert counts == _jt_null((3, 3, 2))


@pytest.mark.parametrize(
    ("groups", "verdict", "outcome"),
    [(J66, "not-supported", "stay"), (J67, "supported", "scale-up")],
)
def test_jonckheere_exact_p_on_either_side_of_alpha(tmp_path, groups, verdict, outcome):
    root = _project(tmp_path, "sizetrend")
    doc, md = _score(root, "sizetrend", _parquet(root, groups, "log"))
    exact, normal = doc["analyses"]
    j, mean, var = _jt(groups)
    null = _jt_null((4, 4, 4, 4))
    p = Fraction(sum(c for k, c in null.items() if k >= j), sum(null.values()))
    assert j in (66, 67)
    assert Fraction(exact["exact"]["statistic"]) == j and exact["statisticName"] == "J"
    assert Fraction(exact["exact"]["p"]) == p and exact["p"] == float(p)
    assert (p <= Fraction(1, 20)) == (verdict == "supported")
    z = float(j - mean) / math.sqrt(var)
    assert normal["extra"]["mean"] == float(mean) and normal["extra"]["variance"] == float(var)
    assert normal["extra"]["z"] == pytest.approx(z, rel=1e-14)
    assert normal["p"] == pytest.approx(stats.norm.sf(z), rel=1e-12)
    assert doc["verdicts"] == {"rises": verdict}
    assert doc["decision"]["outcome"] == outcome
    # J is a count: SCORE.md shows it as the whole number it is (not 66.0000)
    assert md.count(f"| J = {j} |") == 2


@pytest.mark.parametrize(("op", "verdict"), [("lt", "supported"), ("ge", "not-supported")])
def test_jonckheere_exact_p_below_the_decimal_of_its_own_float(tmp_path, op, verdict):
    """648601/12612600 is the double 0.05142484499627357, yet below that decimal: `lt` holds
    and `ge` fails, as exact arithmetic says (a float comparison would say the opposite)."""
    p = Fraction(648601, 12612600)
    assert float(p) == 0.05142484499627357 and p < Fraction("0.05142484499627357")
    text = (NEWCOMER / "sizetrend.yaml").read_text()
    old = "compare: {target: jt-exact, quantity: p, op: le, value: 0.05}"
    new = f"compare: {{target: jt-exact, quantity: p, op: {op}, value: 0.05142484499627357}}"
    root = _project(tmp_path, "sizetrend", _swap(text, old, new))
    doc, _ = _score(root, "sizetrend", _parquet(root, J66, "log"))
    assert doc["analyses"][0]["exact"]["p"] == "648601/12612600"
    assert doc["verdicts"] == {"rises": verdict}


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_jonckheere_statistic_on_its_threshold(tmp_path, op, verdict):
    text = (NEWCOMER / "sizetrend.yaml").read_text()
    old = "compare: {target: jt-exact, quantity: p, op: le, value: 0.05}"
    new = f"compare: {{target: jt-normal, quantity: statistic, op: {op}, value: 66}}"
    root = _project(tmp_path, "sizetrend", _swap(text, old, new))
    doc, _ = _score(root, "sizetrend", _parquet(root, J66, "log"))
    assert doc["verdicts"] == {"rises": verdict}


def test_jonckheere_tied_data_have_no_exact_p_and_say_why(tmp_path):
    tied = [g[:] for g in J66]
    tied[0][2] = tied[1][1]  # 3.4 in s1b and s3b: J gains a half
    root = _project(tmp_path, "sizetrend")
    doc, md = _score(root, "sizetrend", _parquet(root, tied, "tied"))
    exact, normal = doc["analyses"]
    j, mean, var = _jt(tied)
    assert j == Fraction(131, 2) and exact["exact"]["statistic"] == "131/2"
    assert exact["p"] is None
    why = "the exact distribution is for data without ties"
    assert exact["extra"]["undefined"] == why
    assert normal["extra"]["variance"] == float(var)  # the ties' correction
    assert normal["p"] == pytest.approx(stats.norm.sf(float(j - mean) / math.sqrt(var)), rel=1e-12)
    assert doc["verdicts"] == {"rises": "not-supported"}
    assert f"met by 0 of 1 (jt-exact (missing: {why}))" in md


def test_jonckheere_diagnoses_its_power(tmp_path):
    root = _project(tmp_path, "sizetrend")
    got = _diagnose(root, "sizetrend")["jt-exact"]
    assert got["withP"] == 200 and got["alpha"] == 0.05
    assert got["rejected"]["share"] > 0.9  # a point a size step against sd 1, 4 prompts each


# -- intraclass correlation of three raters ---------------------------------------------------------

SCORES = [[5, 3, 4], [1, 1, 4], [6, 6, 7], [5, 5, 6], [4, 3, 5], [2, 1, 1], [5, 4, 4], [7, 6, 7], [5, 5, 7], [4, 4, 6]]  # fmt: skip
RATERS = ("ann", "bob", "cat")


def _r_export(root: Path, missing=()) -> Path:
    """The ratings as R's write.csv(df, row.names = FALSE) writes them (tests/fixtures/
    newcomer/essayicc-ratings.csv is this export of SCORES): quoted strings, NA."""
    lines = ['"essay","rater","score"']
    for i, row in enumerate(SCORES):
        for j, v in enumerate(row):
            lines.append(f'"e{i + 1:02d}","{RATERS[j]}",{"NA" if (i, j) in missing else v}')
    path = root / f"ratings{len(missing)}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _mean_squares(x):
    n, k = len(x), len(x[0])
    grand = Fraction(sum(map(sum, x)), n * k)
    rows = [Fraction(sum(r), k) for r in x]
    cols = [Fraction(sum(r[j] for r in x), n) for j in range(k)]
    total = sum((v - grand) ** 2 for r in x for v in r)
    ssr = k * sum((m - grand) ** 2 for m in rows)
    ssc = n * sum((m - grand) ** 2 for m in cols)
    sse = total - ssr - ssc
    return ssr / (n - 1), ssc / (k - 1), sse / ((n - 1) * (k - 1)), (ssc + sse) / (n * (k - 1))


def _icc_oracle(x, form: str, level: float = 0.95):
    """Shrout & Fleiss / McGraw & Wong: the ICC, F and P, and the F intervals."""
    n, k = len(x), len(x[0])
    bms, jms, ems, wms = _mean_squares(x)
    f_ratio = bms / ems
    p = stats.f.sf(float(f_ratio), n - 1, (n - 1) * (k - 1))
    q = 1 - (1 - level) / 2
    b, j, e = float(bms), float(jms), float(ems)
    if form == "icc-3-1":
        icc = (bms - ems) / (bms + (k - 1) * ems)
        fl = float(f_ratio) / stats.f.ppf(q, n - 1, (n - 1) * (k - 1))
        fu = float(f_ratio) * stats.f.ppf(q, (n - 1) * (k - 1), n - 1)
        return icc, f_ratio, p, (fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1), None
    single = (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)
    r = float(single)
    a_, b_ = k * r / (n * (1 - r)), 1 + k * r * (n - 1) / (n * (1 - r))
    v = (a_ * j + b_ * e) ** 2 / ((a_ * j) ** 2 / (k - 1) + (b_ * e) ** 2 / ((n - 1) * (k - 1)))
    fs, fs2 = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
    if form == "icc-2-1":
        lo = n * (b - fs * e) / (fs * (k * j + (k * n - k - n) * e) + n * b)
        hi = n * (fs2 * b - e) / (k * j + (k * n - k - n) * e + n * fs2 * b)
        return single, f_ratio, p, lo, hi, v
    lo = n * (b - fs * e) / (fs * (j - e) + n * b)
    hi = n * (fs2 * b - e) / (j - e + n * fs2 * b)
    return (bms - ems) / (bms + (jms - ems) / n), f_ratio, p, lo, hi, v


def test_the_fixture_csv_is_the_r_export():
    root = NEWCOMER / "essayicc-ratings.csv"
    assert root.read_text().splitlines()[:2] == ['"essay","rater","score"', '"e01","ann",5']
    assert len(root.read_text().splitlines()) == 31


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_icc_exactly_on_its_threshold(tmp_path, op, verdict):
    import pandas as pd
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    text = (NEWCOMER / "essayicc.yaml").read_text()
    old = "compare: {target: icc21, quantity: estimate, op: ge, value: 0.75}"
    root = _project(tmp_path, "essayicc", _swap(text, old, old.replace("op: ge", f"op: {op}")))
    doc, _ = _score(root, "essayicc", NEWCOMER / "essayicc-ratings.csv")
    rows = {a["id"]: a for a in doc["analyses"]}
    assert rows["icc21"]["exact"]["estimate"] == "3/4"
    for aid, form in (("icc21", "icc-2-1"), ("icc31", "icc-3-1"), ("icc2k", "icc-2-k")):
        a = rows[aid]
        icc, f_ratio, p, lo, hi, v = _icc_oracle(SCORES, form)
        assert Fraction(a["exact"]["estimate"]) == icc and a["estimate"] == float(icc)
        assert Fraction(a["exact"]["statistic"]) == f_ratio and a["df"] == [9.0, 18.0]
        assert a["p"] == pytest.approx(p, rel=1e-12)
        assert a["lower"] == pytest.approx(lo, rel=1e-12)
        assert a["upper"] == pytest.approx(hi, rel=1e-12)
        if v is not None:
            assert a["extra"]["satterthwaite_df"] == pytest.approx(v, rel=1e-12)
    long = pd.DataFrame(
        [{"essay": i, "rater": j, "y": v} for i, r in enumerate(SCORES) for j, v in enumerate(r)]
    )
    table = anova_lm(smf.ols("y ~ C(essay) + C(rater)", long).fit())
    bms, jms, ems = table["mean_sq"].tolist()
    extra = rows["icc21"]["extra"]
    assert (extra["BMS"], extra["JMS"], extra["EMS"]) == pytest.approx((bms, jms, ems), rel=1e-12)
    assert doc["verdicts"] == {"reliable": verdict}


def test_icc_essays_missing_a_score_are_left_out_and_gated(tmp_path):
    root = _project(tmp_path, "essayicc")
    # one missing score: 9 of 10 essays analysable, the gate's 0.9 met exactly
    doc, _ = _score(root, "essayicc", _r_export(root, missing={(3, 1)}))
    assert [g["passed"] for g in doc["gates"]] == [True]
    rows = {a["id"]: a for a in doc["analyses"]}
    kept = [r for i, r in enumerate(SCORES) if i != 3]
    icc, *_ = _icc_oracle(kept, "icc-2-1")
    assert Fraction(rows["icc21"]["exact"]["estimate"]) == icc
    assert rows["icc21"]["counts"]["units"] == 9 and rows["icc21"]["df"] == [8.0, 16.0]
    # two: 8 of 10, the gate fails and the verdict is the gate's
    doc, _ = _score(root, "essayicc", _r_export(root, missing={(3, 1), (4, 0)}))
    assert [g["passed"] for g in doc["gates"]] == [False]
    assert doc["verdicts"] == {"reliable": "insufficient"}


def test_icc_without_units_refuses_a_missing_score_and_says_how_to_leave_it_out(tmp_path, capsys):
    text = (NEWCOMER / "essayicc.yaml").read_text()
    start, end = text.index("units:\n"), text.index("metrics:\n")
    text = text[:start] + text[end:]
    text = _swap(text, "metric: analysable, op: ge, value: 0.9", "metric: scored, op: ge, value: 1")
    line = next(x for x in text.splitlines(keepends=True) if "id: analysable" in x)
    text = _swap(text, line, "")
    root = _project(tmp_path, "essayicc", text)
    log = _r_export(root, missing={(3, 1)})
    out = root / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "essayicc", "score", *args]) == 2
    err = capsys.readouterr().err
    assert "essay 'e04' has no rating by rater 'bob'" in err
    assert "register a `units` level by [essay]" in err and "docs/vocabulary.md, Units" in err
    assert not out.exists()


def test_icc_diagnoses_its_truth(tmp_path):
    # each rater: the true score with chance 0.7, each other score with 0.05; the raters are
    # exchangeable, so ICC(2,1) = ICC(3,1) = cov(L1, L2) / var(L)
    c = np.arange(1, 8)
    prevalence = np.array([0.1, 0.15, 0.15, 0.2, 0.15, 0.15, 0.1])
    confusion = np.full((7, 7), 0.05) + np.eye(7) * 0.65
    given = confusion @ c
    mean = prevalence @ given
    rho = (prevalence @ given**2 - mean**2) / (prevalence @ (confusion @ c**2) - mean**2)
    root = _project(tmp_path, "essayicc")
    got = _diagnose(root, "essayicc")
    assert got["icc21"]["truth"] == pytest.approx(rho, abs=5e-7)
    assert got["icc31"]["truth"] == pytest.approx(rho, abs=5e-7)
    assert got["icc2k"]["truth"] == pytest.approx(3 * rho / (1 + 2 * rho), abs=5e-7)
    assert abs(got["icc21"]["bias"]) <= 4 * got["icc21"]["biasMcSe"]


# -- pass@5 with a lower bound ------------------------------------------------------------------

HALF = [7] * 9 + [1, 1] + [0] * 9  # pass@5: nine 1s, two 1/2s, nine 0s: exactly 1/2
SIXTY = [6] * 11 + [1, 1] + [0] * 7  # eleven 1s, two 1/2s: exactly 3/5
FAILED = {(0, 10), (19, 10)}  # a failed run (passed null) in an all-pass and an all-fail problem


def _samples(root: Path, passes, name: str) -> Path:
    path = root / f"{name}.jsonl"
    with path.open("w") as f:
        for j, c in enumerate(passes):
            for s in range(1, 11):
                passed = None if (j, s) in FAILED else s <= c
                f.write(json.dumps({"problem": f"p{j + 1:02d}", "sample": s, "model": "m1", "passed": passed}) + "\n")  # fmt: skip
    return path


def _per_problem(passes, k: int) -> list[Fraction]:
    out = []
    for j, c in enumerate(passes):
        n = 10 - sum(1 for p, _ in FAILED if p == j)
        hits = sum(1 for s in range(1, c + 1) if (j, s) not in FAILED)
        out.append(1 - Fraction(comb(n - hits, k), comb(n, k)))
    return out


def _se(xs: list[Fraction]) -> float:
    """The standard error over problems, exactly rounded (from the exact variance)."""
    from decimal import Decimal, localcontext

    m = sum(xs) / len(xs)
    se2 = sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs)
    with localcontext() as ctx:
        ctx.prec = 50
        return float((Decimal(se2.numerator) / Decimal(se2.denominator)).sqrt())


def test_pass_at_k_t_on_its_margin(tmp_path):
    root = _project(tmp_path, "passbound")
    doc, md = _score(root, "passbound", _samples(root, HALF, "half"))
    rows = {a["id"]: a for a in doc["analyses"]}
    a = rows["pass5"]
    xs = _per_problem(HALF, 5)
    assert sum(xs) / 20 == Fraction(1, 2) and a["exact"]["estimate"] == "1/2"
    assert a["statistic"] == 0.0 and a["p"] == 0.5 and a["df"] == 19.0
    res = stats.ttest_1samp(np.array([float(x) for x in xs]), 0.5, alternative="greater")
    assert a["lower"] == pytest.approx(res.confidence_interval(0.95).low, rel=1e-13)
    assert a["se"] == _se(xs)
    assert a["counts"]["samples"] == 198 and a["counts"]["problems"] == 20
    assert Fraction(rows["pass1"]["exact"]["estimate"]) == sum(_per_problem(HALF, 1)) / 20
    assert doc["verdicts"] == {"solves": "not-supported", "solves-often": "not-supported"}
    assert "P < 0.05: met by 0 of 1 (pass5 (0.5))" in md


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_pass_at_k_estimate_on_its_threshold(tmp_path, op, verdict):
    text = (NEWCOMER / "passbound.yaml").read_text()
    old = "compare: {target: pass5, quantity: estimate, op: ge, value: 0.6}"
    root = _project(tmp_path, "passbound", _swap(text, old, old.replace("op: ge", f"op: {op}")))
    doc, _ = _score(root, "passbound", _samples(root, SIXTY, "sixty"))
    a = doc["analyses"][0]
    xs = _per_problem(SIXTY, 5)
    assert a["exact"]["estimate"] == "3/5" == str(sum(xs) / 20)
    res = stats.ttest_1samp(np.array([float(x) for x in xs]), 0.5, alternative="greater")
    assert a["statistic"] == pytest.approx(res.statistic, rel=1e-14)
    assert a["p"] == pytest.approx(res.pvalue, rel=1e-12)
    assert a["lower"] == pytest.approx(res.confidence_interval(0.95).low, rel=1e-13)
    assert a["se"] == _se(xs)
    assert doc["verdicts"] == {"solves": "not-supported", "solves-often": verdict}


def test_pass_at_k_t_diagnoses_its_truth(tmp_path):
    # a problem's pass chance is probit-normal: rate 0.3, latent correlation 0.5 within it
    q, r = stats.norm.ppf(0.3), 0.5

    def at(u):
        p = stats.norm.cdf((q - math.sqrt(r) * u) / math.sqrt(1 - r))
        return (1 - (1 - p) ** 5) * stats.norm.pdf(u)

    truth, _ = integrate.quad(at, -12, 12, epsabs=1e-13)
    root = _project(tmp_path, "passbound")
    got = _diagnose(root, "passbound")
    assert got["pass5"]["truth"] == pytest.approx(truth, abs=5e-7)
    assert got["pass1"]["truth"] == pytest.approx(0.3, abs=5e-7)
    assert abs(got["pass5"]["bias"]) <= 4 * got["pass5"]["biasMcSe"]
    coverage = got["pass5"]["coverage"]
    assert abs(coverage["share"] - 0.95) <= 4 * max(coverage["mcSe"], 0.0154)


def test_pass_at_k_beyond_a_problems_samples_is_refused_naming_the_problem(tmp_path, capsys):
    """p01's failed run leaves it 9 samples: pass@10 is refused naming p01, where the refusal
    said "problem 0" (its position among the problems)."""
    text = (NEWCOMER / "passbound.yaml").read_text()
    root = _project(tmp_path, "passbound", _swap(text, "options: {k: 5,", "options: {k: 10,"))
    log = _samples(root, HALF, "half")
    out = root / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "passbound", "score", *args]) == 2
    err = capsys.readouterr().err
    assert "analysis pass5 (pass-at-k-t)" in err
    assert "problem 'p01': k = 10 exceeds its n = 9 samples" in err and "problem 0" not in err
    assert not out.exists()


def test_icc_from_pandas_exports_of_a_score_with_a_missing_value(tmp_path, capsys):
    """pandas reads the R export's NA as NaN, making the scores floats: its to_csv writes 5.0,
    refused for an integer field with the way to write 5 (astype('Int64')), which scores as
    the R export does."""
    import pandas as pd

    root = _project(tmp_path, "essayicc")
    frame = pd.read_csv(_r_export(root, missing={(3, 1)}))
    floats, whole = root / "floats.csv", root / "whole.csv"
    frame.to_csv(floats, index=False)
    assert main(["--project", str(root), "essayicc", "score", "--observations", str(floats),
                 "--out", str(root / "F.json"), "--quiet"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "field score: '5.0' is not a whole number" in err
    assert "df['score'].astype('Int64') before to_csv writes 5" in err
    frame.assign(score=frame["score"].astype("Int64")).to_csv(whole, index=False)
    doc, _ = _score(root, "essayicc", whole)
    expected, _ = _score(root, "essayicc", _r_export(root, missing={(3, 1)}))
    assert doc["analyses"] == expected["analyses"] and doc["verdicts"] == expected["verdicts"]


# -- a Hodges–Lehmann shift on its threshold (hlshift.yaml) ----------------------------------------

NEW = [0.3, 0.45, 0.6, 0.75, 0.9]
OLD = [0.1, 0.25, 0.42, 0.55, 0.71]


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_hodges_lehmann_shift_exactly_on_its_threshold(tmp_path, op, verdict):
    """The median of the 25 differences of the decimals is exactly 0.2 (0.3 − 0.1, its float
    0.19999999999999998, and 0.45 − 0.25 are among them): `ge 0.2` holds and `gt` fails.
    It was decided on the float median, below 0.2, so `ge` failed on these data. The exact
    95% interval's bounds are the order statistics of the exact differences."""
    import pandas as pd

    diffs = sorted(Fraction(repr(a)) - Fraction(repr(b)) for a in NEW for b in OLD)
    assert diffs[12] == Fraction(1, 5) and float(np.median(np.subtract.outer(NEW, OLD))) < 0.2
    text = (NEWCOMER / "hlshift.yaml").read_text()
    old = "compare: {target: hl, quantity: estimate, op: ge, value: 0.2}"
    root = _project(tmp_path, "hlshift", _swap(text, old, old.replace("op: ge", f"op: {op}")))
    rows = [{"item": f"{m}{i}", "model": m, "score": v} for m, vs in (("new", NEW), ("old", OLD)) for i, v in enumerate(vs)]  # fmt: skip
    log = root / "scores.csv"
    pd.DataFrame(rows).to_csv(log, index=False)
    doc, md = _score(root, "hlshift", log)
    (a,) = doc["analyses"]
    assert a["exact"]["estimate"] == "1/5"
    # the exact interval: c the largest with P(U <= c - 1) <= 0.025 under the null
    null = _mann_whitney_counts(5, 5)
    total, below, c = sum(null.values()), 0, 0
    while Fraction(below + null.get(c, 0), total) <= Fraction(1, 40):
        below, c = below + null.get(c, 0), c + 1
    assert a["extra"]["c"] == c
    assert Fraction(a["exact"]["lower"]) == diffs[c - 1]
    assert Fraction(a["exact"]["upper"]) == diffs[25 - c]
    assert doc["verdicts"] == {"shift": verdict}
    assert ("met by 1 of 1" if verdict == "supported" else "met by 0 of 1") in md


def test_icc_of_scores_in_tenths_is_exactly_on_its_threshold(tmp_path):
    """The same essays scored 0.1 to 0.7 (a number field): the ICC is scale free, so ICC(2,1)
    is exactly 3/4 of the decimals and `ge 0.75` holds. It was the ICC of the binary floats,
    9813441062630822601670803791502457/13084588083507763592593274820446299, a hair below, and
    the study was not supported while SCORE.json showed 0.75."""
    text = (NEWCOMER / "essayicc.yaml").read_text()
    old = "{name: score, type: integer, nullable: true, minimum: 1, maximum: 7, null_values: [NA]}"
    new = "{name: score, type: number, nullable: true, minimum: 0, maximum: 1, null_values: [NA]}"
    text = _swap(text, old, new)
    text = text[: text.index("scenarios:\n")] + text[text.index("constants:\n") :]
    root = _project(tmp_path, "essayicc", text)
    lines = ["essay,rater,score"] + [
        f"e{i + 1:02d},{RATERS[j]},{v / 10}"
        for i, row in enumerate(SCORES)
        for j, v in enumerate(row)
    ]
    log = root / "tenths.csv"
    log.write_text("\n".join(lines) + "\n")
    doc, _ = _score(root, "essayicc", log)
    rows = {a["id"]: a for a in doc["analyses"]}
    assert rows["icc21"]["exact"]["estimate"] == "3/4"
    bms, jms, ems, wms = _mean_squares(SCORES)
    assert Fraction(rows["icc21"]["exact"]["BMS"]) == bms / 100
    assert Fraction(rows["icc21"]["exact"]["EMS"]) == ems / 100
    assert doc["verdicts"] == {"reliable": "supported"}
