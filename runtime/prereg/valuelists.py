"""Value lists of the project: a field condition's ``values`` read from a text file.

A condition ``{field: task_id, op: not_in, values_file: disputed.txt}`` names a file of the
project holding the values, one per line (each line stripped of surrounding blanks; a blank
line, or one whose first character other than a blank is ``#``, is left out).  The file is
read when the spec is digested (:func:`pin`): the condition gets ``values`` (the lines, as
text) and ``values_sha256`` (the file's hex SHA-256) written in, so the spec digest, the
generated code and a seal cover the values, and a changed file is a changed registration
(``score`` refuses until ``prereg compile``, as for a statistic's file).  The file is looked
for beside the spec, then from the project's folder; an absolute path, ``..`` or a path leading
out of the project is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

KEY = "values_file"


#: top-level sections that hold free values (an engine's constants, prose), never conditions
FREE = ("constants", "registration", "amendments")


def conditions(node: Any, ptr: str = "") -> Iterator[tuple[str, dict]]:
    """(JSON pointer, condition) of every condition naming a value list."""
    if isinstance(node, dict):
        if KEY in node and "field" in node:
            yield ptr, node
        for k, v in node.items():
            if not (ptr == "" and k in FREE):
                yield from conditions(v, f"{ptr}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from conditions(v, f"{ptr}/{i}")


def used(data: Any) -> bool:
    """Whether the spec's data names a value list anywhere."""
    return next(conditions(data), None) is not None


def path_problem(file: Any) -> str | None:
    """Why a value list's file is refused as written, or None."""
    from prereg.files import spec_path_problem

    if not isinstance(file, str) or not file.strip():
        return "must be a file name"
    return spec_path_problem(
        file, "the spec's folder or to the project's", "beside the spec or inside the project"
    )


def locate(root: Path, spec_dir: Path, file: str) -> Path | None:
    """The list's file, beside the spec, else from the project's folder; None when neither
    holds it inside the project."""
    from prereg.files import find_in_project

    return find_in_project(root, (spec_dir, root), file)


def read_values(path: Path) -> list[str]:
    """The values of a list file (UTF-8 text, one per line); ValueError naming the line."""
    return values_of(path.read_bytes())


def values_of(raw: bytes) -> list[str]:
    """The values of a list file's bytes; ValueError naming the line."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ValueError(
            "line 1: starts with a byte-order mark (U+FEFF); save it as UTF-8 without BOM"
        )
    from prereg.records import not_utf8

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ValueError(f"line {line}: {not_utf8(raw, exc.start)}") from None
    out = []
    # lines end with LF (or CRLF): str.splitlines also cut a value at a form feed, U+0085 or
    # U+2028, and a control character is refused, as YAML refuses one in the spec
    for no, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        bad = _CONTROL.search(line)
        if bad is not None:
            ch = bad.group()
            what = "a NUL byte (U+0000)" if ch == "\0" else f"character U+{ord(ch):04X}"
            raise ValueError(
                f"line {no}: {what} at column {bad.start() + 1}: a value list is text, one value"
                " per line (lines end with LF), without control characters or other line breaks"
            )
        value = line.strip()
        if value and not value.startswith("#"):
            out.append(value)
    return out


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def pinned_from(data: Any, read: Callable[[str], bytes | None]) -> Any:
    """``data`` with each value list read by ``read`` (the file's bytes as a revision holds
    them, None when it has none): what :func:`pin` writes, for ``prereg diff --against``."""
    import copy

    from prereg.digest import sha256_hex

    if not used(data):
        return data
    data = copy.deepcopy(data)
    for _, cond in conditions(data):
        if cond.pop("values_sha256", None) is not None:
            cond.pop("values", None)
        raw = read(str(cond.get(KEY))) if path_problem(cond.get(KEY)) is None else None
        try:
            cond["values"] = values_of(raw) if raw is not None else []
        except ValueError:
            cond["values"] = []
        cond["values_sha256"] = sha256_hex(raw) if raw is not None else None
    return data


def pin(data: Any, root: Path, spec_dir: Path) -> tuple[Any, list[tuple[str, str]]]:
    """``data`` with each value list read into its condition (``values``, ``values_sha256``),
    and the problems found as (JSON pointer, message); ``data`` itself when it names none."""
    import copy

    from prereg.digest import file_sha256

    if not used(data):
        return data, []
    data = copy.deepcopy(data)
    problems: list[tuple[str, str]] = []
    for ptr, cond in conditions(data):
        file = cond.get(KEY)
        if cond.pop("values_sha256", None) is not None:
            cond.pop("values", None)  # pinned before (the schema has no values_sha256): read again
        if cond.get("op") not in ("in", "not_in"):
            problems.append(
                (f"{ptr}/{KEY}", f"a value list is read by op in or not_in, not {cond.get('op')!r}")
            )
            continue
        if "values" in cond:
            problems.append((f"{ptr}/values", f"give the values or a {KEY}, not both"))
            continue
        why = path_problem(file)
        found = None if why else locate(root, spec_dir, file)
        if why is None and found is None:
            why = "is neither beside the spec nor in the project (relative to its folder)"
        if why is not None:
            problems.append((f"{ptr}/{KEY}", f"value list {file!r} {why}"))
            cond["values"] = []
            continue
        try:
            cond["values"] = read_values(found)
        except ValueError as exc:
            problems.append((f"{ptr}/{KEY}", f"value list {file!r}: {exc}"))
            cond["values"] = []
            continue
        cond["values_sha256"] = file_sha256(found)[0]
    return data, problems
