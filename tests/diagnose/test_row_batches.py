"""diagnose's row path scored a block at a time (prereg.diagnose.batch) against the same
studies scored one at a time from their records (rows._run_records: records written as simulate
writes them, read back by the engine's attempt policy and scored by score's code).

The oracle is the one-study scorer itself on the same drawn rows: every verdict, decision
outcome and gate must be equal, and every figure kept per study (estimates, contrasts,
analyses) equal to the last bit, for each row kind: continuous (Welch on logs, the ratio of
geometric means, Fisher's exact test), calibration (ECE, AUROC) and paired (McNemar's exact
test, the paired t test), with partial coverage and failed first attempts, rounded numbers
(AUROC ties), and a threshold placed exactly on a study's figure (the study is scored alone,
by the certified comparison)."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.decide.metrics import row_metrics
from prereg.diagnose import rows as row_path
from prereg.diagnose.command import build_plan
from prereg.diagnose.design import Rules
from prereg.engines.factorial.commands import diagnose_design, row_data
from prereg.study import study_context
from tests.conftest import FIXTURES, ROOT

N = 80  # simulated studies per block


def compiled(root: Path, study: str, edits=()):
    text = (FIXTURES / "diagnose" / f"{study}.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{study}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    module, ctx = study_context(Project(root), study)
    rules = Rules(importlib.import_module(module.__name__ + ".rules"))
    design = diagnose_design(ctx.config)
    plan, _ = build_plan(ctx, design, rules, list(design.rows.scenarios), N, 11, "rows")
    return ctx, plan


def same_blocks(plan, condition: int) -> np.ndarray:
    """Score block 0 both ways and compare; the studies the block path scored alone."""
    one = row_path._run_records(plan, condition, 0)
    seen = []
    real = row_path._put_clear

    def spy(plan_, out, clear, *args):
        seen.append(clear)
        return real(plan_, out, clear, *args)

    row_path._put_clear = spy
    try:
        whole = row_path._run_batched(plan, condition, 0)
    finally:
        row_path._put_clear = real
    assert whole is not None
    assert whole.verdicts == one.verdicts
    assert whole.outcomes == one.outcomes
    assert np.array_equal(whole.gates, one.gates)
    for name in ("estimates", "contrasts", "analyses"):
        a, b = getattr(whole, name), getattr(one, name)
        assert a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=True), name  # bit for bit, not approx
    clear = seen[0] if seen else np.zeros(0, dtype=np.intp)
    return np.setdiff1d(np.arange(N), clear)


KINDS = [
    ("latency-analyses", ()),
    ("calibration", ()),
    ("paired", ()),
    # partial coverage and failed first attempts: arms of varying sizes, counted attempts
    (
        "latency-analyses",
        (
            (
                "    description: Both systems alike.\n",
                "    description: Both systems alike.\n"
                "    coverage: 0.8\n    failed_attempt_rate: 0.3\n",
            ),
        ),
    ),  # fmt: skip
    (
        "paired",
        (
            (
                "    description: As correlated, with no dependence within an item.\n",
                "    description: As correlated, with no dependence within an item.\n"
                "    coverage: 0.85\n    failed_attempt_rate: 0.2\n",
            ),
        ),
    ),  # fmt: skip
    # under 'better' every latency of an arm is one decimal (330.3 ms, 403.4 ms): their logs'
    # float variances are 1e-32 or so, but the one-study code finds no spread (no t): the block
    # sends each such study to it rather than give a t of 1e15
    (
        "latency-analyses",
        (
            (
                "levels: [new]}], distribution: lognormal, mean: 5.8, sd: 0.5}\n"
                "      - {field: latency_ms, distribution: lognormal, mean: 6.0, sd: 0.5}\n"
                "  - id: same",
                "levels: [new]}], distribution: lognormal, mean: 5.8, sd: 0.000001, decimals: 1}\n"
                "      - {field: latency_ms, distribution: lognormal, mean: 6.0, sd: 0.000001,"
                " decimals: 1}\n  - id: same",
            ),
        ),
    ),
    # a paired contrast without an interval: its estimate is the difference of the arms' means
    (
        "paired",
        (
            (
                "        pair_by: itemId\n        interval: t\n",
                "        pair_by: itemId\n        interval: none\n",
            ),
        ),
    ),
    # confidences rounded to 2 decimals: AUROC ties (mid-ranks), with a Hanley-McNeil interval
    (
        "calibration",
        (
            (
                "low: 0.5, high: 1, curve: calibrated}",
                "low: 0.5, high: 1, curve: calibrated, decimals: 2}",
            ),
            (
                "metric: auroc, of: {where: [{factor: split, levels: [test]}]}, interval: none",
                "metric: auroc, of: {where: [{factor: split, levels: [test]}]}, interval:"
                " hanley-mcneil",
            ),
        ),
    ),
    # the attempt policy reads the drawn confidence (null: the attempt failed), which only one
    # prompt's rows draw: the other prompt's rows are never observed
    (
        "calibration",
        (
            (
                "  failed: [{field: correct, op: is_null}]",
                "  failed_if_any: [{field: correct, op: is_null}, {field: confidence, op:"
                " is_null}]",
            ),
            (
                "    calibration:\n      - {field: confidence, distribution: uniform, low: 0.5,"
                " high: 1, curve: overconfident",
                "    calibration:\n      - {field: confidence, where: [{factor: prompt, levels:"
                " [plain]}], distribution: uniform, low: 0.5, high: 1, curve: overconfident",
            ),
        ),
    ),
]


def has_ties(plan, condition: int) -> bool:
    """Whether some study of block 0 has two counted confidences alike."""
    model = plan.design.rows
    seen, columns = model.batch(plan.conditions[condition], row_path.stream(plan, condition), 0, N)
    x = np.where(seen.reshape(-1), columns["confidence"].values, np.nan).reshape(N, -1)
    return any(np.unique(r[~np.isnan(r)]).size < (~np.isnan(r)).sum() for r in x)


@pytest.mark.parametrize(("study", "edits"), KINDS)
def test_block_equals_one_study_scorer(tmp_path, study, edits):
    _, plan = compiled(tmp_path, study, edits)
    alone = [same_blocks(plan, c) for c in range(len(plan.conditions))]
    if "decimals: 2" in str(edits):
        assert has_ties(plan, 0)  # the calibrated scenario's rounded confidences tie
    if "failed_if_any" in str(edits):
        assert plan.design.rows.column_model("overconfident")[2] == ["confidence"]
    if "sd: 0.000001" in str(edits):  # every 'better' study has no spread: scored alone
        assert alone[0].size == N and alone[1].size < N // 4
        return
    assert all(a.size < N // 4 for a in alone)  # most studies decided from the arrays


def test_batch_columns_equal_row_data(tmp_path):
    """The block's columns and row metrics equal, study by study, those row_data gives the
    records the one-study path draws from the same stream."""
    ctx, plan = compiled(
        tmp_path,
        "latency-analyses",
        (("    description: Both systems alike.\n", "    description: Both systems alike.\n"
          "    coverage: 0.9\n    failed_attempt_rate: 0.25\n"),),
    )  # fmt: skip
    model = plan.design.rows
    for c, cond in enumerate(plan.conditions):
        draws = row_path.stream(plan, c)
        seen, columns = model.batch(cond, draws, 0, 10)
        metrics = row_metrics(ctx.config["metrics"], columns, seen.reshape(-1))
        n = len(model.table)
        for i in range(10):
            records = model.records(cond, draws, i)
            m1, observed, c1, _ = row_data(ctx.config, model.table, records, "x")
            cut = slice(i * n, (i + 1) * n)
            for k, m in m1.items():
                for f in ("num", "den", "value", "hit", "raw"):
                    a, b = getattr(m, f), getattr(metrics[k], f)
                    assert (a is None) == (b is None)
                    if a is not None:
                        assert np.array_equal(a, b[cut], equal_nan=True), (k, f)
            for k in ("ok", "latency_ms", "attempt", "system", "rowId"):
                a, b = c1[k], columns[k]
                assert np.array_equal(a.null, b.null[cut]), k
                assert a.values[~a.null].tolist() == b.values[cut][~a.null].tolist(), k


def test_threshold_on_a_figure_is_decided_alone(tmp_path):
    """A rule whose threshold is exactly one study's ECE as a float: that study's comparison
    cannot be decided from the float (score decides it by the exact ECE of the decimal
    confidences), so the block path scores it alone, and the verdicts still agree."""
    _, plan = compiled(tmp_path / "a", "calibration")
    c = 0
    first = row_path._run_records(plan, c, 0)
    ece = float(first.estimates[3, 0, 0])  # study 4's ECE (estimate ece-all)
    _, plan = compiled(
        tmp_path / "b",
        "calibration",
        (
            (
                "quantity: estimate, op: le, value: 0.1}",
                f"quantity: estimate, op: le, value: {ece!r}}}",
            ),
        ),
    )
    alone = same_blocks(plan, c)
    assert 3 in alone.tolist()


def test_items_the_block_does_not_cover(tmp_path):
    """A bootstrap interval is computed study by study by score's row_results while the
    rest of the block stays whole; an analysis the block does not cover (Mann-Whitney) leaves
    every study to the one-study scorer. Both give what the record path gives."""
    _, plan = compiled(
        tmp_path / "a",
        "latency-analyses",
        (
            (
                "        interval: welch\n",
                "        interval: bootstrap\n        bootstrap: {resamples: 100, seed: 3}\n",
            ),
        ),
    )
    assert same_blocks(plan, 0).size < N // 4
    _, plan = compiled(
        tmp_path / "b",
        "latency-analyses",
        (
            ("method: ratio-of-geometric-means", "method: mann-whitney"),
            (
                "options: {margin: 1, alternative: less, level: 0.95}",
                "options: {method: asymptotic, correction: true, alternative: less}",
            ),
        ),
    )
    assert same_blocks(plan, 0).size == N
