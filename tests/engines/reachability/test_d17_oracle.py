"""The text oracle on hand-written payloads (pool-a words)."""

from __future__ import annotations

import pytest
from d17_helpers import engine_config

from prereg.engines.reachability.oracle import OracleError, TextOracle

HEADER = "A fictional archive records this world. Day 1. There are 2 unused counters."
EXHAUSTIVE = (
    'An entity can reach a destination exactly when a sequence of stated facts of the form "X'
    ' connects Y" leads from it to that destination and every entity in between is enabled; no'
    " other relation counts."
)
D17 = "An entity can reach a destination if it connects a enabled relay that connects that destination."


def payload(facts, rule=EXHAUSTIVE, s="Sa000", d="Da000", header=HEADER):
    q = f"Question: Is it established that {s} can reach {d}?"
    return "\n".join([header, "Facts:", *facts, rule, q])


@pytest.fixture(scope="module")
def oracle():
    return TextOracle(engine_config())


@pytest.mark.parametrize(
    "facts, want",
    [
        (["Sa000 connects Da000."], "yes"),  # a direct link needs no relay
        (["Sa000 connects Ra000.", "Ra000 connects Da000.", "Ra000 is enabled."], "yes"),
        (["Sa000 connects Ra000.", "Ra000 connects Da000."], "no"),  # relay never enabled
        (["Sa000 connects Ra000.", "Ra000 connects Da000.", "Ra000 is blocked."], "no"),
        (["Sa000 connects Ra000.", "Ra000 bypasses Da000.", "Ra000 is enabled."], "no"),
        (["Sa000 connects Ra000.", "Ra000 does not connect Da000.", "Ra000 is enabled."], "no"),
        (["Sa000 connects Ra000.", "Ra000 lacquers Da000.", "Ra000 is enabled."], "no"),
        (["Da000 connects Sa000."], "no"),  # direction matters
        # a cycle among enabled relays, then a way out
        (
            [
                "Sa000 connects Ra000.",
                "Ra000 connects Rb000.",
                "Rb000 connects Ra000.",
                "Rb000 connects Da000.",
                "Ra000 is enabled.",
                "Rb000 is enabled.",
            ],
            "yes",
        ),  # fmt: skip
        (
            [
                "Sa000 connects Ra000.",
                "Ra000 connects Rb000.",
                "Rb000 connects Ra000.",
                "Ra000 is enabled.",
                "Rb000 is enabled.",
            ],
            "no",
        ),  # fmt: skip
        # the subject itself need not be enabled; "is enabled" of the subject changes nothing
        (["Sa000 is blocked.", "Sa000 connects Da000."], "yes"),
        # lines with extra words are not edges
        (["Sa000 connects Da000 twice."], "no"),
    ],
)
def test_exhaustive_rule(oracle, facts, want):
    assert oracle.label(payload(facts)) == want


@pytest.mark.parametrize(
    "facts, want",
    [
        (["Sa000 connects Ra000.", "Ra000 connects Da000.", "Ra000 is enabled."], "yes"),
        (["Sa000 connects Ra000.", "Ra000 halts Da000.", "Ra000 is enabled."], "no"),
        (["Sa000 connects Ra000.", "Ra000 connects Da000."], "no"),
        (["Sa000 connects Da000."], "no"),  # D17's rule needs one relay
        # two relays in a row are not enough under D17's one-relay rule
        (
            [
                "Sa000 connects Ra000.",
                "Ra000 connects Rb000.",
                "Rb000 connects Da000.",
                "Ra000 is enabled.",
                "Rb000 is enabled.",
            ],
            "no",
        ),  # fmt: skip
    ],
)
def test_d17_rule(oracle, facts, want):
    assert oracle.label(payload(facts, rule=D17)) == want


def test_pool_words_come_from_the_framing_sentence(oracle):
    pool_b = "Consider this invented observatory ledger. Day 1. There are 2 unused counters."
    facts = ["Sa000 routes Da000."]
    # pool-a's rule under pool-b's framing is not a known rule for that pool
    with pytest.raises(OracleError, match="unknown rule line"):
        oracle.label(payload(facts, header=pool_b))
    rule_b = EXHAUSTIVE.replace("connects", "routes").replace("is enabled", "is active")
    assert oracle.label(payload(facts, rule=rule_b, header=pool_b)) == "yes"
    assert oracle.label(payload(["Sa000 connects Da000."], rule=rule_b, header=pool_b)) == "no"


@pytest.mark.parametrize(
    "text, message",
    [
        (payload(["Sa000 connects Da000."], header="Some other framing."), "no known framing"),
        (payload(["Sa000 connects Da000."], rule="Anything goes."), "unknown rule line"),
        (payload(["Sa000 connects Da000."]).replace("Question: Is", "Q: Is"), "not a question"),
        (payload(["Sa000 connects Da000."]).replace("Facts:", "Fact list:"), "no 'Facts:' line"),
    ],
)
def test_unreadable_payloads(oracle, text, message):
    with pytest.raises(OracleError, match=message):
        oracle.label(text)


def _line_by_line_facts(pool, facts):
    """The edges and enabled entities as first written: per fact line, the edge form, else
    the state form."""
    _, edge_re, state_re, _, _ = pool
    edges, enabled = {}, set()
    for line in facts:
        e = edge_re.match(line)
        if e is not None:
            edges.setdefault(e.group(1), []).append(e.group(2))
            continue
        st = state_re.match(line)
        if st is not None:
            enabled.add(st.group(1))
    return edges, enabled


def _one_pass_facts(pool, facts):
    edges, enabled = {}, set()
    for a, b, c in pool[4].findall("\n".join(facts)):
        if a:
            edges.setdefault(a, []).append(b)
        else:
            enabled.add(c)
    return edges, enabled


def test_one_pass_over_the_fact_lines_equals_the_line_by_line_matches(oracle):
    import random

    from prereg.engines.reachability.generate import Generator

    assert all(pool[4] is not None for pool in oracle.pools)
    rng = random.Random(23)
    words = ["Sa000", "Ra000", "x", "connects", "is", "enabled.", "enabled", "blocked.", "does",
             "not", "connect", "Da000.", "Ra000.", "", "\t", "connects connects", "é.", "\r"]  # fmt: skip
    for pool in oracle.pools:
        for _ in range(3000):
            facts = []
            for _ in range(rng.randint(0, 8)):
                if rng.random() < 0.4:
                    facts.append(" ".join(rng.choice(words) for _ in range(rng.randint(0, 4))))
                else:
                    a, b = rng.choice(words[:3] + ["\u2003", "a\u00a0b"]), rng.choice(words)
                    facts.append(rng.choice([f"{a} connects {b}.", f"{a} is enabled.", f"{a}."]))
            assert _one_pass_facts(pool, facts) == _line_by_line_facts(pool, facts), facts
    # every row of two seeds: the labels equal gold, and the fact lines give the same graph
    ec = engine_config()
    for seed in ("d17mf-sweep-4", "x-17"):
        for r in Generator(ec).corpus(seed, records=False).rows:
            assert oracle.label(r.payload) == r.label
            pool = next(p for p in oracle.pools if r.payload.startswith(p[0]))
            facts = r.fact_lines
            assert _one_pass_facts(pool, facts) == _line_by_line_facts(pool, facts)


def test_a_newline_in_a_template_falls_back_to_line_by_line(oracle):
    from prereg.engines.reachability.oracle import _fact_lines_re

    assert _fact_lines_re("^a\\\nb (\\S+)$", "^(\\S+)$") is None
    assert _fact_lines_re("^(\\S+) x (\\S+)$", "^(\\S+) y$") is not None
