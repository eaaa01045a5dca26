"""Seals: the registered content of a study, pinned, and amendments checked against it.

``prereg seal STUDY`` writes ``spec/studies/<id>.seal.json`` (canonical JSON and a newline)::

    {"content": {...}, "digest": "sha256:...", "format": "prereg-seal/1",
     "study": "<id>", "version": "<version sealed>"}

``content`` is :func:`prereg.compiler.diff.registered_content` of the spec (prose, ``version``,
``status`` and ``amendments`` left out) and ``digest`` is its digest, so ``prereg check`` can
name each path that changed.  A sealed study may change its registered content only with a new
amendment (a version after the sealed one) whose ``paths`` name the change: a path covers a
change when it equals the change's JSON pointer (into the current spec, or into the sealed one
for something removed) or its id path (``/cells[<id>]/rows``), or is a prefix of one of them.

Sealing is a registration act, and one command: ``prereg seal STUDY`` after ``prereg
compile`` either refuses with every problem at once (what the registration record lacks, each
with its line) and one next step, or registers the study: a ``draft`` status is set to
``registered`` in the spec (that one line, nothing else of the file changes), the study is
compiled again so ``generated/`` matches, and the seal is written.  A seal is created
exclusively (never overwritten); nothing is changed when anything is refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prereg.compiler.project import Project
from prereg.digest import digest
from prereg.errors import UserError
from prereg.files import canonical_bytes_nl, read_regular, write_new

if TYPE_CHECKING:  # imported where a seal is read: a project without seals never needs it
    from prereg.compiler import diff

SUFFIX = ".seal.json"
FORMAT = "prereg-seal/1"
KEYS = frozenset({"content", "digest", "format", "study", "version"})
DRAFT = "draft"
STUDIES_REL = "spec/studies"


def seal_path(project: Project, study_id: str) -> Path:
    return project.studies_dir / f"{study_id}{SUFFIX}"


def seal_files(project: Project) -> list[Path]:
    return sorted(p for p in project.studies_dir.glob(f"*{SUFFIX}") if p.is_file())


def version_key(version: Any) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in str(version).split("."))
    except ValueError:
        return ()


def make_seal(spec: dict) -> dict[str, Any]:
    from prereg.compiler import diff

    content = diff.registered_content(spec)
    return {
        "format": FORMAT,
        "study": spec["id"],
        "version": spec["version"],
        "digest": digest(content),
        "content": content,
    }


# a top-level ``status: draft`` line as the starter and every example writes it
_DRAFT_LINE = re.compile(r"""^status:[ \t]*(draft|"draft"|'draft')[ \t]*(#.*)?$""")


def _registered_text(text: str, line: int) -> str | None:
    """``text`` with the draft status on ``line`` (from 1) set to registered; None when that
    line is not one plain ``status: draft``."""
    lines = text.splitlines(keepends=True)
    if not 0 < line <= len(lines):
        return None
    body = lines[line - 1].rstrip("\r\n")
    m = _DRAFT_LINE.match(body)
    if m is None:
        return None
    lines[line - 1] = (
        body[: m.start(1)] + "registered" + body[m.end(1) :] + lines[line - 1][len(body) :]
    )
    return "".join(lines)


def seal_study(project: Project, study_id: str) -> tuple[Path, dict[str, Any], bool]:
    """Register (a draft) and seal the study; returns (path, seal, whether the status was set
    to registered).  Refuses, changing nothing, with every problem at once."""
    from prereg.compiler import build
    from prereg.compiler.readiness import gaps

    spec_file = project.spec_file(study_id)
    if not spec_file.is_file():
        raise UserError(f"no spec for study {study_id!r} under {project.rel(project.studies_dir)}/")
    study = build.load_study(project, spec_file)
    target = seal_path(project, study_id)
    if target.exists():
        raise UserError(f"{project.rel(target)}: already exists; refusing to overwrite it")
    draft = study.data.get("status") == DRAFT
    # what the study would lack once registered, all at once
    missing = gaps({**study.data, "status": "registered"} if draft else study.data)
    problems = [f"{study.loaded.where(p)}: at {p}: {m}" for p, m in missing]
    original = spec_file.read_bytes()
    registered_text = None
    if draft:
        at = study.loaded.key_at("/status")
        registered_text = _registered_text(original.decode("utf-8"), at[0] if at else 0)
        if registered_text is None:
            problems.append(
                f"{study.loaded.where('/status')}: at /status: the study is a draft and its status"
                " is not written as one line `status: draft`; write `status: registered`"
            )
    if problems:
        raise UserError(
            f"{study.spec_rel}: not ready to seal ({len(problems)} problem(s)); nothing was changed",
            problems=[
                *problems,
                f"next: fix each in {study.spec_rel}, then run `prereg seal {study_id}` again",
            ],
        )
    if registered_text is not None:
        # register: the one status line, then generated/ compiled again from the spec as it
        # now is; the spec goes back as it was when anything after fails
        spec_file.write_bytes(registered_text.encode("utf-8"))
        try:
            study = build.load_study(project, spec_file)
            files = build.compile_project(project, [study_id])
            build.write_generated(project, files, prune=False)
        except BaseException:
            spec_file.write_bytes(original)
            raise
    seal = make_seal(study.data)
    write_new(target, canonical_bytes_nl(seal))
    return target, seal, registered_text is not None


def read_seal(path: Path, shown: str) -> dict[str, Any]:
    """Read and verify a seal file; raises UserError naming the rule broken."""
    from prereg.records import loads_strict

    try:
        seal = loads_strict(read_regular(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: StrictJSONError too
        raise UserError(f"{shown}: not a readable seal: {exc}") from None
    if not isinstance(seal, dict) or set(seal) != KEYS:
        raise UserError(f"{shown}: a seal has exactly the keys {', '.join(sorted(KEYS))}")
    if seal["format"] != FORMAT:
        raise UserError(f"{shown}: at /format: unknown seal format {seal['format']!r}")
    if not isinstance(seal["content"], dict) or digest(seal["content"]) != seal["digest"]:
        raise UserError(
            f"{shown}: at /digest: the sealed content does not match its digest "
            "(the seal was edited by hand)"
        )
    expected = path.name[: -len(SUFFIX)]
    if seal["study"] != expected:
        raise UserError(f"{shown}: at /study: seals {seal['study']!r}, not {expected!r}")
    if not version_key(seal["version"]):
        raise UserError(f"{shown}: at /version: not a version: {seal['version']!r}")
    return seal


def undeclared(spec: dict, seal: dict) -> list[diff.Change]:
    """Registered changes since ``seal`` that no later amendment declares."""
    from prereg.compiler import diff

    changes = diff.diff_specs(seal["content"], diff.registered_content(spec))
    if not changes:
        return []
    after = version_key(seal["version"])
    declared = [
        str(p)
        for a in spec.get("amendments") or []
        if version_key(a.get("version")) > after
        for p in a.get("paths") or []
    ]
    return [c for c in changes if not any(c.covered_by(p) for p in declared)]


def check_study(study, seal: dict, shown_seal: str) -> list[str]:
    """Problems of one sealed study (``study`` is a build.Study)."""
    spec, loaded = study.data, study.loaded
    problems = []
    if spec.get("status") == DRAFT:
        problems.append(
            f"{loaded.where('/status')}: at /status: the study is sealed ({shown_seal}) "
            "but its status is draft"
        )
    if version_key(spec.get("version")) < version_key(seal["version"]):
        problems.append(
            f"{loaded.where('/version')}: at /version: version {spec.get('version')} is older "
            f"than the sealed version {seal['version']}"
        )
    for c in undeclared(spec, seal):
        names = c.pointer if c.pointer == c.path else f"{c.pointer} or {c.path}"
        for read in ("/values", "/values_sha256"):  # read from the condition's value list
            if (c.pointer or "").endswith(read):
                names = f"{c.pointer[: -len(read)]}/values_file (its value list)"
        problems.append(
            f"{loaded.where(c.anchor)}: at {c.pointer}: registered content changed since the "
            f"seal of version {seal['version']} and no later amendment declares it ({c.rule}): "
            f"{c.message} Declare {names} in a new amendment's paths."
        )
    return problems


def check_seals(project: Project, studies: list) -> list[str]:
    """Problems of every sealed study of the project (held to its seal file, or to the seal
    committed to git when the file was deleted or moved back), of a registered or amended
    study never sealed, and of seals without a spec."""
    by_id = {s.id: s for s in studies}
    problems = []
    seen: set[str] = set()
    for path in seal_files(project):
        shown = project.rel(path)
        study_id = path.name[: -len(SUFFIX)]
        seen.add(study_id)
        try:
            read_seal(path, shown)
        except UserError as exc:
            problems.extend(exc.lines())
            continue
        if study_id not in by_id:
            problems.append(
                f"{shown}: seals study {study_id!r} but "
                f"{project.rel(project.spec_file(study_id))} does not exist"
            )
    for study in studies:
        if study.id in seen and any(
            p.startswith(f"{STUDIES_REL}/{study.id}{SUFFIX}:") for p in problems
        ):
            continue  # its seal file is unreadable: reported above
        try:
            seal, where, found = last_seal(project.root, study.id)
        except UserError as exc:
            problems.extend(exc.lines())
            continue
        problems.extend(found)
        if seal is None:
            if study.data.get("status") in REGISTERED:
                problems.append(
                    f"{study.loaded.where('/status')}: at /status: the study is"
                    f" {study.data.get('status')} but was never sealed; run prereg seal"
                    f" {study.id} and commit {STUDIES_REL}/{study.id}{SUFFIX}"
                )
            continue
        problems.extend(check_study(study, seal, where))
    return problems


# -- the seal tied to history -------------------------------------------------------------------

REGISTERED = ("registered", "amended")
GIT_SECONDS = 10.0  # each git call's bound
GIT_COMMITS = 200  # the commits that touched a seal file read at most (newest first)


def _git(root: Path, *args: str) -> bytes | None:
    """The output of ``git -C root ARGS`` (no shell, a bounded wait), or None when git is not
    there, ``root`` is not in a work tree, or the call fails."""
    from prereg.gitrepo import run_git

    return run_git(root, *args, timeout=GIT_SECONDS)


def _parse_seal(data: bytes, study_id: str, shown: str) -> dict[str, Any] | None:
    from prereg.records import loads_strict

    try:
        seal = loads_strict(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if (
        not isinstance(seal, dict)
        or set(seal) != KEYS
        or seal.get("format") != FORMAT
        or seal.get("study") != study_id
        or not isinstance(seal.get("content"), dict)
        or digest(seal["content"]) != seal.get("digest")
        or not version_key(seal.get("version"))
    ):
        return None
    return seal


def committed_seals(root: Path, study_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(commit, seal) of every sound version of ``spec/studies/<id>.seal.json`` committed on
    any branch or tag of the git repository holding ``root``, newest commit first (none
    outside a repository).  A seal file deleted from the work tree is still found here."""
    from prereg.compiler.project import STUDIES

    rel = f"{STUDIES}/{study_id}{SUFFIX}"
    out = _git(root, "log", "--all", f"--max-count={GIT_COMMITS}", "--format=%H", "--", rel)
    if not out:
        return []
    found = []
    for commit in out.decode("ascii", "replace").split():
        data = _git(root, "show", f"{commit}:./{rel}")
        if data is None:
            continue  # the commit deleted the file
        seal = _parse_seal(data, study_id, rel)
        if seal is not None:
            found.append((commit, seal))
    return found


def last_seal(root: Path, study_id: str) -> tuple[dict[str, Any] | None, str, list[str]]:
    """(the seal a study's registered content is held to, where it is from, problems): the
    seal file, or, when it was deleted, moved back to an older version or rewritten, the
    latest seal committed to git (by version; the newest commit of it)."""
    from prereg.compiler.project import STUDIES

    shown = f"{STUDIES}/{study_id}{SUFFIX}"
    path = Path(root) / shown
    problems: list[str] = []
    current = read_seal(path, shown) if path.exists() else None
    history = committed_seals(Path(root), study_id)
    best = None
    for commit, seal in history:
        if best is None or version_key(seal["version"]) > version_key(best[1]["version"]):
            best = (commit, seal)
    if best is None:
        return current, shown, problems
    commit, committed = best
    where = f"{shown} as committed in {commit[:12]}"
    if current is None:
        problems.append(
            f"{shown}: the seal of version {committed['version']} was deleted (committed in"
            f" {commit[:12]}); a seal is never removed: restore it (git checkout {commit[:12]}"
            f" -- {shown})"
        )
        return committed, where, problems
    if version_key(current["version"]) < version_key(committed["version"]):
        problems.append(
            f"{shown}: at /version: seals version {current['version']}, but version"
            f" {committed['version']} was sealed in commit {commit[:12]}; a seal never goes back"
        )
        return committed, where, problems
    same = [s for _, s in history if version_key(s["version"]) == version_key(current["version"])]
    if same and all(s["digest"] != current["digest"] for s in same):
        problems.append(
            f"{shown}: at /digest: version {current['version']} was sealed with"
            f" {same[0]['digest']} in git history, not {current['digest']}; a seal is never"
            " rewritten (amend the study and seal the new version)"
        )
        return same[0], where, problems
    return current, shown, problems
