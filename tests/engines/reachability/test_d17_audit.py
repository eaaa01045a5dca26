"""Shortcut-audit learners and features against plain implementations of the study page."""

from __future__ import annotations

import hashlib
import math
import random
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from d17_helpers import demo, engine_config
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.engines.reachability.audit import (
    RankedColumns,
    ShortcutAudit,
    _folds,
    cv_stump,
    cv_tree,
    fit_stump,
    logistic_batch,
    logistic_scores,
    scan_pattern,
)
from prereg.stats.classification import balanced_accuracy


def naive_stump(X, y):
    """Keys in order, distinct values ascending, "≥" before "<"; strictly greater wins."""
    best, choice = -math.inf, None
    for f in range(X.shape[1]):
        for t in sorted(set(X[:, f].tolist())):
            for ge in (True, False):
                pred = X[:, f] >= t if ge else X[:, f] < t
                ba = balanced_accuracy(y, pred)
                if ba > best:
                    best, choice = ba, (f, t, ge)
    return choice


def apply(choice, X):
    f, t, ge = choice
    return X[:, f] >= t if ge else X[:, f] < t


def naive_tree_predict(Xtr, ytr, Xte):
    root = naive_stump(Xtr, ytr)
    f, t, _ = root
    out = np.zeros(len(Xte), dtype=bool)
    for side_tr, side_te in ((Xtr[:, f] >= t, Xte[:, f] >= t), (Xtr[:, f] < t, Xte[:, f] < t)):
        if side_tr.any():
            out[side_te] = apply(naive_stump(Xtr[side_tr], ytr[side_tr]), Xte[side_te])
    return out


def random_problem(rng, n, F, levels):
    X = rng.integers(0, levels, size=(n, F)).astype(np.float64)
    if F > 1:
        X[:, 1] = X[:, 1] / 7  # fractions, as normalized positions are
    y = rng.random(n) < rng.uniform(0.1, 0.6)
    return X, y


@pytest.mark.parametrize("trial", range(40))
def test_threshold_learner_and_tree_equal_the_naive_loops(trial):
    rng = np.random.default_rng(trial)
    n = int(rng.integers(8, 40))
    X, y = random_problem(rng, n, int(rng.integers(1, 5)), int(rng.integers(2, 6)))
    rc = RankedColumns.of(X)
    folds = _folds(n, 5)
    want_stump = np.zeros(n, dtype=bool)
    want_tree = np.zeros(n, dtype=bool)
    for tr, te in folds:
        want_stump[te] = apply(naive_stump(X[tr], y[tr]), X[te])
        want_tree[te] = naive_tree_predict(X[tr], y[tr], X[te])
    assert (cv_stump(rc, y, folds) == want_stump).all()
    assert (cv_tree(rc, y, folds) == want_tree).all()
    # the integer-rank path (token counts) chooses like the naive loop too
    counts = rng.integers(0, 4, size=(n, 3))
    counts[:, 2] += 5  # a column whose minimum is not 0
    want = np.zeros(n, dtype=bool)
    for tr, te in folds:
        want[te] = apply(naive_stump(counts[tr].astype(float), y[tr]), counts[te])
    assert (cv_stump(RankedColumns.of(counts, integer=True), y, folds) == want).all()


def test_a_pure_side_keeps_the_first_candidate():
    X = np.array([[3.0, 1.0], [1.0, 0.0], [2.0, 5.0]])
    y = np.array([False, False, False])
    st = fit_stump(RankedColumns.of(X), np.arange(3), y)
    assert (st.feature, st.rank, st.ge) == (0, 0, True)  # first key, smallest value, "≥"


def naive_logistic(Xtr, ytr, Xte, steps=200, lr=0.5, l2=0.01):
    n, F = Xtr.shape
    mu = [sum(Xtr[i, j] for i in range(n)) / n for j in range(F)]
    sd = [math.sqrt(sum((Xtr[i, j] - mu[j]) ** 2 for i in range(n)) / n) or 1.0 for j in range(F)]
    Z = [[(Xtr[i, j] - mu[j]) / sd[j] for j in range(F)] for i in range(n)]
    npos = sum(bool(v) for v in ytr)
    rw = [0.5 / npos if ytr[i] else 0.5 / (n - npos) for i in range(n)]
    w, b = [0.0] * F, 0.0
    for _ in range(steps):
        gw, gb = [0.0] * F, 0.0
        for i in range(n):
            s = b + sum(w[j] * Z[i][j] for j in range(F))
            r = rw[i] * (1 / (1 + math.exp(-s)) - float(ytr[i]))
            for j in range(F):
                gw[j] += r * Z[i][j]
            gb += r
        w = [w[j] - lr * (gw[j] + l2 * w[j]) for j in range(F)]
        b = b - lr * gb
    scores = [
        b + sum(w[j] * (Xte[i, j] - mu[j]) / sd[j] for j in range(F)) for i in range(len(Xte))
    ]
    return np.array([s > 0 for s in scores]), scores


def test_logistic_regression_equals_the_naive_loop():
    rng = np.random.default_rng(7)
    problems, want = [], []
    for n in (30, 31, 45):
        X = rng.normal(size=(n, 4)) * [1, 10, 0.1, 0]  # one constant column: SD 0 ⇒ 1
        y = (X[:, 0] + rng.normal(size=n)) > 0.3
        Xte = rng.normal(size=(12, 4))
        problems.append((X, y, Xte))
        pred, scores = naive_logistic(X, y, Xte)
        assert min(abs(s) for s in scores) > 1e-9  # no knife-edge cases in this data
        want.append(pred)
    got = logistic_batch(problems, 200, 0.5, 0.01)
    for g, w in zip(got, want, strict=True):
        assert (g == w).all()
    alone = [logistic_batch([p], 200, 0.5, 0.01)[0] for p in problems]
    for g, a in zip(got, alone, strict=True):
        assert (g == a).all()


def test_scalar_features_of_a_hand_made_payload():
    ec = engine_config()
    fx = ShortcutAudit(ec).fx
    rule = ec.rules["exhaustive"].template.format(**ec.pools[0].words)
    facts = [
        "Ba123 connects Ce456.",
        "Ce456 is enabled.",
        "Di789 bypasses Fo012.",
        "Ce456 connects Gu345.",
    ]
    payload = "\n".join(
        ["A fictional archive records this world. Day 5. There are 12 unused counters.", "Facts:",
         *facts, rule, "Question: Is it established that Ba123 can reach Gu345?"]
    )  # fmt: skip
    row = SimpleNamespace(
        payload=payload, fact_lines=facts, subject="Ba123", destination="Gu345",
        cell=SimpleNamespace(pool=SimpleNamespace(id="pool-a")),
    )  # fmt: skip
    vals, toks = fx.scalar_values(row)
    got = dict(zip(fx.keys, fx.matrix([vals])[0].tolist(), strict=True))
    want = {
        "lines": 4, "chars": len(payload), "digits": 3 + 21 + 6, "words": len(payload.split()),
        "entities": 5, "subjectMentions": 1, "destinationMentions": 1, "subjectFirstPos": 0,
        "destinationFirstPos": 1, "subjectBeforeDestination": 1, "firstLineClass": 0,
        "lastLineClass": 0,
        "relationCount": 2, "relationMeanPos": 0.5, "relationMinPos": 0, "relationMaxPos": 1,
        "contrastiveCount": 1, "contrastiveMeanPos": 2 / 3, "contrastiveMinPos": 2 / 3,
        "contrastiveMaxPos": 2 / 3,
        "enabledCount": 1, "enabledMeanPos": 1 / 3, "enabledMinPos": 1 / 3, "enabledMaxPos": 1 / 3,
    }  # fmt: skip
    for c in ("negation", "unrelated", "disabled"):
        want.update({f"{c}Count": 0, f"{c}MeanPos": -1, f"{c}MinPos": -1, f"{c}MaxPos": -1})
    assert got == want
    assert len(fx.keys) == 36 and fx.keys == sorted(fx.keys)
    counts = {t: toks.count(t) for t in ("ENTITY", "ENTITY:", "ENTITY.", "ENTITY?", "Question:")}
    assert counts == {"ENTITY": 6, "ENTITY:": 1, "ENTITY.": 3, "ENTITY?": 1, "Question:": 1}


def test_chain_first_order_of_the_positive_control():
    p = demo()
    auditor = p.auditor
    rows = [r for r in p.corpus.rows if r.cell.layout.word == "equalized"][::500]
    for r in rows:
        decoys = [ln for ln in r.fact_lines if ln not in r.chain_lines]
        want = list(r.chain_lines)
        for k, ln in enumerate(decoys):
            v = int.from_bytes(hashlib.sha256(f"{r.id}:{k}".encode()).digest()[:4], "big")
            want.insert(v % (len(want) + 1), ln)
        assert auditor.chain_first(r) == want
        assert sorted(want) == sorted(r.fact_lines)


@pytest.mark.parametrize(
    "pattern",
    [
        r"\b[A-Z][a-z0-9]{4}\b",  # the study's entity pattern
        r"\b[A-Z]",
        r"\b[a-z_][0-9]\b",
        r"\b[A-Z][a-z]+|x\b",
        r"\b[A-Za-z_]+",  # a quantified class: kept as it is
        r"\b[^a]x",  # not a class of word characters only: kept
        r"\b[A-z]x",  # A-z holds [ \ ] ^ _ `: kept
    ],
)
def test_scan_pattern_matches_exactly_where_the_pattern_does(pattern):
    fast = re.compile(scan_pattern(pattern))
    slow = re.compile(pattern)
    if pattern in (r"\b[A-Za-z_]+", r"\b[^a]x", r"\b[A-z]x"):
        assert scan_pattern(pattern) == pattern
    else:
        assert not scan_pattern(pattern).startswith("\\b")
    rng = random.Random(7)
    alphabet = "AQZaqz059_ \n.,-é߲٣Éx"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    texts += [r.payload for r in demo().corpus.rows[::50]]
    for t in texts:
        assert [m.span() for m in fast.finditer(t)] == [m.span() for m in slow.finditer(t)], t
        assert fast.sub("ENTITY", t) == slow.sub("ENTITY", t)


def _row_like(payload, lines, subject, destination, pool):
    return SimpleNamespace(
        payload=payload, fact_lines=lines, subject=subject, destination=destination,
        cell=SimpleNamespace(pool=SimpleNamespace(id=pool)),
    )  # fmt: skip


def test_group_matrix_equals_the_row_by_row_features():
    p = demo()
    fx = p.auditor.fx
    rows = p.corpus.rows[::7]  # both layouts, all pools, development and test rows
    X, toks = fx.group_matrix(rows)
    want = fx.matrix([fx.scalar_values(r)[0] for r in rows])
    assert X.tobytes() == want.tobytes()  # bit for bit (the class means too)
    assert toks == [fx.scalar_values(r)[1] for r in rows]
    # other lines and payloads (the positive control's form), rows of several pools mixed
    rng = random.Random(3)
    lines_of, payloads = [], []
    for r in rows:
        lines = list(r.fact_lines)
        rng.shuffle(lines)
        lines_of.append(lines)
        payloads.append(r.payload[::-1] if rng.random() < 0.1 else r.payload)
    X2, none = fx.group_matrix(rows, lines_of, payloads)
    want2 = fx.matrix(
        [fx.scalar_values(r, ls, pl)[0] for r, ls, pl in zip(rows, lines_of, payloads, strict=True)]
    )
    assert none is None and X2.tobytes() == want2.tobytes()


def test_group_matrix_on_odd_lines_equals_the_row_by_row_features():
    fx = ShortcutAudit(engine_config()).fx
    words = ["Ba123", "connects", "is", "enabled.", "does", "not", "bypasses", "x", "", " ."]
    rng = random.Random(11)
    rows = []
    for t in range(400):
        n = rng.choice([0, 0, 1, 2, 5, 12])
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 5))) for _ in range(n)]
        if t % 17 == 0 and lines:
            lines[0] += "\nCe456 is enabled."  # a line holding a newline: the row-wise path
        payload = "\n".join(["Header 12.", "Facts:", *lines, "Question: Ba123 to Ce456?"])
        pool = rng.choice(["pool-a", "pool-b", "pool-c"])
        rows.append(_row_like(payload, lines, "Ba123", rng.choice(["Ce456", "", "x y"]), pool))
    for chunk in (rows[:1], rows[:37], rows):
        X, toks = fx.group_matrix(chunk)
        want = fx.matrix([fx.scalar_values(r)[0] for r in chunk])
        assert X.tobytes() == want.tobytes()
        assert toks == [fx.scalar_values(r)[1] for r in chunk]
    assert fx.group_matrix([])[0].shape == (0, len(fx.keys))


def test_line_codes_equal_first_matching_rules():
    fx = ShortcutAudit(engine_config()).fx
    rules = (
        (True, " ab ", 1), (False, "ab.", 2), (True, "", 3), (False, "b", 4),
    )  # fmt: skip
    rng = random.Random(5)
    lines = ["".join(rng.choice("ab .") for _ in range(rng.randint(0, 9))) for _ in range(2000)]
    for rs in (rules[:2], rules[1:2], rules[3:], rules, ()):
        want = [fx.line_class(ln, rs) for ln in lines]
        assert fx.line_codes(lines, rs).tolist() == want
    assert fx.line_codes([], rules).tolist() == []


def plain_logistic_batch(problems, steps, lr, l2):
    """The batched regression as first written (a new array per operation)."""
    B, F = len(problems), problems[0][0].shape[1]
    m = max(len(p[1]) for p in problems)
    Z, Y, RW = np.zeros((B, m, F)), np.zeros((B, m)), np.zeros((B, m))
    tests = []
    for k, (Xtr, ytr, Xte) in enumerate(problems):
        n = len(ytr)
        mu = Xtr.mean(axis=0)
        sd = np.sqrt(((Xtr - mu) ** 2).mean(axis=0))
        sd[sd == 0] = 1.0
        Z[k, :n] = (Xtr - mu) / sd
        yv = ytr.astype(np.float64)
        Y[k, :n] = yv
        npos = yv.sum()
        nneg = n - npos
        RW[k, :n] = np.where(ytr, 0.5 / npos if npos else 0.0, 0.5 / nneg if nneg else 0.0)
        tests.append((Xte - mu) / sd)
    w, b = np.zeros((B, F)), np.zeros(B)
    Zt = np.ascontiguousarray(np.swapaxes(Z, 1, 2))
    for _ in range(steps):
        s = np.matmul(Z, w[:, :, None])[:, :, 0] + b[:, None]
        p = 1.0 / (1.0 + np.exp(-s))
        r = RW * (p - Y)
        gw = np.matmul(Zt, r[:, :, None])[:, :, 0]
        gb = r.sum(axis=1)
        w = w - lr * (gw + l2 * w)
        b = b - lr * gb
    return [T @ w[k] + b[k] for k, T in enumerate(tests)]


@pytest.mark.parametrize("trial", range(12))
def test_logistic_batch_scores_equal_the_plain_form_bit_for_bit(trial):
    rng = np.random.default_rng(100 + trial)
    F = int(rng.integers(1, 40))
    problems = []
    for _ in range(int(rng.integers(1, 12))):
        n = int(rng.integers(2, 300))
        X = rng.normal(size=(n, F)) * rng.uniform(0, 50, size=F)
        X[:, 0] = np.round(X[:, 0])  # counts, as the scalar features are
        y = rng.random(n) < rng.uniform(0.05, 0.95)
        problems.append((X, y, rng.normal(size=(int(rng.integers(1, 80)), F))))
    steps, lr, l2 = int(rng.integers(1, 250)), float(rng.uniform(0.01, 1)), 0.01
    want = plain_logistic_batch(problems, steps, lr, l2)
    got = logistic_scores(problems, steps, lr, l2)
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
    preds = logistic_batch(problems, steps, lr, l2)
    assert [p.tolist() for p in preds] == [(w > 0).tolist() for w in want]


# -- the group-wide text features against the row-by-row form -------------------------------


def _extractor(pattern=None, token=None, seps=None):
    from d17_helpers import config

    from prereg.engines.reachability.config import load_config

    cfg = config()
    if pattern is not None:
        cfg["audit"]["entityPattern"] = pattern
    if token is not None:
        cfg["audit"]["entityToken"] = token
    if seps is not None:
        cfg["audit"]["mentionSeparators"] = seps
    return ShortcutAudit(load_config(cfg)).fx


def _both_forms(fx, rows, lines_of=None, payloads=None):
    """group_matrix and group_features as they run, and with the row-by-row text values."""
    fast = (fx.group_matrix(rows, lines_of, payloads), None)
    if payloads is None:
        fast = (fast[0], fx.group_features(rows))
    fx._text_values = lambda *a, **k: None
    try:
        slow = (fx.group_matrix(rows, lines_of, payloads), None)
        if payloads is None:
            slow = (slow[0], fx.group_features(rows))
    finally:
        del fx._text_values
    return fast, slow


def _assert_same(fast, slow):
    (X1, t1), f1 = fast
    (X2, t2), f2 = slow
    assert X1.tobytes() == X2.tobytes()
    assert t1 == t2
    if f1 is not None:
        assert f1[0].tobytes() == f2[0].tobytes() == X1.tobytes()
        assert f1[1].dtype == f2[1].dtype and f1[1].shape == f2[1].shape
        assert np.array_equal(f1[1], f2[1])


@pytest.mark.parametrize(
    ("pattern", "tokenwise"),
    [
        (r"\b[A-Z][a-z0-9]{4}\b", True),  # the study's
        (r"\b[A-Z][a-z]+\b", True),
        (r"\b[a-z_]{2,3}x\b", True),
        (r"\bQ[0-9]\b", True),
        (r"\b[A-Z]", False),  # no closing boundary: a match may end inside a word
        (r"\b[A-Z][a-z]?\b", False),  # an optional atom
        (r"\b[A-Z]{0,2}\b", False),  # may match nothing
        (r"\b(?:Ab)\b", False),  # a group
        (r"[A-Z][a-z]{4}", False),  # no boundaries
        (r"\b[A-Z]\w{4}\b", False),  # \w: kept out (only listed classes)
        (r"\b[A-Z][a-z]{4}\b|\.", False),
    ],
)
def test_word_run_patterns_are_recognized(pattern, tokenwise):
    from prereg.engines.reachability.audit import matches_word_runs

    assert matches_word_runs(pattern) is tokenwise
    if not tokenwise:
        return
    # the property the group-wide features rest on: the substitution and the matches of a
    # text are those of its whitespace-separated tokens (and so of its lines), one by one
    er = re.compile(pattern)
    rng = random.Random(13)
    alphabet = "AQZaqxz0159_ \n\t\r.,-?é߲٣É\x00\x1c\u2003"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        toks = text.split()
        assert er.sub("ENTITY", text).split() == [
            t for tok in toks for t in er.sub("ENTITY", tok).split()
        ]
        assert er.findall(text) == [m for tok in toks for m in er.findall(tok)]
        assert er.findall(text) == [m for ln in text.split("\n") for m in er.findall(ln)]


def test_whitespace_is_never_a_word_character():
    # why a word-run pattern's matches never cross a token: every whitespace character
    # str.split() splits at is outside \w
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    assert spaces and not any(re.match(r"\w", ch) for ch in spaces)


def test_group_text_features_equal_the_row_by_row_form_over_seeds():
    from prereg.engines.reachability.generate import Generator

    ec = engine_config()
    fx = ShortcutAudit(ec).fx
    gen = Generator(ec)
    for seed in ("d17mf-sweep-0", "another-seed-1"):  # every group of two corpora
        rows = gen.corpus(seed, records=False).rows
        by: dict = {}
        for r in rows:
            by.setdefault((r.cell.layout.word, r.cell.pool.id, r.cell.hops), []).append(r)
        for grp in by.values():
            lines_of = [r.fact_lines for r in grp]
            counts = np.array([len(ls) for ls in lines_of])
            texts = [r.payload for r in grp]
            assert fx._text_values(grp, lines_of, texts, counts, counts, "none") is not None
            _assert_same(*_both_forms(fx, grp))
        # the positive control's form: other lines and payloads
        grp = max(by.values(), key=len)
        lines_of = [list(reversed(r.fact_lines)) for r in grp]
        payloads = [r.payload.replace("Facts:", "Facts: x") for r in grp]
        _assert_same(*_both_forms(fx, grp, lines_of, payloads))


@pytest.mark.parametrize(
    ("pattern", "token", "seps"),
    [
        (None, None, None),
        (r"\b[A-Z][a-z]+\b", "E_1", " .?"),
        (r"\b[a-z]{2}\b", "W", "."),
        (None, "two words", None),  # a token with a space: the row-by-row form
        (None, r"E\tX", None),  # an escape in the replacement: the row-by-row form
        (r"\b[A-Z]", None, None),  # not a word-run pattern: the row-by-row form
        (None, None, " \n"),  # a newline separator: the row-by-row form
    ],
)
def test_group_text_features_on_odd_texts(pattern, token, seps):
    fx = _extractor(pattern, token, seps)
    words = [
        "Ba123", "Ba123.", "Ce456?", "connects", "is", "enabled.", "Ab123-Cd456", "x",
        "Éa123", "Ba١٢٣", "", " .", "\x00", "a\x00b", "ENTITY", "Q\tR", "a\rb", "12", "١٢",
    ]  # fmt: skip
    rng = random.Random(17)
    rows = []
    for t in range(300):
        n = rng.choice([0, 0, 1, 2, 5, 12])
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 5))) for _ in range(n)]
        if t % 13 == 0 and lines:
            lines[0] += "\nCe456 is enabled."
        head = rng.choice(["Header 12.", "Header ٣ é.", "", "Day 7. Day 7."])
        payload = "\n".join([head, "Facts:", *lines, "Question: Ba123 to Ce456?"])
        pool = rng.choice(["pool-a", "pool-b", "pool-c"])
        names = ["Ba123", "Ce456", "", "x y", "a.b", "enabled.", "\x00"]
        rows.append(_row_like(payload, lines, rng.choice(names), rng.choice(names), pool))
    group_wide = pattern != r"\b[A-Z]" and " " not in (token or "") and "\n" not in (seps or "")
    group_wide = group_wide and "\\" not in (token or "")
    mark = rows[7].fact_lines[0] if rows[7].fact_lines else ""
    for chunk in (rows[:1], rows[:2], rows[5:60], rows):
        lines_of = [r.fact_lines for r in chunk]
        texts = [r.payload for r in chunk]
        counts = np.array([len(ls) for ls in lines_of])
        got = fx._text_values(chunk, lines_of, texts, counts, np.maximum(1, counts - 1), "none")
        assert (got is not None) is group_wide  # which form runs
        fast, slow = _both_forms(fx, chunk)
        _assert_same(fast, slow)
        want = fx.matrix([fx.scalar_values(r)[0] for r in chunk])
        assert fast[0][0].tobytes() == want.tobytes()
        assert fast[0][1] == [fx.scalar_values(r)[1] for r in chunk]
    # a text holding the match marker: the row-by-row form
    odd = [_row_like("a \x01 b\nFacts:\n" + mark, [mark], "a", "b", "pool-a")] + rows[:9]
    assert fx._text_values(odd, [r.fact_lines for r in odd], [r.payload for r in odd],
                           np.ones(10, int), np.ones(10, int), "none") is None  # fmt: skip
    _assert_same(*_both_forms(fx, odd))
    assert fx.group_features([])[0].shape == (0, len(fx.keys))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-(2**62), max_value=2**62), max_size=60))
def test_sorted_unique_is_numpys_unique(values):
    from prereg.engines.reachability.audit import _sorted_unique

    a = np.array(values, dtype=np.intp)
    got = _sorted_unique(a.copy())
    want = np.unique(a)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_the_audit_does_not_load_numpy_ma():
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from d17_helpers import config
        from prereg.engines.reachability.config import load_config
        from prereg.engines.reachability.pipeline import prepare_memory
        prepare_memory(load_config(config()), "d17mf-public-demo", records=False, dispatch=False)
        print("numpy.ma" in sys.modules)
        """
    )
    here = str(Path(__file__).parent)
    out = subprocess.run(
        [sys.executable, "-c", code, here], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
