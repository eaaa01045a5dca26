"""diagnose scores a block of simulated studies at once; every figure, gate and verdict of the
batched path equals, bit for bit, what the one-study path (``registered_results``,
``decide_all``, ``prereg.rules.evaluate``) gives for each study.

Checked over the simulated blocks of answer-position and d17-multifact (every scenario, several
seeds, partial blocks, and counts pushed to the edges: empty arms, all right, all wrong), over
random results for every compiled study's rules (and variants of their comparisons with other
quantities and registered decimals, counts large enough to leave int64), over the counted
figures of latency-cost and paired-verifiers, and for the methods themselves in arrays of any
length; plus the pieces around them (Holm by rows, the binomial pmf the claims sum, the
compiled check of the document, what the command imports)."""

from __future__ import annotations

import copy
import importlib
import json
import math
from dataclasses import replace
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from prereg.compiler.project import Project
from prereg.decide.evaluate import (
    Selections,
    _count_results,
    _count_results_many,
    _selected_sums,
    _Split,
    registered_results_many,
)
from prereg.decide.metrics import RowMetric
from prereg.decide.table import from_items
from prereg.diagnose import claims, command
from prereg.diagnose.claims import binom_pmf
from prereg.diagnose.design import DROPPED, KINDS, RIGHT, WRONG, targets
from prereg.diagnose.model import draw_block
from prereg.diagnose.run import score_block, score_block_per_study
from prereg.errors import UserError
from prereg.rules import (
    AllOf,
    AnyOf,
    AtLeast,
    Compare,
    ContrastResult,
    ForEach,
    ResultArrays,
    adjust_families,
    adjust_families_many,
    decide,
    decide_many,
    evaluate,
    evaluate_many,
    threshold,
)
from prereg.stats.methods import method
from prereg.stats.multiplicity import holm_adjust, holm_adjust_rows
from prereg.study import study_context
from tests.conftest import ROOT
from tests.diagnose.helpers import AP, D17, compile_example, plan_for
from tests.engines.factorial.examples import example_project, read_jsonl, run


def same_bits(a, b) -> bool:
    """Equal arrays, float by float to the bit (any NaN equals any NaN: no output shows one)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    na, nb = np.isnan(a), np.isnan(b)
    return np.array_equal(na, nb) and np.array_equal(a[~na].view(np.uint64), b[~nb].view(np.uint64))


def assert_same_block(plan, counts) -> None:
    got = score_block(plan, counts)
    assert got is not None, "the batched path declined these rules"
    want = score_block_per_study(plan, counts)
    assert got[0] == want[0]
    assert np.array_equal(got[1], want[1])
    assert same_bits(got[2], want[2])
    assert same_bits(got[3], want[3])


def edge_counts(design, studies: int, rng) -> np.ndarray:
    """Counts of each kind per group reaching the edges: a group (or a whole study) with every
    row dropped, every row right or every row wrong, else a random split."""
    out = np.zeros((studies, design.groups, len(KINDS)), dtype=np.int64)
    onehot = np.eye(len(KINDS))
    for s in range(studies):
        whole = rng.integers(8)
        for g, rows in enumerate(design.group_rows.tolist()):
            mode = whole if whole < 3 else rng.integers(7)
            if mode < 3:
                p = onehot[(DROPPED, RIGHT, WRONG)[mode]]
            else:
                p = rng.dirichlet(np.full(len(KINDS), 0.4))
            out[s, g] = rng.multinomial(rows, p)
    return out


@pytest.fixture(scope="module")
def ap(tmp_path_factory) -> Path:
    return compile_example(tmp_path_factory.mktemp("ap"))


def all_scenarios(root: Path, study: str) -> list[str]:
    _, ctx = study_context(Project(root), study)
    return [s["id"] for s in ctx.config["scenarios"]]


# Studies per block: the one-study oracle costs ~7 ms a study (its certified comparisons), so
# blocks of 60 and 37 (150 and 97 before, 15 CPU s) and 80 edge studies (200): every mode of
# edge_counts still occurs dozens of times.
@pytest.mark.parametrize(("seed", "studies"), [(1, 60), (11, 37)])
def test_answer_position_blocks(ap, seed, studies):
    plan, _ = plan_for(ap, AP, all_scenarios(ap, AP), studies, seed=seed)
    for cond in plan.conditions:
        counts = draw_block(plan.design, cond, plan.seed, 0, plan.block_size)[:studies]
        assert_same_block(plan, counts)
    assert_same_block(plan, edge_counts(plan.design, 80, np.random.default_rng(seed)))


def test_d17_blocks():
    scenarios = all_scenarios(ROOT, D17)
    plan, _ = plan_for(ROOT, D17, scenarios, 24, seed=1)
    for b, cond in enumerate(plan.conditions):
        counts = draw_block(plan.design, cond, plan.seed, b, plan.block_size)[:24]
        assert_same_block(plan, counts)
    plan, _ = plan_for(ROOT, D17, ["pool-c-contrastive-shift"], 60, seed=5)
    for cond in plan.conditions[::3]:
        assert_same_block(plan, draw_block(plan.design, cond, plan.seed, 1, plan.block_size)[:60])
    assert_same_block(plan, edge_counts(plan.design, 60, np.random.default_rng(3)))


def test_one_study_blocks_and_partial_blocks(ap):
    plan, _ = plan_for(ap, AP, ["position-bias", "low-coverage"], 7, seed=2)
    for cond in plan.conditions:
        counts = draw_block(plan.design, cond, plan.seed, 3, plan.block_size)
        for n in (1, 2, 7):
            assert_same_block(plan, counts[:n])


# -- the rules over arrays ------------------------------------------------------------------------


def rules_modules(tmp: Path):
    """Every compiled study's rules module: the repository's and the examples'."""
    out = {}
    for sid in ("d17-multifact", "jev-multicorrect", "s3-verifier-freeze"):
        module, _ = study_context(Project(ROOT), sid)
        out[sid] = importlib.import_module(module.__name__ + ".rules")
    for sid in ("answer-position", "latency-cost", "paired-verifiers", "calibration-cells"):
        root = example_project(tmp / sid, sid)
        module, _ = study_context(Project(root), sid)
        out[sid] = importlib.import_module(module.__name__ + ".rules")
    return out


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    return rules_modules(tmp_path_factory.mktemp("rules"))


def subtrees(node, binding):
    yield node, binding
    if isinstance(node, (AllOf, AnyOf, AtLeast)):
        for c in node.conditions:
            yield from subtrees(c, binding)
    elif isinstance(node, ForEach):
        for v in node.values:
            yield from subtrees(node.condition, {**binding, node.name: v})


def compares(node):
    for n, binding in subtrees(node, {}):
        if isinstance(n, Compare):
            yield n, binding


def random_counts(rng, size: int, values: list[float], big: bool):
    """(k, n): small and large trials, k anywhere in 0..n, a third exactly at a threshold."""
    sizes = [0, 1, 2, 3, 4, 5, 10, 20, 40, 100, 150, 1000]
    if big:
        sizes += [2**33, 2**40 + 7]
    n = rng.choice(np.array(sizes, dtype=np.int64), size)
    k = np.array([int(rng.integers(0, int(m) + 1)) for m in n.tolist()], dtype=np.int64)
    for i in np.flatnonzero(rng.random(size) < 0.35).tolist():
        t = threshold(float(rng.choice(values)))
        if 0 <= t <= 1:
            m = int(rng.integers(1, 30))
            n[i], k[i] = t.denominator * m, t.numerator * m
    return k, n


def random_floats(rng, size: int, values: list[float]) -> np.ndarray:
    """Values at, next to and around the thresholds, at decimal half-way points, NaN."""
    picks = []
    for v in values:
        picks += [v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf), v + 1e-3, v - 1e-3]
        for d in (2, 4):
            half = math.floor(v * 10**d) / 10**d + 0.5 / 10**d
            picks += [half, np.nextafter(half, np.inf), np.nextafter(half, -np.inf)]
    picks += [0.0, -0.0, 1.0, -1.0, np.nan]
    x = rng.uniform(-1.2, 1.2, size)
    chosen = rng.random(size) < 0.6
    x[chosen] = rng.choice(np.array(picks), int(chosen.sum()))
    x[rng.random(size) < 0.08] = np.nan
    return x


def random_results(rng, ids, size: int, values: list[float], big: bool) -> dict:
    out = {}
    for rid in ids:
        kind = rng.integers(3)
        extra = {}
        if kind == 0:
            k, n = random_counts(rng, size, values, big)
            extra = {"k": k, "n": n}
        elif kind == 1:
            k1, n1 = random_counts(rng, size, values, big)
            k2, n2 = random_counts(rng, size, values, big)
            extra = {"k1": k1, "n1": n1, "k2": k2, "n2": n2}
        f = [random_floats(rng, size, values) for _ in range(5)]
        out[rid] = ResultArrays(rid, *f, extra=extra)
    return out


def one_study(results: dict, i: int) -> dict:
    def opt(x):
        return None if math.isnan(x) else float(x)

    return {
        rid: ContrastResult(
            rid,
            float(r.estimate[i]),
            float(r.lower[i]),
            float(r.upper[i]),
            p=opt(r.p[i]),
            adjusted_p=opt(r.adjusted_p[i]),
            extra={k: int(v[i]) for k, v in r.extra.items()},
        )
        for rid, r in results.items()
    }


def verdict_or_error(fn):
    try:
        return fn()
    except ValueError as exc:
        return ("ValueError", str(exc))


@pytest.mark.parametrize("big", [False, True])
def test_rules_over_arrays_equal_each_study(modules, big):
    rng = np.random.default_rng(20 + big)
    size = 64  # random studies per rule: thresholds are among the drawn values, so ties occur
    for sid, module in modules.items():
        for h, (rule, verdicts) in module.RULES.items():
            roots = [rule, *(v.when for v in verdicts)]
            nodes = [(n, b) for r in roots if r is not None for n, b in subtrees(r, {})]
            cmps = [n for r in roots if r is not None for n, _ in compares(r)]
            values = sorted({float(c.value) for c in cmps}) or [0.5]
            ids = sorted({t for r in roots for t, _ in targets(r)}) + ["not-a-figure"]
            results = random_results(rng, ids, size, values, big)
            studies = [one_study(results, i) for i in range(size)]
            # every comparison again with each quantity and a few registered decimals
            variants = [
                (replace(c, quantity=q, decimals=d), b)
                for c, b in compares(rule if rule is not None else AllOf(tuple(roots[1:])))
                for q in ("estimate", "abs_estimate", "lower", "p", "adjusted_p")
                for d in (None, 0, 2, 4)
            ]
            for node, binding in nodes + variants[:: max(1, len(variants) // 60)]:
                got = evaluate_many(node, results, size, binding)
                want = [evaluate(node, s, binding) for s in studies]
                assert got.tolist() == want, (sid, h, node)
            got = verdict_or_error(lambda: decide_many(rule, verdicts, results, size))  # noqa: B023
            want = verdict_or_error(
                lambda: [decide(rule, verdicts, s) for s in studies]  # noqa: B023
            )
            assert got == want, (sid, h)


def test_a_comparison_of_an_unreported_figure_is_false():
    node = Compare("absent", "estimate", "gt", 0.0)
    assert evaluate_many(node, {}, 3).tolist() == [False] * 3 == [evaluate(node, {})] * 3


# -- Holm, the methods, the binomial pmf ---------------------------------------------------------


def test_holm_by_rows_equals_holm_of_each_row():
    rng = np.random.default_rng(4)
    for width in range(0, 9):
        p = rng.choice(np.array([0.0, 1.0, 0.01, 0.05, 0.2, np.nan]), (300, width))
        free = rng.random((300, width)) < 0.5
        p[free] = rng.random(int(free.sum()))
        got = holm_adjust_rows(p)
        for i in range(p.shape[0]):
            assert same_bits(got[i], holm_adjust(p[i]))
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        holm_adjust_rows(np.array([[0.5, 1.5]]))


def random_arms(rng, size: int):
    n = rng.choice(np.array([0, 1, 2, 3, 7, 20, 150, 999, 5778]), size)
    k = np.floor(rng.random(size) * (n + 1)).astype(np.int64)
    k[rng.random(size) < 0.1] = 0
    edge = rng.random(size) < 0.1
    k[edge] = n[edge]
    return k, n


def chunked(fn, arrays, rng):
    """``fn`` over consecutive pieces of 1 to 7 elements (the lengths one study passes)."""
    size = arrays[0].size
    outs, start = [], 0
    while start < size:
        stop = min(size, start + int(rng.integers(1, 8)))
        got = fn(*(a[start:stop] for a in arrays))
        outs.append(np.column_stack([np.asarray(g, dtype=np.float64) for g in got]))
        start = stop
    return np.concatenate(outs)


def test_methods_give_the_same_figures_in_arrays_of_any_length():
    rng = np.random.default_rng(9)
    size = 300  # every n of random_arms about 33 times an arm, in about 75 pieces a method
    k1, n1 = random_arms(rng, size)
    k2, n2 = random_arms(rng, size)
    calls = [
        (method("proportion-interval", m).fn, (k1, n1), {"level": lv})
        for m in ("wilson", "clopper-pearson")
        for lv in (0.9, 0.95)
    ]
    calls.append(
        (method("difference-interval", "newcombe-hybrid").fn, (k1, n1, k2, n2), {"level": 0.95})
    )
    for alt in ("two-sided", "greater", "less"):
        calls.append(
            (
                method("two-proportion-test", "pooled-z").fn,
                (k1, n1, k2, n2),
                {"alternative": alt, "margin": 0.0},
            )
        )
        for margin in (-0.2, -0.05, -1e-9, 0.0, 0.05, 0.3):
            calls.append(
                (
                    method("two-proportion-test", "farrington-manning").fn,
                    (k1, n1, k2, n2),
                    {"alternative": alt, "margin": margin},
                )
            )
    for fn, arrays, kw in calls:
        with np.errstate(all="ignore"):
            whole = np.column_stack([np.asarray(g) for g in fn(*arrays, **kw)])
            pieces = chunked(lambda *a, fn=fn, kw=kw: fn(*a, **kw), arrays, rng)
        assert same_bits(whole, pieces), (fn.__name__, kw)
        for i in range(0, size, 37):
            one = fn(*(int(a[i]) for a in arrays), **kw)
            assert same_bits(np.array(one, dtype=np.float64), whole[i]), (fn.__name__, kw, i)


def test_binomial_pmf_is_scipys():
    from scipy.stats import binom

    rng = np.random.default_rng(6)
    for n in (0, 1, 2, 5, 37, 150, 1000, 5778):
        for p in (0.0, 1.0, 0.5, 0.13, 1e-4, 1 - 1e-4, float(rng.random())):
            k = np.arange(n + 1)
            assert same_bits(binom_pmf(k, n, p), binom.pmf(k, n, p)), (n, p)
            assert same_bits(binom_pmf(k[n // 3 :], n, p), binom.pmf(k[n // 3 :], n, p))


@pytest.mark.parametrize(
    ("test", "alternative", "margin"),
    [
        ("pooled-z", "two-sided", 0.0),
        ("pooled-z", "greater", 0.0),
        ("farrington-manning", "greater", -0.05),
        ("farrington-manning", "less", 0.1),
    ],
)
def test_exact_power_from_every_counts_p_values_equals_the_supports_own(
    monkeypatch, test, alternative, margin
):
    for n1, n2 in ((150, 150), (220, 180), (3, 40)):
        for p1, p2 in ((0.5, 0.5), (0.63, 0.5), (0.0, 0.4), (0.97, 1.0), (0.2, 0.01)):
            k1, k2 = claims._support(n1, p1), claims._support(n2, p2)
            taken = claims._p_values(test, n1, n2, alternative, margin, k1, k2)
            own = claims.grid_p_values(test, n1, n2, alternative, margin, k1, k2)
            assert same_bits(taken, own), (n1, n2, p1, p2)
            args = (test, n1, p1, n2, p2, 0.05, alternative, margin)
            cached = claims.exact_power(*args)
            with monkeypatch.context() as m:
                m.setattr(claims, "GRID_LIMIT", 0)
                assert claims.exact_power(*args) == cached


# -- selections summed without BLAS ---------------------------------------------------------------


def test_selected_sums_equal_the_matrix_product():
    rng = np.random.default_rng(8)
    for groups, items in ((1, 1), (5, 3), (132, 150), (40, 0)):
        values = rng.integers(0, 5000, (33, groups)).astype(np.float64)
        stacked = (rng.random((items, groups)) < 0.2).astype(np.float64)
        if items:
            stacked[0] = 0.0  # a selection of no group
        assert same_bits(_selected_sums(values, stacked), values @ stacked.T)
    weights = np.array([[0.5, 2.0]])
    assert same_bits(_selected_sums(np.ones((2, 2)), weights), np.ones((2, 2)) @ weights.T)


# -- the counted figures of studies diagnose does not simulate -----------------------------------


@pytest.mark.parametrize("study", ["latency-cost", "paired-verifiers", AP])
def test_counted_figures_of_many_studies_equal_each_study(tmp_path, study):
    root = example_project(tmp_path, study)
    assert run(root, study, "items", "--out", root / "items.jsonl") == 0
    module, ctx = study_context(Project(root), study)
    rules = importlib.import_module(module.__name__ + ".rules")
    config = ctx.config
    contract = next(c for c in config["record_contracts"] if c["role"] == "items")
    table = from_items(config, contract, read_jsonl(root / "items.jsonl"), "items.jsonl")
    rng = np.random.default_rng(len(study))
    size, rows = 120, len(table)
    metrics = {}
    for m in config["metrics"]:
        kind = (m.get("compute") or {}).get("kind")
        if kind not in ("coverage", "proportion"):
            continue
        den = (rng.random((size, rows)) < rng.choice([0.0, 0.3, 0.9, 1.0], (size, 1))).astype(float)
        num = den * (rng.random((size, rows)) < rng.choice([0.0, 0.5, 1.0], (size, 1)))
        metrics[m["id"]] = RowMetric(m["id"], kind, num, den)
    sel = Selections(table)
    part = _Split(rules, metrics)
    assert part.ESTIMATES or part.CONTRASTS
    if not part.complete:
        assert registered_results_many(rules, metrics, sel, size) is None
    many = adjust_families_many(
        _count_results_many(part, metrics, sel, size), part.CONTRASTS, part.FAMILIES
    )
    for i in range(size):
        sel.forget_metrics()
        mine = {mid: RowMetric(mid, m.kind, m.num[i], m.den[i]) for mid, m in metrics.items()}
        one = _count_results(part, mine, sel)
        adjusted = adjust_families(one.results, part.CONTRASTS, part.FAMILIES)
        for rid, r in adjusted.items():
            x = many[rid]
            for q in ("estimate", "lower", "upper", "p", "adjusted_p"):
                want = getattr(r, q)
                assert same_bits(getattr(x, q)[i], np.nan if want is None else want), (rid, q)
            # the counts are the same; one study's result also reports its test's statistic,
            # se and df (SCORE.json shows them), which the many-studies path leaves out
            counts = {k: v for k, v in r.extra.items() if k in ("k", "n", "k1", "n1", "k2", "n2")}
            assert {k: int(v[i]) for k, v in x.extra.items()} == counts, rid
            assert set(r.extra) - set(counts) <= {"statistic", "statisticName", "se", "df"}


# -- the compiled check of the document -----------------------------------------------------------


@pytest.fixture(scope="module")
def document(ap, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("doc") / "DIAGNOSE.json"
    args = ["--simulations", "40", "--seed", "2", "--out", str(out), "--quiet"]
    assert run(ap, AP, "diagnose", *args) == 0
    return json.loads(out.read_text())


def mutations(doc: dict):
    """(what, document) pairs, each one change away from ``doc``."""
    cond = 0
    yield "valid", doc
    for path, value in [
        (("schemaVersion",), "prereg-diagnose/v2"),
        (("simulations",), "40"),
        (("simulations",), True),
        (("conditions", cond, "gates", "anyFailed", "count"), -1),
        (("conditions", cond, "gates", "anyFailed", "share"), "0"),
        (("conditions", cond, "estimates", 0, "coverage"), None),
        (("conditions", cond, "estimates", 0, "coverage"), "all"),
        (("conditions", cond, "estimates", 0, "coverage"), {"count": 1}),
        (("conditions", cond, "contrasts", 0, "coverage"), None),
        (("conditions", cond, "contrasts", 0, "excludesNull"), None),
        (("conditions", cond, "hypotheses", 0, "verdicts"), {}),
        (("claims", 0, "holds"), "yes"),
        (("claims", 0, "method"), "guess"),
        (("families",), None),
        (("rows",), 1.5),
    ]:
        changed = copy.deepcopy(doc)
        *head, last = path
        target = changed
        for p in head:
            target = target[p]
        target[last] = value
        yield f"{path} = {value!r}", changed
    for path in [("study",), ("conditions", cond, "gates"), ("claims", 0, "figure")]:
        changed = copy.deepcopy(doc)
        *head, last = path
        target = changed
        for p in head:
            target = target[p]
        del target[last]
        yield f"without {path}", changed
    extra = copy.deepcopy(doc)
    extra["conditions"][cond]["estimates"][0]["coverage"]["extra"] = 1
    yield "an extra member", extra


def test_the_compiled_check_agrees_with_jsonschema(document):
    accepts = command._accepts()
    assert accepts is not None
    validator = jsonschema.Draft202012Validator(command.schema())
    seen = set()
    for what, doc in mutations(document):
        valid = not list(validator.iter_errors(doc))
        assert accepts(doc) == valid, what
        seen.add(valid)
        if valid:
            command.validate(doc)
        else:
            with pytest.raises(UserError, match="does not match its schema"):
                command.validate(doc)
    assert seen == {True, False}


# -- what the command loads ---------------------------------------------------------------------


def loaded_by_diagnose(project: Path, out: Path) -> list[str]:
    """Which of the heavy modules a fresh interpreter holds after one diagnose run."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from prereg.cli import main\n"
        f"args = ['--project', {str(project)!r}, {AP!r}, 'diagnose', '--simulations', '20',"
        f" '--seed', '1', '--quiet', '--out', {str(out)!r}]\n"
        "assert main(args) == 0\n"
        "print(sorted(m for m in ('scipy.stats', 'numpy.ma', 'jsonschema') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_diagnose_loads_no_scipy_stats_or_jsonschema(ap, tmp_path):
    # numpy.ma comes with scipy.special's public package (its array-API support), which the
    # exact power sums import: README, "Start-up and libraries"
    assert loaded_by_diagnose(ap, tmp_path / "DIAGNOSE.json") == "['numpy.ma']"
