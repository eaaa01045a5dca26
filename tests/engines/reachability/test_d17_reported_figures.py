"""What the d17 hand-off shows a reviewer, checked against the source document.

The D17-MF document promises, per cell, the raw answer's accuracy with a Wilson interval and
"accuracy by failure position (first, interior, last) ... for every cell"; the study page adds,
per cell over observed rows, coverage, said-yes rate, calibrated accuracy with its Wilson
interval, mean calibrated confidence, confidence − accuracy, decile ECE and the
calibration-unreliable flag (mean confidence − calibrated accuracy > 0.10 and the calibrated
Wilson upper bound < mean confidence), figures rounded to 4 decimals. The readable
preregistration states the cells and their row counts (source "Cells" table: key
missing-link cells 220 rows, yes 110, relay-off 40, D17-faithful control 30, development rows 2
per cell; pure absence only at three hops; the faithful control one hop, yes and contrastive).

The expected strings below are written by hand from those sentences and from the hand-made
figures of each test, not copied from an output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from d17_score_helpers import ROOT, STUDY, study

from prereg.compiler.build import load_all, render_prereg_md
from prereg.compiler.project import Project
from prereg.engines.reachability import scoring
from prereg.engines.reachability.score_commands import render_markdown
from prereg.reports import Step, build_report, study_info
from prereg.reports.page import render_markdown as render_report_markdown

# One cell, figures chosen so that rounding half up to 4 decimals is visible:
# 1/32 = 0.03125 exactly in binary, so a round-half-even formatter would print 0.0312.
CELL = {
    "cell": "tst-pool-c_h3_missing-contrastive_equalized",
    "split": "test",
    "levels": {"pool": "pool-c", "hops": "3", "outcome": "missing-contrastive", "layout": "equalized"},
    "rows": 40,
    "observed": 32,
    "metrics": {
        "coverage": 0.8,
        "raw-accuracy": {"correct": 1, "estimate": 1 / 32, "lower": 0.00554, "upper": 0.15745},
        "said-yes-rate": 0.96875,
        "calibrated-accuracy": {"correct": 3, "estimate": 3 / 32, "lower": 0.03245, "upper": 0.24225},
        "mean-confidence": 0.8,
        "decile-ece": 0.70625,
    },
    "confidenceMinusAccuracy": 0.8 - 3 / 32,
    "calibrationUnreliable": True,
    "byPosition": {
        "first": {"rows": 10, "observed": 8, "correct": 1, "accuracy": 1 / 8},
        "interior": {"rows": 20, "observed": 16, "correct": 0, "accuracy": 0.0},
        "last": {"rows": 10, "observed": 8, "correct": 0, "accuracy": 0.0},
    },
}  # fmt: skip


def _doc(spec_digest: str) -> dict:
    return {
        "schemaVersion": "prereg-d17mf-score/v2", "studyId": STUDY, "version": "1.2",
        "specDigest": spec_digest, "seed": "demo-seed",
        "corpusDigest": "sha256:" + "1" * 64, "goldDigest": "sha256:" + "2" * 64,
        "observations": {"sha256": "sha256:" + "5" * 64, "records": 32, "rows": 40, "observedRows": 32},
        "calibrator": {"id": "cal-1", "digest": "sha256:" + "6" * 64,
                       "effectiveAt": "2026-10-02T10:02:34.263Z", "expiresAt": "2026-11-01T10:02:34.263Z"},
        "clock": {"collectionEndBound": "2026-10-15T10:00:00.000Z", "evaluatedAt": "2026-10-16T12:00:00.000Z"},
        "complete": False,
        "decision": {"outcome": "HOLD", "rule": "otherwise", "why": "the registered decision reads no data"},
        "gates": [{"id": "coverage", "metric": "coverage", "op": "ge", "value": 0.95, "passed": False,
                   "where": {"split": ["test"]}, "failures": [{"cell": CELL["cell"], "figure": 0.8}]}],
        "verdicts": {"h1": "insufficient"},
        "cells": [CELL], "auroc": [], "estimates": [],
        "contrasts": [{"id": "h1-missing-contrastive-h3-pool-a-pool-c", "hypothesis": "h1",
                       "a": {"k": 20, "n": 32}, "b": {"k": 1, "n": 32},
                       "estimate": 0.59375, "lower": 0.38255, "upper": 0.72145,
                       "p": 0.000012346, "adjustedP": 0.00025926}],
    }  # fmt: skip


def test_score_md_shows_every_per_cell_figure_the_source_promises():
    _, ctx, _ = study()
    spec = scoring.scoring_spec(ctx.config)
    assert (spec.decimals, spec.p_digits) == (4, 4)  # the registered scoring constant
    md = render_markdown(_doc(ctx.spec_digest), spec)
    header = next(line for line in md.splitlines() if line.startswith("| cell |"))
    assert header == (
        "| cell | rows | observed | coverage | raw-accuracy (Wilson) | said-yes-rate |"
        " calibrated-accuracy (Wilson) | mean-confidence | confidence − accuracy | decile-ece |"
        " unreliable | by position |"
    )
    row = next(line for line in md.splitlines() if line.startswith(f"| {CELL['cell']} |"))
    # 1/32 → 0.0313 and 3/32 = 0.09375 → 0.0938 (half up); 0.8 − 3/32 = 0.70625 → 0.7063;
    # 0.96875 → 0.9688; the bounds 0.00554 → 0.0055, 0.15745 → 0.1575, 0.03245 → 0.0325,
    # 0.24225 → 0.2423; by position: 1/8 = 0.125 of 8 first rows, 0 of 16 and 0 of 8.
    assert row == (
        f"| {CELL['cell']} | 40 | 32 | 0.8 | 0.0313 [0.0055, 0.1575] | 0.9688 |"
        " 0.0938 [0.0325, 0.2423] | 0.8 | 0.7063 | 0.7063 | yes |"
        " first 0.125 (8); interior 0.0 (16); last 0.0 (8) |"
    )


@pytest.fixture(scope="module")
def d17_info():
    return study_info(Project(ROOT), STUDY)


def test_the_report_shows_the_same_per_cell_figures_as_score_md(tmp_path: Path, d17_info):
    (tmp_path / "SCORE.json").write_text(json.dumps(_doc(d17_info.spec_digest)))
    out = str(tmp_path / "SCORE.json")
    step = Step(
        "s", "score", ["score", "--out", "{out}/SCORE.json"], ["score", "--out", out], 0, True
    )
    md = render_report_markdown(build_report(d17_info, tmp_path, [step]))
    rows = [line for line in md.splitlines() if line.startswith(f"| `{CELL['cell']}` |")]
    assert rows == [
        # accuracy: rows, observed, coverage, raw accuracy and its interval, said-yes rate and
        # accuracy at each failure position with its observed and registered rows
        f"| `{CELL['cell']}` | 40 | 32 | 0.8 | 0.0313 | [0.0055, 0.1575] | 0.9688 |"
        " first 0.125 (8 of 10); interior 0 (16 of 20); last 0 (8 of 10) |",
        # calibration: calibrated accuracy and interval, mean confidence, the gap, ECE, flag
        f"| `{CELL['cell']}` | 0.0938 | [0.0325, 0.2423] | 0.8 | 0.7063 | 0.7063 | yes |",
    ]
    # the contrast's P values to the registered 4 significant digits, as SCORE.md shows them
    contrast = next(line for line in md.splitlines() if line.startswith("| `h1-missing-"))
    assert "| 0.5938 | [0.3826, 0.7215] | 1.235e-05 | 0.0002593 |" in contrast


def test_prereg_md_states_each_crossing_as_the_source_sizes_it():
    (d17,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    text = render_prereg_md(d17)
    lines = [line for line in text.splitlines() if line.startswith("- Crossing ")]
    cid = "`{split}-{pool.id}_h{hops.id}_{outcome.id}_{layout.id}`"
    assert lines == [
        f"- Crossing {cid}: pool × hops × outcome (with layout=equalized), leaving out"
        " hops=1 with outcome=missing-absence, 2 rows per cell in split tuning",
        f"- Crossing {cid}: pool × outcome (only outcome ∈ {{yes, missing-contrastive}})"
        " (with hops=1, layout=d17-faithful), 2 rows per cell in split tuning",
        f"- Crossing {cid}: pool × hops × outcome (with layout=equalized), leaving out"
        " hops=1 with outcome=missing-absence, rows per cell by outcome (yes: 110,"
        " relay-off: 40, missing-contrastive: 220, missing-negation: 220,"
        " missing-unrelated: 220, missing-absence: 220) in split test",
        f"- Crossing {cid}: pool × outcome (only outcome ∈ {{yes, missing-contrastive}})"
        " (with hops=1, layout=d17-faithful), 30 rows per cell in split test",
    ]
    # the source's totals: 5,700 probe rows plus 78 development rows, 5,778 in total
    assert "| tuning | 78 |\n| test | 5700 |\n| all | 5778 |" in text


def test_prereg_md_states_the_seed_entropy_rule_it_applies():
    """The source asks a private seed for 24 hex characters "of fresh randomness"; the engine
    reads that as an entropy rule whose numbers PREREG.md must show (8 distinct hex digits,
    no counting run longer than 7), in the seed policy's words and in the constants."""
    (d17,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    text = render_prereg_md(d17)
    policy = text[text.index("### Seed policy") : text.index("### Budget")]
    assert "A seed without a run of 24 lowercase hex characters is public." in policy
    assert "fewer than 8 distinct hex digits, or a counting run of more than 7" in policy
    syntax = text[text.index("### `seed-syntax`") :]
    assert "- `minDistinctHex`: `8`" in syntax and "- `maxCountingRun`: `7`" in syntax


def test_prereg_md_carries_the_sources_budget_plan():
    """The source's "Seeds and budget" figures a reviewer checks against the dry run: the
    worst case, the fresh-ledger allowance and its headroom, the expected spend, the shared cap
    and the attested floors."""
    (d17,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    text = " ".join(render_prereg_md(d17).split())
    for figure in (
        "11,556 calls, 19.96M reserved tokens and USD 1.706 reserved",
        "12,800 calls, 24M tokens and USD 4.0",
        "1,244 calls, 4.0M tokens and USD 2.29 of headroom",
        "about USD 0.87 reserved, roughly USD 0.36 at the published USD 0.042 per million",
        "shared D17 cap of USD 8",
        "USD 0.892652",
        "USD 2.192652",
    ):
        assert figure in text, figure
    # the budget table: 16,000 calls / 30M tokens / USD 5
    for row in (
        "| `calls` | 16000 | calls |",
        "| `tokens` | 30000000 | tokens |",
        "| `usd` | 5 | USD |",
    ):
        assert row in text, row


def test_prereg_md_says_the_pooled_z_tests_are_two_sided():
    """Source, H1: "Holm across the whole family of pool-pair contrasts (family-wise 0.05,
    two-sided pooled two-proportion z)"; the spec leaves the alternative at its default, which
    PREREG.md now writes out for every tested contrast (H1's, H4's and the unmatched one)."""
    (d17,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    text = render_prereg_md(d17)
    rows = [
        x for x in text.splitlines() if x.startswith(("| `h1-{", "| `h4-{", "| `h4-unmatched-{"))
    ]
    assert len(rows) == 4  # two H1 templates, h4 and h4-unmatched
    assert all("| pooled-z, two-sided |" in x for x in rows)
    assert "| `h1-pool-pairs` | holm | 0.05 |" in text and "| `h4-pools` | holm | 0.05 |" in text
    # the untested contrasts (test none) name no alternative
    h2 = next(x for x in text.splitlines() if x.startswith("| `h2-"))
    assert "| none |" in h2


# An h2 contrast whose upper bound has more than 4 significant digits after its leading zeros:
# 0.05823 is 0.0582 at the registered 4 decimals (and 0.05823 at 4 significant digits), and
# 0.0022727 (1/440) is 0.0023 (0.002273 at 4 significant digits). The h1 contrast's adjusted
# P 0.00025926 is 0.0002593 at the registered 4 significant digits ("< 0.001" in the
# report's usual P style).
H2 = {"id": "h2-yes-pool-a", "hypothesis": "h2", "a": {"k": 92, "n": 110}, "b": {"k": 96, "n": 110},
      "estimate": -0.0022727, "lower": -0.1309, "upper": 0.05823, "p": None, "adjustedP": None}  # fmt: skip


def _explained_doc(spec_digest: str) -> dict:
    doc = _doc(spec_digest)
    doc["verdicts"] = {"h1": "supported", "h2": "not-supported"}
    doc["gates"][0].update(passed=True, failures=[])
    doc["complete"] = True
    doc["contrasts"].append(H2)
    return doc


def test_deciding_figures_are_rounded_as_the_tables_round_them(tmp_path: Path, d17_info):
    """SCORE.md and the report say the deciding figures are the reported (rounded) ones; the
    tables round to the registered 4 decimals (P values to 4 significant digits), so the
    verdict lines must show the same numbers, not 4 significant digits of every figure."""
    module, ctx, _ = study()
    spec = scoring.scoring_spec(ctx.config)
    doc = _explained_doc(ctx.spec_digest)
    md = render_markdown(doc, spec, module)
    deciding = [line for line in md.splitlines() if line.startswith("  - deciding figures:")]
    assert deciding[0].startswith(
        "  - deciding figures: adjusted P < 0.05: met by 1 of 1:"
        " h1-missing-contrastive-h3-pool-a-pool-c (0.0002593);"
    )
    assert (
        "|estimate| ≥ 0.1: met by 1 of 1: h1-missing-contrastive-h3-pool-a-pool-c (0.5938)"
        in (deciding[0])
    )
    assert (
        deciding[1]
        == "  - deciding figures: upper bound < -0.05: met by 0 of 1 (h2-yes-pool-a (0.0582))"
    )
    # the same line in the contrast table
    assert "| h2-yes-pool-a | 92/110 | 96/110 | -0.0023 | [-0.1309, 0.0582] | – | – |" in md

    (tmp_path / "SCORE.json").write_text(json.dumps(doc))
    out = str(tmp_path / "SCORE.json")
    step = Step(
        "s", "score", ["score", "--out", "{out}/SCORE.json"], ["score", "--out", out], 0, True
    )
    report = build_report(d17_info, tmp_path, [step])
    page = render_report_markdown(report)
    # the figure of what decides h1 writes its adjusted P as the tables do (4 significant
    # digits, not the reports' usual "< 0.001")
    (h1,) = [f for f in report.figures() if f.name == "decides-h1"]
    assert ">0.0002593 yes</text>" in h1.svg and "&lt; 0.001" not in h1.svg
    row = next(line for line in page.splitlines() if line.startswith("| [h2]("))
    assert row.endswith("| upper bound < -0.05: met by 0 of 1 (h2-yes-pool-a (0.0582)) |")
    row = next(line for line in page.splitlines() if line.startswith("| [h1]("))
    assert "h1-missing-contrastive-h3-pool-a-pool-c (0.0002593)" in row


def test_a_failed_coverage_gate_marks_the_score_incomplete(tmp_path: Path, d17_info):
    """Source, Decision rules: "Coverage gate: every test cell must reach 95% observed rows.
    Otherwise the report is marked incomplete and every verdict is 'insufficient'." The hand-made
    document's one cell has 32 of 40 rows observed (coverage 0.8 < 0.95)."""
    _, ctx, _ = study()
    spec = scoring.scoring_spec(ctx.config)
    doc = _doc(ctx.spec_digest)
    md = render_markdown(doc, spec)
    assert (
        "**Incomplete**: the coverage gate failed in 1 cell (tst-pool-c_h3_missing-contrastive_"
        "equalized), so every verdict is insufficient." in md
    )
    (tmp_path / "SCORE.json").write_text(json.dumps(doc))
    out = str(tmp_path / "SCORE.json")
    step = Step(
        "s", "score", ["score", "--out", "{out}/SCORE.json"], ["score", "--out", out], 0, True
    )
    report = build_report(d17_info, tmp_path, [step])
    assert report.status.startswith(
        "needs attention: incomplete: the coverage gate failed in 1 cell"
        " (tst-pool-c_h3_missing-contrastive_equalized), so every verdict is insufficient"
    )
    assert not report.ok
    # a complete score says nothing of the kind
    doc = _explained_doc(ctx.spec_digest)
    assert "Incomplete" not in render_markdown(doc, spec)


def test_prereg_md_states_the_sources_caveats_and_report_rules():
    """What the source says a reader of each verdict must know, and what the report must show,
    stated in PREREG.md (amendment 1.4): H1's verb × framing confound ("H1 attributes a pool
    difference to the pool wording as a whole, not to the verb alone"), the oddness of H3a's
    non-connective verbs, the four differences H4 bundles, the shortcut audit's refusal rule
    (limit 0.60, "all pass the 0.60 limit" at 0.5994), the calibration-unreliable rule and the
    report rounding (the study page: "Report figures rounded to 4 decimals")."""
    (d17,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    text = " ".join(render_prereg_md(d17).split())

    def section(start: str, end: str) -> str:
        return text[text.index(start) : text.index(end)]

    h1 = section("### h1:", "### h2:")
    assert "not to the verb alone" in h1 and "link verb and the framing sentence co-vary" in h1
    h3a = section("### h3a:", "### h4:")
    assert "how implausible the non-connective verb is" in h3a
    h4 = section("### h4:", "### replication:")
    for difference in (
        "the rule's wording (D17's sufficient one-relay rule against the exhaustive link-only rule)",
        "the line order (fixed against uniformly shuffled)",
        "decoy lines (none against label-independent decoys)",
        "entity names (role-prefixed against neutral)",
    ):
        assert difference in h4, difference
    exclusions = section("### Exclusions", "### Missing data")
    assert "balanced accuracy above 0.60 (rounded half up to 4 decimals; 0.60 itself passes)" in (
        exclusions
    )
    assert "six equalized pool × hops groups" in exclusions and "5 folds" in exclusions
    exploratory = section("### Exploratory analyses", "### Which observation counts")
    assert (
        "flagged calibration-unreliable when mean confidence − calibrated accuracy is above 0.10"
        " and the calibrated Wilson 95% upper bound is below the mean confidence" in exploratory
    )
    scoring_row = next(x for x in text.split("| `scoring` |")[1:2])
    assert "rounded half up to decimals places and P values to pValueDigits significant" in (
        scoring_row
    )
    assert "| 1.4 | 2026-12-03 |" in text
    # the source's "Sizing and power" states no power for the replication rule: the claim that
    # checks one is this project's, and PREREG.md says so
    claim = text.split("| `replication-power-at-040` |")[1].split("\n")[0]
    assert "Not the source's claim (it states no power for the replication rule)" in claim
    # "detects about 0.13 at 80% power": the power claim at exactly 0.13 is the strict reading
    claim = text.split("| `key-contrast-power` |")[1].split("\n")[0]
    assert "read strictly (power at exactly 0.13 at least 0.80; the source says 'about'" in claim
    # the source's diagnosis table: each contrastive verb in its own D17 split (tuning
    # `bypasses` 0.67 of n=9, calibration `blocks` 0.36 of n=25, test `halts` 0.00 of n=73)
    rationale = section("### Rationale", "## Hypotheses and decision rules")
    assert "0.67 for `bypasses` in the tuning grammar, n = 9" in rationale
    assert "0.36 for `blocks` in the calibration grammar, n = 25" in rationale
    assert "0.00 for `halts` in the test grammar, n = 73" in rationale
    # the call window: the source is not silent on it (a call's timeout must end "before the
    # expiry"); PREREG.md names its words beside the reading the hand-off enforces
    # (test_d17_handoff.test_call_timeout_edge_and_expiry: a timeout ending at the expiry passes)
    # (a constant with a long value has its description beside the value, below the table)
    hand_off = text.split("### `hand-off` ")[1].split(" ### ")[0]
    assert 'a call\'s timeout must end "before the expiry", read here as no later than it' in (
        hand_off
    )


@pytest.mark.parametrize(("score", "passes"), [(0.6, True), (0.6001, False)])
def test_the_audit_limit_is_inclusive_as_prereg_md_says(score, passes):
    """PREREG.md: a group fails above 0.60; 0.60 itself passes (scores are already rounded to
    the registered 4 decimals when the limit reads them)."""
    from d17_helpers import engine_config

    from prereg.engines.reachability.audit import LEARNERS, ShortcutAudit

    audit = ShortcutAudit(engine_config())
    group = {"group": "equalized:pool-a:h1", "gated": True, "n": 10, "yes": 5,
             "scores": dict.fromkeys(LEARNERS, 0.5) | {"logistic": score}}  # fmt: skip
    obj = audit.audit_object([group])
    assert (obj["limit"], obj["groups"][0]["max"]) == (0.6, score)
    assert obj["equalizedPasses"] is passes and obj["groups"][0]["passes"] is passes


def test_the_audit_figure_says_what_passes_as_the_limit_decides():
    """The audit's figure is balanced accuracy (the study page: "(TPR + TNR)/2") and a gated
    group passes at or below the 0.60 limit ("all pass the 0.60 limit" with a group at the
    limit passing): the caption said "accuracy" and "below the limit"."""
    from prereg.reports.reachability import audit_figure

    audit = {"limit": 0.6, "groups": [
        {"group": "equalized:pool-a:h1", "max": 0.6, "passes": True},
        {"group": "equalized:pool-a:h3", "max": 0.6001, "passes": False},
        {"group": "d17-faithful:pool-a:h1", "max": 1.0, "passes": None},
    ]}  # fmt: skip
    fig = audit_figure(audit)
    caption = " ".join(fig.caption.split())
    assert "best cross-validated balanced accuracy" in caption
    assert "pass (at or below the limit), vermilion gated groups fail (above it)" in caption
    assert "balanced accuracy of a cue-only learner" in fig.svg


def test_prereg_md_labels_every_factor_level_in_the_sources_words():
    """Source, Factors: pool = "The three disjoint D17 grammars" (pool-a the tuning grammar with
    `bypasses`, pool-b calibration with `blocks`, pool-c test with `halts`), relay hops 1 and 3,
    the outcomes (yes; relay-off; a missing link written as the contrastive verb, an explicit
    negation or a non-connective verb; or not stated at all: 3 hops, interior link), and the
    layouts (equalized; D17-faithful control). PREREG.md's factor table had an empty label
    column."""
    (d17,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    text = render_prereg_md(d17)
    table = text[text.index("### Factors and levels") : text.index("### Wording pools")]
    rows = [x for x in table.splitlines() if x.startswith("| ") and "`" in x]
    assert len(rows) == 13 and all(not x.endswith("|  |") for x in rows)
    for level, words in (
        ("pool-a", "D17 tuning grammar: connects, contrastive bypasses"),
        ("pool-b", "D17 calibration grammar: routes, contrastive blocks"),
        ("pool-c", "D17 test grammar: links, contrastive halts"),
        ("missing-absence", "one interior link not stated at all, three hops only"),
        ("d17-faithful", "D17's rendering: one-relay rule, fixed line order, no decoys"),
    ):
        assert any(f"| `{level}` |" in x and words in x for x in rows), level


def test_the_calibrator_note_names_the_probability_the_calibrator_maps_to(tmp_path: Path):
    """The registered calibrator maps a score to (yes + 1)/(n + 2) of its block (the study
    page); the report's note said "its highest block maps scores to P(yes) = " the block's
    yes/n. Blocks 0 of 1 and 1 of 4: yes/n reaches 0.25, the calibrator 2/6 = 1/3 (0.333)."""
    from prereg.reports.reachability import _calibrator_note

    cal = tmp_path / "calibrator.json"
    blocks = [{"lower": 0.0, "yes": 0, "n": 1}, {"lower": 0.5, "yes": 1, "n": 4}]
    cal.write_text(json.dumps({"blocks": blocks}))
    step = Step("s", "score", ["score"], ["score", "--calibrator", str(cal)], 0, True)
    m = {"calibratedAccuracy": "calibrated-accuracy"}
    note = _calibrator_note(tmp_path, step, {}, m)
    assert "its highest block maps scores to P(yes) = 0.333, below one half" in note
    # a block mapping to one half or above: no note (2 of 2 maps to 3/4)
    cal.write_text(json.dumps({"blocks": [*blocks, {"lower": 0.9, "yes": 2, "n": 2}]}))
    assert _calibrator_note(tmp_path, step, {}, m) is None
