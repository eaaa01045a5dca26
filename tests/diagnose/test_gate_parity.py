"""Gates decided alike by score, by diagnose's one-study scorer and by its batched block, on
data placed exactly on the thresholds.

A calibration study of 10 rows a prompt gates every cell on an ECE of at most 0.05, an accuracy
of at least 0.9 and a mean confidence of at most 0.75.  Hypothesis writes the observation
records of a block of studies, cell by cell either at random (confidences of two decimals) or
on a threshold: ten confidences of 0.95 with nine right (an ECE of exactly 1/20, whose float is
0.05000000000000007, and an accuracy of exactly 9/10), or confidences in pairs 0.75 ∓ d (a mean
of exactly 0.75 whose float sum is not).  The oracle is ``score`` itself
(:func:`prereg.engines.factorial.commands.score_document` on each study's records); the one-study
scorer (:meth:`prereg.diagnose.rows.RowScorer.score`) and the block
(:func:`prereg.diagnose.rows.score_columns`, over every study's rows at once) must give every
gate and verdict it gives, and the block must decide a study far from every threshold from its
arrays (not alone)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prereg.decide.columns import Column
from prereg.decide.metrics import RowMetric
from prereg.diagnose import rows as row_path
from prereg.engines.factorial.commands import row_data, score_document
from tests.diagnose.test_row_batches import compiled

ROWS = 10  # a prompt
GATES = """gates:
  - {id: calibrated-cells, description: ECE at most 0.05, metric: ece, op: le, value: 0.05}
  - {id: accurate-cells, description: accuracy at least 0.9, metric: accuracy, op: ge, value: 0.9}
  - {id: modest-cells, description: mean confidence at most 0.75, metric: mean-confidence,
     op: le, value: 0.75}
scenarios:
"""
EDITS = (
    ("rows: 100, factors", f"rows: {ROWS}, factors"),
    (
        "  - id: auroc\n",
        "  - id: mean-confidence\n    title: Mean confidence\n    definition: mean stated"
        " confidence\n    compute: {kind: mean, field: confidence}\n  - id: auroc\n",
    ),
    ("scenarios:\n", GATES),
    (
        "hypotheses:\n",
        """hypotheses:
  - id: modest
    title: The mean confidence is at most 0.75
    estimates:
      - {id: conf-all, metric: mean-confidence, of: {where: [{factor: split, levels: [test]}]},
         interval: t, level: 0.95}
    rule:
      compare: {target: conf-all, quantity: estimate, op: le, value: 0.75}
  - id: plain-higher
    title: The plain prompt states a higher confidence than cot
    contrasts:
      - {id: conf-diff, metric: mean-confidence, a: {where: [{factor: prompt, levels: [plain]}]},
         b: {where: [{factor: prompt, levels: [cot]}]}, interval: welch, level: 0.95,
         test: welch-t, alternative: two-sided}
    rule:
      compare: {target: conf-diff, quantity: estimate, op: gt, value: 0}
""",
    ),
)


@pytest.fixture(scope="module", params=["gated", "ungated"])
def study(tmp_path_factory, request):
    """The study with its gates, and without them (a failed gate decides every verdict, so
    the rules' comparisons are seen on their own there)."""
    edits = EDITS if request.param == "gated" else tuple(e for e in EDITS if e[1] != GATES)
    return compiled(tmp_path_factory.mktemp(request.param), "calibration", edits)


def _decimal(x: float) -> Fraction:
    return Fraction(repr(x))


def cell_rows(draw) -> list[tuple[bool, float]]:
    """(correct, confidence) of a cell's ten rows."""
    mode = draw(st.sampled_from(["random", "ece-and-rate", "mean"]))
    if mode == "ece-and-rate":  # one bin, Σq = 9.5 and 9 or 10 right: an ECE of 1/20
        qs = [95] * ROWS
        moves = st.tuples(st.integers(0, ROWS - 1), st.integers(0, ROWS - 1), st.integers(1, 4))
        for i, j, a in draw(st.lists(moves, max_size=12)):
            if i != j and qs[i] + a <= 100 and qs[j] - a >= 91:
                qs[i], qs[j] = qs[i] + a, qs[j] - a
        right = draw(st.permutations([True] * 9 + [draw(st.booleans())]))
        return [(r, q / 100) for r, q in zip(right, qs, strict=True)]
    if mode == "mean":
        ds = draw(st.lists(st.integers(0, 25), min_size=ROWS // 2, max_size=ROWS // 2))
        confs = [c for d in ds for c in ((75 - d) / 100, (75 + d) / 100)]
        confs = draw(st.permutations(confs))
        right = draw(st.lists(st.booleans(), min_size=ROWS, max_size=ROWS))
        return list(zip(right, confs, strict=True))
    confs = draw(st.lists(st.integers(0, 100), min_size=ROWS, max_size=ROWS))
    right = draw(st.lists(st.booleans(), min_size=ROWS, max_size=ROWS))
    return [(r, c / 100) for r, c in zip(right, confs, strict=True)]


@st.composite
def blocks(draw):
    studies = draw(st.integers(1, 5))
    out = []
    for _ in range(studies):
        records = []
        plain = cell_rows(draw)
        cot = draw(st.permutations(plain)) if draw(st.booleans()) else cell_rows(draw)
        for prompt, cell in (("plain", plain), ("cot", cot)):  # cot: plain's rows or its own
            for i, (right, conf) in enumerate(cell):
                records.append(
                    {
                        "rowId": f"{prompt}-{i + 1:02d}",
                        "prompt": prompt,
                        "attempt": 1,
                        "correct": right,
                        "confidence": conf,
                    }
                )
        out.append(records)
    return out


def concatenated(config, table, studies):
    """The row metrics and columns of every study's rows one study after another, as the row
    model's ``batch`` lays a block out."""
    per = [row_data(config, table, records, "x") for records in studies]
    metrics = {}
    for k, m0 in per[0][0].items():
        parts = {}
        for f in ("num", "den", "value", "hit", "raw"):
            xs = [getattr(p[0][k], f) for p in per]
            parts[f] = None if xs[0] is None else np.concatenate(xs)
        metrics[k] = RowMetric(
            m0.id, m0.kind, parts["num"], parts["den"], parts["value"], parts["hit"],
            m0.back, m0.bins, m0.closed, parts["raw"], m0.log,
        )  # fmt: skip
    columns = {}
    for k, c0 in per[0][2].items():
        columns[k] = Column(
            c0.kind,
            np.concatenate([p[2][k].values for p in per]),
            np.concatenate([p[2][k].null for p in per]),
        )
    return metrics, columns


def score_of(config, rules, table, records):
    doc = score_document(config, rules, table, records, "x")
    failed = tuple(not g["passed"] for g in sorted(doc["gates"], key=lambda g: g["id"]))
    return failed, doc["verdicts"]


def exact_ece(rows) -> Fraction:
    edges = [Fraction(k, 10) for k in range(11)]
    bins: dict[int, list] = {}
    for right, conf in rows:
        q = _decimal(conf)
        b = next(i for i in range(10) if edges[i] < q <= edges[i + 1]) if q > 0 else 0
        bins.setdefault(b, []).append((right, q))
    return sum(abs(sum(r for r, _ in v) - sum(q for _, q in v)) for v in bins.values()) / len(rows)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(studies=blocks())
def test_score_one_study_and_block_decide_every_gate_alike(study, studies):
    ctx, plan = study
    config, rules = ctx.config, plan.rules
    model = plan.design.rows
    table = model.table
    gate_ids = sorted(g.id for g in rules.GATES)
    order = [g.id for g in rules.GATES]
    want = [score_of(config, rules, table, records) for records in studies]
    # the oracle's own figures are those of the Fractions
    for records, (failed, verdicts) in zip(studies, want, strict=True):
        held = dict(zip(gate_ids, (not f for f in failed), strict=True))
        means = {
            p: sum(_decimal(r["confidence"]) for r in records if r["prompt"] == p) / ROWS
            for p in ("plain", "cot")
        }
        if not gate_ids and means["plain"] <= means["cot"]:
            assert verdicts["plain-higher"] != "supported"
        for prompt in ("plain", "cot") if gate_ids else ():
            cell = [(r["correct"], r["confidence"]) for r in records if r["prompt"] == prompt]
            if exact_ece(cell) > Fraction(1, 20):
                assert not held["calibrated-cells"]
            right = sum(r for r, _ in cell)
            if Fraction(right, ROWS) < Fraction(9, 10):
                assert not held["accurate-cells"]
            if sum(_decimal(q) for _, q in cell) / ROWS > Fraction(3, 4):
                assert not held["modest-cells"]
    sc = row_path.scorer(plan)
    block = row_path.score_columns(plan, 0, 0, len(studies), *concatenated(config, table, studies))
    for i, records in enumerate(studies):
        failed, verdicts = want[i]
        res, decision, _ = sc.score(records)
        one = {g.id for g, _, _ in decision.failures}
        assert tuple(g in one for g in gate_ids) == failed, (i, "one study")
        assert decision.verdicts == verdicts
        got = dict(zip(order, block.gates[i].tolist(), strict=True))
        assert tuple(got[g] for g in gate_ids) == failed, (i, "block")
        hyps = list(rules.HYPOTHESES)
        assert dict(zip(hyps, block.verdicts[i], strict=True)) == verdicts


def test_a_study_on_every_threshold_holds_its_gates(study):
    """Both cells exactly on the thresholds (ECE 1/20, accuracy 9/10; a mean of 0.75 from
    pairs 0.75 ∓ d): every gate holds in score, in the one-study scorer and in the block, while
    the floats of the ECE and of the mean lie above their thresholds; a study far from them is
    decided from the block's arrays, the one on them alone."""
    ctx, plan = study
    config, rules = ctx.config, plan.rules
    table = plan.design.rows.table
    from prereg.stats.calibration import ece_binned

    confs = [0.92, 0.91, 0.94, 0.95, 0.96, 0.96, 0.98, 0.96, 0.97, 0.95]  # Σ 9.5, 10 right
    edges = [k / 10 for k in range(11)]
    assert ece_binned(np.array(confs), np.ones(10), edges, "right") > 0.05
    assert exact_ece([(True, q) for q in confs]) == Fraction(1, 20)
    on = [
        {"rowId": f"{p}-{i + 1:02d}", "prompt": p, "attempt": 1, "correct": True,
         "confidence": confs[i]}
        for p in ("plain", "cot") for i in range(10)
    ]  # fmt: skip
    pairs = [0.81, 0.89, 0.85, 0.73, 0.69, 0.77, 0.59, 0.61, 0.91, 0.65]  # 0.75 ∓ d
    assert sum(_decimal(q) for q in pairs) == Fraction(15, 2) and float(np.mean(pairs)) > 0.75
    # cot: the same decimals in another order, whose float mean is 2.2e-16 below plain's
    shuffled = [0.59, 0.91, 0.65, 0.61, 0.77, 0.73, 0.81, 0.69, 0.89, 0.85]
    assert float(np.mean(pairs)) - float(np.mean(shuffled)) > 0
    mean_on = [
        {"rowId": f"{p}-{i + 1:02d}", "prompt": p, "attempt": 1, "correct": i != 4,
         "confidence": q[i]}
        for p, q in (("plain", pairs), ("cot", shuffled)) for i in range(10)
    ]  # fmt: skip
    far = [
        dict(r, confidence=0.3 + 0.05 * (i % 5) + 0.01 * (i // 10), correct=i % 10 == 1)
        for i, r in enumerate(on)
    ]
    # the same decimals in both prompts (their means equal in fractions, the floats' not)
    base = [0.65, 0.87, 0.84, 0.58, 0.73, 0.88, 0.8, 0.9, 0.87, 0.54]
    again = [0.65, 0.87, 0.54, 0.88, 0.9, 0.84, 0.87, 0.73, 0.58, 0.8]
    assert float(np.mean(base)) - float(np.mean(again)) > 0
    diff_on = [
        {"rowId": f"{p}-{i + 1:02d}", "prompt": p, "attempt": 1, "correct": i % 3 == 0,
         "confidence": q[i]}
        for p, q in (("plain", base), ("cot", again)) for i in range(10)
    ]  # fmt: skip
    studies = [on, far, mean_on, diff_on]
    want = [score_of(config, rules, table, s) for s in studies]
    gated = bool(rules.GATES)
    if gated:
        assert want[0][0] == (False, False, True)  # accurate and calibrated hold; mean 0.95
        assert want[2][0] == (False, True, False)  # 9/10 right and a mean of exactly 0.75 hold
    else:
        # the means of the prompts are equal (in fractions): plain is not higher; the mean of
        # them all is exactly 0.75
        assert want[2][1]["plain-higher"] != "supported" and want[2][1]["modest"] == "supported"
        assert want[3][1]["plain-higher"] != "supported"
    seen = []
    real = row_path._put_clear

    def spy(plan_, out, clear, *args):
        seen.append(clear.tolist())
        return real(plan_, out, clear, *args)

    row_path._put_clear = spy
    try:
        block = row_path.score_columns(plan, 0, 0, 4, *concatenated(config, table, studies))
    finally:
        row_path._put_clear = real
    gate_ids = sorted(g.id for g in rules.GATES)
    order = [g.id for g in rules.GATES]
    for i in range(4):
        got = dict(zip(order, block.gates[i].tolist(), strict=True))
        assert tuple(got[g] for g in gate_ids) == want[i][0]
        assert dict(zip(rules.HYPOTHESES, block.verdicts[i], strict=True)) == want[i][1]
    assert seen == [[1]]  # the far study from the arrays; those on a threshold alone
