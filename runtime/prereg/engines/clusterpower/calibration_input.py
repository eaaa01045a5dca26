"""Reading the calibration input: JSONL task/class statistics, refused in full when malformed.

Framing: UTF-8 without BOM, one JSON object per LF-terminated line (the final LF optional).
Every object has exactly the fields of the study's calibration record contract (roles
``stage``, ``repository``, ``task``, ``class``, ``statistic``; their JSON names are the
contract's).  Every problem of the file is collected (line number and field, ``-`` for a
line-level problem) and reported together, up to constant ``power_plan``'s ``error_cap``,
then ``… and K more``; a refused file raises :class:`prereg.errors.UserError` with exit code
2 naming the file.

Refused: a byte-order mark; bytes that are not UTF-8; a blank line; a CRLF line ending; a line
that is not a JSON object; a duplicate key inside an object; a missing or extra field; a stage
other than the calibration stage (confirmatory rows are named as such); ids that are not
non-empty strings (compared exactly); a class label outside the contract's two labels; a
statistic that is not a finite number (booleans are not numbers, the literals NaN/Infinity
and overflowing values are refused); a second record for the same (repository, task, class); a
task under two repositories; an empty file.

The accepted records become repository *profiles*: repositories sorted by id, tasks sorted by
id inside each (code-point order), each task carrying up to two statistics (pass, fail).  The
result does not depend on line order.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from prereg.digest import sha256_hex
from prereg.engines.clusterpower.config import InputSpec
from prereg.errors import UserError
from prereg.files import read_regular
from prereg.records import BOM_WORDS, cr_problem, json_syntax_words, not_text

BOM = b"\xef\xbb\xbf"
_JSON_WS = " \t\r"
_MAX_INT_DIGITS = 400  # any integer literal this long overflows a float


@dataclass(frozen=True)
class Calibration:
    """Accepted calibration records, as repository profiles of tasks (raw, uncentred)."""

    path: str
    size: int
    sha256: str
    repositories: tuple[str, ...]
    profile_start: np.ndarray  # int64 (C,): index of each repository's first task
    profile_size: np.ndarray  # int64 (C,): its number of tasks
    task_ids: tuple[str, ...]  # repository-major, sorted inside each repository
    pass_value: np.ndarray  # float64 (T,), NaN where the task has no pass statistic
    fail_value: np.ndarray  # float64 (T,), NaN where the task has no fail statistic
    has_pass: np.ndarray  # bool (T,)
    has_fail: np.ndarray  # bool (T,)

    @property
    def records_pass(self) -> int:
        return int(self.has_pass.sum())

    @property
    def records_fail(self) -> int:
        return int(self.has_fail.sum())

    @property
    def tasks_with_both(self) -> int:
        return int((self.has_pass & self.has_fail).sum())

    def repositories_with(self, stratum: str) -> int:
        """Number of repositories holding at least one statistic of ``stratum`` ("pass"/"fail")."""
        has = self.has_pass if stratum == "pass" else self.has_fail
        if not len(self.repositories):
            return 0
        per_repo = np.add.reduceat(has.astype(np.int64), self.profile_start)
        return int((per_repo > 0).sum())


class _Obj(dict):
    """A JSON object that remembers the keys it saw more than once."""

    duplicates: list[str]


def _pairs_hook(pairs):
    obj = _Obj()
    dups: list[str] = []
    for k, v in pairs:
        if k in obj and k not in dups:
            dups.append(k)
        obj[k] = v
    obj.duplicates = dups
    return obj


class _NonFinite:
    def __init__(self, text: str):
        self.text = text


class _Overflow:
    def __init__(self, text: str):
        self.text = text


def _parse_float(text: str):
    v = float(text)
    return v if math.isfinite(v) else _Overflow(text)


def _parse_int(text: str):
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        return _Overflow(text)
    return int(text)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(v) -> str:
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, bool):
        return "a boolean"
    if v is None:
        return "null"
    return "a number"


class _Problems:
    def __init__(self, cap: int):
        self.cap = cap
        self.items: list[str] = []
        self.total = 0

    def add(self, line: int | str, field: str, message: str) -> None:
        self.total += 1
        if len(self.items) < self.cap:
            self.items.append(f"line {line}, field {field}: {message}")

    def listing(self) -> list[str]:
        extra = self.total - len(self.items)
        return self.items + ([f"… and {extra} more"] if extra else [])


def read_calibration(path: str | Path, spec: InputSpec) -> Calibration:
    """Read, check and index the calibration file at ``path``; raise UserError when refused."""
    path = Path(path)
    try:
        data = read_regular(path)
    except IsADirectoryError:
        raise UserError(f"{path}: calibration input is a folder, not a file") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read calibration input: {e.strerror or e}") from None
    return parse_calibration(data, str(path), spec)


def parse_calibration(data: bytes, name: str, spec: InputSpec) -> Calibration:
    """Check and index calibration bytes; ``name`` names the file in messages."""
    problems = _Problems(spec.error_cap)
    fnames = spec.fields
    f_stage, f_repo, f_task = fnames["stage"], fnames["repository"], fnames["task"]
    f_class, f_stat = fnames["class"], fnames["statistic"]
    expected = set(spec.field_names)
    labels = (spec.pass_label, spec.fail_label)

    body = data
    if body.startswith(BOM):
        problems.add(1, "-", f"the file {BOM_WORDS}")
        body = body[len(BOM) :]
    if not body:
        problems.add("-", "-", "empty file: no calibration records")
    why = not_text(body[:4])
    if why is not None:  # one problem of the file, not one per line
        problems.add("-", "-", why)
        body = b""
    lines = body.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the final LF is optional

    # (repository, task, class) -> first line; task -> (repository, first line)
    seen_key: dict[tuple[str, str, str], int] = {}
    task_repo: dict[str, tuple[str, int]] = {}
    values: dict[tuple[str, str, str], float] = {}

    for lineno, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.add(lineno, "-", f"not valid UTF-8 (byte {e.start + 1} of the line)")
            continue
        if not text.strip(_JSON_WS):
            problems.add(lineno, "-", "blank line (one JSON object per line required)")
            continue
        cr = cr_problem(text, lineno < len(lines) or body.endswith(b"\n"))
        if cr is not None:  # in the words of every reader of the project
            problems.add(lineno, "-", cr)
            if not cr.startswith("CRLF"):
                continue
            text = text[:-1]
        try:
            obj = json.loads(
                text,
                object_pairs_hook=_pairs_hook,
                parse_constant=_NonFinite,
                parse_float=_parse_float,
                parse_int=_parse_int,
            )
        except json.JSONDecodeError as e:
            problems.add(lineno, "-", f"not valid JSON ({json_syntax_words(e, text)})")
            continue
        except ValueError as e:  # e.g. an integer literal beyond Python's digit limit
            problems.add(lineno, "-", f"not valid JSON ({str(e)[:200]})")
            continue
        except RecursionError:
            problems.add(lineno, "-", "not valid JSON (nesting too deep to parse)")
            continue
        if not isinstance(obj, dict):
            problems.add(lineno, "-", f"not a JSON object (found {_kind(obj)})")
            continue
        for k in obj.duplicates:
            problems.add(lineno, k, "duplicate key inside the object")
        for k in spec.field_names:
            if k not in obj:
                problems.add(lineno, k, "missing field")
        for k in sorted(set(obj) - expected):
            problems.add(lineno, _short(k), "unexpected field")

        ok = True
        if f_stage in obj:
            stage = obj[f_stage]
            if stage == spec.confirmatory_stage:
                problems.add(
                    lineno,
                    f_stage,
                    f"{spec.confirmatory_stage} row refused: only "
                    f"{f_stage} {spec.calibration_stage!r} rows are accepted",
                )
                ok = False
            elif stage != spec.calibration_stage:
                shown = repr(_short(stage)) if isinstance(stage, str) else _kind(stage)
                problems.add(lineno, f_stage, f"must be {spec.calibration_stage!r} (found {shown})")
                ok = False
        ids: dict[str, str | None] = {}
        for f in (f_repo, f_task):
            v = obj.get(f)
            if f in obj and not (isinstance(v, str) and v != ""):
                problems.add(
                    lineno,
                    f,
                    "must be a non-empty string"
                    + (" (found an empty string)" if v == "" else f" (found {_kind(v)})"),
                )
            ids[f] = v if isinstance(v, str) and v != "" else None
        label = obj.get(f_class)
        if f_class in obj and not (isinstance(label, str) and label in labels):
            shown = repr(_short(label)) if isinstance(label, str) else _kind(label)
            problems.add(lineno, f_class, f"must be {labels[0]!r} or {labels[1]!r} (found {shown})")
            label = None
        elif f_class not in obj:
            label = None
        stat = obj.get(f_stat)
        value: float | None = None
        if f_stat in obj:
            if isinstance(stat, _NonFinite):
                problems.add(lineno, f_stat, f"not a finite number (the literal {stat.text})")
            elif isinstance(stat, _Overflow):
                problems.add(lineno, f_stat, f"not a finite number ({_short(stat.text)} overflows)")
            elif isinstance(stat, bool) or not isinstance(stat, (int, float)):
                problems.add(lineno, f_stat, f"must be a finite number (found {_kind(stat)})")
            elif isinstance(stat, int):
                try:
                    value = float(stat)
                except OverflowError:
                    problems.add(
                        lineno, f_stat, f"not a finite number ({_short(str(stat))} overflows)"
                    )
            else:
                value = stat

        repo, task = ids[f_repo], ids[f_task]
        # only calibration rows take part in the cross-record checks
        if ok and repo is not None and task is not None:
            prev = task_repo.get(task)
            if prev is None:
                task_repo[task] = (repo, lineno)
            elif prev[0] != repo:
                problems.add(
                    lineno,
                    f_task,
                    f"task {_short(task)!r} is under {f_repo} {_short(repo)!r} here but under "
                    f"{_short(prev[0])!r} at line {prev[1]} (a task belongs to one repository)",
                )
                ok = False
            if label is not None:
                key = (repo, task, label)
                first = seen_key.get(key)
                if first is not None:
                    problems.add(
                        lineno,
                        "-",
                        f"second record for ({f_repo} {_short(repo)!r}, {f_task} "
                        f"{_short(task)!r}, {f_class} {label!r}); first at line {first}",
                    )
                    ok = False
                else:
                    seen_key[key] = lineno
                if ok and value is not None:
                    values[key] = value

    if problems.total:
        n = problems.total
        raise UserError(
            f"{name}: calibration input refused ({n} problem{'s' if n != 1 else ''})",
            exit_code=2,
            problems=problems.listing(),
        )
    return _index(values, data, name, spec)


def _index(values: dict[tuple[str, str, str], float], data: bytes, name: str, spec: InputSpec):
    by_repo: dict[str, dict[str, list[float | None]]] = {}
    for (repo, task, label), v in values.items():
        slot = by_repo.setdefault(repo, {}).setdefault(task, [None, None])
        slot[0 if label == spec.pass_label else 1] = v
    repos = tuple(sorted(by_repo))
    starts, sizes, tasks, pv, fv = [], [], [], [], []
    for repo in repos:
        starts.append(len(tasks))
        names = sorted(by_repo[repo])
        sizes.append(len(names))
        for t in names:
            p, f = by_repo[repo][t]
            tasks.append(t)
            pv.append(math.nan if p is None else p)
            fv.append(math.nan if f is None else f)
    pass_value = np.array(pv, dtype=np.float64)
    fail_value = np.array(fv, dtype=np.float64)
    return Calibration(
        path=name,
        size=len(data),
        sha256=sha256_hex(data),
        repositories=repos,
        profile_start=np.array(starts, dtype=np.int64),
        profile_size=np.array(sizes, dtype=np.int64),
        task_ids=tuple(tasks),
        pass_value=pass_value,
        fail_value=fail_value,
        has_pass=~np.isnan(pass_value),
        has_fail=~np.isnan(fail_value),
    )
