"""``prereg export STUDY --format osf|prp-quant|json``: a study's registration in the forms
reviewers use.

The words are PREREG.md's: the study is compiled in memory (checked as ``prereg compile``
checks it) and its PREREG.md rendered from the same template, then cut at its headings and
laid out again in the sections of two templates:

- the OSF preregistration template (study information, design plan, sampling plan,
  variables, analysis plan, other);
- the PRP-QUANT template of the joint psychological societies' preregistration task force
  (title and title page, abstract, introduction, method, analysis plan, other), every item
  under the template's code and title (T1 ... O1, as its version 2 numbers them; long titles
  cut to their first clause). An item a study spec cannot speak to (ethics, recruitment,
  materials) says it is not registered, and is left to the registrant; the abstract's items
  point to the items they summarise, as the template's own notes do.

The decision (its outcomes and its rules in order, in the words PREREG.md gives rule
conditions) is rendered by ``templates/export-decision.md.j2`` with the same rule macro.
``osf`` and ``prp-quant`` are Markdown; ``json`` holds both structures. Every form is stamped
with the spec digest. An item the spec does not fill says so (``Not registered in the spec.``)
rather than being left out, so a reviewer sees every item of the form.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from prereg.compiler.project import Project
from prereg.errors import UserError

FORMATS = ("osf", "prp-quant", "json")
EXPORT_FORMAT = "prereg-export/1"
NOT_REGISTERED = "Not registered in the spec."
NOT_STATED = "Not stated in the source."  # PREREG.md's words for an empty registration field


@dataclass
class Section:
    """One heading of PREREG.md: its text up to its first subheading, and its subsections."""

    title: str
    text: str = ""
    subs: list[tuple[str, str]] = field(default_factory=list)

    def sub(self, *titles: str) -> str:
        for t, body in self.subs:
            if t in titles:
                return body
        return ""

    def whole(self, *, skip: tuple[str, ...] = ()) -> str:
        """The section's text with its subsections (one heading level down: ``####``)."""
        parts = [self.text] if self.text else []
        parts += [f"#### {t}\n\n{b}" if b else f"#### {t}" for t, b in self.subs if t not in skip]
        return "\n\n".join(parts)


def _sections(markdown: str) -> dict[str, Section]:
    """PREREG.md cut at its ``##`` and ``###`` headings (outside fenced code)."""
    out: dict[str, Section] = {}
    current: Section | None = None
    sub: list[Any] | None = None
    lines: list[str] = []

    def flush() -> None:
        body = "\n".join(lines).strip("\n")
        if sub is not None:
            current.subs.append((sub[0], body))
        elif current is not None:
            current.text = body

    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            flush()
            current, sub, lines = Section(line[3:].strip()), None, []
            out.setdefault(current.title, current)
            continue
        if not fenced and line.startswith("### ") and current is not None:
            flush()
            sub, lines = [line[4:].strip()], []
            continue
        lines.append(line)
    flush()
    return out


def _or_not(text: str) -> str:
    return text.strip() or NOT_REGISTERED


def _decision(study) -> str:
    from prereg.compiler import build
    from prereg.compiler.render import render

    if not study.data.get("decision"):
        return ""
    return render(
        "export-decision.md.j2",
        decision=study.data["decision"],
        figure_targets=build.figure_targets(study.data),
    ).strip("\n")


def _prereg_md(study) -> str:
    from prereg.compiler import build

    return build.render_prereg_md(study)


def _facts(study) -> dict[str, str]:
    spec = study.data
    reg = spec.get("registration") or {}
    authors = "; ".join(
        a.get("name", "")
        + (
            f" ({', '.join(x for x in (a.get('role'), a.get('affiliation')) if x)})"
            if a.get("role") or a.get("affiliation")
            else ""
        )
        for a in reg.get("authors") or []
    )
    # a registration record that leaves a field empty says so as PREREG.md does
    blank = NOT_STATED if reg else ""
    return {
        "title": str(spec.get("title") or spec["id"]),
        "authors": authors or blank,
        "date": str(reg.get("registration_date") or blank),
        "identifier": str(reg.get("identifier") or blank),
        "version": f"{spec['version']} ({spec['status']}); spec `{study.spec_rel}`, digest"
        f" `{study.digest}`",
        "data_status": str(reg.get("data_status") or blank),
    }


def forms(study) -> dict[str, list[dict[str, Any]]]:
    """The OSF and PRP-QUANT forms of a checked study: each a list of sections, each with its
    items (``{"item", "markdown"}``)."""
    s = _sections(_prereg_md(study))
    empty = Section("")
    info, hyp = s.get("Study information", empty), s.get("Hypotheses and decision rules", empty)
    design, sampling = s.get("Design plan", empty), s.get("Sampling plan", empty)
    variables, analysis = s.get("Variables", empty), s.get("Analysis plan", empty)
    deviations = s.get("Deviations", empty)
    constants = next((v for k, v in s.items() if k.startswith("Appendix A")), empty)
    commands = next((v for k, v in s.items() if k.startswith("Appendix B")), empty)
    facts = _facts(study)
    decision = _decision(study)
    scenarios = analysis.sub("Scenarios (synthetic respondents)")
    units = variables.sub("Units")
    exclusion = "\n\n".join(
        x
        for x in (
            analysis.sub("Exclusions"),
            f"#### Units and their inclusion rules (executable)\n\n{units}" if units else "",
        )
        if x
    )
    description = (study.data.get("description") or "").strip()
    hypotheses = hyp.whole()
    blinding = design.sub("Blinding")
    design_body = design.whole(skip=("Blinding", "Freeze roles"))
    sample = "\n\n".join(
        x
        for x in (
            sampling.whole(),
            f"#### Scenarios (synthetic respondents)\n\n{scenarios}" if scenarios else "",
        )
        if x
    )
    models = analysis.whole(
        skip=(
            "Exclusions",
            "Missing data",
            "Exploratory analyses",
            "Scenarios (synthetic respondents)",
        )
    )
    other_parts = [
        f"#### Deviations and amendments\n\n{deviations.whole()}" if deviations.whole() else "",
        f"#### Freeze roles\n\n{design.sub('Freeze roles')}" if design.sub("Freeze roles") else "",
        f"#### Frozen constants\n\n{constants.whole()}" if constants.whole() else "",
    ]
    other_prp = "\n\n".join(x for x in other_parts if x)  # its operator commands are M14
    other_parts.append(f"#### Operator commands\n\n{commands.whole()}" if commands.whole() else "")
    other = "\n\n".join(x for x in other_parts if x)
    osf = [
        (
            "Study information",
            [
                ("Title", facts["title"]),
                ("Authors", facts["authors"]),
                ("Description", description),
                ("Research questions", info.sub("Research question")),
                ("Rationale", info.sub("Rationale")),
                ("Hypotheses", hypotheses),
            ],
        ),
        (
            "Design plan",
            [
                ("Study type and design", design_body),
                ("Blinding", blinding),
            ],
        ),
        (
            "Sampling plan",
            [
                ("Existing data", facts["data_status"]),
                ("Sample size, its rationale and power", sample),
                ("Stopping rule", sampling.sub("Stopping rule")),
            ],
        ),
        ("Variables", [("Variables", variables.whole())]),
        (
            "Analysis plan",
            [
                ("Statistical models and inference criteria", models),
                ("Decision", decision),
                ("Data exclusion", exclusion),
                ("Missing data", analysis.sub("Missing data")),
                ("Exploratory analysis", analysis.sub("Exploratory analyses")),
            ],
        ),
        (
            "Other",
            [
                ("Registration", f"Identifier: {facts['identifier'] or NOT_REGISTERED}; date:"
                 f" {facts['date'] or NOT_REGISTERED}; version {facts['version']}."),
                ("Other", other),
            ],
        ),
    ]  # fmt: skip

    # The PRP-QUANT template's items, each under its own code and title (T1-T12, A1-A4, I1-I4,
    # M1-M15, AP1-AP9, O1). An item the spec cannot speak to (ethics, compensation,
    # materials) says it is not registered, so the registrant sees what is left to fill.
    def see(*codes: str) -> str:
        return "See " + ", ".join(codes) + "."

    prp = [
        (
            "Title and title page",
            [
                ("T1 Title", facts["title"]),
                ("T2 Contributors, affiliations, and persistent IDs", facts["authors"]),
                ("T3 Date of preregistration", facts["date"]),
                ("T4 Versioning information", facts["version"]),
                ("T5 Identifier", facts["identifier"]),
                ("T6 Estimated duration of project", ""),
                ("T7 IRB status", ""),
                ("T8 Conflict of interest statement", ""),
                ("T9 Keywords", ""),
                ("T10 Data accessibility statement and planned repository", ""),
                ("T11 Code availability (optional)", ""),
                ("T12 Standard lab practices (optional)", ""),
            ],
        ),
        (
            "Abstract",
            [
                ("A1 Background", see("I1")),
                ("A2 Objectives and research questions", see("I2")),
                ("A3 Participants", see("M3", "M4")),
                ("A4 Study method", see("M10", "M12", "M14")),
            ],
        ),
        (
            "Introduction",
            [
                ("I1 Theoretical background", "\n\n".join(x for x in (description, info.sub("Rationale")) if x)),
                ("I2 Objectives and research question(s)", info.sub("Research question")),
                ("I3 Hypothesis (H1, H2, ...)", hypotheses),
                ("I4 Exploratory research questions", analysis.sub("Exploratory analyses")),
            ],
        ),
        (
            "Method",
            [
                ("M1 Time point of registration", facts["data_status"]),
                ("M2 Proposal: use of pre-existing data", facts["data_status"]),
                ("M3 Sample size, power and precision", sample),  # its stopping rule too
                ("M4 Participant recruitment, selection, and compensation", ""),
                ("M5 How will participant drop-out be handled?", ""),
                ("M6 Masking of participants and researchers", blinding),
                ("M7 Data cleaning and screening", see("AP1")),
                ("M8 How will missing data be handled?", analysis.sub("Missing data")),
                ("M9 Other information (optional)", ""),
                ("M10 Type of study and study design", design_body),
                ("M11 Randomization of participants and/or experimental materials", ""),
                ("M12 Measured variables, manipulated variables, covariates", variables.whole()),
                ("M13 Study materials", ""),
                ("M14 Study procedures", commands.whole()),
                ("M15 Other information (optional)", ""),
            ],
        ),
        (
            "Analysis plan",
            [
                ("AP1 Criteria for post-data collection exclusion of participants, if any", exclusion),
                ("AP2 Criteria for post-data collection exclusions on trial level", ""),
                ("AP3 Data preprocessing", ""),
                ("AP4 Reliability analysis", ""),
                ("AP5 Descriptive statistics", ""),
                ("AP6 Statistical models", models),
                ("AP7 Inference criteria", "\n\n".join(x for x in (
                    see("I3") + " Each hypothesis's decision rule or verdicts, with its"
                    " thresholds, are registered there.", decision) if x)),
                ("AP8 Exploratory analysis (optional)", analysis.sub("Exploratory analyses")),
                ("AP9 Other information (optional)", ""),
            ],
        ),
        ("Other", [("O1 Other information (optional)", other_prp)]),
    ]  # fmt: skip

    def shaped(form):
        return [
            {"section": title, "items": [{"item": i, "markdown": _or_not(t)} for i, t in items]}
            for title, items in form
        ]

    return {"osf": shaped(osf), "prpQuant": shaped(prp)}


_NAMES = {"osf": "OSF preregistration template", "prp-quant": "PRP-QUANT template"}


def _markdown(study, form: list[dict[str, Any]], name: str) -> str:
    out = [
        f"# {study.data.get('title') or study.id}: {name}",
        "",
        f"Exported by prereg from `{study.spec_rel}` (study `{study.id}`, version"
        f" {study.data['version']}, {study.data['status']}). Spec digest: `{study.digest}`.",
    ]
    for n, section in enumerate(form, 1):
        out += ["", f"## {n}. {section['section']}"]
        for item in section["items"]:
            out += ["", f"### {item['item']}", "", item["markdown"]]
    return "\n".join(out) + "\n"


def export(project: Project, study_id: str, fmt: str) -> str:
    """The study's registration in ``fmt``; a UserError for an unknown study or format, or a
    spec that does not compile."""
    from prereg.compiler import build

    if fmt not in FORMATS:
        raise UserError(f"export: unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    path = project.spec_file(study_id)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", study_id) or not path.is_file():
        known = ", ".join(p.stem for p in project.spec_files()) or "none"
        raise UserError(
            f"export: no study {study_id!r} under {project.rel(project.studies_dir)}/"
            f" (studies: {known})"
        )
    study = build.load_study(project, path)
    both = forms(study)
    if fmt == "json":
        doc = {
            "format": EXPORT_FORMAT,
            "study": study.id,
            "version": study.data["version"],
            "status": study.data["status"],
            "spec": study.spec_rel,
            "specDigest": study.digest,
            **both,
        }
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    key = "osf" if fmt == "osf" else "prpQuant"
    return _markdown(study, both[key], _NAMES[fmt])
