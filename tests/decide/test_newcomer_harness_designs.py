"""Three designs written from the docs alone by newcomers (tests/fixtures/newcomer/), each with
data laid out as a real tool writes it, scored end to end with data placed exactly on a
threshold (both sides of `le`/`lt`, `ge`/`gt` checked) against an independent oracle:

- calibpair.yaml: two models' probabilities on the same 20 questions, one log per model as an
  evaluation harness writes it (the model left out of the records, `per_file`; the harness's
  own fields `doc`, `arguments`, `resps`, ... declared, the 0/1 target an integer). The tuned
  model's Brier score exceeds the base model's by exactly 1/100, the non-inferiority margin:
  t = 0 and P = 1/2; its ECE is exactly 1/10 (hand Fractions, sklearn, scipy's ttest_rel);
- clusterpass.yaml: pass@1 of two models, 5 samples of each of 12 problems in 4
  repositories, a pandas CSV (True/False, written with index=False); the difference is exactly
  the margin -1/20, with a CR1 cluster-robust SE over repositories (statsmodels' OLS with
  cov_type='cluster'); pass@5 over problems against scipy's ttest_1samp of the per-problem
  differences;
- judgetost.yaml: two judges' scores side by side in an R export (quoted header, NA for a
  score not given), TOST of the paired difference (`b_metric`), its mean exactly the lower
  margin -1/2 (statsmodels' ttost_paired); diagnose reports the truth of the difference of the
  two fields' means (the scenario's 6.9 - 7);
- pickbest.yaml: three candidates against the current prompt by the one-sided pooled z,
  Holm-adjusted together (statsmodels), and a decision that ships the best one that beats it:
  two candidates tie exactly, so `ge 0` on their difference ships the first and `gt 0` the
  second."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES


def _project(root: Path, name: str, text: str | None = None) -> Path:
    if text is None:
        text = (FIXTURES / "newcomer" / f"{name}.yaml").read_text()
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{name}.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _score(root: Path, name: str, *observations: str, tag: str = "s") -> dict:
    out = root / f"{tag}.SCORE.json"
    args = [a for o in observations for a in ("--observations", o)]
    assert main(["--project", str(root), name, "score", *args, "--out", str(out), "--quiet"]) == 0
    return json.loads(out.read_text())


def _swap(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# -- calibration of two models, one harness log per model ----------------------------------------

TARGET = [1] * 7 + [0] * 3 + [1] * 3 + [0] * 7
TUNED = ["0.9"] * 10 + ["0.3"] * 10
BASE = ["0.8"] * 10 + ["0.4"] * 10


def _harness_logs(root: Path, tuned: list[str]) -> list[str]:
    """One samples file per model as an lm-eval-harness-like tool writes it: the harness's own
    fields beside the probability, no model field."""
    names = []
    for model, probs in (("base", BASE), ("tuned", tuned)):
        path = root / f"samples_boolq_{model}.jsonl"
        with path.open("w") as f:
            for i, (p, y) in enumerate(zip(probs, TARGET, strict=True)):
                rec = {
                    "doc_id": i,
                    "doc": {"question": f"question {i}?", "answer": bool(y)},
                    "target": y,
                    "arguments": [[f"question {i}?", " yes"]],
                    "resps": [[[-0.1, False]]],
                    "prob": float(p),
                    "acc": float((float(p) >= 0.5) == bool(y)),
                    "doc_hash": f"{i:016x}",
                }
                f.write(json.dumps(rec) + "\n")
        names.append(f"{model}={path}")
    return names


def _brier(probs: list[str]) -> Fraction:
    return sum((Fraction(p) - y) ** 2 for p, y in zip(probs, TARGET, strict=True)) / len(TARGET)


def _ece(probs: list[str], edges: list[str]) -> Fraction:
    """Bins closed on the right, (e0, e1] with the first closed: a plain loop."""
    e = [Fraction(x) for x in edges]
    total = Fraction(0)
    for b in range(len(e) - 1):
        rows = [
            (Fraction(p), y)
            for p, y in zip(probs, TARGET, strict=True)
            if (e[b] < Fraction(p) or b == 0 and Fraction(p) == e[0]) and Fraction(p) <= e[b + 1]
        ]
        if rows:
            acc = Fraction(sum(y for _, y in rows), len(rows))
            conf = sum(p for p, _ in rows) / len(rows)
            total += Fraction(len(rows), len(probs)) * abs(acc - conf)
    return total


@pytest.mark.parametrize(("op", "verdict"), [("le", "supported"), ("lt", "not-supported")])
def test_brier_difference_on_its_margin_from_harness_logs(tmp_path, op, verdict):
    from sklearn.metrics import brier_score_loss

    text = (FIXTURES / "newcomer" / "calibpair.yaml").read_text()
    text = _swap(
        text,
        "quantity: estimate, op: le, value: 0.01",
        f"quantity: estimate, op: {op}, value: 0.01",
    )
    text = _swap(
        text, "quantity: estimate, op: le, value: 0.1", f"quantity: estimate, op: {op}, value: 0.1"
    )
    root = _project(tmp_path, "calibpair", text)
    doc = _score(root, "calibpair", *_harness_logs(root, TUNED))
    assert _brier(TUNED) - _brier(BASE) == Fraction(1, 100)
    assert _ece(TUNED, ["0", "0.2", "0.4", "0.6", "0.8", "1"]) == Fraction(1, 10)
    (a,) = doc["analyses"]
    assert a["exact"]["estimate"] == "1/100"
    y = np.array(TARGET)
    assert a["extra"]["brier_a"] == pytest.approx(brier_score_loss(y, [float(p) for p in TUNED]))
    assert a["extra"]["brier_b"] == pytest.approx(brier_score_loss(y, [float(p) for p in BASE]))
    # on the margin t = 0 and the one-sided P is 1/2 exactly: the rule p lt 0.05 fails
    assert a["statistic"] == 0.0 and a["p"] == 0.5
    d = (np.array([float(p) for p in TUNED]) - y) ** 2 - (
        np.array([float(p) for p in BASE]) - y
    ) ** 2
    assert a["se"] == pytest.approx(stats.sem(d), rel=1e-12)
    (est,) = doc["estimates"]
    assert est["id"] == "tuned-ece" and est["estimate"] == pytest.approx(0.1)
    assert doc["verdicts"] == {
        "not-worse": "not-supported",
        "no-worse-observed": verdict,
        "tuned-calibrated": verdict,
    }


def test_brier_noninferiority_supported_against_scipy(tmp_path):
    """The tuned model sharper (0.95 / 0.2): non-inferior at the margin 0.01, P from scipy's
    one-sample t of the per-question differences against the margin."""
    tuned = ["0.95"] * 7 + ["0.8"] * 3 + ["0.35"] * 3 + ["0.2"] * 7
    root = _project(tmp_path, "calibpair")
    doc = _score(root, "calibpair", *_harness_logs(root, tuned))
    (a,) = doc["analyses"]
    y = np.array(TARGET)
    d = (np.array([float(p) for p in tuned]) - y) ** 2 - (
        np.array([float(p) for p in BASE]) - y
    ) ** 2
    ref = stats.ttest_1samp(d, 0.01, alternative="less")
    assert Fraction(a["exact"]["estimate"]) == _brier(tuned) - _brier(BASE)
    assert a["statistic"] == pytest.approx(ref.statistic, rel=1e-9)
    assert a["p"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert ref.pvalue < 0.05
    assert doc["verdicts"]["not-worse"] == "supported"


def test_a_harness_log_naming_another_model_is_refused(tmp_path, capsys):
    root = _project(tmp_path, "calibpair")
    base, tuned = _harness_logs(root, TUNED)
    path = Path(tuned.split("=", 1)[1])
    lines = path.read_text().splitlines()
    lines[3] = json.dumps({**json.loads(lines[3]), "model": "base"})
    path.write_text("\n".join(lines) + "\n")
    out = root / "x.json"
    args = ["--observations", base, "--observations", tuned, "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "calibpair", "score", *args]) != 0
    err = capsys.readouterr().err
    assert f"{path.name}:4" in err and "model" in err
    assert not out.exists()


# -- pass@1 with repositories as clusters, a pandas CSV ------------------------------------------

REF = {"r1": [3, 4, 2], "r2": [3, 1, 4], "r3": [1, 3, 5], "r4": [2, 4, 3]}
DISTILLED = {"r1": [3, 3, 2], "r2": [2, 0, 4], "r3": [2, 3, 5], "r4": [2, 3, 3]}


def _frame(distilled: dict[str, list[int]]):
    import pandas as pd

    rows = []
    for model, passes in (("distilled", distilled), ("reference", REF)):
        for repo, counts in passes.items():
            for j, c in enumerate(counts):
                for s in range(5):
                    rows.append(
                        {
                            "repo": repo,
                            "problem": f"{repo}/p{j}",
                            "sample": s,
                            "model": model,
                            "passed": s < c,
                        }
                    )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_clustered_pass1_on_its_margin_against_statsmodels(tmp_path, op, verdict):
    import statsmodels.api as sm
    from scipy.special import comb

    text = (FIXTURES / "newcomer" / "clusterpass.yaml").read_text()
    text = _swap(
        text,
        "quantity: estimate, op: ge, value: -0.05",
        f"quantity: estimate, op: {op}, value: -0.05",
    )
    root = _project(tmp_path, "clusterpass", text)
    frame = _frame(DISTILLED)
    frame.to_csv(root / "samples.csv", index=False)  # True/False, as pandas writes them
    assert "True" in (root / "samples.csv").read_text()
    doc = _score(root, "clusterpass", str(root / "samples.csv"))
    got = {a["id"]: a for a in doc["analyses"]}
    crm = got["crm"]
    assert crm["exact"]["estimate"] == "-1/20"
    x = frame["passed"].astype(float).to_numpy()
    arm = (frame["model"] == "distilled").astype(float).to_numpy()
    fit = sm.OLS(x, sm.add_constant(arm)).fit(
        cov_type="cluster",
        cov_kwds={"groups": frame["repo"].astype("category").cat.codes},
        use_t=True,
    )
    assert crm["estimate"] == pytest.approx(fit.params[1], abs=1e-12)
    assert crm["se"] == pytest.approx(fit.bse[1], rel=1e-9)
    assert crm["df"] == 3
    # on the margin: t = 0 and the one-sided P is 1/2 exactly
    assert crm["statistic"] == 0.0 and crm["p"] == 0.5

    # pass@5 over problems: each problem's 1 - C(5 - c, 5)/C(5, 5), paired t against -0.1
    def p5(c):
        return 1 - comb(5 - c, 5, exact=True) / comb(5, 5, exact=True)

    diffs = [p5(a) - p5(b) for r in REF for a, b in zip(DISTILLED[r], REF[r], strict=True)]
    ref = stats.ttest_1samp(diffs, -0.1, alternative="greater")
    p5d = got["pass5-diff"]
    assert p5d["exact"]["estimate"] == "-1/12"
    assert p5d["statistic"] == pytest.approx(ref.statistic, rel=1e-9)
    assert p5d["p"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert doc["verdicts"] == {
        "not-inferior": "not-supported",
        "within-margin-observed": verdict,
        "pass5-not-inferior": "supported",
    }


def test_clustered_pass1_supported_against_statsmodels(tmp_path):
    """The distilled model as good as the reference: the one-sided P from statsmodels' CR1 t
    of the difference less the margin, G - 1 df."""
    import statsmodels.api as sm

    root = _project(tmp_path, "clusterpass")
    distilled = {"r1": [3, 4, 3], "r2": [3, 1, 4], "r3": [2, 3, 5], "r4": [2, 4, 3]}
    frame = _frame(distilled)
    frame.to_csv(root / "samples.csv", index=False)
    doc = _score(root, "clusterpass", str(root / "samples.csv"))
    crm = next(a for a in doc["analyses"] if a["id"] == "crm")
    x = frame["passed"].astype(float).to_numpy()
    arm = (frame["model"] == "distilled").astype(float).to_numpy()
    fit = sm.OLS(x, sm.add_constant(arm)).fit(
        cov_type="cluster",
        cov_kwds={"groups": frame["repo"].astype("category").cat.codes},
        use_t=True,
    )
    t = (fit.params[1] + 0.05) / fit.bse[1]
    assert crm["statistic"] == pytest.approx(t, rel=1e-9)
    assert crm["p"] == pytest.approx(stats.t.sf(t, 3), rel=1e-9)
    assert doc["verdicts"]["not-inferior"] == (
        "supported" if stats.t.sf(t, 3) < 0.05 else "not-supported"
    )


def test_a_pandas_index_column_is_refused_by_name(tmp_path, capsys):
    root = _project(tmp_path, "clusterpass")
    _frame(DISTILLED).to_csv(root / "samples.csv")  # the index as an unnamed first column
    out = root / "x.json"
    args = ["--observations", str(root / "samples.csv"), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "clusterpass", "score", *args]) != 0
    err = capsys.readouterr().err
    assert "samples.csv" in err and "index=False" in err
    assert not out.exists()


# -- TOST of two judges' scores, side by side in an R export -------------------------------------

STRONG = ["7", "6.5", "8", "5", "9", "4.5", "7.5", "6", "8.5", "5.5", "7"]
DIFF = ["-0.5", "-1", "0", "-0.5", "-1.5", "0.5", "-0.5", "-1", "0", "-0.5", "-0.5"]


def _r_export(root: Path, shift: str = "0") -> tuple[Path, np.ndarray, np.ndarray]:
    """write.csv(row.names = FALSE): quoted header and strings, NA for a missing score."""
    lines, strong, cheap = ['"answer_id","strong","cheap"'], [], []
    k = 0
    for i in range(12):
        if i == 4:
            lines.append(f'"a{i:02d}",6,NA')
            continue
        s = Fraction(STRONG[k])
        c = s + Fraction(DIFF[k]) + Fraction(shift)
        k += 1
        strong.append(float(s))
        cheap.append(float(c))
        lines.append(f'"a{i:02d}",{float(s):g},{float(c):g}')
    path = root / f"judges{shift}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, np.array(cheap), np.array(strong)


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_tost_of_two_judges_on_its_margin_from_an_r_export(tmp_path, op, verdict):
    from statsmodels.stats.weightstats import ttost_paired

    assert sum(Fraction(d) for d in DIFF) / len(DIFF) == Fraction(-1, 2)
    text = (FIXTURES / "newcomer" / "judgetost.yaml").read_text()
    text = _swap(
        text,
        "quantity: estimate, op: ge, value: -0.5",
        f"quantity: estimate, op: {op}, value: -0.5",
    )
    root = _project(tmp_path, "judgetost", text)
    path, cheap, strong = _r_export(root)
    doc = _score(root, "judgetost", str(path))
    (a,) = doc["analyses"]
    assert a["exact"]["estimate"] == "-1/2"
    assert a["counts"]["pairs"] == 11  # the answer the cheap judge left NA is not paired
    assert a["extra"]["statistic_lower"] == 0.0 and a["extra"]["p_lower"] == 0.5
    p, _, upper = ttost_paired(cheap, strong, -0.5, 0.5)
    assert a["extra"]["p_upper"] == pytest.approx(upper[1], rel=1e-9)
    assert a["p"] == 0.5
    assert doc["verdicts"] == {"equivalent": "not-supported", "close-observed": verdict}


def test_tost_of_two_judges_equivalent_against_statsmodels(tmp_path):
    from statsmodels.stats.weightstats import ttost_paired

    root = _project(tmp_path, "judgetost")
    path, cheap, strong = _r_export(root, "0.4")
    doc = _score(root, "judgetost", str(path))
    (a,) = doc["analyses"]
    p, lower, upper = ttost_paired(cheap, strong, -0.5, 0.5)
    assert a["p"] == pytest.approx(p, rel=1e-9)
    assert a["extra"]["p_lower"] == pytest.approx(lower[1], rel=1e-9)
    assert p < 0.05
    assert doc["verdicts"]["equivalent"] == "supported"


def test_tost_of_two_judges_diagnoses_its_truth(tmp_path):
    """The scenario draws each judge's score in its own field of one row; the row's own key
    pairs it with itself, and the truth is the difference of the two means, 6.9 - 7."""
    root = _project(tmp_path, "judgetost")
    out = root / "DIAGNOSE.json"
    args = ["--project", str(root), "judgetost", "diagnose", "--quiet", "--simulations", "300"]
    assert main([*args, "--seed", "2", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    (got,) = cond["analyses"]
    assert got["truth"] == pytest.approx(-0.1, abs=1e-9)
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]


def test_compile_still_refuses_a_pair_by_no_scenario_lays_out_when_not_wide(tmp_path, capsys):
    """Without b_metric, a and b reading one field of the same rows is not a wide comparison:
    a row named by its position alone pairs with nothing, and compile still says so."""
    text = (FIXTURES / "newcomer" / "judgetost.yaml").read_text()
    text = _swap(text, "        b_metric: strong\n", "")
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "judgetost.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "its pair_by 'answer_id' is no field the scenario lays out" in err
    assert not (tmp_path / "generated").exists()


def test_a_harness_log_read_against_a_contract_that_does_not_fit_says_how(tmp_path, capsys):
    """A harness writes fields the study does not read and its gold label as 1/0: each problem
    is located at its line, and one hint under them says what the contract declares instead."""
    text = (FIXTURES / "newcomer" / "calibpair.yaml").read_text()
    text = _swap(text, "      - {name: doc, type: object, required: false}\n", "")
    text = _swap(
        text,
        "{name: target, type: integer, allowed: [0, 1]}",
        '{name: target, type: boolean, true_values: ["1"], false_values: ["0"]}',
    )
    text = _swap(
        text,
        "where: [{field: target, op: eq, value: 1}]",
        "where: [{field: target, op: eq, value: true}]",
    )
    root = _project(tmp_path, "calibpair", text)
    out = root / "x.json"
    args = [a for o in _harness_logs(root, TUNED) for a in ("--observations", o)]
    assert main(["--project", str(root), "calibpair", "score", *args, "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert "samples_boolq_base.jsonl:1: at /: unexpected field 'doc'" in err
    assert "samples_boolq_base.jsonl:1: at /target: expected boolean, got 1" in err
    assert err.count("hint: a record carries only the fields its record contract names") == 1
    assert "write other_fields: ignore on the contract" in err
    assert "{name: doc, type: object, required: false}" in err
    assert err.count("hint: a JSON boolean is written true or false") == 1
    assert "{type: integer, allowed: [0, 1]}" in err
    assert not out.exists()


def _diagnosed(root: Path, name: str, n: int) -> dict:
    out = root / "DIAGNOSE.json"
    args = ["--project", str(root), name, "diagnose", "--quiet", "--simulations", str(n)]
    assert main([*args, "--seed", "2", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    return {a["id"]: a for a in cond["analyses"]}


@pytest.mark.parametrize("coded", ["true", "false"])
def test_clustered_pass1_diagnoses_the_rate_difference(tmp_path, coded):
    """The 0/1 field derived from the outcome has as mean the cell's rate, whatever the
    repositories' and problems' correlation: the truth of the CR1 difference is 0.55 - 0.6
    (the outcome coded from its true or its false side alike), the bias within 4 Monte Carlo
    SEs, and at the margin the one-sided test rejects at about its level."""
    text = (FIXTURES / "newcomer" / "clusterpass.yaml").read_text()
    if coded == "false":
        text = _swap(
            text,
            "      - {when: [{field: passed, op: eq, value: true}], value: 1}\n      - {value: 0}\n",
            "      - {when: [{field: passed, op: eq, value: false}], value: 0}\n      - {value: 1}\n",
        )
    root = _project(tmp_path, "clusterpass", text)
    got = _diagnosed(root, "clusterpass", 300)["crm"]
    assert got["truth"] == pytest.approx(-0.05, abs=1e-12)
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]
    assert abs(got["rejected"]["share"] - 0.05) <= 4 * np.sqrt(0.05 * 0.95 / 300)


def test_clustered_pass5_difference_diagnoses_its_truth(tmp_path):
    """pass@5's difference over problems has as truth the difference of each model's
    E[1 - (1 - p)^5], p probit-normal over problems with the latent correlation the samples of
    one problem share (repository 0.1 + problem 0.3), by scipy's quadrature."""
    from scipy import integrate

    def expected(rate: float, rho: float = 0.4) -> float:
        def f(w):
            z = (stats.norm.ppf(rate) - np.sqrt(rho) * w) / np.sqrt(1 - rho)
            return (1 - (1 - stats.norm.cdf(z)) ** 5) * stats.norm.pdf(w)

        return integrate.quad(f, -12, 12, epsabs=1e-13)[0]

    root = _project(tmp_path, "clusterpass")
    got = _diagnosed(root, "clusterpass", 300)["pass5-diff"]
    assert got["truth"] == pytest.approx(expected(0.55) - expected(0.6), abs=5e-7)  # 6 decimals
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]


_CLOSE = (
    "scenarios:\n"
    "  - id: close\n"
    "    description: Both calibrated.\n"
    "    outcome: target\n"
    "{values}"
    "    calibration:\n"
    "      - {{field: prob, distribution: uniform, low: 0.3, high: 1, curve: {curve}}}\n"
    "constants:\n"
)


def _with_scenario(values: str, curve: str = "calibrated") -> str:
    text = (FIXTURES / "newcomer" / "calibpair.yaml").read_text()
    return _swap(text, "constants:\n", _CLOSE.format(values=values, curve=curve))


def test_a_scenario_on_a_harness_1_0_outcome_without_its_values_is_refused_saying_why(
    tmp_path, capsys
):
    """The harness's target is an integer 0/1; a scenario that does not say what it writes
    there is refused at the scenario's line, saying what would make it work."""
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "calibpair.yaml").write_text(_with_scenario(""))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "outcome 'target' is not a boolean field of 'sample' (it is integer):" in err
    assert "with outcome_values (for an outcome logged as 1 and 0: {holds: 1, otherwise: 0})" in err
    assert not (tmp_path / "generated").exists()


def _ece_truth(root: Path) -> float:
    out = root / "DIAGNOSE.json"
    args = ["--project", str(root), "calibpair", "diagnose", "--quiet", "--simulations", "20"]
    assert main([*args, "--seed", "1", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    return next(e for e in cond["estimates"] if e["id"] == "tuned-ece")["truth"]


def test_a_scenario_writes_the_harness_1_0_outcome_and_diagnoses_its_ece(tmp_path):
    """With outcome_values 1 and 0 the scenario draws the harness's own log, and the ECE's
    truth (the outcome read as `target eq 1`) under a curve overconfident by 0.1 is the one
    of the same study logging the target as a boolean read as `target eq true`: 0.1 (every
    confidence from 0.3 up is 0.1 above its chance, and five bins do not mix signs)."""
    over = "overconfident, margin: 0.1"
    ones = _project(
        tmp_path / "ones",
        "calibpair",
        _with_scenario("    outcome_values: {holds: 1, otherwise: 0}\n", over),
    )
    text = _with_scenario("", over)
    text = _swap(
        text, "{name: target, type: integer, allowed: [0, 1]}", "{name: target, type: boolean}"
    )
    text = _swap(
        text,
        "where: [{field: target, op: eq, value: 1}]",
        "where: [{field: target, op: eq, value: true}]",
    )
    bools = _project(tmp_path / "bools", "calibpair", text)
    truth = _ece_truth(ones)
    assert truth == pytest.approx(0.1, abs=1e-6)
    assert truth == _ece_truth(bools)


# -- several candidates, Holm over the three, a decision that picks one ---------------------------


def _runs(root: Path, solved: dict[str, int]) -> Path:
    path = root / "runs.jsonl"
    with path.open("w") as f:
        for prompt, hits in solved.items():
            for i in range(100):
                f.write(
                    json.dumps({"task": f"t{i:03d}", "prompt": prompt, "solved": i < hits}) + "\n"
                )
    return path


@pytest.mark.parametrize(("op", "outcome"), [("ge", "ship-c1"), ("gt", "ship-c2")])
def test_pick_the_best_candidate_on_a_tie_against_statsmodels(tmp_path, op, outcome):
    """c1 and c2 both solve 58 of 100 against the current 40 (c3 45): the difference c1 - c2
    is exactly 0, so the rule `c1-c2 estimate ge 0` ships c1 and `gt 0` passes to c2; the
    P values are statsmodels' pooled z (one-sided), Holm-adjusted by multipletests."""
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import proportions_ztest

    text = (FIXTURES / "newcomer" / "pickbest.yaml").read_text()
    text = _swap(
        text,
        "- compare: {target: c1-c2, quantity: estimate, op: ge, value: 0}",
        f"- compare: {{target: c1-c2, quantity: estimate, op: {op}, value: 0}}",
    )
    root = _project(tmp_path, "pickbest", text)
    solved = {"current": 40, "c1": 58, "c2": 58, "c3": 45}
    doc = _score(root, "pickbest", str(_runs(root, solved)))
    raw = [
        proportions_ztest([solved[c], solved["current"]], [100, 100], alternative="larger")[1]
        for c in ("c1", "c2", "c3")
    ]
    adjusted = multipletests(raw, alpha=0.05, method="holm")[1]
    got = {a["id"]: a for a in doc["analyses"]}
    for c, p, adj in zip(("c1", "c2", "c3"), raw, adjusted, strict=True):
        assert got[f"beats-{c}"]["p"] == pytest.approx(p, rel=1e-9)
        assert got[f"beats-{c}"]["adjustedP"] == pytest.approx(adj, rel=1e-9)
    assert adjusted[0] < 0.05 and adjusted[2] >= 0.05
    tie = next(c for c in doc["contrasts"] if c["id"] == "c1-c2")
    assert Fraction(solved["c1"], 100) - Fraction(solved["c2"], 100) == 0
    assert tie["estimate"] == 0.0
    assert doc["verdicts"] == {"beats": "supported", "ranking": "reported-only"}
    assert doc["decision"]["outcome"] == outcome


def test_pick_keeps_the_current_prompt_when_no_candidate_survives_holm(tmp_path):
    """c1 alone is near the line: its raw P is below 0.05 but Holm's smallest adjusted P is
    3 times it (statsmodels), above 0.05, so no candidate ships."""
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import proportions_ztest

    root = _project(tmp_path, "pickbest")
    solved = {"current": 40, "c1": 52, "c2": 44, "c3": 41}
    doc = _score(root, "pickbest", str(_runs(root, solved)))
    raw = [
        proportions_ztest([solved[c], solved["current"]], [100, 100], alternative="larger")[1]
        for c in ("c1", "c2", "c3")
    ]
    adjusted = multipletests(raw, alpha=0.05, method="holm")[1]
    assert raw[0] < 0.05 <= adjusted[0]
    assert doc["verdicts"]["beats"] == "not-supported"
    assert doc["decision"]["outcome"] == "keep-current"
