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
