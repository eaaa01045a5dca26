"""The counts path diagnose scores simulated studies by agrees with the row path ``score``
takes: a simulated study's counts, realized as rows and observation records and scored the
way ``score`` scores them, give the same estimates, contrasts, P values, gates and verdicts."""

from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.decide.evaluate import Selections, cell_figures, decide_all, registered_results
from prereg.decide.table import from_items
from prereg.diagnose.design import KINDS, RETRIED_RIGHT, RETRIED_WRONG, RIGHT, WRONG
from prereg.diagnose.model import draw_block
from prereg.diagnose.run import score_counts
from prereg.engines.factorial import commands as factorial
from prereg.engines.reachability import scoring
from prereg.study import load_generated
from tests.diagnose.helpers import AP, D17, compile_example, condition_index, plan_for, study

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engines" / "reachability"))
import d17_score_helpers  # noqa: E402

from tests.conftest import ROOT  # noqa: E402

DRAWS = {RIGHT: (False, True), WRONG: (False, False), RETRIED_RIGHT: (True, True)}
DRAWS[RETRIED_WRONG] = (True, False)


@pytest.fixture(scope="module")
def ap(tmp_path_factory) -> Path:
    root = compile_example(tmp_path_factory.mktemp("ap"))
    assert main(["--project", str(root), AP, "items", "--out", str(root / "items.jsonl")]) == 0
    return root


def kinds_of_rows(counts_of_group: np.ndarray) -> list[int]:
    """The kind of each row of a group, in row order, realizing its counts."""
    return [k for k in range(len(KINDS)) for _ in range(int(counts_of_group[k]))]


def same(a, b) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and (a == b or (math.isnan(a) and math.isnan(b)))
    )


def assert_same_results(rows_res, counts_res) -> None:
    assert rows_res.results.keys() == counts_res.results.keys()
    for rid, x in rows_res.results.items():
        y = counts_res.results[rid]
        for q in ("estimate", "lower", "upper", "p", "adjusted_p"):
            assert same(getattr(x, q), getattr(y, q)), (rid, q, getattr(x, q), getattr(y, q))
    assert rows_res.counts == counts_res.counts


@pytest.mark.parametrize("scenario", ["position-bias", "low-coverage"])
def test_factorial_counts_agree_with_rows(ap, scenario):
    plan, found = plan_for(ap, AP, [scenario], 250, seed=5)
    ctx, rules, design = study(ap, AP)
    config = ctx.config
    module_rules = importlib.import_module(load_generated(Project(ap), AP).__name__ + ".rules")
    items = [json.loads(line) for line in (ap / "items.jsonl").read_text().splitlines()]
    contract = next(c for c in config["record_contracts"] if c["role"] == "items")
    table = from_items(config, contract, items, "items.jsonl")
    writer = factorial.RecordWriter(config, found[scenario])
    ci = condition_index(plan, scenario)
    counts = draw_block(design, plan.conditions[ci], plan.seed, 0, plan.block_size)[:12]
    for study_counts, (res, decision) in zip(counts, score_counts(plan, counts), strict=True):
        records = []
        for g in range(design.groups):
            rows = [i for i in range(len(table)) if table.cell[i] == design.group_cell[g]]
            for i, kind in zip(rows, kinds_of_rows(study_counts[g]), strict=True):
                if kind in DRAWS:
                    cell = table.cells[table.cell[i]]
                    records += writer.records(table.ids[i], cell, *DRAWS[kind])
        metrics, _ = factorial.row_metrics_of(config, table, records, "obs")
        rows_res = registered_results(module_rules, metrics, Selections(table))
        assert_same_results(rows_res, res)
        rows_dec = decide_all(module_rules, rows_res.results, table, cell_figures(metrics, table))
        assert rows_dec.verdicts == decision.verdicts
        assert [(g.id, c) for g, c, _ in rows_dec.failures] == [
            (g.id, c) for g, c, _ in decision.failures
        ]
        doc = factorial.score_document(config, module_rules, table, records, "obs")
        assert doc["verdicts"] == decision.verdicts
        assert doc["gated"] == decision.gated
    # low coverage fails the gate in every simulated study, position-bias in none
    assert all(d.gated for _, d in score_counts(plan, counts)) == (scenario == "low-coverage")


@pytest.mark.parametrize("scenario", ["d17-finding", "pool-c-contrastive-shift"])
def test_d17_counts_agree_with_rows(scenario):
    plan, found = plan_for(ROOT, D17, [scenario], 250, seed=9)
    ctx, rules, design = study(ROOT, D17)
    config = ctx.config
    spec = scoring.scoring_spec(config)
    _, _, module_rules = d17_score_helpers.study()
    t = d17_score_helpers.table(config)
    labels = list(spec.position_labels)
    by_group = {}
    for i in range(len(t.ids)):
        by_group.setdefault((int(t.cell[i]), labels[int(t.position[i])]), []).append(i)
    attr = spec.position_attribute
    ci = condition_index(plan, scenario, 0.13 if scenario.endswith("shift") else None)
    counts = draw_block(design, plan.conditions[ci], plan.seed, 0, plan.block_size)[:6]
    f = spec.fields
    for study_counts, (res, decision) in zip(counts, score_counts(plan, counts), strict=True):
        records = []
        for g in range(design.groups):
            rows = by_group[(int(design.group_cell[g]), str(design.group_attributes[attr][g]))]
            for i, kind in zip(rows, kinds_of_rows(study_counts[g]), strict=True):
                rid = t.ids[i]
                base = {f["row"]: rid, f["request"]: spec.request}
                if kind not in DRAWS:
                    records.append({**base, f["pYes"]: None, f["attempt"]: 1})
                    continue
                retried, right = DRAWS[kind]
                says_yes = bool(t.gold_yes[i]) == right
                attempt = 1
                if retried:
                    records.append({**base, f["pYes"]: None, f["attempt"]: 1})
                    attempt = 2
                records.append({**base, f["pYes"]: 0.8 if says_yes else 0.2, f["attempt"]: attempt})
        counted = scoring.counted_attempts(records, t, spec, "obs")
        p = counted.p_yes(spec)
        blocks = list(d17_score_helpers.BLOCKS)
        metrics, _, _ = scoring.row_metrics_of(config, t, p, blocks, spec, counted=counted)
        rows_res = registered_results(module_rules, metrics, Selections(t.decided(spec)))
        assert_same_results(rows_res, res)
        scored = scoring.score(config, module_rules, t, p, blocks, spec, counted=counted)
        assert scored.verdicts == decision.verdicts
        assert scored.gated == decision.gated


def test_d17_row_groups_are_the_generators_positions():
    """The design's rows per (cell, failure position) are those of the corpus the generator
    writes (the golden public demo corpus) and of the hand-written test table."""
    import gzip

    ctx, _, design = study(ROOT, D17)
    spec = scoring.scoring_spec(ctx.config)
    attr = spec.position_attribute
    got = {
        (int(c), str(p)): int(n)
        for c, p, n in zip(
            design.group_cell, design.group_attributes[attr], design.group_rows, strict=True
        )
    }
    t = d17_score_helpers.table(ctx.config)
    labels = list(spec.position_labels)
    hand: dict = {}
    for c, p in zip(t.cell.tolist(), t.position.tolist(), strict=True):
        hand[(c, labels[p])] = hand.get((c, labels[p]), 0) + 1
    assert got == hand
    golden = (
        ROOT / "tests" / "fixtures" / "d17" / "golden-public-demo" / "corpus-with-gold.jsonl.gz"
    )
    codes = {sp["id"]: sp["code"] for sp in ctx.config["splits"]}
    seen: dict = {}
    with gzip.open(golden, "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            key = (
                f"{codes[rec['split']]}-{rec['slice']}",
                labels[scoring.position_index(rec["world"])],
            )
            seen[key] = seen.get(key, 0) + 1
    assert seen == {(ctx.config["cells"][c]["id"], p): n for (c, p), n in got.items()}
