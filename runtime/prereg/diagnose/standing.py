"""Where a project's sizing claims stand: what ``prereg check`` says about them.

A study's registered sizing claims (``claims``) are checked by ``diagnose``, which writes them
into its DIAGNOSE.json.  ``check`` looks for those documents in the project (every file whose
name contains ``diagnose`` and ends in ``.json``, case aside, outside hidden folders,
``generated/`` and ``__pycache__``; or the files ``--diagnosis`` names), keeps those of schema
``prereg-diagnose/v1``, and for each study with claims takes the newest (by modification time)
whose **design digest** is the study's as it is now.  The design digest is the digest of what
the spec registers with the registration record and the commands left out
(:func:`design_digest`): editing the prose, the version, the status or a command's arguments,
or adding the registration record keeps a diagnosis current; changing a cell's rows, a rule,
a threshold, a scenario or a claim makes it stale.  A document written before diagnose recorded that digest is current when its spec digest is the
spec's.

Each study with claims gets one :class:`Standing`: ``holds`` (every claim holds in a current
diagnosis), ``fails`` (the claims that fail there), ``stale`` (diagnoses exist, none of the
design as it is now) or ``none`` (never diagnosed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = "prereg-diagnose/v1"
#: Folders never searched for diagnoses (besides hidden ones).
SKIPPED = frozenset({"generated", "__pycache__", "node_modules"})


def design_digest(spec: Mapping[str, Any]) -> str:
    """The digest of the spec's registered content (:func:`prereg.compiler.diff.registered_content`:
    prose, version, status and amendments left out) without the registration record and the
    operator commands (a command's arguments change no simulated study): what a diagnosis
    depends on."""
    from prereg.compiler.diff import registered_content
    from prereg.digest import digest

    content = registered_content(dict(spec))
    for tooling in ("registration", "commands"):
        content.pop(tooling, None)
    return digest(content)


def design_digest_of(root: Path, study_id: str) -> str | None:
    """:func:`design_digest` of a study's spec file as it is now (its statistics' files pinned
    as compile pins them), or None when it cannot be read."""
    from prereg.compiler.load import load_yaml
    from prereg.compiler.project import Project
    from prereg.errors import UserError

    project = Project(Path(root))
    path = project.spec_file(study_id)
    try:
        data = load_yaml(path, display=Path(project.rel(path))).data
        from prereg.custom import needs_pinning

        if needs_pinning(data):
            from prereg.custom import pinned

            data = pinned(data, project.root, path.parent)
    except (UserError, OSError):
        return None
    return design_digest(data) if isinstance(data, dict) else None


@dataclass
class Found:
    path: Path
    shown: str
    mtime: float
    doc: Mapping[str, Any]


@dataclass
class Standing:
    study: str
    claims: int
    state: str  # holds | fails | stale | none
    diagnosis: str | None = None
    failing: list[Mapping[str, Any]] = field(default_factory=list)
    newest: str | None = None  # the newest diagnosis of the study when none is current
    searched: str = "in the project"  # where diagnoses were looked for, in words

    def lines(self, study_id: str) -> list[str]:
        """What ``check`` prints: ``warning:`` for a failing claim or a stale diagnosis,
        ``note:`` for a study never diagnosed, a plain line when every claim holds."""
        n = f"{self.claims} sizing claim{'' if self.claims == 1 else 's'}"
        run = f"run `prereg {study_id} diagnose --simulations N --seed S --out DIAGNOSE.json`"
        if self.state == "holds":
            return [f"{study_id}: every sizing claim holds ({self.claims}; {self.diagnosis})"]
        if self.state == "none":
            return [f"note: {study_id}: {n} not checked: no diagnosis {self.searched}; {run}"]
        if self.state == "stale":
            return [
                f"warning: {study_id}: {n} not checked: no diagnosis of the design as it is now"
                f" (the newest, {self.newest}, diagnosed an earlier version); {run}"
            ]
        out = []
        for c in self.failing:
            figure = _number(c.get("figure"), ".4g")
            se = f" ± {_number(c['mcSe'], '.2g')}" if c.get("mcSe") is not None else ""
            out.append(
                f"warning: {study_id}: sizing claim {c.get('id')} FAILS: {c.get('claim')}:"
                f" {figure}{se} ({c.get('method')}) in {self.diagnosis}"
                + (" (within Monte Carlo error)" if c.get("withinMonteCarloError") else "")
            )
        return out

    def summary(self) -> dict:
        return {
            "study": self.study,
            "claims": self.claims,
            "state": self.state,
            "diagnosis": self.diagnosis,
            "failing": [c.get("id") for c in self.failing],
            **({"newest": self.newest} if self.newest else {}),
        }


def _number(x: Any, spec: str) -> str:
    """A figure as check prints it (a hand-edited document's odd value shown as written)."""
    if x is None:
        return "none"
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return format(x, spec)
    return repr(x)


def _is_diagnosis_name(name: str) -> bool:
    low = name.lower()
    return low.endswith(".json") and "diagnose" in low


def candidate_files(root: Path) -> list[Path]:
    """Files under ``root`` named like a diagnosis (symbolic links to folders not followed)."""
    out = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED)
        out += [Path(here) / f for f in sorted(files) if _is_diagnosis_name(f)]
    return out


def read_documents(paths: Iterable[Path], root: Path) -> tuple[list[Found], list[str]]:
    """The diagnose documents among ``paths``, and a problem for each named file that is not
    one (only files given by name are reported: a found file of another kind is skipped)."""
    from prereg.errors import UserError
    from prereg.records import read_json_file

    found, problems = [], []
    for p in paths:
        shown = _shown(p, root)
        try:  # a regular file only (a FIFO named like a diagnosis would block the read)
            doc = read_json_file(p, obj=False)
            mtime = p.stat().st_mtime
        except UserError as exc:
            why = exc.message.removeprefix(f"{p}: ")
            problems.append(f"{shown}: not a diagnose document: {why}")
            continue
        except OSError as exc:
            problems.append(f"{shown}: not a diagnose document: {exc.strerror or exc}")
            continue
        if not isinstance(doc, dict) or doc.get("schemaVersion") != SCHEMA:
            problems.append(f"{shown}: not a diagnose document (schemaVersion is not {SCHEMA})")
            continue
        claims = doc.get("claims")
        if not isinstance(doc.get("study"), str) or not (
            isinstance(claims, list) and all(isinstance(c, dict) for c in claims)
        ):
            problems.append(f"{shown}: at /study or /claims: not as diagnose writes them")
            continue
        found.append(Found(p, shown, mtime, doc))
    return found, problems


def _shown(p: Path, root: Path) -> str:
    try:
        return Path(os.path.relpath(p, root)).as_posix()
    except ValueError:
        return str(p)


def _current(doc: Mapping[str, Any], design: str, spec_digest: str) -> bool:
    recorded = doc.get("designDigest")
    if recorded is not None:
        return recorded == design
    return doc.get("specDigest") == spec_digest


def standings(
    studies: Sequence[Any], found: Sequence[Found], searched: str = "in the project"
) -> list[Standing]:
    """One standing per study with registered claims (``studies``: the compiler's studies,
    each with ``id``, ``data`` and ``digest``), in the order given."""
    by_study: dict[str, list[Found]] = {}
    for f in found:
        by_study.setdefault(str(f.doc.get("study")), []).append(f)
    out = []
    for s in studies:
        claims = s.data.get("claims") or []
        if not claims:
            continue
        mine = sorted(by_study.get(s.id, []), key=lambda f: (f.mtime, f.shown), reverse=True)
        if not mine:
            out.append(Standing(s.id, len(claims), "none", searched=searched))
            continue
        design = design_digest(s.data)
        current = [f for f in mine if _current(f.doc, design, s.digest)]
        if not current:
            out.append(Standing(s.id, len(claims), "stale", newest=mine[0].shown))
            continue
        doc = current[0]
        failing = [c for c in doc.doc.get("claims") or () if not c.get("holds")]
        out.append(Standing(s.id, len(claims), "fails" if failing else "holds", doc.shown, failing))
    return out
