"""Report of a factorial study (the generic engine): verdicts with their deciding figures,
gates, per hypothesis a figure of its contrasts or estimates with the registered thresholds
(:mod:`prereg.reports.decides`), per-cell figures, estimates and contrasts.

Everything shown comes from SCORE.json and the study's compiled configuration: factor and
metric names, thresholds and labels are the study's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prereg.decide.decision import in_words as decision_words
from prereg.decide.report import arm_text, pairs_text, size_text, whole_statistic
from prereg.reports import Step, StudyInfo, decides
from prereg.reports.common import (
    decision_blocks,
    fmt,
    fmt_p,
    header,
    inputs_block,
    read_json,
    registered,
    steps_block,
)
from prereg.reports.diagnose import blocks as diagnose_blocks
from prereg.reports.diagnose import claims_status, failing_claims, unchecked_claims
from prereg.reports.page import Facts, Heading, Para, Report, Table
from prereg.reports.verdicts import anchor, deciding_figures, rule_text

#: The rule cell of a hypothesis that registers none (reported only): said, not left blank.
NO_RULE = "none: reported only (its figures are in the tables below)"


def input_rows(inputs: dict) -> list[tuple[str, str | None, int | None]]:
    """(name, digest, bytes) of each input of SCORE.json: an input read from several files
    (observations, one log per model) gives a row per file, named by its file and by the
    value the file gives (``observations model-a: a.jsonl``)."""
    rows = []
    for k, v in inputs.items():
        for one in v if isinstance(v, list) else [v]:
            name = k
            if isinstance(v, list):
                given = ", ".join(str(val) for val in (one.get("perFile") or {}).values())
                name = f"{k} {given}: {one.get('file')}" if given else f"{k}: {one.get('file')}"
            rows.append((name, one.get("sha256"), one.get("bytes")))
    return rows


def build(info: StudyInfo, folder: Path, steps: Sequence[Step]) -> Report:
    score_steps = info.steps_for(steps, "score")
    step = score_steps[-1] if score_steps else None
    doc = read_json(step.option("--out")) if step else None
    steps_ok = all(s.ok for s in steps)
    if doc is None:
        report = Report(
            info.study_id,
            info.title,
            *claims_status(
                "not scored", False, failing_claims(info, steps), unchecked_claims(info, steps)
            ),
        )
        return report.add(
            *header(info), *diagnose_blocks(info, steps), *steps_block(steps), *registered(info)
        )
    verdicts = doc.get("verdicts") or {}
    counted: dict[str, int] = {}
    for v in verdicts.values():
        counted[v] = counted.get(v, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in counted.items())
    decision = doc.get("decision")
    ok = steps_ok and not doc.get("gated")
    status = (
        ("every step ran; gates held" if doc.get("gates") else "every step ran; no gate registered")
        if ok
        else "needs attention: " + ("a step failed" if not steps_ok else "a gate failed")
    )
    status, ok = claims_status(
        status, ok, failing_claims(info, steps), unchecked_claims(info, steps)
    )
    report = Report(info.study_id, info.title, status, ok)
    report.decision = (
        f"decision {decision_words(decision)}; verdicts: {summary}"
        if decision is not None
        else f"verdicts: {summary}"
    )
    report.add(*header(info, [("score", doc.get("specDigest"))]))
    report.add(*decision_blocks(decision))
    inputs = doc.get("inputs") or {}
    report.add(*inputs_block(input_rows(inputs)))
    rows = doc.get("rows") or {}
    hyps = {str(h.get("id")): h for h in info.spec.get("hypotheses") or []}
    report.add(
        Heading("Verdicts"),
        Facts(
            [
                (
                    "rows observed",
                    f"{fmt(rows.get('observed'))} of {fmt(rows.get('registered'))} registered",
                ),
                (
                    "gates",
                    "none registered"
                    if not doc.get("gates")
                    else "held"
                    if not doc.get("gated")
                    else "failed: every verdict is the gate's",
                ),
            ]
        ),
        Table(
            ("hypothesis", "verdict", "registered rule", "deciding figures"),
            [
                (
                    f"[{h}](#{anchor(hyps[h])})" if h in hyps else h,
                    v,
                    rule_text(info.prereg_md, h) or NO_RULE,
                    deciding_figures(
                        hyps.get(h, {}),
                        [
                            *(doc.get("contrasts") or []),
                            *(doc.get("estimates") or []),
                            *(doc.get("analyses") or []),
                        ],
                    )
                    or "–",
                )
                for h, v in verdicts.items()
            ],
            markdown=frozenset({0, 2}),
            stack=True,
        ),
        *decides.blocks(info.spec.get("hypotheses") or [], doc, verdicts),
        Heading("Gates"),
        Table(
            ("gate", "metric", "rule", "held", "failing cells"),
            [
                (
                    g["id"],
                    g["metric"],
                    f"{g['op']} {g.get('valueExact') or fmt(g['value'])}",
                    "yes" if g["passed"] else "no",
                    ", ".join(f"{f['cell']} ({fmt(f['figure'])})" for f in g["failures"]) or "–",
                )
                for g in doc.get("gates") or []
            ],
            code=frozenset({0}),
        ),
    )
    if doc.get("contrasts"):
        report.add(
            Heading("Contrasts"),
            Table(
                (
                    "contrast",
                    "hypothesis",
                    "a (size)",
                    "b (size)",
                    "a − b",
                    "interval",
                    "test",
                    "P",
                    "adjusted P",
                ),
                [
                    (
                        c["id"],
                        c["hypothesis"],
                        arm_text(c["a"]) + (f"; {pairs_text(c)}" if c.get("pairs") else ""),
                        arm_text(c["b"]),
                        fmt(c["estimate"]),
                        f"[{fmt(c['lower'])}, {fmt(c['upper'])}] {c['interval']}",
                        c["test"]
                        if c["test"] == "none"
                        else f"{c['test']}, {c['alternative']}"
                        + (f", margin {fmt(c['margin'])}" if c.get("margin") else ""),
                        fmt_p(c["p"]),
                        fmt_p(c["adjustedP"]),
                    )
                    for c in doc["contrasts"]
                ],
                numeric=frozenset({4, 7, 8}),
                code=frozenset({0}),
            ),
        )
    if doc.get("estimates"):
        report.add(
            Heading("Estimates"),
            Table(
                ("estimate", "hypothesis", "size", "value", "interval"),
                [
                    (
                        e["id"],
                        e["hypothesis"],
                        size_text(e),
                        fmt(e["estimate"]),
                        f"[{fmt(e['lower'])}, {fmt(e['upper'])}] {e['interval']} {fmt(e['level'])}",
                    )
                    for e in doc["estimates"]
                ],
                numeric=frozenset({3}),
                code=frozenset({0}),
            ),
        )
    if doc.get("analyses"):

        def df_text(df) -> str:
            return ", ".join(fmt(d) for d in df) if isinstance(df, list) else fmt(df)

        report.add(
            Heading("Analyses"),
            Para(
                "Each registered analysis (a method of the catalogue, with its options as"
                " registered) and its figures; SCORE.json holds them at full precision.",
                note=True,
            ),
            Table(
                (
                    "analysis",
                    "hypothesis",
                    "method",
                    "estimate",
                    "interval",
                    "se",
                    "statistic",
                    "df",
                    "P",
                    "adjusted P",
                ),
                [
                    (
                        a["id"],
                        a["hypothesis"],
                        a["method"],
                        fmt(a["estimate"]),
                        f"[{fmt(a['lower'])}, {fmt(a['upper'])}]",
                        fmt(a["se"]),
                        (f"{a['statisticName']} = " if a.get("statisticName") else "")
                        + (whole_statistic(a) or fmt(a["statistic"])),
                        df_text(a["df"]),
                        fmt_p(a["p"]),
                        fmt_p(a["adjustedP"]),
                    )
                    for a in doc["analyses"]
                ],
                numeric=frozenset({3, 5, 8, 9}),
                code=frozenset({0}),
            ),
        )
    cells = doc.get("cells") or []
    metric_ids = list(cells[0]["metrics"]) if cells else []
    split = any("split" in c for c in cells)  # a study without splits shows none
    report.add(
        Heading("Cells"),
        Para(
            "Each registered cell with its figures and (for proportions) the cell interval.",
            note=True,
        ),
        Table(
            ("cell", *(["split"] if split else []), "rows", "observed", *metric_ids),
            [
                (
                    c["cell"],
                    *([c.get("split", "")] if split else []),
                    fmt(c["rows"]),
                    fmt(c["observed"]),
                    *(
                        f"{fmt(f['estimate'])} [{fmt(f.get('lower'))}, {fmt(f.get('upper'))}]"
                        if "lower" in f
                        else fmt(f["estimate"])
                        for f in (c["metrics"][m] for m in metric_ids)
                    ),
                )
                for c in cells
            ],
            numeric=frozenset({2, 3} if split else {1, 2}),
            code=frozenset({0}),
        ),
    )
    return report.add(*diagnose_blocks(info, steps), *steps_block(steps), *registered(info))
