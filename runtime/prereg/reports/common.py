"""Parts every report shares: the study header, the steps that ran, input digests, PREREG.md."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from prereg.digest import file_sha256
from prereg.errors import UserError
from prereg.reports import Step, StudyInfo
from prereg.reports.numbers import fmt, fmt_p  # noqa: F401 (re-exported: reports import them from here)
from prereg.reports.page import Facts, Heading, Para, Registered, Report, Table


def read_json(path: Path | str | None) -> Any | None:
    """The JSON document at ``path``; None when there is no path or no file."""
    if path is None:
        return None
    p = Path(path)
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{p}: not valid JSON ({exc})") from None


def sha(value: str | None) -> str | None:
    """A digest shown with its algorithm: bare hex gets ``sha256:``."""
    if value is None:
        return None
    return value if ":" in value else "sha256:" + value


def header(info: StudyInfo, stamped: Iterable[tuple[str, str | None]] = ()) -> list:
    """Study facts, and whether each output's recorded spec digest is the compiled one."""
    items = [
        ("study", info.study_id),
        ("version", f"{info.version} ({info.status})"),
        ("engine", info.engine),
        ("spec", info.spec_file),
        ("spec digest", info.spec_digest),
    ]
    for name, recorded in stamped:
        if recorded is None:
            continue
        verdict = "matches" if recorded == info.spec_digest else f"DIFFERS: {recorded}"
        items.append((f"{name} spec digest", verdict))
    blocks: list = [Facts(items, code=frozenset({"study", "engine", "spec", "spec digest"}))]
    description = info.spec.get("description")
    if description:
        blocks.append(Para(" ".join(str(description).split())))
    return blocks


def steps_block(steps: Sequence[Step]) -> list:
    rows = [(s.title, s.shown(), "ok" if s.ok else f"FAILED (exit {s.exit})") for s in steps]
    return [
        Heading("What ran"),
        Para(
            "Inputs are named relative to the project root, outputs relative to this folder.",
            note=True,
        ),
        Table(("step", "command", "result"), rows, code=frozenset({1})),
    ]


def inputs_block(rows: Sequence[tuple[str, str | None, int | None]]) -> list:
    """A table of inputs: name, digest, bytes."""
    return [
        Heading("Inputs"),
        Table(
            ("input", "digest", "bytes"),
            [(n, sha(d), fmt(b)) for n, d, b in rows],
            numeric=frozenset({2}),
            code=frozenset({1}),
            stack=True,  # on a phone a card per input, its digest on two lines, not six
        ),
    ]


def file_input(name: str, path: str | Path | None) -> tuple[str, str | None, int | None]:
    if path is None or not Path(path).is_file():
        return (name, None, None)
    hexd, size = file_sha256(path)
    return (name, "sha256:" + hexd, size)


def registered(info: StudyInfo) -> list:
    if not info.prereg_md:
        return []
    return [
        Heading("What was registered"),
        Para(
            "The study's generated PREREG.md, rendered: the preregistration the results above"
            " are read against.",
            note=True,
        ),
        Registered(f"PREREG.md of {info.study_id} {info.version}", info.prereg_md),
    ]


def generic_report(info: StudyInfo, folder: Path, steps: Sequence[Step]) -> Report:
    """A report for an engine without its own module: the steps, the files, the registration."""
    ok = all(s.ok for s in steps)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    report = Report(info.study_id, info.title, "all steps ran" if ok else "a step failed", ok)
    report.add(*header(info), *steps_block(steps))
    report.add(
        Heading("Outputs"),
        Table(
            ("file", "digest", "bytes"),
            [file_input(p.relative_to(folder).as_posix(), p) for p in files],
            code=frozenset({0, 1}),
        ),
    )
    return report.add(*registered(info))


def decision_blocks(record: dict | None) -> list:
    """The Decision section every report opens with: the evaluated outcome, the rule that fired
    and what each of its conditions read (the same record SCORE.json holds)."""
    from prereg.decide.report import _reading_line

    if record is None:
        return [Heading("Decision"), Para("The study registers no decision.", note=True)]
    title = f" ({record['title']})" if record.get("title") else ""
    if record.get("rule") == "otherwise":
        why = record.get("why")
        fired = (
            "no decision rule held; the registered otherwise applies"
            if why == "no rule held"
            else "registered whatever the data (the decision reads no gate, verdict or figure)"
        )
    else:
        fired = f"decision rule {record['rule']} fired" + (
            f": {record['why']}" if record.get("why") else ""
        )
    out: list = [Heading("Decision"), Para(f"**{record['outcome']}**{title}: {fired}.")]
    reads = record.get("read") or []
    if reads:
        out.append(
            Table(
                ("what the rule read", "held"),
                [(_reading_line(r).rsplit(": ", 1)[0], _held(r)) for r in reads],
                markdown=frozenset({0}),
                caption="The conditions of the decision rule that fired",
            )
        )
    return out


def _held(r: dict) -> str:
    value = r.get("held") if "holds" not in r else r.get("holds")
    return "yes" if value else "no"
