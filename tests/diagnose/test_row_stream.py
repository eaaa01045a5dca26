"""diagnose's row path draws a block of simulated studies at once (DrawnRows.draw_words over
rows.Stream): each study's draws are a function of the seed, the condition and the study's
number alone.

- A block's words and draws are, study by study, those of each study drawn alone, so
  DIAGNOSE.json is the same bytes for any block size and any number of workers (continuous
  with partial coverage and failed attempts, calibration, paired, and a structured scenario,
  whose studies draw from generators of their own); only the recorded block size differs.
- The draws follow the registered process, against hand computation: every row of a cell is
  observed with chance k/m and two rows of one cell together with k(k-1)/(m(m-1)) (a uniformly
  random k-subset of the cell's m rows, exactly k of them); first attempts fail at the
  registered rate; rows are right at their cell's rate; under a pairing the two arms of an
  item are both right with the bivariate normal probability (scipy.stats.multivariate_normal)
  and their latencies have the registered means, SD and correlation.  Within 4.5 Monte Carlo
  SEs.
"""

from __future__ import annotations

import importlib
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.diagnose import command as diagnose_command
from prereg.diagnose.command import build_plan
from prereg.diagnose.design import Rules
from prereg.diagnose.rows import Stream, stream
from prereg.engines.factorial.commands import diagnose_design
from prereg.study import study_context
from tests.conftest import FIXTURES, ROOT

PARTIAL = (
    (
        "    description: Both systems alike.\n",
        "    description: Both systems alike.\n    coverage: 0.8\n    failed_attempt_rate: 0.3\n",
    ),
)


WORKERS = "      - {name: --workers, kind: option, type: integer, help: processes}\n"


def project(root: Path, study: str, edits=()) -> Path:
    text = (FIXTURES / "diagnose" / f"{study}.yaml").read_text(encoding="utf-8")
    out = "help: DIAGNOSE.json}\n"
    if "--workers" not in text and out in text:  # its own diagnose command, without --workers
        text = text.replace(out, out + WORKERS)
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{study}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    return root


def row_plan(root: Path, study: str, scenario: str, simulations: int = 1):
    module, ctx = study_context(Project(root), study)
    rules = Rules(importlib.import_module(module.__name__ + ".rules"))
    design = diagnose_design(ctx.config)
    plan, _ = build_plan(ctx, design, rules, [scenario], simulations, 5, "rows")
    return plan


def test_a_study_reads_the_same_words_in_any_block():
    s = Stream(12, 2**63 + 17)
    whole = s.words(0, 40, 9)
    assert whole.dtype == np.uint64 and whole.shape == (40, 9)
    for first, size in ((0, 1), (3, 7), (39, 1), (10, 30)):
        assert np.array_equal(s.words(first, size, 9), whole[first : first + size])
    assert not np.array_equal(Stream(13, 2**63 + 17).words(0, 40, 9), whole)
    assert not np.array_equal(Stream(12, 2**63 + 18).words(0, 40, 9), whole)


@pytest.mark.parametrize(
    ("study", "edits", "scenario"),
    [
        ("latency-analyses", PARTIAL, "same"),
        ("calibration", (), "overconfident"),
        ("paired", (), "correlated"),
    ],
)
def test_a_block_draws_what_each_study_draws_alone(tmp_path, study, edits, scenario):
    plan = row_plan(project(tmp_path, study, edits), study, scenario)
    model, cond = plan.design.rows, plan.conditions[0]
    draws = stream(plan, 0)
    width = model.word_layout(cond.scenario).width
    observed, failed, right, numbers = model.draw_words(cond, draws.words(4, 12, width))
    assert numbers  # every fixture draws numbers or confidences
    for i in range(12):
        o, f, r, nums = model.draw(cond, draws, 4 + i)
        assert np.array_equal(o, observed[i])
        assert np.array_equal(f, failed[i])
        assert np.array_equal(r, right[i])
        assert nums.keys() == numbers.keys()
        for k, x in nums.items():
            assert np.array_equal(x, numbers[k][i], equal_nan=True), k


def diagnosed(root: Path, study: str, out: Path, *extra) -> bytes:
    args = ["--simulations", "45", "--seed", "5", "--out", str(out), "--quiet", *extra]
    assert main(["--project", str(root), study, "diagnose", *args]) == 0
    return out.read_bytes()


@pytest.mark.parametrize(
    ("study", "edits"),
    [
        ("latency-analyses", PARTIAL),
        ("calibration", ()),
        ("paired", ()),
        ("ni", ()),  # a clustered scenario: each study draws from a generator of its own
    ],
)
def test_diagnose_bytes_do_not_depend_on_block_size_or_workers(tmp_path, monkeypatch, study, edits):
    root = project(tmp_path / "p", study, edits)
    default = diagnosed(root, study, tmp_path / "default.json")
    assert b'"blockSize": 250' in default
    for size in (7, 16):
        monkeypatch.setattr(diagnose_command, "BLOCK_SIZE", size)
        got = diagnosed(root, study, tmp_path / f"b{size}.json")
        assert got.replace(f'"blockSize": {size}'.encode(), b'"blockSize": 250') == default
        two = diagnosed(root, study, tmp_path / f"w{size}.json", "--workers", "2")
        assert two == got


def test_observed_rows_failed_attempts_and_outcomes_follow_the_scenario(tmp_path):
    """latency-analyses under 'same' with coverage 0.8 and failed_attempt_rate 0.3: cells of
    m = 30 rows, k = floor(0.8 · 30) = 24 observed, rows right at 0.6."""
    plan = row_plan(project(tmp_path, "latency-analyses", PARTIAL), "latency-analyses", "same")
    model, cond = plan.design.rows, plan.conditions[0]
    n_studies = 6000
    width = model.word_layout(cond.scenario).width
    words = stream(plan, 0).words(0, n_studies, width)
    observed, failed, right, numbers = model.draw_words(cond, words)
    m, k = 30, 24
    for rows in model.cell_rows:
        assert rows.size == m
        assert (observed[:, rows].sum(axis=1) == k).all()  # exactly k of each cell
        share = observed[:, rows].mean(axis=0)
        se = math.sqrt((k / m) * (1 - k / m) / n_studies)
        assert np.abs(share - k / m).max() < 4.5 * se
        both = (observed[:, rows[0]] & observed[:, rows[1]]).mean()
        pair = k * (k - 1) / (m * (m - 1))
        assert abs(both - pair) < 4.5 * math.sqrt(pair * (1 - pair) / n_studies)
    cells = observed.size
    assert abs(failed.mean() - 0.3) < 4.5 * math.sqrt(0.3 * 0.7 / cells)
    assert abs(right.mean() - 0.6) < 4.5 * math.sqrt(0.6 * 0.4 / cells)
    # failure, outcome and observation are drawn independently of one another
    assert abs((failed & right).mean() - 0.18) < 4.5 * math.sqrt(0.18 * 0.82 / cells)
    logs = np.log(numbers["latency_ms"])
    assert abs(logs.mean() - 6.0) < 4.5 * 0.5 / math.sqrt(logs.size)
    assert abs(logs.std() - 0.5) < 4.5 * 0.5 / math.sqrt(2 * logs.size)


def test_a_pairing_draws_the_arms_of_an_item_together(tmp_path):
    """paired under 'correlated': new right 0.75, old 0.55, latent correlation 0.6 within an
    item; latencies normal, means 1.8 and 2.0, SD 0.5, correlation 0.6."""
    plan = row_plan(project(tmp_path, "paired"), "paired", "correlated")
    model, cond = plan.design.rows, plan.conditions[0]
    table = model.table
    n_studies = 3000
    width = model.word_layout(cond.scenario).width
    observed, failed, right, numbers = model.draw_words(
        cond, stream(plan, 0).words(0, n_studies, width)
    )
    assert observed.all() and not failed.any()
    codes, _ = model.items("itemId")
    system = np.asarray(table.columns["system"], dtype=object)
    new, old = np.flatnonzero(system == "new"), np.flatnonzero(system == "old")
    old = old[np.argsort(codes[old])]
    new = new[np.argsort(codes[new])]
    assert np.array_equal(codes[new], codes[old])  # one new and one old row per item
    r_new, r_old = right[:, new], right[:, old]
    cells = r_new.size
    for got, rate in ((r_new.mean(), 0.75), (r_old.mean(), 0.55)):
        assert abs(got - rate) < 4.5 * math.sqrt(rate * (1 - rate) / cells)
    cut = [stats.norm.ppf(0.75), stats.norm.ppf(0.55)]
    both = stats.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]]).cdf(cut)
    assert both > 0.75 * 0.55 + 0.05  # the dependence is large enough to be seen
    # items of one study share nothing: each item's pair is an independent draw
    got = (r_new & r_old).mean()
    assert abs(got - both) < 4.5 * math.sqrt(both * (1 - both) / cells)
    x_new, x_old = numbers["latency"][:, new].ravel(), numbers["latency"][:, old].ravel()
    for x, mean in ((x_new, 1.8), (x_old, 2.0)):
        assert abs(x.mean() - mean) < 4.5 * 0.5 / math.sqrt(x.size)
        assert abs(x.std() - 0.5) < 4.5 * 0.5 / math.sqrt(2 * x.size)
    rho = np.corrcoef(x_new, x_old)[0, 1]
    assert abs(math.atanh(rho) - math.atanh(0.6)) < 4.5 / math.sqrt(x_new.size - 3)
