"""Freeze manifests: bind every pre-confirmatory artifact by content digest, failing closed.

:func:`build_manifest` reads a freeze input (a JSON object naming the artifacts to bind, each
under a role, with the study's pinned commits, seeds, execution boundary and models), checks
every rule, hashes every bound file and returns the manifest; :func:`validate_manifest`
re-checks a written manifest and, given the root, re-hashes every bound file.  Nothing here
knows a particular study: every role, key, schema id and rule value comes from ``config``.

Files are opened beneath the root one path component at a time (``os.lstat`` then ``os.open``
with ``O_NOFOLLOW`` relative to the parent folder's descriptor), so no symlink is ever followed
and the bytes hashed are the bytes of the file that was checked.  Source files are hashed in
bounded chunks and JSON-lines files are read line by line; a ``.json`` metadata document must
parse, so it is read whole.

Configuration
-------------
A :class:`~.config.FreezeConfig`, read by :func:`~.config.freeze_config` from the compiled
study (the functions here take it, or the compiled configuration itself), by the spec's names:

constant ``frozen``
    The frozen constants of the spec's current amendment (a JSON object).  A bound power
    plan's ``frozen`` must equal it key for key (compared as canonical JSON); the manifest
    records it and :func:`validate_manifest` compares it again.

constant ``freeze_input``
    ``schema_field``: the input field holding the schema id; ``schema_id``: the accepted id;
    ``contract``: a JSON Schema (draft 2020-12) of the whole input object, checked with
    ``integer`` meaning a JSON integer (``1.0`` and booleans are not integers); ``fields``:
    the names the rules read: ``target``, ``artifacts``, ``artifact_role``,
    ``artifact_path``, ``models``, ``model_id``, ``model_base_lineage``,
    ``model_benchmark_specific_finetune`` (field names) and ``executes_untrusted_code``,
    ``sandbox_required`` (field paths: lists of names from the input's top level).

the ``freeze_roles`` section
    Each role's ``id``, ``kind`` (``source``: bound as bytes; ``metadata``: must parse, keys
    scanned for forbidden names), ``required`` (required roles appear exactly once, the
    others at most once) and ``extensions`` (the accepted file-name endings, e.g. ``".py"``).

constant ``freeze_rules``
    ``manifest_schema``
        The schema id written into manifests and required by validation.
    ``formats``
        ``{extension: "json" | "jsonl"}``: how a metadata file with that ending is parsed
        (``json``: one document; ``jsonl``: one JSON value per LF-terminated line, no blank
        lines, at least one line).
    ``plan_role`` / ``calibration_role``
        The role binding the power plan, and the role whose file must hash to the plan's
        ``calibration.calibrationSha256``.
    ``accepted_plan_statuses``
        The plan statuses that may authorize a freeze (any other status is refused).
    ``targets``
        A list of ``{id, required_roles, min_distinct_base_lineages,
        refuse_benchmark_specific_finetune}``: per freeze target, the roles it additionally
        requires, the least number of distinct base lineages among the models that are not
        benchmark-specifically fine-tuned, and whether such a model is refused (named).
    ``forbidden_keys``
        ``{names, lowercase, replace}``: a key in any metadata file, at any depth, whose
        normalised form (lowercased when ``lowercase``; then each ``[old, new]`` pair of
        ``replace`` applied in order) is in ``names`` is refused.
    ``false_claims``
        Claim names the manifest records as ``false`` under ``claims`` (the engine executes
        nothing, so it claims nothing).
    ``sandbox_issue_id``
        The canonical sandbox issue, recorded as ``{id, canonical: true, resolved: false}``.
    ``error_cap``
        The most problems listed per bound file before "… and K more".

constant ``power_plan``'s ``schema``
    The power plan schema id a bound plan must carry (the plans this study's plan command
    writes).

The manifest
------------
Keys are camelCase (:mod:`prereg.outputs`); ``input``, ``frozen`` and ``claims`` keep the
spelling of the input and the spec they copy.  ``schemaVersion``, ``specDigest``,
``amendmentVersion``, ``input`` (the input's fields except the artifact list), ``artifacts``
(one ``{role, path, bytes, sha256}`` per bound file, in the config's role order, ``path``
relative to the root as given), ``powerPlan`` (the bound plan's ``status``,
``selectedTaskCount``, ``selfSha256``, ``calibrationSha256``, ``specDigest`` and
``amendmentVersion``), ``frozen``, ``claims``, ``sandboxIssue`` and ``selfSha256``: bare hex
SHA-256 of the canonical JSON (RFC 8785) of the manifest without that field.  No timestamps,
host names or absolute paths: the same inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prereg.digest import canonical_json, digest_hex
from prereg.errors import UserError
from prereg.files import read_regular
from prereg.records import (
    BOM_WORDS,
    INT64_RANGE,
    cr_problem,
    json_syntax_words,
    loads_strict,
    not_text,
    not_utf8,
    schema_predicate,
)

if TYPE_CHECKING:  # jsonschema is imported only to explain a document the fast check refuses
    import jsonschema

from .config import FreezeConfig, Role, freeze_config

#: Read size for streaming hashes (1 MiB: measured within noise of 256 KiB-8 MiB here).
HASH_CHUNK = 1 << 20

HEX64 = "^[0-9a-f]{64}$"
_HEX64_RE = re.compile(HEX64)

# The power plan's own fields (the format written by this package's plan engine).
_PLAN_FIELDS = (
    "schemaVersion",
    "canonical",
    "status",
    "reasons",
    "specDigest",
    "amendmentVersion",
    "frozen",
    "eligible",
    "calibration",
    "skippedRungs",
    "rungs",
    "selectedTaskCount",
    "warnings",
    "numpyVersion",
    "selfSha256",
)
_PLAN_CONTRACT = {
    "type": "object",
    "required": list(_PLAN_FIELDS),
    "properties": {
        "schemaVersion": {"type": "string"},
        "canonical": {"type": "boolean"},
        "status": {"type": "string"},
        "reasons": {"type": "array", "items": {"type": "string"}},
        "frozen": {"type": "object"},
        "eligible": {"type": "object"},
        "calibration": {
            "type": "object",
            "required": ["calibrationSha256"],
            "properties": {"calibrationSha256": {"type": "string", "pattern": HEX64}},
        },
        "skippedRungs": {"type": "array"},
        "rungs": {"type": "array"},
        "selectedTaskCount": {"type": ["integer", "null"]},
        "warnings": {"type": "array"},
        "numpyVersion": {"type": "string"},
        "selfSha256": {"type": "string", "pattern": HEX64},
    },
}
_PLAN_SUMMARY = (
    "status",
    "selectedTaskCount",
    "selfSha256",
    "calibrationSha256",
    "specDigest",
    "amendmentVersion",
)

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


# --------------------------------------------------------------------------------------------
# strict JSON and JSON paths


strict_loads = loads_strict  # the project's strict JSON reader (prereg.records)


def decode_utf8(data: bytes) -> tuple[str | None, str | None]:
    """``(text, None)`` for UTF-8 without a byte order mark, else ``(None, problem)``."""
    if data.startswith(b"\xef\xbb\xbf"):
        return None, BOM_WORDS
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        return None, not_utf8(data, e.start)  # UTF-16 or a compressed file named as such


def _parse_error(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        msg = exc.msg.removesuffix(" at")  # "Invalid control character at"
        return f"line {exc.lineno} column {exc.colno}: not valid JSON: {msg}"
    return f"not valid JSON: {exc}"


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_path(parts: Sequence[str | int]) -> str:
    """``$.a[0]["odd key"]`` for the path elements ``("a", 0, "odd key")``."""
    out = ["$"]
    for p in parts:
        if isinstance(p, int):
            out.append(f"[{p}]")
        elif _IDENT.fullmatch(p):
            out.append("." + p)
        else:
            out.append("[" + json.dumps(p, ensure_ascii=False) + "]")
    return "".join(out)


def _contract_validator(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    import jsonschema

    base = jsonschema.Draft202012Validator
    # an integer as written and within 64 bits, as every record contract reads one (and as
    # both predicates :func:`_contract_predicate` trusts)
    lo, hi = INT64_RANGE
    checker = base.TYPE_CHECKER.redefine(
        "integer", lambda _c, x: isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi
    )
    cls = jsonschema.validators.extend(base, type_checker=checker)
    return cls(schema)


def _contract_predicate(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """The compiled predicate :func:`contract_problems` trusts for ``schema``, or None."""
    accept = schema_predicate(schema)
    if accept is None:
        from prereg.compiler.predicate import compile_schema

        accept = compile_schema(
            schema, draft="2020-12", integer_floats=False, formats=False, int_range=INT64_RANGE
        )
    return accept


def contract_problems(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """One message per JSON Schema violation, each naming its JSON path; sorted.

    A value the schema's compiled predicate accepts has none: the record predicate
    (:func:`prereg.records.schema_predicate`), or for a schema it lacks a keyword of (the
    manifest's) the compiler's (:func:`prereg.compiler.predicate.compile_schema` as
    :func:`_contract_validator` validates: draft 2020-12, 1.0 not an integer, formats not
    checked); both are True only when the schema holds. Any other value is validated by
    jsonschema, which words every problem.
    """
    accept = _contract_predicate(schema)
    if accept is not None and accept(value):
        return []
    errors = _contract_validator(schema).iter_errors(value)
    found = []
    for e in errors:
        path = list(e.absolute_path)
        note = e.schema.get("description") if isinstance(e.schema, Mapping) else None
        said = e.message if len(e.message) <= 200 else e.message[:199] + "…"  # not a huge value
        msg = f"{json_path(path)}: {said}" + (f" ({note})" if note else "")
        found.append((tuple(str(p) for p in path), msg))
    return [m for _, m in sorted(found)]


def _members(v: dict | list) -> Iterator[tuple[str | int, Any, bool]]:
    if isinstance(v, dict):
        return ((k, x, True) for k, x in v.items())
    return ((i, x, False) for i, x in enumerate(v))


def find_forbidden_keys(
    value: Any, is_forbidden: Callable[[str], bool]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Yield ``(path, key)`` for each object key, at any depth, that ``is_forbidden(key)``.

    Iterative (no recursion limit), in document order.
    """
    if not isinstance(value, (dict, list)):
        return
    stack: list[tuple[tuple[str | int, ...], Iterator[tuple[str | int, Any, bool]]]] = [
        ((), _members(value))
    ]
    while stack:
        path, members = stack[-1]
        for k, x, is_key in members:
            if is_key and is_forbidden(k):
                yield path + (k,), k
            if isinstance(x, (dict, list)):
                stack.append((path + (k,), _members(x)))
                break
        else:
            stack.pop()


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|\s+|[^\s{}\[\]:,"]+', re.S)


def json_key_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """Map the path of every object key in a JSON document to the line it is written on.

    A small lexer used only to point messages at lines; it trusts ``text`` to be valid JSON
    (parse it first).
    """
    lines: dict[tuple[str | int, ...], int] = {}
    # frames: [kind, element, expecting_key]; element: current key (object) or index (array)
    frames: list[list[Any]] = []
    line = 1
    for m in _TOKEN.finditer(text):
        tok = m.group()
        c = tok[0]
        if c in " \t\r\n":
            line += tok.count("\n")
            continue
        top = frames[-1] if frames else None
        if c == '"' and top is not None and top[0] == "o" and top[2]:
            key = json.loads(tok)
            top[1], top[2] = key, False
            lines[tuple(f[1] for f in frames)] = line
        elif c == "{":
            frames.append(["o", None, True])
        elif c == "[":
            frames.append(["a", 0, False])
        elif c in "}]":
            frames.pop()
        elif c == "," and top is not None:
            if top[0] == "o":
                top[2] = True
            else:
                top[1] += 1
    return lines


# --------------------------------------------------------------------------------------------
# opening and hashing files beneath a root without following symlinks


def path_syntax_problem(path: str) -> str | None:
    """Why a bound path is refused before touching the file system, or None."""
    if "\x00" in path:
        return f"{path!r} contains a NUL character"
    if path.startswith("/") or os.path.isabs(path):
        return f"{path!r} is absolute; paths are relative to the root"
    parts = path.split("/")
    if ".." in parts:
        return f"{path!r} contains '..'; paths may not climb out of the root"
    if any(p in ("", ".") for p in parts):
        return f"{path!r} has an empty or '.' component; write the path normalised"
    return None


def open_root(root: str | Path) -> tuple[int, str]:
    """(descriptor, resolved path) of the root folder; UserError when it is not a folder."""
    real = os.path.realpath(root)
    try:
        fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC)
    except OSError as e:
        raise UserError(f"{root}: root is not a readable folder ({e.strerror})") from None
    return fd, real


def open_beneath(root_fd: int, root_real: str, path: str) -> tuple[int | None, str | None]:
    """Open the regular file ``path`` beneath the root; ``(fd, None)`` or ``(None, problem)``.

    ``path`` must have passed :func:`path_syntax_problem`.  Refuses a path that escapes the
    root after resolution, then walks it one component at a time: ``os.lstat`` (never
    following) refuses a symlink at any component, and each component is opened with
    ``O_NOFOLLOW`` relative to its parent's descriptor and compared (device, inode) with what
    was checked, so a swap between check and open is refused too.
    """
    parts = path.split("/")
    resolved = os.path.realpath(os.path.join(root_real, *parts))
    if os.path.commonpath([root_real, resolved]) != root_real:
        return None, f"escapes the root after resolution (resolves to {resolved})"
    cur = root_fd
    opened: list[int] = []
    try:
        for i, part in enumerate(parts):
            sub = "/".join(parts[: i + 1])
            last = i == len(parts) - 1
            try:
                st = os.lstat(part, dir_fd=cur)
            except FileNotFoundError:
                return None, f"does not exist ({sub!r} is missing under the root)"
            except OSError as e:
                return None, f"cannot inspect {sub!r}: {e.strerror}"
            if stat.S_ISLNK(st.st_mode):
                return None, f"passes through a symlink at {sub!r}; symlinks are refused"
            if not last and not stat.S_ISDIR(st.st_mode):
                return None, f"{sub!r} is not a folder"
            if last and not stat.S_ISREG(st.st_mode):
                return None, "is not a regular file"
            flags = os.O_RDONLY | os.O_NOFOLLOW | _O_CLOEXEC
            flags |= os.O_NONBLOCK if last else os.O_DIRECTORY
            try:
                fd = os.open(part, flags, dir_fd=cur)
            except PermissionError as e:
                return None, f"cannot read {sub!r}: {e.strerror}"
            except OSError as e:
                return None, f"{sub!r} changed while being checked ({e.strerror})"
            opened.append(fd)
            fst = os.fstat(fd)
            if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
                return None, f"{sub!r} changed while being checked"
            cur = fd
        return opened.pop(), None
    finally:
        for fd in opened:
            os.close(fd)


class ChangedWhileRead(OSError):
    """The file's size, modification or status-change time moved while it was read: what was
    hashed may be content that never existed as a whole."""


def _stamp(fd: int) -> tuple[int, int, int]:
    st = os.fstat(fd)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _check_unchanged(fd: int, before: tuple[int, int, int], read: int) -> None:
    after = _stamp(fd)
    if after != before or read != before[0]:
        raise ChangedWhileRead(
            "changed while it was read (size or modification time moved); nothing is bound to"
            " content that may never have existed: freeze again once it is stable"
        )


def sha256_fd(fd: int, chunk: int = HASH_CHUNK) -> tuple[str, int]:
    """(hex SHA-256, byte count) of an open file from its current offset, in bounded chunks.

    Raises :class:`ChangedWhileRead` when the file changed while it was hashed.
    """
    h = hashlib.sha256()
    size = 0
    buf = bytearray(chunk)
    view = memoryview(buf)
    before = _stamp(fd)
    with open(fd, "rb", buffering=0, closefd=False) as fh:
        while n := fh.readinto(buf):
            h.update(view[:n])
            size += n
    _check_unchanged(fd, before, size)
    return h.hexdigest(), size


def hash_beneath(root: str | Path, path: str, chunk: int = HASH_CHUNK) -> tuple[str, int]:
    """(hex SHA-256, size) of ``root/path`` opened as the freeze opens it (no symlinks)."""
    problem = path_syntax_problem(path)
    if problem:
        raise UserError(f"{path}: {problem}")
    root_fd, root_real = open_root(root)
    try:
        fd, problem = open_beneath(root_fd, root_real, path)
        if fd is None:
            raise UserError(f"{path}: {problem}")
        try:
            return sha256_fd(fd, chunk)
        except OSError as e:
            raise UserError(f"{path}: {e.strerror or e}") from None
        finally:
            os.close(fd)
    finally:
        os.close(root_fd)


# --------------------------------------------------------------------------------------------
# binding one file


@dataclass
class Bound:
    role: str
    path: str
    bytes: int
    sha256: str
    document: Any = None  # the parsed plan (plan role only)

    def record(self) -> dict[str, Any]:
        return {"role": self.role, "path": self.path, "bytes": self.bytes, "sha256": self.sha256}


class _Problems:
    """Problems of one file, keeping the first ``cap`` and counting the rest."""

    def __init__(self, where: str, cap: int):
        self.where = where
        self.cap = cap
        self.kept: list[str] = []
        self.more = 0

    def add(self, message: str) -> None:
        if len(self.kept) < self.cap:
            self.kept.append(f"{self.where}: {message}")
        else:
            self.more += 1

    def list(self) -> list[str]:
        tail = [f"{self.where}: … and {self.more} more"] if self.more else []
        return self.kept + tail


def _scan_keys(
    fc: FreezeConfig,
    out: _Problems,
    doc: Any,
    line_of: Callable[[tuple[str | int, ...]], int | None],
) -> None:
    for path, key in find_forbidden_keys(doc, lambda k: fc.normalise_key(k) in fc.forbidden):
        line = line_of(path)
        at = f"line {line}: " if line is not None else ""
        out.add(
            f"{at}{json_path(path)}: forbidden key {key!r} "
            f"(normalised {fc.normalise_key(key)!r}) in a metadata file"
        )


def _read_json_fd(fc: FreezeConfig, fd: int, out: _Problems, keep: bool) -> tuple[str, int, Any]:
    before = _stamp(fd)
    with open(fd, "rb", closefd=False) as fh:
        data = fh.read()
    _check_unchanged(fd, before, len(data))
    sha = hashlib.sha256(data).hexdigest()
    text, problem = decode_utf8(data)
    if text is None:
        out.add(problem or "not UTF-8")
        return sha, len(data), None
    try:
        doc = strict_loads(text)
    except ValueError as e:
        out.add(_parse_error(e))
        return sha, len(data), None
    lines: dict[tuple[str | int, ...], int] | None = None

    def line_of(path: tuple[str | int, ...]) -> int | None:
        nonlocal lines
        if lines is None:  # only when a forbidden key was found
            lines = json_key_lines(text)
        return lines.get(path)

    _scan_keys(fc, out, doc, line_of)
    return sha, len(data), (doc if keep else None)


def _read_jsonl_fd(fc: FreezeConfig, fd: int, out: _Problems) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    lineno = 0
    before = _stamp(fd)
    with open(fd, "rb", buffering=HASH_CHUNK, closefd=False) as fh:
        for raw in fh:
            lineno += 1
            h.update(raw)
            size += len(raw)
            if lineno == 1 and not_text(raw[:4]) is not None:  # named once, not per line
                out.add(not_text(raw[:4]))
                for raw in fh:
                    h.update(raw)
                    size += len(raw)
                break
            text, problem = decode_utf8(raw)
            if text is None:
                out.add(f"line {lineno}: {problem}")
                continue
            if not text.strip():
                out.add(f"line {lineno}: blank line")
                continue
            ended = text.endswith("\n")  # LF-terminated lines, as every JSONL reader asks
            cr = cr_problem(text[:-1] if ended else text, ended)
            if cr is not None:
                out.add(f"line {lineno}: {cr}")
                if not cr.startswith("CRLF"):
                    continue
            try:
                doc = strict_loads(text, record=True)
            except ValueError as e:
                msg = json_syntax_words(e, text) if isinstance(e, json.JSONDecodeError) else str(e)
                out.add(f"line {lineno}: not valid JSON: {msg}")
                continue
            n = lineno
            _scan_keys(fc, out, doc, lambda _p, n=n: n)
    _check_unchanged(fd, before, size)
    if lineno == 0:
        out.add("empty; a JSON-lines file needs at least one line")
    return h.hexdigest(), size


def bind_file(
    fc: FreezeConfig, root_fd: int, root_real: str, role: Role, path: str
) -> tuple[Bound | None, list[str]]:
    """Check, open, hash (and for metadata, parse and scan) one bound file."""
    out = _Problems(f"{role.id} {path}", fc.error_cap)
    problem = path_syntax_problem(path)
    if problem:
        out.add(problem)
        return None, out.list()
    if not any(path.endswith(e) and len(path) > len(e) for e in role.extensions):
        out.add(f"wrong file type for role {role.id} (expected {' or '.join(role.extensions)})")
        return None, out.list()
    fd, problem = open_beneath(root_fd, root_real, path)
    if fd is None:
        out.add(problem or "cannot be opened")
        return None, out.list()
    try:
        doc = None
        if role.kind == "source":
            sha, size = sha256_fd(fd)
        elif next(fc.formats[e] for e in role.extensions if path.endswith(e)) == "json":
            sha, size, doc = _read_json_fd(fc, fd, out, role.id == fc.plan_role)
        else:
            sha, size = _read_jsonl_fd(fc, fd, out)
    except ChangedWhileRead as e:
        out.add(str(e))
        return None, out.list()
    except OSError as e:
        out.add(f"cannot be read: {e.strerror or e}")
        return None, out.list()
    finally:
        os.close(fd)
    return Bound(role.id, path, size, sha, doc), out.list()


# --------------------------------------------------------------------------------------------
# rules over the input and the bound files


def _get(obj: Any, path: Sequence[str]) -> Any:
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


def _canon(value: Any) -> bytes | None:
    try:
        return canonical_json(value)
    except (ValueError, TypeError):
        return None


def _shown(value: Any, most: int = 120) -> str:
    """A value of a JSON document as JSON (``true``, ``null``, ``"text"``), cut to ``most``
    characters: a message quotes the file's words, not Python's."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= most else text[: most - 1] + "…"


def frozen_differences(found: Mapping[str, Any], frozen: Mapping[str, Any]) -> list[str]:
    """One message per frozen key that differs (compared as canonical JSON), sorted by key."""
    out = []
    for k in sorted(set(found) | set(frozen)):
        if k not in found:
            out.append(
                f"frozen.{k} is missing (the spec's current amendment has {_shown(frozen[k])})"
            )
        elif k not in frozen:
            out.append(f"frozen.{k} is not a frozen constant of the spec's current amendment")
        else:
            a, b = _canon(found[k]), _canon(frozen[k])
            if a is None or a != b:
                out.append(
                    f"frozen.{k} differs from the spec's current amendment: "
                    f"{_shown(found[k])} here, {_shown(frozen[k])} in the spec"
                )
    return out


def rule_problems(
    fc: FreezeConfig,
    data: Mapping[str, Any],
    artifacts: Sequence[tuple[str, Any]],
    label: str,
) -> list[str]:
    """Roles, target rules, models and execution boundary of a contract-valid input.

    ``artifacts`` lists ``(json path, role)`` for each bound entry; ``label`` prefixes messages.
    """
    problems: list[str] = []
    seen: dict[str, list[str]] = {}
    for where, role in artifacts:
        if role not in fc.role_by_id:
            known = ", ".join(r.id for r in fc.roles)
            problems.append(f"{label}: {where}: unknown role {role!r} (known roles: {known})")
        else:
            seen.setdefault(role, []).append(where)
    for r in fc.roles:
        at = seen.get(r.id, [])
        if r.required and not at:
            problems.append(f"{label}: required role {r.id} is missing")
        if len(at) > 1:
            problems.append(
                f"{label}: role {r.id} appears {len(at)} times ({', '.join(at)}); "
                "each role binds exactly one file"
            )
    target_id = data.get(fc.f_target)
    target = fc.targets.get(target_id)
    if target is None:
        problems.append(f"{label}: {json_path([fc.f_target])}: unknown freeze target {target_id!r}")
    else:
        problems += [
            f"{label}: freeze target {target.id} requires role {r}, which is not bound"
            for r in target.required_roles
            if r not in seen
        ]
        models = [m if isinstance(m, dict) else {} for m in data.get(fc.f_models) or []]
        if target.refuse_benchmark_specific_finetune:
            problems += [
                f"{label}: {json_path([fc.f_models, i])}: model {m.get(fc.f_model_id)!r} is "
                f"benchmark-specifically fine-tuned ({fc.f_finetune} true) and is refused from "
                f"the {target.id} freeze"
                for i, m in enumerate(models)
                if m.get(fc.f_finetune) is True
            ]
        lineages = sorted(
            {
                m[fc.f_lineage]
                for m in models
                if m.get(fc.f_finetune) is False and isinstance(m.get(fc.f_lineage), str)
            }
        )
        if len(lineages) < target.min_distinct_base_lineages:
            problems.append(
                f"{label}: freeze target {target.id} needs at least "
                f"{target.min_distinct_base_lineages} distinct {fc.f_lineage} values among models "
                f"not benchmark-specifically fine-tuned; found {len(lineages)}"
                + (f" ({', '.join(map(repr, lineages))})" if lineages else "")
            )
    if _get(data, fc.f_executes) is True and _get(data, fc.f_sandbox) is not True:
        problems.append(
            f"{label}: {json_path(fc.f_executes)} is true while {json_path(fc.f_sandbox)} is "
            "false; untrusted code may only run under a required sandbox"
        )
    return problems


def plan_problems(fc: FreezeConfig, plan: Any, where: str, calibration: Bound | None) -> list[str]:
    """Every reason a parsed power plan cannot authorize the freeze."""
    if not isinstance(plan, dict):
        return [f"{where}: a power plan is a JSON object"]
    shape = contract_problems(plan, _PLAN_CONTRACT)
    if shape:
        return [f"{where}: not a power plan: {p}" for p in shape]
    problems = []
    if plan["schemaVersion"] != fc.plan_schema:
        problems.append(
            f"{where}: schemaVersion {_shown(plan['schemaVersion'])} is not {_shown(fc.plan_schema)}; not a power plan of "
            "this study"
        )
    if plan["canonical"] is not True:
        problems.append(
            f"{where}: canonical is false; a development plan cannot authorize a freeze"
        )
    body = {k: v for k, v in plan.items() if k != "selfSha256"}
    computed = _canon(body)
    if computed is None or hashlib.sha256(computed).hexdigest() != plan["selfSha256"]:
        shown = hashlib.sha256(computed).hexdigest() if computed is not None else "(not computable)"
        problems.append(
            f"{where}: selfSha256 does not verify (recorded {plan['selfSha256']}, computed {shown})"
        )
    problems += [f"{where}: {d}" for d in frozen_differences(plan["frozen"], fc.frozen)]
    if plan["status"] not in fc.accepted_statuses:
        problems.append(
            f"{where}: status {_shown(plan['status'])} cannot authorize a freeze "
            f"(accepted: {', '.join(fc.accepted_statuses)})"
        )
    if calibration is not None:
        want = plan["calibration"]["calibrationSha256"]
        if calibration.sha256 != want:
            problems.append(
                f"{fc.calibration_role} {calibration.path}: SHA-256 {calibration.sha256} differs "
                f"from the power plan's calibrationSha256 {want}"
            )
    return problems


# --------------------------------------------------------------------------------------------
# build


def _read_json_input(path: str | Path, what: str) -> Any:
    try:
        raw = read_regular(path)
    except OSError as e:
        raise UserError(f"{path}: cannot read the {what} ({e.strerror})") from None
    text, problem = decode_utf8(raw)
    if text is None:
        raise UserError(f"{path}: the {what}: {problem}")
    try:
        return strict_loads(text)
    except ValueError as e:
        raise UserError(f"{path}: the {what}: {_parse_error(e)}") from None


def _input_problems(fc: FreezeConfig, data: Any, label: str) -> list[str]:
    if not isinstance(data, dict):
        return [f"{label}: $: a freeze input is a JSON object"]
    sid = data.get(fc.schema_field)
    if sid != fc.input_schema:
        return [
            f"{label}: {json_path([fc.schema_field])}: {sid!r} is not {fc.input_schema!r}; "
            "not a freeze input"
        ]
    found = set(contract_problems(data, fc.contract))
    found.update(contract_problems(data, fc.engine_contract))
    problems = [f"{label}: {p}" for p in sorted(found)]
    if not problems and _canon(data) is None:
        problems.append(f"{label}: $: holds a value canonical JSON cannot represent")
    return problems


def build_manifest(
    input_path: str | Path,
    root: str | Path,
    config: Mapping[str, Any] | FreezeConfig,
    spec_digest: str,
    version: str,
) -> dict[str, Any]:
    """Check a freeze input and every file it binds beneath ``root``; return the manifest.

    Raises :class:`UserError` (exit 2) listing every problem found; nothing is written here.
    """
    fc = freeze_config(config)
    label = str(input_path)
    data = _read_json_input(input_path, "freeze input")
    problems = _input_problems(fc, data, label)
    if problems:
        raise UserError(
            f"{label}: freeze input refused ({len(problems)} problem(s))", problems=problems
        )
    entries = data[fc.f_artifacts]
    wheres = [json_path([fc.f_artifacts, i]) for i in range(len(entries))]
    problems = rule_problems(
        fc,
        data,
        [(w + "." + fc.f_role, e[fc.f_role]) for w, e in zip(wheres, entries, strict=True)],
        label,
    )
    root_fd, root_real = open_root(root)
    bound: dict[str, Bound] = {}
    try:
        for e in entries:
            role = fc.role_by_id.get(e[fc.f_role])
            if role is None:
                continue
            b, file_problems = bind_file(fc, root_fd, root_real, role, e[fc.f_path])
            problems += file_problems
            if b is not None and role.id not in bound:
                bound[role.id] = b
    finally:
        os.close(root_fd)
    plan = bound.get(fc.plan_role)
    if plan is not None and plan.document is not None:
        problems += plan_problems(
            fc, plan.document, f"{fc.plan_role} {plan.path}", bound.get(fc.calibration_role)
        )
    if problems:
        raise UserError(f"{label}: freeze refused ({len(problems)} problem(s))", problems=problems)
    doc = plan.document
    manifest: dict[str, Any] = {
        "schemaVersion": fc.manifest_schema,
        "specDigest": spec_digest,
        "amendmentVersion": version,
        "input": {k: v for k, v in data.items() if k != fc.f_artifacts},
        "artifacts": [bound[r.id].record() for r in fc.roles if r.id in bound],
        "powerPlan": {
            k: (doc["calibration"]["calibrationSha256"] if k == "calibrationSha256" else doc[k])
            for k in _PLAN_SUMMARY
        },
        "frozen": fc.frozen,
        "claims": fc.claims(),
        "sandboxIssue": fc.sandbox_issue(),
    }
    manifest["selfSha256"] = digest_hex(manifest)
    return manifest


# --------------------------------------------------------------------------------------------
# validate


def manifest_contract(fc: FreezeConfig) -> dict[str, Any]:
    """The JSON Schema of a manifest written under ``fc``."""
    sha = {"type": "string", "pattern": HEX64}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "schemaVersion",
            "specDigest",
            "amendmentVersion",
            "input",
            "artifacts",
            "powerPlan",
            "frozen",
            "claims",
            "sandboxIssue",
            "selfSha256",
        ],
        "properties": {
            "schemaVersion": {"const": fc.manifest_schema},
            "specDigest": {"type": "string", "minLength": 1},
            "amendmentVersion": {"type": "string"},
            "input": {"type": "object"},
            "artifacts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["role", "path", "bytes", "sha256"],
                    "properties": {
                        "role": {"type": "string"},
                        "path": {"type": "string", "minLength": 1},
                        "bytes": {"type": "integer", "minimum": 0},
                        "sha256": sha,
                    },
                },
            },
            "powerPlan": {
                "type": "object",
                "additionalProperties": False,
                "required": list(_PLAN_SUMMARY),
                "properties": {
                    "status": {"enum": list(fc.accepted_statuses)},
                    "selectedTaskCount": {"type": ["integer", "null"]},
                    "selfSha256": sha,
                    "calibrationSha256": sha,
                    "specDigest": {},
                    "amendmentVersion": {},
                },
            },
            "frozen": {"type": "object"},
            "claims": {"const": fc.claims()},
            "sandboxIssue": {"const": fc.sandbox_issue()},
            "selfSha256": sha,
        },
    }


def read_manifest(manifest_path: str | Path) -> Any:
    """The parsed manifest; UserError (exit 2) when it cannot be read or parsed."""
    return _read_json_input(manifest_path, "manifest")


def check_manifest(
    manifest: Any,
    manifest_path: str | Path,
    root: str | Path | None,
    config: Mapping[str, Any] | FreezeConfig,
) -> list[str]:
    """Every problem of a parsed manifest (see :func:`validate_manifest`)."""
    fc = freeze_config(config)
    label = str(manifest_path)
    shape = contract_problems(manifest, manifest_contract(fc))
    if shape:
        return [f"{label}: {p}" for p in shape]
    problems: list[str] = []
    body = {k: v for k, v in manifest.items() if k != "selfSha256"}
    computed = _canon(body)
    if computed is None or hashlib.sha256(computed).hexdigest() != manifest["selfSha256"]:
        problems.append(f"{label}: selfSha256 does not verify; the manifest was changed")
    problems += [f"{label}: {d}" for d in frozen_differences(manifest["frozen"], fc.frozen)]
    arts = manifest["artifacts"]
    inp = manifest["input"]
    if fc.f_artifacts in inp:
        problems.append(f"{label}: $.input.{fc.f_artifacts}: bound files belong under $.artifacts")
        return problems
    rebuilt = dict(inp)
    rebuilt[fc.f_artifacts] = [{fc.f_role: a["role"], fc.f_path: a["path"]} for a in arts]
    inp_problems = _input_problems(fc, rebuilt, label)
    problems += [p.replace(": $", ": $.input", 1) for p in inp_problems]
    if inp_problems:
        return problems
    wheres = [json_path(["artifacts", i]) for i in range(len(arts))]
    problems += rule_problems(
        fc, rebuilt, [(w + ".role", a["role"]) for w, a in zip(wheres, arts, strict=True)], label
    )
    for w, a in zip(wheres, arts, strict=True):
        role = fc.role_by_id.get(a["role"])
        if role is None:
            continue
        sp = path_syntax_problem(a["path"])
        if sp:
            problems.append(f"{label}: {w}.path: {sp}")
        elif not any(a["path"].endswith(e) for e in role.extensions):
            problems.append(f"{label}: {w}.path: wrong file type for role {role.id}")
    cal = [a for a in arts if a["role"] == fc.calibration_role]
    if cal and cal[0]["sha256"] != manifest["powerPlan"]["calibrationSha256"]:
        problems.append(
            f"{label}: the bound {fc.calibration_role} SHA-256 differs from "
            "$.powerPlan.calibrationSha256"
        )
    if root is not None:
        problems += _rehash_problems(fc, arts, wheres, root, label)
    return problems


def _rehash_problems(
    fc: FreezeConfig, arts: list[dict[str, Any]], wheres: list[str], root: str | Path, label: str
) -> list[str]:
    problems = []
    root_fd, root_real = open_root(root)
    try:
        for w, a in zip(wheres, arts, strict=True):
            name = f"{a['role']} {a['path']}"
            if path_syntax_problem(a["path"]):
                continue  # already reported
            fd, problem = open_beneath(root_fd, root_real, a["path"])
            if fd is None:
                problems.append(f"{label}: {w}: {name}: {problem}")
                continue
            try:
                sha, size = sha256_fd(fd)
            except OSError as e:
                problems.append(f"{label}: {w}: {name}: {e.strerror or e}")
                continue
            finally:
                os.close(fd)
            if sha != a["sha256"]:
                problems.append(
                    f"{label}: {w}: {name}: SHA-256 differs: manifest {a['sha256']}, file now {sha}"
                )
            if size != a["bytes"]:
                problems.append(
                    f"{label}: {w}: {name}: size differs: manifest {a['bytes']} bytes, "
                    f"file now {size} bytes"
                )
    finally:
        os.close(root_fd)
    return problems


def validate_manifest(
    manifest_path: str | Path, root: str | Path | None, config: Mapping[str, Any] | FreezeConfig
) -> list[str]:
    """Re-check a manifest: its schema, self digest, frozen constants and rules, and with
    ``root`` the bytes of every bound file.  Returns the problems (empty: everything holds);
    raises :class:`UserError` (exit 2) when the manifest or the root cannot be read.
    """
    return check_manifest(read_manifest(manifest_path), manifest_path, root, config)
