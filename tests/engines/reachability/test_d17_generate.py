"""Generation against a plain re-implementation written from the study page, for other seeds.

The reference below hard-codes the study's words and conventions (it is a test of the d17
configuration, not of the engine's generality) and is deliberately naive: one hash per draw,
recursion-free loops, no buffering, no per-cell plans.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

import pytest
from d17_helpers import engine_config

from prereg.engines.reachability.dispatch import dispatch_order
from prereg.engines.reachability.draws import Stream, fisher_yates
from prereg.engines.reachability.generate import Generator
from prereg.engines.reachability.pipeline import check_oracle

POOLS = {
    "pool-a": ("A fictional archive records this world.", "connects", "connect", "bypasses",
               "lacquers", "enabled", "blocked"),
    "pool-b": ("Consider this invented observatory ledger.", "routes", "route", "blocks",
               "paints", "active", "paused"),
    "pool-c": ("The following is an imaginary station log.", "links", "link", "halts", "cooks",
               "powered", "dormant"),
}  # fmt: skip
PAIRS = [(0, 1), (2, 3), (1, 2), (3, 0), (0, 2), (1, 3), (2, 0), (3, 1), (1, 0), (3, 2), (2, 1), (0, 3)]  # fmt: skip


def sha(s: str) -> bytes:
    return hashlib.sha256(s.encode("utf-8")).digest()


class Naive:
    def __init__(self, prefix: str):
        self.prefix = prefix
        self.counter = 0

    def draw(self, bound: int) -> int:
        while True:
            v = int.from_bytes(sha(f"{self.prefix}:{self.counter}")[:4], "big")
            self.counter += 1
            if v < (2**32 // bound) * bound:
                return v % bound


def reference_row(seed: str, split: str, pool: str, hops: int, outcome: str, layout: str, i: int):
    """(payload, label, world) of one row, from the study page."""
    framing, link, base, contr, noncon, en, dis = POOLS[pool]
    seed_id = hashlib.sha256(json.dumps(seed).encode()).hexdigest()[:16]
    short = {"yes": "y", "relay-off": "ro", "missing-contrastive": "mc",
             "missing-negation": "mn", "missing-unrelated": "mu", "missing-absence": "ma"}  # fmt: skip
    fam = (
        f"mf-{seed_id}-{'dev' if split == 'tuning' else 'tst'}-{pool[-1]}{hops}-"
        f"{short[outcome]}-{'eq' if layout == 'equalized' else 'df'}"
    )
    d = Naive(f"aiwg-holdout-2850-v1:D17MF:{split}:{fam}:{i}")
    eq = layout == "equalized"
    if eq:
        names, seen = [], set()
        while len(names) < hops + 6:
            n = "BCDFGHJKLMNPQRSTVWXZ"[d.draw(20)] + "aeiouy"[d.draw(6)] + f"{d.draw(1000):03d}"
            if n[:2] not in seen:
                seen.add(n[:2])
                names.append(n)
        chain, decoys = names[: hops + 2], names[hops + 2 :]
        t = {"positive": hops + 1 + d.draw(2), "enabled": hops + d.draw(2)}
        for c in ("contrastive", "negation", "unrelated", "disabled"):
            t[c] = 1 + d.draw(2)
    else:
        chain = []
        for letter in "ABC":
            v, s = d.draw(1_000_000), ""
            while v:
                v, r = divmod(v, 36)
                s = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + s
            chain.append(letter + (s or "0").rjust(4, "0"))
        decoys, t = [], {}
    day = d.draw(365) + 1
    quantity = d.draw(99) + 1
    # failure position
    fpos = kind = None
    if outcome in ("missing-contrastive", "missing-negation", "missing-unrelated"):
        fpos, kind = (i % (hops + 1) if eq else 1), "link"
    elif outcome == "missing-absence":
        fpos, kind = 1 + i % (hops - 1), "link"
    elif outcome == "relay-off":
        fpos, kind = i % hops, "relay"
    lines, own = [], Counter()
    for j in range(hops + 1):
        a, b = chain[j], chain[j + 1]
        if kind == "link" and j == fpos:
            text = {"missing-contrastive": f"{a} {contr} {b}.",
                    "missing-negation": f"{a} does not {base} {b}.",
                    "missing-unrelated": f"{a} {noncon} {b}.", "missing-absence": None}[outcome]  # fmt: skip
            cls = outcome.split("-")[1]
            if text is None:
                continue
        else:
            text, cls = f"{a} {link} {b}.", "positive"
        lines.append(text)
        own[cls] += 1
    for r in range(hops):
        off = kind == "relay" and r == fpos
        lines.append(f"{chain[r + 1]} is {dis if off else en}.")
        own["disabled" if off else "enabled"] += 1
    if eq:
        pc = sc = 0
        verb = {"positive": f"{link}", "contrastive": contr, "unrelated": noncon}
        for c in ("positive", "enabled", "contrastive", "negation", "unrelated", "disabled"):
            for _ in range(t[c] - own[c]):
                if c in ("enabled", "disabled"):
                    lines.append(f"{decoys[sc % 4]} is {en if c == 'enabled' else dis}.")
                    sc += 1
                else:
                    x, y = PAIRS[pc]
                    pc += 1
                    a, b = decoys[x], decoys[y]
                    lines.append(
                        f"{a} does not {base} {b}." if c == "negation" else f"{a} {verb[c]} {b}."
                    )
        for k in range(len(lines) - 1, 0, -1):
            j = d.draw(k + 1)
            lines[k], lines[j] = lines[j], lines[k]
        rule = (
            "An entity can reach a destination exactly when a sequence of stated facts of the"
            f' form "X {link} Y" leads from it to that destination and every entity in between'
            f" is {en}; no other relation counts."
        )
    else:
        rule = f"An entity can reach a destination if it {link} a {en} relay that {link} that destination."
    payload = "\n".join(
        [f"{framing} Day {day}. There are {quantity} unused counters.", "Facts:", *lines, rule,
         f"Question: Is it established that {chain[0]} can reach {chain[-1]}?"]
    )  # fmt: skip
    world = {"pool": pool, "hops": hops, "outcome": outcome, "layout": layout,
             "rule": "exhaustive" if eq else "d17", "chain": chain, "decoys": decoys,
             "failurePosition": fpos, "failureKind": kind, "targets": t, "day": day,
             "quantity": quantity}  # fmt: skip
    return payload, ("no" if kind else "yes"), world


@pytest.fixture(scope="module")
def sweep_corpus():
    return Generator(engine_config()).corpus("d17mf-sweep-7")


@pytest.mark.parametrize("seed", ["d17mf-sweep-7", "d17mf-0123456789abcdef0123456789"])
def test_rows_equal_the_naive_reference(seed, sweep_corpus):
    ec = engine_config()
    gen = Generator(ec)
    corpus = sweep_corpus if seed == "d17mf-sweep-7" else gen.corpus(seed, records=False)
    sample = corpus.rows[:78] + corpus.rows[78::37]  # every development row, a spread of tests
    for row in sample:
        c = row.cell
        payload, label, world = reference_row(
            seed, c.split.word, c.pool.id, c.hops, c.outcome.word, c.layout.word, row.i
        )
        assert row.payload == payload, (row.index, c.key)
        assert row.label == label
        assert row.world == world
        assert (
            row.id == hashlib.sha256(f"D17MF:record-id:v1:{seed}:{row.index}".encode()).hexdigest()
        )


def test_invariants_of_a_whole_non_demo_corpus(sweep_corpus):
    rows = sweep_corpus.rows
    assert len(rows) == 5778 and len({r.id for r in rows}) == 5778
    check_oracle(engine_config(), rows)  # the text oracle agrees on every row
    by_cell: dict[str, Counter] = {}
    for r in rows:
        w = r.world
        assert (r.label == "no") == (w["failureKind"] is not None)
        by_cell.setdefault(f"{r.cell.split.word}:{r.cell.key}", Counter())[
            w["failurePosition"]
        ] += 1
        if w["layout"] != "equalized":
            continue
        names = w["chain"] + w["decoys"]
        assert all(re.fullmatch(r"[BCDFGHJKLMNPQRSTVWXZ][aeiouy]\d{3}", n) for n in names)
        assert len({n[:2] for n in names}) == len(names) == w["hops"] + 6
        # every cue class appears exactly its target number of times
        _, link, base, contr, noncon, en, dis = POOLS[w["pool"]]
        counts = Counter()
        for ln in r.fact_lines:
            if " does not " in ln:
                counts["negation"] += 1
            elif f" {contr} " in ln:
                counts["contrastive"] += 1
            elif f" {noncon} " in ln:
                counts["unrelated"] += 1
            elif f" {link} " in ln:
                counts["positive"] += 1
            elif ln.endswith(f" is {en}."):
                counts["enabled"] += 1
            else:
                assert ln.endswith(f" is {dis}.")
                counts["disabled"] += 1
        assert dict(counts) == {k: v for k, v in w["targets"].items() if v}
        # decoy lines never touch the chain
        chain = set(w["chain"])
        for ln in r.fact_lines:
            if ln not in r.chain_lines:
                assert not chain & set(re.findall(r"[A-Z][a-z]\d{3}", ln))
    # failure positions are balanced within test cells
    for key, hist in by_cell.items():
        if key.startswith("test:") and None not in hist:
            assert max(hist.values()) - min(hist.values()) <= 1, key


def test_stream_draws_equal_the_naive_scheme():
    prefix = "aiwg-holdout-2850-v1:D17MF:test:mf-x:3"
    bounds = [20, 6, 1000, 2, 365, 99, 3 * 2**30, 7, 2**32 - 5, 1, 1_000_000] * 30
    naive = Naive(prefix)
    want = [naive.draw(b) for b in bounds]
    s = Stream.from_message(prefix + ":{counter}")
    assert [s.draw(b) for b in bounds] == want
    assert s.counter == naive.counter
    s2 = Stream.from_message(prefix + ":{counter}")
    got = []
    for k in range(0, len(bounds), 7):
        got.extend(s2.draws(bounds[k : k + 7]))
    assert got == want
    # 3·2^30 rejects a quarter of the values: the naive stream did skip some counters
    assert naive.counter > len(bounds)


def test_fisher_yates_and_dispatch_equal_the_naive_scheme(sweep_corpus):
    ec = engine_config()
    items = list(range(50))
    fisher_yates(items, Stream.from_message("m:{counter}"))
    ref, d = list(range(50)), Naive("m")
    for k in range(49, 0, -1):
        j = d.draw(k + 1)
        ref[k], ref[j] = ref[j], ref[k]
    assert items == ref
    order = dispatch_order(ec, sweep_corpus)
    dev = [r for r in sweep_corpus.rows if r.cell.split.word == "tuning"]
    test = [r for r in sweep_corpus.rows if r.cell.split.word == "test"]
    sd = "sha256:" + hashlib.sha256(b'"d17mf-sweep-7"').hexdigest()
    d = Naive(f"aiwg-holdout-2850-v1:D17MF:dispatch:{sd}")
    for k in range(len(test) - 1, 0, -1):
        j = d.draw(k + 1)
        test[k], test[j] = test[j], test[k]
    assert [r.id for r in order] == [r.id for r in dev + test]


def test_rows_rendered_line_by_line_equal_the_rows_of_the_line_plans(monkeypatch):
    """The line-by-line form (taken for an equalized row whose decoy pairs a plan cannot
    index) renders the same chain lines, fact lines and payload as the kept line plans."""
    ec = engine_config()
    seed, seed_id = "d17mf-public-demo", "0123456789ab"
    cells = [c for c in ec.cells if c.layout.equalize]
    assert cells
    planned = Generator(ec)
    rows = [planned.row(c, i, i, seed, seed_id) for c in cells for i in range(3)]
    plain = Generator(ec)
    monkeypatch.setattr(plain, "_decoy_plan", lambda *a, **k: None)
    for row in rows:
        again = plain.row(row.cell, row.i, row.index, seed, seed_id)
        assert again.chain_lines == row.chain_lines, row.cell.key
        assert (again.fact_lines, again.payload) == (row.fact_lines, row.payload), row.cell.key
