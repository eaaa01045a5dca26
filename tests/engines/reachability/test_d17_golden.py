"""The public demo seed against the reference generator's output (tests/fixtures/d17)."""

from __future__ import annotations

import json
from collections import Counter

from d17_helpers import (
    ctx,
    demo,
    demo_positive_control,
    engine_config,
    golden_lines,
    summary,
)

from prereg.digest import canonical_json, digest
from prereg.engines.reachability.canon import (
    canonical_members,
    canonical_record_json,
    join_members,
)
from prereg.engines.reachability.commands import prepared_files
from prereg.engines.reachability.oracle import TextOracle


def test_every_row_equals_the_golden_row_byte_for_byte():
    p = demo()
    lines = golden_lines()
    assert len(p.order) == len(lines) == 5778
    for row, gl in zip(p.order, lines, strict=True):
        # golden line = row record + the private fields gold and world, in this order
        tail = (
            ',"gold":'
            + json.dumps(row.label)
            + ',"world":'
            + json.dumps(row.world, separators=(",", ":"), ensure_ascii=False)
            + "}\n"
        )
        assert row.record_line.endswith("}\n")
        expected = row.record_line[:-2] + tail
        assert expected == gl, f"first difference at dispatch position {p.order.index(row)}"


def test_output_digests_match_rfc8785_of_the_golden_records():
    # independent of the engine's fast encoder: the reference's outputDigest is the RFC 8785
    # digest of the record without provenance
    for gl in golden_lines()[::97]:
        rec = json.loads(gl)
        prov = rec.pop("provenance")
        rec.pop("gold")
        rec.pop("world")
        assert digest(rec) == prov["outputDigest"]


def test_digests_equal_the_summary():
    p, s = demo(), summary()
    assert p.gold_digest == s["goldDigest"]
    assert digest(p.gold) == s["goldDigest"]  # the general encoder agrees
    assert p.dispatch_digest == s["dispatchOrderDigest"]
    assert digest([r.id for r in p.order]) == s["dispatchOrderDigest"]  # general encoder too
    assert p.audit_digest == s["auditDigest"]


def test_gold_labels_and_worlds_equal_the_golden_file():
    p = demo()
    golden = [json.loads(gl) for gl in golden_lines()]
    assert p.gold["labels"] == {g["id"]: g["gold"] for g in golden}
    assert p.gold["worlds"] == {g["id"]: g["world"] for g in golden}


def test_every_audit_score_equals_the_golden_audit():
    p, ref = demo(), summary()["audit"]
    a = p.audit
    assert [g["group"] for g in a["groups"]] == [g["group"] for g in ref["groups"]]
    for mine, theirs in zip(a["groups"], ref["groups"], strict=True):
        assert mine == theirs
    for k in ("schemaVersion", "limit", "folds", "equalizedPasses", "equalizedMax", "controlMax"):
        assert a[k] == ref[k], k
    assert a["equalizedMax"] == 0.5518 and a["controlMax"] == 1
    assert canonical_json(a) == canonical_json(ref)


def test_positive_control_fails_with_the_golden_scores():
    pc = demo_positive_control()
    ref = summary()["positiveControl"]
    assert pc["equalizedMax"] == ref["equalizedMax"] == 0.6568
    assert pc["passes"] is False
    assert pc["groups"] == ref["groups"]
    # token counts do not change under reordering, so neither do the token scores
    base = {g["group"]: g["scores"]["tokenThreshold"] for g in demo().audit["groups"]}
    for g in pc["groups"]:
        assert g["scores"]["tokenThreshold"] == base[g["group"]]


def test_rows_and_labels_per_cell_equal_the_summary():
    p, s = demo(), summary()
    rows = Counter(f"{r.cell.split.word}:{r.cell.key}" for r in p.corpus.rows)
    assert dict(rows) == s["rowsPerCell"]
    labels: dict[str, dict[str, int]] = {k: {"yes": 0, "no": 0} for k in rows}
    for r in p.corpus.rows:
        labels[f"{r.cell.split.word}:{r.cell.key}"][r.label] += 1
    assert labels == s["labelsPerCell"]
    assert s["totalRows"] == len(p.corpus.rows) and s["testRows"] == 5700 and s["devRows"] == 78


def test_fast_record_encoder_equals_rfc8785_on_the_whole_corpus():
    p = demo()
    assert canonical_record_json(p.gold) == canonical_json(p.gold)
    for r in p.corpus.rows[::7]:
        rec = {k: v for k, v in r.record.items() if k != "provenance"}
        assert canonical_record_json(rec) == canonical_json(rec)
    tricky = {"s": 'a"b\\c\n\t\x01\x1f\x7f é ☃ 😀 \u2028', "k": [1, -2, 0, None, True, False]}
    assert canonical_record_json(tricky) == canonical_json(tricky)
    members = canonical_members(tricky)
    members.update(canonical_members({"specDigest": "sha256:" + "0" * 64}))
    assert join_members(members) == canonical_json({**tricky, "specDigest": "sha256:" + "0" * 64})


def test_record_lines_and_gold_file_equal_the_general_encoders_on_the_whole_corpus():
    # the record line and outputDigest are joined from pre-encoded parts: each row's must be
    # json.dumps of its record and the RFC 8785 digest of the record without provenance
    p = demo()
    for r in p.corpus.rows:
        assert (
            r.record_line == json.dumps(r.record, ensure_ascii=False, separators=(",", ":")) + "\n"
        )
        rec = {k: v for k, v in r.record.items() if k != "provenance"}
        assert r.record["provenance"]["outputDigest"] == digest(rec)
    # gold.json: the gold object with specDigest, its members encoded once for the digest too
    assert join_members(p.gold_members) == canonical_json(p.gold)
    files, _ = prepared_files(ctx(), p)
    gold_file = next(data for name, data, _ in files if name == "gold.json")
    assert gold_file == canonical_json({**p.gold, "specDigest": ctx().spec_digest}) + b"\n"
    assert json.loads(gold_file)["specDigest"] == ctx().spec_digest


def test_text_oracle_reads_every_golden_payload():
    oracle = TextOracle(engine_config())
    for gl in golden_lines():
        rec = json.loads(gl)
        assert oracle.label(rec["input"]["payload"]) == rec["gold"], rec["id"]


def test_worker_processes_give_the_same_preparation():
    from d17_helpers import DEMO

    from prereg.engines.reachability.pipeline import prepare_memory

    p1 = demo()
    p2 = prepare_memory(engine_config(), DEMO, workers=2, positive_control=True)
    assert [r.record_line for r in p2.order] == [r.record_line for r in p1.order]
    assert (p2.gold_digest, p2.dispatch_digest, p2.audit) == (
        p1.gold_digest,
        p1.dispatch_digest,
        p1.audit,
    )
    assert p2.positive_control() == demo_positive_control()
