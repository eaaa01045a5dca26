"""The fourth walk of the D17-MF source: a table of its facts against the spec, fact by fact.

Where the source document states a fact (tests/fixtures/d17/source-document.txt, a copy of
it), the expected value is read from that copy; where only the study page fixes it (the
facts the source leaves open), the expected value is written here, as the page writes it.
Each row checks the registered value and, for rules, the operator and inclusive/exclusive
bound: `>=` is not `>`, a Holm P "below 0.05" is `lt`, "at most 0.50" is `le`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from fractions import Fraction
from functools import cache

import pytest
from d17_helpers import FIXTURES, SPEC_CONFIG
from d17_score_helpers import ROOT, STUDY

from prereg.compiler.build import load_all, render_prereg_md
from prereg.compiler.project import Project

SOURCE = FIXTURES / "source-document.txt"


@cache
def _raw() -> str:
    return SOURCE.read_text(encoding="utf-8")


@cache
def _source() -> str:
    return " ".join(_raw().split())


@cache
def _spec() -> dict:
    (d17,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    return d17.data


@cache
def _prereg() -> str:
    (d17,) = [s for s in load_all(Project(ROOT)) if s.id == STUDY]
    return render_prereg_md(d17)


def _n(text: str) -> int:
    return int(text.replace(",", ""))


def _constant(cid: str):
    return SPEC_CONFIG["constants"][cid]


# --- factors, levels and wording pools ------------------------------------------------------


def test_the_pools_words_are_the_sources_and_the_study_pages():
    """Source, "Pools": link, contrastive, non-connective, enabled / disabled per pool; the study
    page adds the framing sentence, the base verb (for negation) and the D17 split."""
    rows = re.findall(
        r"\| (pool-[abc]) \| `(\w+)` \| `(\w+)` \| `(\w+)` \| `(\w+)` / `(\w+)` \|", _raw()
    )
    assert [r[0] for r in rows] == ["pool-a", "pool-b", "pool-c"]
    page = {
        "pool-a": ("A fictional archive records this world.", "connect", "tuning"),
        "pool-b": ("Consider this invented observatory ledger.", "route", "calibration"),
        "pool-c": ("The following is an imaginary station log.", "link", "test"),
    }
    spec = {p["id"]: {w["role"]: w["text"] for w in p["words"]} for p in _spec()["pools"]}
    for pool, link, contrastive, unrelated, enabled, disabled in rows:
        framing, base, split = page[pool]
        assert spec[pool] == {
            "framing": framing,
            "link": link,
            "base": base,
            "contrastive": contrastive,
            "non-connective": unrelated,
            "enabled": enabled,
            "disabled": disabled,
            "d17-split": split,
        }, pool
    # the diagnosis table's contrastive verb per D17 split is the pool's
    diag = dict(re.findall(r"\| (tuning|calibration|test) \| `(\w+)` \|", _raw()))
    assert diag == {spec[p]["d17-split"]: spec[p]["contrastive"] for p in spec}


def test_the_factors_levels_and_codes_are_the_study_pages():
    levels = {f["id"]: [(lv["id"], lv["code"]) for lv in f["levels"]] for f in _spec()["factors"]}
    assert levels == {
        "pool": [("pool-a", "a"), ("pool-b", "b"), ("pool-c", "c")],
        "hops": [("1", "1"), ("3", "3")],  # source: "Relay hops | 1 and 3"
        "outcome": [
            ("yes", "y"),
            ("relay-off", "ro"),
            ("missing-contrastive", "mc"),
            ("missing-negation", "mn"),
            ("missing-unrelated", "mu"),
            ("missing-absence", "ma"),
        ],
        "layout": [("equalized", "eq"), ("d17-faithful", "df")],
    }
    assert [(s["id"], s["code"]) for s in _spec()["splits"]] == [("tuning", "dev"), ("test", "tst")]
    assert "| Relay hops | 1 and 3 |" in _raw()


# --- cells and row counts -------------------------------------------------------------------


def test_every_cell_has_the_sources_row_count():
    """Source, "Cells": 220 per missing-link key cell (21 of them), 110 per yes cell, 40 per
    relay-off cell, 30 per faithful control cell, 2 per development cell (78 in total)."""
    raw = _raw()
    key = re.search(r"\(21 cells\) \| (\d+) \|", raw)
    yes = re.search(r"\| Equalized yes: 3 pools × 2 hops \| (\d+) \|", raw)
    off = re.search(r"\| Equalized relay-off: 3 pools × 2 hops \| (\d+) \|", raw)
    faithful = re.search(
        r"\| D17-faithful control: 3 pools × \{yes, contrastive\}, one hop \| (\d+) \|", raw
    )
    dev = re.search(r"\| (\d+) per cell, (\d+) in total \|", raw)
    assert key and yes and off and faithful and dev
    want = {
        "yes": int(yes[1]),
        "relay-off": int(off[1]),
        "missing-contrastive": int(key[1]),
        "missing-negation": int(key[1]),
        "missing-unrelated": int(key[1]),
        "missing-absence": int(key[1]),
    }
    cells = SPEC_CONFIG["cells"]
    test = [c for c in cells if c["split"] == "test"]
    tuning = [c for c in cells if c["split"] == "tuning"]
    for c in test:
        lv = c["levels"]
        expected = int(faithful[1]) if lv["layout"] == "d17-faithful" else want[lv["outcome"]]
        assert c["rows"] == expected, c["id"]
    assert all(c["rows"] == int(dev[1]) for c in tuning)
    assert len(tuning) == len(test) == 39 and sum(c["rows"] for c in tuning) == int(dev[2])
    keys = [
        c
        for c in test
        if c["levels"]["layout"] == "equalized" and c["levels"]["outcome"].startswith("missing-")
    ]
    assert len(keys) == 21
    # absence only at three hops; the faithful layout only at one hop with yes and contrastive
    assert {c["levels"]["hops"] for c in test if c["levels"]["outcome"] == "missing-absence"} == {
        "3"
    }
    assert {
        (c["levels"]["hops"], c["levels"]["outcome"])
        for c in test
        if c["levels"]["layout"] == "d17-faithful"
    } == {("1", "yes"), ("1", "missing-contrastive")}
    m = re.search(r"([\d,]+) probe rows plus (\d+) development rows: ([\d,]+) in total", _source())
    assert m
    assert sum(c["rows"] for c in test) == _n(m[1])
    totals = {t["scope"]: t["rows"] for t in _spec()["totals"]}
    assert totals == {"test": _n(m[1]), "tuning": int(m[2]), "all": _n(m[3])}


# --- seeds and seed policy ------------------------------------------------------------------


def test_the_seed_policy_is_the_sources():
    src = _source()
    committed = re.search(r"refuses the committed seeds \(([^)]*) and the review seeds\)", src)
    prefixes = re.search(r"the prefixes `(review-)` and `d17mf-([a-z|]+)`", src)
    hex_run = re.search(r"at least (\d+) lowercase hex characters of fresh randomness", src)
    longest = re.search(r"a seed is at most (\d+) characters", src)
    assert committed and prefixes and hex_run and longest
    policy = SPEC_CONFIG["seed_policy"]
    named = re.findall(r"`([\w-]+)`", committed[1])
    review = ["review-throwaway-a1", "review-throwaway-b2"]  # the study page names them
    assert list(policy["public_seeds"]) == [*named, *review]
    assert list(policy["public_prefixes"]) == [
        prefixes[1],
        *(f"d17mf-{w}" for w in prefixes[2].split("|")),
    ]
    assert policy["private_min_hex_run"] == int(hex_run[1])
    assert _constant("seed-syntax")["maxLength"] == int(longest[1])
    pattern = re.compile(policy["pattern"])
    example = "d17mf-" + "0123456789abcdef01234567ab"  # the source's d17mf- + 26 hex: 32
    assert pattern.fullmatch(example) and not pattern.fullmatch(example + "c")
    assert not pattern.fullmatch("-d17mf") and pattern.fullmatch("a")
    assert "`d17mf-public-demo`" in src and policy["demo_seed"] == "d17mf-public-demo"


def test_the_draw_scheme_strings_are_the_study_pages():
    hashing = _constant("hashing")
    assert hashing == {
        "seedIdHexChars": 16,
        "rowDrawMessage": "aiwg-holdout-2850-v1:D17MF:{split}:{familyId}:{index}:{counter}",
        "dispatchDrawMessage": "aiwg-holdout-2850-v1:D17MF:dispatch:{seedDigest}:{counter}",
        "recordIdMessage": "D17MF:record-id:v1:{seed}:{rowIndex}",
        "familyId": "mf-{seedId}-{splitShort}-{poolLetter}{hops}-{outcomeShort}-{layoutShort}",
        "cellKey": "{pool}_h{hops}_{outcome}_{layout}",
    }
    assert _constant("generator-id") == "d17-multifact/v1" and "`d17-multifact/v1`" in _raw()
    assert _constant("header")["day"] == {"bound": 365, "plus": 1}
    assert _constant("header")["quantity"] == {"bound": 99, "plus": 1}


# --- budget, floors and the calibration window ----------------------------------------------


def test_the_budget_and_floors_are_the_sources():
    src = _source()
    study = re.search(r"budget is ([\d,]+) calls / (\d+)M tokens / USD (\d+)\.", src)
    cap = re.search(r"shares the D17 study cap of USD (\d+)", src)
    floors = re.search(
        r"study floor \(USD ([\d.]+) so far\).*?portfolio floor \(USD ([\d.]+) so far\)", src
    )
    worst = re.search(
        r"worst case is ([\d,]+) calls, ([\d.]+)M reserved tokens and USD ([\d.]+) reserved, at the USD ([\d.]+)/1M",
        src,
    )
    fresh = re.search(r"allowance is ([\d,]+) calls, (\d+)M tokens and USD ([\d.]+)\.", src)
    assert study and cap and floors and worst and fresh
    b = SPEC_CONFIG["budget"]
    assert (b["calls"], b["tokens"], b["usd"]) == (
        _n(study[1]),
        int(study[2]) * 10**6,
        int(study[3]),
    )
    assert b["shared-cap-usd"] == int(cap[1])
    assert Fraction(str(b["floor-study-usd"])) == Fraction(floors[1])
    assert Fraction(str(b["floor-portfolio-usd"])) == Fraction(floors[2])
    plan = _constant("hand-off-budget")
    assert plan["allowance"] == {
        "calls": _n(fresh[1]),
        "tokens": int(fresh[2]) * 10**6,
        "usd": float(fresh[3]),
    }
    assert plan["worstCase"]["calls"] == _n(worst[1])
    assert Fraction(plan["worstCase"]["tokens"]) == Fraction(worst[2]) * 10**6
    assert Fraction(str(plan["worstCase"]["usd"])) == Fraction(worst[3])
    assert Fraction(str(_constant("reservation-floor-usd-per-million-tokens"))) == Fraction(
        worst[4]
    )
    # the worst case is every row tried 1 + retries times
    rows = sum(c["rows"] for c in SPEC_CONFIG["cells"])
    assert rows * (1 + b["retries-per-request"]) == _n(worst[1])
    # the study page fixes the per-request figures
    assert {
        k: b[k]
        for k in (
            "retries-per-request",
            "per-request-token-bound",
            "output-allowance",
            "provider-overhead",
            "timeout",
            "dispatch-interval",
        )
    } == {
        "retries-per-request": 1,
        "per-request-token-bound": 4000,
        "output-allowance": 256,
        "provider-overhead": 512,
        "timeout": 60,
        "dispatch-interval": 1,
    }
    # every budget item says what it is
    assert all(item.get("description") for item in _spec()["budget"])


def test_the_calibration_window_is_the_sources():
    src = _source()
    m = re.search(
        r"expires (\S+Z) \(its `effectiveAt`, (\S+Z), plus the profile's (\d+) days\)", src
    )
    session = re.search(r"Resume each (\d+)-minute checkpoint", src)
    assert m and session
    cal = _constant("calibration")
    assert cal["effectiveAt"] == m[2] and cal["validDays"] == int(m[3])
    assert cal["sessionMinutes"] == int(session[1])
    at = datetime.fromisoformat(cal["effectiveAt"].replace("Z", "+00:00"))
    expiry = (at + timedelta(days=cal["validDays"])).isoformat(timespec="milliseconds")
    assert expiry.replace("+00:00", "Z") == m[1]
    assert m[1] in _prereg()  # the stopping rule names the expiry


# --- metrics, gates, rules ------------------------------------------------------------------


def _compares(node) -> list[tuple]:
    """Every (target, quantity, op, value, decimals) under a rule node, in order."""
    out = []
    if isinstance(node, dict):
        if "compare" in node:
            c = node["compare"]
            out.append(
                (c["target"], c["quantity"], c["op"], Fraction(str(c["value"])), c.get("decimals"))
            )
        for v in node.values():
            out += _compares(v)
    elif isinstance(node, list):
        for v in node:
            out += _compares(v)
    return out


def _hypothesis(hid: str) -> dict:
    (h,) = [h for h in _spec()["hypotheses"] if h["id"] == hid]
    return h


F = Fraction
RULES = {
    # H1: Holm P below 0.05 and |difference| at least 0.10 (both encodings' branches)
    "h1": [
        ("h1-{outcome}-h{hops}-{pair}", "adjusted_p", "lt", F("0.05"), None),
        ("h1-{outcome}-h{hops}-{pair}", "abs_estimate", "ge", F("0.10"), None),
    ]
    * 2,
    # H2: Newcombe upper bound below −0.05
    "h2": [("h2-{outcome}-{pool}", "upper", "lt", F("-0.05"), None)],
    # H3: lower bound above 0.10 and said-yes above one half
    "h3": [
        ("h3-{pool}-{outcome}", "lower", "gt", F("0.10"), None),
        ("h3-said-yes-{pool}-{outcome}", "estimate", "gt", F("0.5"), None),
    ],
    # H4: Holm P below 0.05
    "h4": [("h4-{pool}", "adjusted_p", "lt", F("0.05"), None)],
    # replication: Wilson upper bound at 4 decimals at most 0.50
    "replication": [("replication-pool-c", "upper", "le", F("0.50"), 4)],
}


@pytest.mark.parametrize("hid", sorted(RULES))
def test_each_rules_thresholds_and_operators(hid):
    assert _compares(_hypothesis(hid)["rule"]) == RULES[hid]


def test_h3a_verdicts_thresholds_and_operators():
    """Study page: specific iff both contrastive contrasts have upper bound < 0 and |difference|
    ≥ 0.15 (in ≥ 2 pools); general iff all three |differences| ≤ 0.10 and each written
    encoding below relay-off (every pool); else mixed."""
    h = _hypothesis("h3a")
    verdicts = h["verdicts"]
    assert [v["verdict"] for v in verdicts] == ["contrastive-specific", "general", "mixed"]
    assert "mixed" not in str([v.get("when") for v in verdicts][2:])  # mixed is the otherwise
    assert [v["when"]["for_each"]["quantifier"] for v in verdicts[:2]] == ["at_least", "all"]
    assert verdicts[0]["when"]["for_each"]["count"] == 2
    specific = _compares(verdicts[0])
    general = _compares(verdicts[1])
    assert specific == [
        ("h3a-{pool}-missing-contrastive-missing-negation", "upper", "lt", F(0), None),
        ("h3a-{pool}-missing-contrastive-missing-negation", "abs_estimate", "ge", F("0.15"), None),
        ("h3a-{pool}-missing-contrastive-missing-unrelated", "upper", "lt", F(0), None),
        ("h3a-{pool}-missing-contrastive-missing-unrelated", "abs_estimate", "ge", F("0.15"), None),
    ]
    assert [c[1:] for c in general] == [("abs_estimate", "le", F("0.10"), None)] * 3 + [
        ("estimate", "gt", F(0), None)
    ] * 3


def test_quantifiers_are_the_study_pages():
    """H1 any encoding / every hop / some pair; H2 at least 2 of 3 pools; H3 every pool, some
    encoding; H4 any pool (this project's choice, said in its statement)."""

    def quantifiers(node):
        out = []
        while isinstance(node, dict):
            if "for_each" in node:
                fe = node["for_each"]
                out.append((fe["name"], fe["quantifier"], fe.get("count")))
                node = fe["condition"]
            elif "any_of" in node:
                node = node["any_of"][0]
            else:
                break
        return out

    assert quantifiers(_hypothesis("h1")["rule"]) == [
        ("outcome", "any", None),
        ("hops", "all", None),
        ("pair", "any", None),
    ]
    assert quantifiers(_hypothesis("h2")["rule"]) == [
        ("outcome", "any", None),
        ("pool", "at_least", 2),
    ]
    assert quantifiers(_hypothesis("h3")["rule"]) == [
        ("pool", "all", None),
        ("outcome", "any", None),
    ]
    assert quantifiers(_hypothesis("h4")["rule"]) == [("pool", "any", None)]
    assert 'this project registers "any"' in " ".join(_hypothesis("h4")["statement"].split())


def test_the_gate_and_the_families_are_the_sources():
    src = _source()
    assert "every test cell must reach 95% observed rows" in src
    assert "family-wise 0.05" in src and "Holm-adjusted across the three pools" in src
    (gate,) = _spec()["gates"]
    assert (gate["metric"], gate["op"], Fraction(str(gate["value"])), gate["otherwise"]) == (
        "coverage",
        "ge",
        Fraction(95, 100),
        "insufficient",
    )
    assert gate["where"] == [{"factor": "split", "levels": ["test"]}]
    fam = {f["id"]: (f["adjustment"], Fraction(str(f["alpha"]))) for f in _spec()["families"]}
    assert fam == {"h1-pool-pairs": ("holm", F("0.05")), "h4-pools": ("holm", F("0.05"))}
    # 21 pool-pair tests in H1's family, 3 pools in H4's
    h1 = [c for c in _hypothesis("h1")["contrasts"] if c.get("family") == "h1-pool-pairs"]
    count = 0
    for c in h1:
        n = 1
        for e in c["expand"]:
            k = len(e.get("values") or e.get("pairs_of"))
            n *= k * (k - 1) // 2 if "pairs_of" in e else k
        count += n
    assert count == 21


def test_the_scoring_and_audit_constants_are_the_study_pages():
    scoring = _constant("scoring")
    assert scoring["cellInterval"] == {"method": "wilson", "level": 0.95}
    assert Fraction(str(scoring["unreliableGap"])) == F("0.10") and scoring["decimals"] == 4
    assert scoring["auroc"]["interval"] == "hanley-mcneil" and scoring["auroc"]["z"] == 1.96
    assert list(scoring["auroc"]["groupBy"]) == ["pool", "hops"]
    audit = _constant("audit")
    assert (audit["limit"], audit["folds"], audit["decimals"]) == (0.6, 5, 4)
    assert audit["logistic"] == {"steps": 200, "learningRate": 0.5, "l2": 0.01}
    assert audit["groupKey"] == "{layout}:{pool}:h{hops}"
    assert "all pass the 0.60 limit" in _source()
    assert _constant("decoys")["entities"] == 4  # source: "among four decoy entities"
    assert "among four decoy entities" in _source()
    assert _constant("schema-versions")["gold"] == "decision-d17mf-gold/v1"
    assert _constant("schema-versions")["audit"] == "decision-d17mf-shortcut-audit/v2"


# --- the hand-off: refusal codes and file fields --------------------------------------------


def test_refusal_codes_said_to_come_from_the_source_are_in_it():
    """constant refusal-codes says which codes the source names: each of them must be in the
    source, and each refusal name the source writes must be registered."""
    src = _raw()
    codes = set(_constant("refusal-codes").values())
    for name in (
        "seed-reused",
        "changed-preregistration",
        "calibration-expired",
        "sessionWindowOpen",
    ):
        assert f"`{name}`" in src and name in codes, name
    (desc,) = [c["description"] for c in _spec()["constants"] if c["id"] == "refusal-codes"]
    said = " ".join(desc.split()).split("From the source:")[1].split("Named here")[0]
    for code in codes:
        if re.search(rf"(?<![\w-]){re.escape(code)}(?![\w-])", said):
            assert code in src, f"{code} is said to come from the source"
    for code in ("public-demo-seed", "calibration-scope"):  # this project's names
        assert code not in src and code in codes


def test_the_hand_off_files_carry_the_sources_fields():
    """Source, operator procedure: review items hold blind.payload, then unblind {goldLabel,
    textOracleLabel, variant/cell, factors, latentWorld}; the approval's calibration {mode:
    'artifact', calibrationArtifactDigest}, the attested floors and an approvalReference;
    frozen.json carries collectionStartedAt; the score config evaluatedAt."""
    import json

    src = _raw()
    schemas = ROOT / "runtime" / "prereg" / "outputs" / "schemas"

    def props(name: str) -> dict:
        return json.loads((schemas / f"reachability-{name}.schema.json").read_text())["properties"]

    m = re.search(r"unblind \{ (\w+), (\w+), variant/(\w+), (\w+), (\w+) \}", src)
    assert m and "`blind.payload`" in src
    item = props("dev-review-material")["items"]["items"]["properties"]
    assert set(item) == {"blind", "unblind"} and "payload" in item["blind"]["properties"]
    assert set(m.groups()) <= set(item["unblind"]["properties"])
    cal = re.search(r"calibration \{ mode: '(\w+)', (\w+): REGISTERED_D17_SET_DIGEST \}", src)
    assert cal and _constant("hand-off")["calibrationMode"] == cal[1]
    approval = props("approval")
    assert cal[2] in approval["calibration"]["properties"] and "approvalReference" in approval
    assert "an approvalReference that cites DEV_REVIEW_DIGEST" in src
    assert "`collectionStartedAt`" in src and "collectionStartedAt" in props("run-frozen")
    assert "`frozen.json`" in src and _constant("hand-off")["runFiles"]["frozen"] == "frozen.json"
    assert "`evaluatedAt`" in src and "evaluatedAt" in props("score-config")
    assert "`analysis.dispatchOrderDigest`" in src
    assert "dispatchOrderDigest" in props("preregistration")


# --- PREREG.md as a reviewer reads it -------------------------------------------------------


def test_prereg_md_has_no_escaped_operators_python_words_or_float_noise():
    text = _prereg()
    assert "&lt;=" not in text and ">=" not in text and "<=" not in text
    assert not re.search(r"\b(True|False|None)\b", text)
    assert not re.search(r"\d\.\d*(0{6,}|9{6,})\d", text)
    doubled = re.search(r"(?<![\w-])([A-Za-z]+) \1(?![\w-])", text, re.I)
    assert doubled is None, doubled
    # the input contracts show what each field means
    assert "| field | type | required | constraints | description |" in text
    assert "| `attempt` | integer | yes | ≥ 1  | The attempt's ordinal (1 = first). |" in text


# --- the generator's rendering facts (the study page) ---------------------------------------


def test_the_rendering_constants_are_the_study_pages():
    """Cue-class targets (positive hops+1+draw(2), enabled hops+draw(2), the others
    1+draw(2)), the fixed decoy pair list, the name alphabets, the line-class rules in
    first-match order, the templates and rules written verbatim, the record's request."""
    targets = {c["name"]: c["target"] for c in _constant("cue-classes")}
    assert list(targets) == [
        "positive",
        "enabled",
        "contrastive",
        "negation",
        "unrelated",
        "disabled",
    ]
    assert targets["positive"] == {"hops": 1, "plus": 1, "draw": 2}
    assert targets["enabled"] == {"hops": 1, "plus": 0, "draw": 2}
    for name in ("contrastive", "negation", "unrelated", "disabled"):
        assert targets[name] == {"hops": 0, "plus": 1, "draw": 2}, name
    pairs = "(0,1),(2,3),(1,2),(3,0),(0,2),(1,3),(2,0),(3,1),(1,0),(3,2),(2,1),(0,3)"
    want = [list(map(int, p.split(","))) for p in re.findall(r"\((\d,\d)\)", pairs)]
    assert [list(p) for p in _constant("decoys")["pairs"]] == want
    names = _constant("names")
    assert (names["neutral"]["consonants"], names["neutral"]["vowels"]) == (
        "BCDFGHJKLMNPQRSTVWXZ",
        "aeiouy",
    )
    assert (names["neutral"]["digits"], names["neutral"]["distinctPrefixLength"]) == (3, 2)
    assert list(names["roleLetters"]["letters"]) == ["A", "B", "C"]
    assert (names["roleLetters"]["bound"], names["roleLetters"]["base"]) == (1_000_000, 36)
    assert (names["roleLetters"]["width"], names["roleLetters"]["pad"]) == (4, "0")
    audit = _constant("audit")
    assert [
        (r["class"], r.get("contains") or r.get("endsWith")) for r in audit["lineClassRules"]
    ] == [
        ("negation", " does not "),
        ("contrastive", " {contrastive} "),
        ("unrelated", " {nonConnective} "),
        ("relation", " {link} "),
        ("enabled", " is {enabled}."),
        ("disabled", " is {disabled}."),
    ]
    assert [c["code"] for c in audit["lineClasses"]] == list(range(6))
    assert audit["otherLineClassCode"] == 6
    assert audit["entityPattern"] == r"\b[A-Z][a-z0-9]{4}\b"
    templates = _constant("templates")
    assert templates["header"] == "{framing} Day {day}. There are {quantity} unused counters."
    assert (
        templates["question"]
        == "Question: Is it established that {subject} can reach {destination}?"
    )
    rules = {r["id"]: r["template"] for r in _constant("rules")}
    assert rules["d17"] == (
        "An entity can reach a destination if it {link} a {enabled} relay that {link} that destination."
    )
    # the exhaustive rule is the source's "Rule." paragraph, with the pool's words filled in
    src = _source()
    m = re.search(
        r"(An entity can reach a destination exactly when .*? no other relation counts\.)", src
    )
    assert m
    source_rule = m[1].replace("`<link-verb>`", "{link}").replace("`<enabled>`", "{enabled}")
    assert rules["exhaustive"] == source_rule
    record = _constant("record")
    assert [dict(r) for r in record["requests"]] == [
        {"id": "champion", "arm": "baseline", "definitionId": "d17-synthetic-entailment"}
    ]
    assert record["provenanceSeed"] == "{seed}:{rowIndex}:single"
