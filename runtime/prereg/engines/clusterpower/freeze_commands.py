"""Command handlers of the freeze manifest: ``assemble``, ``freeze_manifest`` and ``validate``.

``assemble(ctx, args)``: ``args.input`` (a freeze input), ``args.root`` (the folder its paths
are relative to; the current folder when None), ``args.out`` (a folder to create) and
``args.leave_out`` (a role id or None).  Copies every file the input binds, except those of the
left-out role (produced into the copy afterwards, e.g. the power plan), to the same relative
path under ``args.out``, opening each as the freeze does (no symlinks, nothing outside the
root).  The input must pass its contract; any problem refuses the whole copy.  The folder is
filled under a temporary name and renamed into place, so it never exists half-written.

``freeze_manifest(ctx, args)``: ``args.input`` (the freeze input JSON), ``args.root`` (the folder
bound paths are relative to; the current folder when None) and ``args.out`` (the manifest to
create).  Beside the manifest, ``<stem>.intoto.json`` holds the same manifest as an in-toto
Statement v1 (:func:`freeze_statement`); both are written or neither.  When the spec declares
the optional ``--sign-key PEM`` (``args.sign_key``), ``<stem>.intoto.dsse.json`` is written
with them, in the same unit: the statement signed as a DSSE envelope (:mod:`prereg.attest`).
Exit 0 when they are
written; every refusal raises :class:`UserError` (exit 2) and writes nothing.  An existing
output is refused before any work and, should it appear meanwhile, at the exclusive create.

``validate(ctx, args)``: ``args.manifest`` and ``args.root`` (None: no re-hashing).  Exit 0
only when everything holds; 1 with one line per problem on stderr; 2 (UserError) when the
manifest or the root cannot be read.  When the spec declares the optional ``--public-key PEM``
(``args.public_key``), the envelope beside the manifest must verify with that key and carry
the statement beside it, which must be the manifest's statement (else exit 2).  ``ctx.config`` is the compiled spec config, read by
:func:`.config.freeze_config`; see :mod:`.freeze` for what the freeze reads from it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from prereg.console import console_of
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import (
    canonical_bytes_nl,
    make_parents,
    refuse_existing,
    remove_folders,
    write_files_new,
)

from .config import freeze_config
from .freeze import (
    _input_problems,
    _read_json_input,
    build_manifest,
    check_manifest,
    json_path,
    open_beneath,
    open_root,
    path_syntax_problem,
    read_manifest,
)

#: in-toto Statement v1 (https://in-toto.io/Statement/v1) and the project's predicate types.
INTOTO_STATEMENT = "https://in-toto.io/Statement/v1"
PREDICATE_PREFIX = "urn:prereg:"


def _copy_fd(fd: int, dest: Path) -> int:
    dest.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    with open(fd, "rb", closefd=False) as src, open(dest, "xb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
            size += len(chunk)
    os.chmod(dest, 0o644)
    return size


def assemble(ctx: StudyContext, args: Any) -> int:
    out = Path(args.out)
    refuse_existing(out)
    parent = out.parent if str(out.parent) else Path(".")
    if os.path.lexists(parent) and not parent.is_dir():
        raise UserError(f"{out}: {parent} is not a folder")
    fc = freeze_config(ctx.config)
    leave_out = getattr(args, "leave_out", None)
    if leave_out is not None and leave_out not in fc.role_by_id:
        raise UserError(
            f"--leave-out: {leave_out!r} is not a freeze role "
            f"(roles: {', '.join(r.id for r in fc.roles)})"
        )
    label = str(args.input)
    data = _read_json_input(args.input, "freeze input")
    problems = _input_problems(fc, data, label)
    if problems:
        raise UserError(
            f"{label}: freeze input refused ({len(problems)} problem(s))", problems=problems
        )
    wanted: list[tuple[str, str]] = []
    for i, e in enumerate(data[fc.f_artifacts]):
        where = json_path([fc.f_artifacts, i])
        role, path = e[fc.f_role], e[fc.f_path]
        if role not in fc.role_by_id:
            problems.append(f"{label}: {where}.{fc.f_role}: unknown role {role!r}")
        elif role != leave_out:
            problem = path_syntax_problem(path)
            if problem:
                problems.append(f"{label}: {where}.{fc.f_path}: {problem}")
            else:
                wanted.append((role, path))
    if problems:
        raise UserError(f"{label}: nothing copied ({len(problems)} problem(s))", problems=problems)
    root = args.root if args.root is not None else "."
    root_fd, root_real = open_root(root)
    made = make_parents(out)  # removed again when nothing is copied
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    total = 0
    try:
        try:
            for role, path in wanted:
                fd, problem = open_beneath(root_fd, root_real, path)
                if fd is None:
                    problems.append(f"{role} {path}: {problem}")
                    continue
                try:
                    total += _copy_fd(fd, tmp.joinpath(*path.split("/")))
                except FileExistsError:
                    problems.append(f"{role} {path}: bound twice")
                finally:
                    os.close(fd)
        finally:
            os.close(root_fd)
        if problems:
            raise UserError(
                f"{label}: nothing copied ({len(problems)} problem(s))", problems=problems
            )
        refuse_existing(out)
        os.chmod(tmp, 0o755)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        remove_folders(made)
        raise
    line = f"{out}: copied {len(wanted)} bound files ({total} bytes) from {root}"
    if leave_out is not None:
        line += f"; left out role {leave_out}"
    print(line)
    return 0


def statement_path(out: str | Path) -> Path:
    """Where the in-toto statement of the manifest ``out`` goes: ``<stem>.intoto.json``."""
    out = Path(out)
    return out.with_name((out.stem if out.suffix == ".json" else out.name) + ".intoto.json")


def freeze_statement(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest as an in-toto Statement v1: one subject per bound file (its path and
    SHA-256), the predicate type ``urn:prereg:<the manifest's schemaVersion>`` and the whole
    manifest as the predicate."""
    return {
        "_type": INTOTO_STATEMENT,
        "subject": [
            {"name": a["path"], "digest": {"sha256": a["sha256"]}} for a in manifest["artifacts"]
        ],
        "predicateType": PREDICATE_PREFIX + manifest["schemaVersion"],
        "predicate": manifest,
    }


def freeze_manifest(ctx: StudyContext, args: Any) -> int:
    statement = statement_path(args.out)
    sign_key = getattr(args, "sign_key", None)  # an optional argument a spec may declare
    envelope = None
    if sign_key is not None:
        from prereg.attest import _libraries, envelope_path

        envelope = envelope_path(statement)
        _libraries()  # refused before any work when the extra is not installed
    refuse_existing(args.out, statement, *([envelope] if envelope else []))
    root = args.root if args.root is not None else "."
    fc = freeze_config(ctx.config)
    manifest = build_manifest(args.input, root, fc, ctx.spec_digest, ctx.version)
    statement_bytes = canonical_bytes_nl(freeze_statement(manifest))
    files = [
        (args.out, canonical_bytes_nl(manifest), 0o644),
        (statement, statement_bytes, 0o644),
    ]
    if envelope is not None:
        from prereg.attest import sign_statement

        files.append((envelope, sign_statement(statement_bytes, sign_key, str(statement)), 0o644))
    write_files_new(files)
    con = console_of(args)
    con.line(
        f"{args.out}: froze {len(manifest['artifacts'])} files; selfSha256 {manifest['selfSha256']}"
    )
    con.line(f"{statement}: the same as an in-toto Statement v1")
    if envelope is not None:
        con.line(f"{envelope}: the statement signed (a DSSE envelope) with {sign_key}")
    con.summary(
        {
            "outputs": [str(p) for p, _, _ in files],
            "artifacts": len(manifest["artifacts"]),
            "selfSha256": manifest["selfSha256"],
        }
    )
    return 0


def validate(ctx: StudyContext, args: Any) -> int:
    con = console_of(args)
    fc = freeze_config(ctx.config)
    manifest = read_manifest(args.manifest)
    problems = check_manifest(manifest, args.manifest, args.root, fc)
    summary = {
        "manifest": str(args.manifest),
        "holds": not problems,
        "rehashed": args.root is not None,
        "problems": problems,
    }
    if problems:
        con.summary(summary)
        print(
            f"{args.manifest}: the manifest does not hold ({len(problems)} problem(s))",
            file=sys.stderr,
        )
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    public_key = getattr(args, "public_key", None)  # an optional argument a spec may declare
    signed = None
    if public_key is not None:
        from prereg.attest import envelope_path, verify_envelope

        statement = statement_path(args.manifest)
        signed = verify_envelope(envelope_path(statement), public_key, statement)
        if _statement_of(statement) != freeze_statement(manifest):
            raise UserError(
                f"{statement}: not the in-toto statement of {args.manifest} (it was written for"
                " another manifest, or changed)"
            )
        summary["signedBy"] = signed["keyid"]
    recorded = manifest["specDigest"]
    con.summary({**summary, "specDigest": recorded, "currentSpecDigest": ctx.spec_digest})
    if recorded != ctx.spec_digest:
        print(
            f"note: {args.manifest} was frozen under spec digest {recorded}; "
            f"the current spec is {ctx.spec_digest}",
            file=sys.stderr,
        )
    checked = "schema, self digest and rules" + (
        ", and every bound file re-hashed"
        if args.root is not None
        else " (no --root: files not re-hashed)"
    )
    if signed is not None:
        checked += f"; its statement's signature verifies (key id {signed['keyid']})"
    con.line(f"{args.manifest}: holds: {checked}")
    return 0


def _statement_of(path: Path) -> Any:
    from prereg.records import loads_strict

    try:
        return loads_strict(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and StrictJSONError too
        raise UserError(f"{path}: cannot read the in-toto statement ({exc})") from None


COMMANDS = {"assemble": assemble, "freeze_manifest": freeze_manifest, "validate": validate}
