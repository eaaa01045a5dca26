"""The engine stage of a compile: the spec's engine is registered, its constants are what the
engine's configuration schema says, and the engine's own checks hold.

Runs after the language schema and the semantic checks passed.  The constants are checked as
one object, ``{constant id: value}``, against the schema the engine ships
(:meth:`prereg.engines.base.Engine.config_schema`); each violation is reported where it is
written: ``file:line: at /constants/<index>/value/<path>: rule (engine <kind>, constant <id>)``.
Only when the schema holds do the engine's checks (:meth:`~prereg.engines.base.Engine.run_checks`)
run, reported the same way, and is each study figure (``figures:``) checked to be one the engine
declares it reports (:meth:`~prereg.engines.base.Engine.reported_figures`), unless it is marked
external.  Constants the schema's compiled predicate (:mod:`prereg.compiler.predicate`) accepts
hold without jsonschema being imported; any others are validated by jsonschema, which words
each problem.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from prereg.compiler import predicate
from prereg.compiler.commands import Merged, merge, with_commands
from prereg.compiler.load import Loaded
from prereg.compiler.validate import describe, pointer
from prereg.engines import registry
from prereg.engines.base import Engine, constants
from prereg.errors import UserError

_CONSTANT = re.compile(r"^/constants/([0-9]+)(/|$)")


@lru_cache(maxsize=1)
def _validator_class():
    import jsonschema

    base = jsonschema.Draft202012Validator
    # A JSON integer: 5.0 is a number, not an integer (the engines refuse it too).
    checker = base.TYPE_CHECKER.redefine(
        "integer", lambda _c, x: isinstance(x, int) and not isinstance(x, bool)
    )
    return jsonschema.validators.extend(base, type_checker=checker)


def _suffix(loaded: Loaded, kind: str, ptr: str) -> str:
    m = _CONSTANT.match(ptr)
    if m:
        items = loaded.data.get("constants") or []
        index = int(m.group(1))
        if index < len(items) and isinstance(items[index], dict):
            return f" (engine {kind}, constant {items[index].get('id')})"
    return f" (engine {kind})"


def _line(loaded: Loaded, ptr: str) -> tuple[int, str]:
    line = loaded.line_of(ptr) or 0
    return line, f"{loaded.path}:{line}" if line else str(loaded.path)


#: id(schema) -> (schema, its compiled predicate or None); the schema is kept so that its id
#: is not reused while the entry lives (an engine's schema is read once per process).
_PREDICATES: dict[int, tuple[dict[str, Any], Any]] = {}


def _holds(schema: dict[str, Any], value: Any) -> bool:
    """Whether the compiled predicate of an engine's configuration schema accepts ``value``
    (draft 2020-12, integers are Python ints, formats not checked: as
    :func:`_validator_class`); False lets jsonschema decide."""
    entry = _PREDICATES.get(id(schema))
    if entry is None or entry[0] is not schema:
        compiled = predicate.compile_schema(
            schema, draft="2020-12", integer_floats=False, formats=False
        )
        entry = _PREDICATES[id(schema)] = (schema, compiled)
    try:
        return entry[1] is not None and entry[1](value)
    except RecursionError:
        return False


def _schema_problems(loaded: Loaded, engine: Engine, schema: dict[str, Any]) -> list[tuple]:
    spec = loaded.data
    if _holds(schema, constants(spec)):
        return []
    index = {
        c.get("id"): i for i, c in enumerate(spec.get("constants") or []) if isinstance(c, dict)
    }
    validator = _validator_class()(schema)
    out = []
    missing = []  # constants the engine requires and the spec lacks: one problem for them all
    try:
        errors = list(validator.iter_errors(constants(spec)))
    except Exception as exc:  # a plug-in's schema jsonschema cannot use
        raise UserError(
            f"engine {engine.kind!r}: its configuration schema {engine.schema} cannot be used:"
            f" {type(exc).__name__}: {exc}"
        ) from None
    for err in errors:
        path = list(err.absolute_path)
        if not path and err.validator == "required":
            missing.append(err.message.split(" is a required")[0])
            continue
        if path:
            ptr = f"/constants/{index[path[0]]}/value{pointer(path[1:])}"
        else:
            ptr = "/constants"
        rule = err.schema.get("x-message") if isinstance(err.schema, dict) else None
        line, where = _line(loaded, ptr)
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            if extra:
                line, where = _line(loaded, f"{ptr}/{extra[0]}")
        text = f"{where}: at {ptr}: {rule or describe(err)}{_suffix(loaded, engine.kind, ptr)}"
        out.append((line, ptr, text))
    if missing:
        line, where = _line(loaded, "/constants")
        noun = "constant" if len(missing) == 1 else "constants"
        text = f"{where}: at /constants: missing required {noun} {', '.join(missing)}"
        out.append((line, "/constants", f"{text} (engine {engine.kind})"))
    return out


def _figure_problems(spec: dict, engine: Engine) -> list[tuple[str, str]]:
    """A declared figure the engine does not report (and is not marked external)."""
    declared = [
        (i, f)
        for i, f in enumerate(spec.get("figures") or [])
        if isinstance(f, dict) and not f.get("external")
    ]
    if not declared:
        return []
    try:
        reported = engine.reported_figures(spec)
    except UserError:
        raise
    except Exception as exc:  # a bug in a plug-in's declaration is reported, not a traceback
        return [("/figures", f"the engine's figures failed: {type(exc).__name__}: {exc}")]
    out = []
    for i, f in declared:
        fid = str(f.get("id"))
        if fid not in reported:
            offered = ", ".join(sorted(reported)) or "none"
            out.append(
                (
                    f"/figures/{i}/id",
                    f"figure {fid!r} is not one engine {engine.kind!r} reports (it reports:"
                    f" {offered}); mark it external if another analysis computes it",
                )
            )
    return out


def engine_problems(loaded: Loaded) -> list[str]:
    """Every problem of the engine stage as ``file:line: at /pointer: rule (engine ...)``."""
    spec = loaded.data
    kind = spec.get("engine")
    engine = registry.get(kind)
    if engine is None:
        return [f"{loaded.where('/engine')}: at /engine: {registry.unknown(kind)}"]
    schema = engine.config_schema()
    problems = _schema_problems(loaded, engine, schema) if schema is not None else []
    if not problems:
        merged = effective_commands(engine, spec)
        found = list(merged.problems)
        if not found:  # the engine checks the commands as they take effect
            try:
                checked = engine.run_checks(with_commands(spec, merged))
            except UserError:
                raise
            except Exception as exc:  # a bug in a plug-in's checks is reported, not a traceback
                checked = [("/engine", f"the engine's checks failed: {type(exc).__name__}: {exc}")]
            for ptr, message in checked:
                at, note = merged.spec_pointer(spec, ptr)
                found.append((at, message + note))
        found += _figure_problems(spec, engine)
        for ptr, message in found:
            line, where = _line(loaded, ptr)
            problems.append(
                (line, ptr, f"{where}: at {ptr}: {message}{_suffix(loaded, kind, ptr)}")
            )
    problems.sort(key=lambda p: (p[0], p[1]))
    return [p[2] for p in problems]


def effective_commands(engine: Engine, spec: dict) -> Merged:
    """The study's commands: the engine's standard ones merged with the spec's
    (:mod:`prereg.compiler.commands`)."""
    try:
        return merge(engine, spec)
    except UserError:
        raise
    except Exception as exc:  # a bug in a plug-in's standard commands: reported, not a traceback
        raise UserError(
            f"engine {engine.kind!r}: its standard commands failed: {type(exc).__name__}: {exc}"
        ) from None
