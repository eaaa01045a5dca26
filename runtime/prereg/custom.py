"""A statistic of the study's own: a function of a Python file of the project, pinned by digest.

A spec's ``statistics`` registers functions that analyses name as their method beside the
catalogue's (:mod:`prereg.stats.catalogue`).  This module holds what both the compiler and the
runtime need of them:

- :func:`locate`: the file of a statistic, beside the spec or under the project's
  ``statistics/`` folder, refusing absolute paths, ``..`` and anything outside the project;
- :func:`pinned`: the spec's data with each statistic's file SHA-256 written in (``sha256``),
  which is what the spec digest, the generated code and the seal are computed from, so that a
  changed file is a changed registration;
- :func:`signature_problems`: the function's signature read from the file's syntax tree (the
  file is never imported nor run at compile time);
- :func:`call`: at score time, the file imported by path after its digest is checked against
  the compiled one, the function called, and what it returns validated into a
  :class:`~prereg.stats.result.Result`.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import numbers
import sys
import traceback
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path, PurePosixPath
from typing import Any

from prereg.errors import UserError

#: The folder of the project a statistic's file may live in (beside the spec's folder).
FOLDER = "statistics"

#: The positional parameters of each input shape, in order (the catalogue's SHAPES text).
POSITIONAL: Mapping[str, tuple[str, ...]] = {
    "binomial": ("k", "n"),
    "two-binomial": ("k1", "n1", "k2", "n2"),
    "paired-binary": ("n11", "n10", "n01", "n00"),
    "binomial-groups": ("k", "n"),
    "strata-2x2": ("k1", "n1", "k2", "n2"),
    "binary-blocks": ("x",),
    "sample": ("x",),
    "two-samples": ("x", "y"),
    "paired-samples": ("x", "y"),
    "samples-groups": ("groups",),
    "sample-blocks": ("x",),
    "two-raters": ("a", "b"),
    "ratings": ("x",),
    "clustered-sample": ("x", "cluster", "group"),
    "samples-per-problem": ("n", "c"),
    "paired-samples-per-problem": ("n_a", "c_a", "n_b", "c_b"),
    "answers-per-problem": ("answers", "gold"),
    "labels": ("y_true", "y_pred"),
    "probabilities": ("y", "q"),
    "paired-probabilities": ("y_a", "q_a", "y_b", "q_b"),
    "p-values": ("p",),
}

_FIGURES = ("estimate", "se", "statistic", "lower", "upper", "p")
_KEYS = (
    *_FIGURES, "statistic_name", "statistic_count", "df", "exact", "counts", "extra", "method"
)  # fmt: skip


def path_problem(file: str) -> str | None:
    """Why a statistic's ``file`` is refused as written, or None."""
    from prereg.files import spec_path_problem

    text = str(file)
    problem = spec_path_problem(
        text, f"the spec's folder or to {FOLDER}/", f"beside the spec or under {FOLDER}/"
    )
    if problem is None and PurePosixPath(text).suffix != ".py":
        return "is not a Python file (.py)"
    return problem


def locate(root: Path, spec_dir: Path, file: str) -> Path | None:
    """The statistic's file: beside the spec, else under the project's statistics/ folder;
    None when neither holds it inside the project (or the path is refused)."""
    from prereg.files import find_in_project

    if path_problem(file) is not None:
        return None
    return find_in_project(root, (spec_dir, Path(root) / FOLDER), file)


def file_digest(path: Path) -> str:
    from prereg.digest import file_sha256

    return file_sha256(path)[0]


def pinned(data: Any, root: Path, spec_dir: Path) -> Any:
    """``data`` with each statistic's ``sha256`` (its file's hex SHA-256; None when the file is
    missing, which the compiler reports) and ``path`` (the file relative to the project);
    ``data`` itself when it registers no statistics."""
    from prereg import valuelists

    if isinstance(data, dict) and valuelists.used(data):
        # a condition's value list is registered content too (prereg.valuelists)
        data, _ = valuelists.pin(data, root, spec_dir)
    if not isinstance(data, dict) or not isinstance(data.get("statistics"), list):
        return data
    out = []
    for s in data["statistics"]:
        if not isinstance(s, dict):
            out.append(s)
            continue
        s = {k: v for k, v in s.items() if k not in ("sha256", "path")}
        found = locate(root, spec_dir, str(s.get("file")))
        s["path"] = found.relative_to(Path(root).resolve()).as_posix() if found else None
        s["sha256"] = file_digest(found) if found else None
        out.append(s)
    return {**data, "statistics": out}


def needs_pinning(data: Any) -> bool:
    """Whether :func:`pinned` writes anything into ``data``: statistics or value lists."""
    from prereg import valuelists

    return isinstance(data, dict) and (bool(data.get("statistics")) or valuelists.used(data))


def by_id(data: Mapping) -> dict[str, dict]:
    """The spec's statistics by id."""
    return {str(s.get("id")): s for s in data.get("statistics") or [] if isinstance(s, Mapping)}


def signature_problems(path: Path, function: str, shape: str, options: list[str]) -> list[str]:
    """What is wrong with ``function`` of ``path`` as a statistic of ``shape`` taking
    ``options``, read from the file's syntax tree (nothing is imported or run)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        return [f"the file does not parse (line {exc.lineno}: {exc.msg})"]
    except (OSError, ValueError) as exc:
        return [f"the file cannot be read ({exc})"]
    found = [
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == function
    ]
    if not found:
        return [f"the file defines no top-level function {function!r}"]
    fn = found[-1]
    if isinstance(fn, ast.AsyncFunctionDef):
        return [f"{function} (line {fn.lineno}) is async; a statistic is a plain function"]
    a = fn.args
    where = f"{function} (line {fn.lineno})"
    problems = []
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    want = POSITIONAL.get(shape, ())
    if len(positional) != len(want) or a.vararg is not None:
        problems.append(
            f"{where} takes {len(positional)} positional parameter(s)"
            f"{' and *' + a.vararg.arg if a.vararg else ''}; shape {shape} passes"
            f" {len(want)} ({', '.join(want)})"
        )
    if a.defaults:
        problems.append(f"{where}: a positional parameter has a default; none may")
    if a.kwarg is not None:
        problems.append(f"{where} takes **{a.kwarg.arg}; its options are named keyword-only")
    kwonly = [p.arg for p in a.kwonlyargs]
    missing = [o for o in options if o not in kwonly]
    extra = [o for o in kwonly if o not in options]
    if missing:
        problems.append(
            f"{where} has no keyword-only parameter {', '.join(missing)} (declared options"
            " are keyword-only parameters, after *)"
        )
    if extra:
        problems.append(
            f"{where} takes keyword-only {', '.join(extra)}, which the statistic does not"
            " declare among its options"
        )
    defaulted = [p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
    if defaulted:
        problems.append(
            f"{where}: option {', '.join(defaulted)} has a default; every option is registered"
        )
    return problems


# -- score time ---------------------------------------------------------------------------


def _where(exc: BaseException, path: Path) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return f":{frames[-1].lineno}" if frames else ""


def load_function(root: Path, stat: Mapping, label: str):
    """The function of a compiled statistic (``stat``: id, path, function, sha256), its file's
    digest checked against the compiled one first."""
    rel = stat.get("path")
    path = (Path(root) / str(rel)).resolve() if rel else None
    if path is None or not path.is_file():
        raise UserError(f"{label}: the file {rel} of statistic {stat['id']!r} is missing")
    got = file_digest(path)
    if got != stat["sha256"]:
        raise UserError(
            f"{label}: the file {rel} of statistic {stat['id']!r} changed since the last compile"
            f" (file sha256:{got}, compiled sha256:{stat['sha256']}): run prereg compile"
        )
    name = f"prereg_statistics._{stat['id'].replace('-', '_')}_{got[:16]}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            raise UserError(
                f"{label}: importing {rel}{_where(exc, path)} failed: {type(exc).__name__}: {exc}"
            ) from None
        sys.modules[name] = module
    fn = getattr(module, str(stat["function"]), None)
    if not callable(fn):
        raise UserError(f"{label}: {rel} has no function {stat['function']!r}")
    return fn, path


def _number(value, key: str, fail):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        fail(f"{key} is {type(value).__name__} {value!r}, not a number or None")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    return float(value)


def as_result(value, method: str, fail):
    """A :class:`Result` of what a statistic returned (a Result or a mapping of its keys);
    ``fail(message)`` raises on anything else.  A Fraction (or an integer) figure is exact: its
    float is the figure and the fraction is what the certified comparison decides with."""
    from dataclasses import asdict, replace

    from prereg.stats.result import Result

    if isinstance(value, Result):
        value = {k: v for k, v in asdict(value).items()}
        value["exact"] = dict(value.get("exact") or {})
    if not isinstance(value, Mapping):
        fail(
            f"returned {type(value).__name__}, not a Result nor a mapping of its keys"
            f" ({', '.join(_KEYS[:-1])})"
        )
    unknown = [str(k) for k in value if k not in _KEYS]
    if unknown:
        fail(f"returned key {unknown[0]!r}, which is not a Result key ({', '.join(_KEYS[:-1])})")
    exact_in = value.get("exact") or {}
    if not isinstance(exact_in, Mapping):
        fail("exact is not a mapping of figure names to fractions")
    exact: dict[str, Fraction] = {}
    for k, v in exact_in.items():
        if k not in _FIGURES:
            fail(f"exact names {k!r}, which is not a figure ({', '.join(_FIGURES)})")
        if isinstance(v, bool) or not isinstance(v, numbers.Rational):
            fail(f"exact {k} is {v!r}, not a fraction or an integer")
        exact[k] = Fraction(v)
    figures: dict[str, float | None] = {}
    for k in _FIGURES:
        v = value.get(k)
        if v is None:
            figures[k] = float(exact[k]) if k in exact else None
            continue
        v = _number(v, k, fail)
        if isinstance(v, Fraction):
            if k in exact and exact[k] != v:
                fail(f"{k} is {v} and exact {k} is {exact[k]}")
            exact[k] = v
            figures[k] = float(v)
        else:
            if k in exact and not math.isclose(v, float(exact[k]), rel_tol=1e-12, abs_tol=0):
                fail(f"{k} is {v!r} and exact {k} is {exact[k]} ({float(exact[k])!r})")
            figures[k] = v
    p, se = figures["p"], figures["se"]
    if p is not None and not (0.0 <= p <= 1.0):
        fail(f"p is {p!r}, outside [0, 1]")
    if se is not None and not (se >= 0.0):
        fail(f"se is {se!r}, negative")
    lo, hi = figures["lower"], figures["upper"]
    if lo is not None and hi is not None and lo > hi:
        fail(f"lower {lo!r} is above upper {hi!r}")
    df = value.get("df")
    if df is not None:
        if isinstance(df, tuple | list):
            if len(df) != 2:
                fail("df is a number or a pair of numbers")
            df = tuple(float(_number(d, "df", fail)) for d in df)
        else:
            df = float(_number(df, "df", fail))
    name = value.get("statistic_name")
    if name is not None and not isinstance(name, str):
        fail(f"statistic_name is {name!r}, not a string")
    count = value.get("statistic_count", False)
    if not isinstance(count, bool):
        fail(f"statistic_count is {count!r}, not true or false")
    stat = figures["statistic"]
    if count and stat is not None and not (math.isfinite(stat) and stat.is_integer()):
        fail(f"statistic_count is true (a count) but statistic {stat!r} is not a whole number")
    for k in ("counts", "extra"):
        if value.get(k) is not None and not isinstance(value[k], Mapping):
            fail(f"{k} is not a mapping")
    result = Result(
        method,
        statistic_name=name,
        statistic_count=count,
        df=df,
        exact=exact,
        counts=dict(value.get("counts") or {}),
        extra=dict(value.get("extra") or {}),
        **figures,
    )
    return replace(result, method=method)


def call(fn, path: Path, rel: str, args: tuple, options: Mapping, method: str, fail):
    """The validated Result of ``fn(*args, **options)``; the user's exception, with the line
    of their file where it was raised, is refused through ``fail``."""
    try:
        value = fn(*args, **dict(options))
    except (Exception, SystemExit) as exc:
        fail(f"raised {type(exc).__name__}: {exc} ({rel}{_where(exc, path)})")
    return as_result(value, method, fail)
