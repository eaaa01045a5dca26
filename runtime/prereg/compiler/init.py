"""`prereg init`: a new study spec that compiles, to be edited into the real preregistration.

Without ``--from`` the spec is the factorial starter (templates/starter-factorial.yaml.j2): a
small crossed design with every part of the scoring vocabulary, commented. With ``--from
STUDY`` it is a copy of an existing study of the project (any engine): the registered content
as written there, under the new id, as version 0.1, a draft, with no amendments. With
``--engine KIND`` (another kind than factorial) it is such a copy of a study of that engine:
the project's first, else one prereg ships.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from prereg.compiler.project import CORE_COMMANDS, HOME, STUDIES, Project
from prereg.errors import UserError
from prereg.files import write_new

ID = re.compile(r"^[A-Za-z][A-Za-z0-9]*([-_.][A-Za-z0-9]+)*$")


def project_for_init(explicit: str | None) -> Project:
    """The project to add a study to: ``--project``, the nearest one upwards, or the current
    folder (its spec/studies/ is created by :func:`init_study`, once the new spec is ready)."""
    if explicit is not None:
        root = Path(explicit)
        if root.exists() and not root.is_dir():
            raise UserError(f"--project {explicit}: not a folder")
    else:
        here = Path.cwd().resolve()
        root = next((c for c in (here, *here.parents) if (c / STUDIES).is_dir()), here)
    return Project(root.resolve())


def _schema_ref(project: Project, spec: Path) -> str:
    """The editor's schema reference, relative and inside the project (the project's
    generated/prereg.schema.json, which :func:`_language_copy` writes when the project has
    none), so a spec names no folder of this machine outside its project."""
    return os.path.relpath(project.root / "generated" / "prereg.schema.json", spec.parent)


def _language_copy(project: Project) -> Path | None:
    """A project without the language source gets a copy of the shipped language schema for
    editors (compile keeps it current, check reports a stale one; it never decides what
    compiles); the copy written, or None."""
    own = project.root / "generated" / "prereg.schema.json"
    if project.language_source.exists() or os.path.lexists(own):
        return None
    own.parent.mkdir(parents=True, exist_ok=True)
    write_new(own, (HOME / "generated" / "prereg.schema.json").read_bytes())
    return own


def _engine_source(project: Project, engine: str) -> tuple[Project, str]:
    """A study of ``engine`` to copy: the project's first (by id), else one prereg ships."""
    from prereg.compiler.load import load_yaml
    from prereg.engines import registry

    kinds = registry.kinds()
    if engine not in kinds:
        raise UserError(f"--engine: unknown engine {engine!r} (registered: {', '.join(kinds)})")
    for proj in (project, Project(HOME)):
        for spec in proj.spec_files() if proj.studies_dir.is_dir() else []:
            try:
                data = load_yaml(spec, display=Path(proj.rel(spec))).data
            except UserError:
                continue
            if isinstance(data, dict) and data.get("engine") == engine:
                return proj, spec.stem
    raise UserError(
        f"--engine {engine}: no study of that engine to start from (write one, or use --from)"
    )


def init_study(
    project: Project, study_id: str, source: str | None = None, *, engine: str | None = None
) -> Path:
    if source is not None and engine is not None:
        raise UserError("init takes --from or --engine, not both")
    if not ID.match(study_id):
        raise UserError(f"study id {study_id!r} is not an identifier ({ID.pattern})")
    if study_id in CORE_COMMANDS:
        raise UserError(f"study id {study_id!r} is a prereg command; choose another")
    from prereg.compiler.project import package_name
    from prereg.compiler.semantic import MAX_STUDY_ID

    if len(study_id) > MAX_STUDY_ID:  # as compile refuses it
        raise UserError(
            f"study id of {len(study_id)} characters is longer than {MAX_STUDY_ID}: the files"
            " named after it (<id>.seal.json, <id>.intoto.dsse.json, ...) must fit a file"
            " system's 255-byte limit on a name"
        )
    path = project.spec_file(study_id)
    if os.path.lexists(path):
        raise UserError(f"{project.rel(path)}: already exists; refusing to overwrite it")
    same = [
        p.stem
        for p in (project.spec_files() if project.studies_dir.is_dir() else [])
        if package_name(p.stem) == package_name(study_id)
    ]
    if same:  # as compile refuses two such studies
        raise UserError(
            f"study id {study_id!r} and {same[0]!r} ({project.rel(project.spec_file(same[0]))})"
            f" would compile to the same package generated/{package_name(study_id)}/; choose another"
        )
    origin = project
    if engine is not None and engine != "factorial":
        origin, source = _engine_source(project, engine)
    if source is None:
        from prereg.compiler.render import render

        text = render(
            "starter-factorial.yaml.j2",
            study_id=study_id,
            title=study_id.replace("-", " ").replace("_", " ").capitalize(),
            schema_ref=_schema_ref(project, path),
        )
    else:
        text = _copy_of(origin, source, study_id, _schema_ref(project, path))
    _write_all(project, path, text)
    return path


def _write_all(project: Project, path: Path, text: str) -> None:
    """Create the project's folders, the spec and the editors' schema copy: all of them, or,
    when any step fails, none (what this call created is removed again)."""
    made: list[Path] = []  # created here, in order
    try:
        for folder in reversed([path.parent, *path.parent.parents]):
            if folder == project.root or project.root in folder.parents:
                if not folder.exists():
                    folder.mkdir()
                    made.append(folder)
        write_new(path, text)
        made.append(path)
        for folder in (project.root / "generated",):
            if not folder.exists() and not project.language_source.exists():
                folder.mkdir()
                made.append(folder)
        copy = _language_copy(project)
        if copy is not None:
            made.append(copy)
    except BaseException as exc:
        for p in reversed(made):
            try:
                p.rmdir() if p.is_dir() else p.unlink()
            except OSError:
                pass
        if isinstance(exc, OSError):
            where = exc.filename or path
            raise UserError(
                f"{where}: cannot create ({exc.strerror or exc}); nothing was written"
            ) from None
        raise


def _copy_of(project: Project, source: str, study_id: str, schema_ref: str) -> str:
    import yaml

    from prereg.compiler.load import load_yaml

    if not isinstance(source, str) or not ID.match(source):
        raise UserError(
            f"--from: {source!r} is not a study id of the project ({ID.pattern}); a study is"
            " copied from the project's own spec/studies/ only"
        )
    src = project.spec_file(source)
    try:
        inside = src.resolve().parent == project.studies_dir.resolve()
    except (OSError, RuntimeError):
        inside = False
    if src.exists() and not inside:
        raise UserError(
            f"--from: {project.rel(src)} leads outside the project's spec/studies/ (a link);"
            " refusing to read it"
        )
    if not src.exists():
        known = ", ".join(p.stem for p in project.spec_files()) or "none"
        raise UserError(
            f"--from: no study {source!r} in {project.rel(project.studies_dir)}/ ({known})"
        )
    data = dict(load_yaml(src, display=Path(project.rel(src))).data)
    data.update(id=study_id, version="0.1", status="draft")
    data.pop("amendments", None)
    order = ["id", "version", "title", "status", "engine"]
    data = {
        **{k: data[k] for k in order if k in data},
        **{k: v for k, v in data.items() if k not in order},
    }
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return (
        f"# yaml-language-server: $schema={schema_ref}\n"
        f"# {study_id}: started by `prereg init --from {source}` (a copy of its registered content).\n"
        + body
    )
