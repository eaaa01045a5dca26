"""Render a checked spec into generated files with Jinja2.

Spec strings reach generated Python only through the ``py`` filter (a Python literal made by
``repr``), and identifiers only through ``ident``/``const``/``camel``, which re-check them
against a strict pattern.  Templates live in templates/, one per kind of generated file.
"""

from __future__ import annotations

import json
import keyword
import re
from functools import lru_cache
from typing import Any

import jinja2

from prereg.compiler.project import HOME

TEMPLATES = HOME / "templates"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _checked(name: str) -> str:
    if not _IDENT.match(name) or keyword.iskeyword(name):
        raise ValueError(f"not a safe Python identifier: {name!r}")
    return name


def ident(value: str) -> str:
    """A lowercase Python function name from a hypothesis id (``pool-a`` -> ``pool_a``,
    ``GPT-4o`` -> ``gpt_4o``, ``pass`` -> ``pass_``;
    :func:`prereg.compiler.project.function_name`)."""
    from prereg.compiler.project import function_name

    return _checked(function_name(value))


def attr(value: str) -> str:
    """A record attribute name from a JSON field name: a Python keyword gets a final ``_``
    (``try`` -> ``try_``); the record class maps it back (``NAMES``)."""
    name = str(value)
    return _checked(name + "_" if keyword.iskeyword(name) else name)


def const(value: str) -> str:
    """An upper-case name (``v1.2`` -> ``V1_2``); ids starting with a digit get a ``V_``
    prefix. A hypothesis' ``<NAME>_RULE`` and ``<NAME>_VERDICTS`` in rules.py."""
    from prereg.compiler.project import python_name

    return _checked(python_name(value).upper())


def constant(value: str) -> str:
    """A constant's name in constants.py (:func:`prereg.compiler.project.constant_name`:
    ``budget`` -> ``BUDGET_``, clear of the engine configuration's names)."""
    from prereg.compiler.project import constant_name

    return _checked(constant_name(value))


def camel(value: str) -> str:
    """A class name from a record contract id (``record-contract`` -> ``RecordContract``,
    ``none`` -> ``None_``; :func:`prereg.compiler.project.class_name`)."""
    from prereg.compiler.project import class_name

    return _checked(class_name(value))


def py(value: Any) -> str:
    """A Python literal for JSON-like data (str, int, float, bool, None, list, dict)."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(py(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py(str(k))}: {py(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__} as a literal")


def md(value: Any) -> str:
    """Text safe inside a Markdown table cell."""
    text = "" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def mdcode(value: Any) -> str:
    """Text for a code span inside a Markdown table cell (shown literally: only | and ` escaped)."""
    text = "" if value is None else " ".join(str(value).split("\n"))
    return text.replace("|", "\\|").replace("`", "'")


def js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def doc(value: Any) -> str:
    """Text for a Python comment or docstring body: no quotes or backslashes can end it."""
    text = "" if value is None else " ".join(str(value).split())
    text = text.replace("\\", "/").replace('"' * 3, "'" * 3)
    return text + " " if text.endswith('"') else text


SHORT = 60  # a constant whose JSON is at most this long is shown inline


def short(value: Any) -> bool:
    """True when a constant's value reads well as one inline code span."""
    return len(js(value)) <= SHORT


def _scalar(value: Any) -> str:
    return f"`{mdcode(js(value))}`"


def nested(value: Any, depth: int = 0) -> str:
    """A JSON value as a nested Markdown list (for long constants in PREREG.md): mappings as
    ``key: value`` items, lists of scalars on one line, other lists item by item."""
    pad = "  " * depth
    lines: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(v, (dict, list)) or short(v) and not isinstance(v, dict):
                lines.append(f"{pad}- `{mdcode(k)}`: {_scalar(v)}")
            else:
                lines.append(f"{pad}- `{mdcode(k)}`:")
                lines.append(nested(v, depth + 1))
    elif isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            lines.append(f"{pad}- {', '.join(_scalar(v) for v in value) or '(empty)'}")
        else:
            for i, v in enumerate(value, 1):
                if isinstance(v, (dict, list)) and not short(v):
                    lines.append(f"{pad}- item {i}:")
                    lines.append(nested(v, depth + 1))
                else:
                    lines.append(f"{pad}- {_scalar(v)}")
    else:
        lines.append(f"{pad}- {_scalar(value)}")
    return "\n".join(lines)


_OP_WORDS = {"eq": "=", "ne": "≠", "lt": "<", "le": "≤", "gt": ">", "ge": "≥"}


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def condition(cond: Any) -> str:
    """A field condition in words, for PREREG.md (``pYes`` > 0.5, ``correct`` is null)."""
    field = f"`{mdcode(cond.get('field'))}`"
    op = cond.get("op")
    if op == "is_null":
        return f"{field} is null"
    if op == "not_null":
        return f"{field} is not null"
    if op in ("in", "not_in"):
        words = "in" if op == "in" else "not in"
        listed = f"{{{', '.join(_literal(v) for v in cond.get('values') or [])}}}"
        if cond.get("values_file") is not None:
            # a value list of the project: its file and digest beside the values it held
            listed += (
                f" (the {len(cond.get('values') or [])} values of"
                f" `{mdcode(cond['values_file'])}`, sha256:{cond.get('values_sha256')})"
            )
        return f"{field} {words} {listed}"
    rhs = (
        f"`{mdcode(cond['other'])}`"
        if cond.get("other") is not None
        else _literal(cond.get("value"))
    )
    return f"{field} {_OP_WORDS.get(op, op)} {rhs}"


def conditions(conds: Any) -> str:
    """All of several field conditions, in words (``every row`` when there are none)."""
    conds = list(conds or [])
    return " and ".join(condition(c) for c in conds) if conds else "every row"


def row_naming(policy: Any) -> str:
    """Which key fields of an attempt policy name a row, in words: the first alone, or the
    first with every later one no ``where`` fixes to one value (docs/vocabulary.md, attempts)."""
    from prereg.decide.names import pinned_key_fields, row_name

    names = row_name(policy)
    fixed = [f for f in policy["key"][1:] if f in pinned_key_fields(policy)]
    if names == list(policy["key"]):
        return "it names the row" if len(names) == 1 else "together they name the row"
    words = ", ".join(f"`{mdcode(f)}`" for f in names)
    out = f"{words} names the row" if len(names) == 1 else f"together {words} name the row"
    if fixed:
        out += "; " + ", ".join(f"`{mdcode(f)}`" for f in fixed)
        out += " (fixed by `where`) selects the series scored"
    return out


def unit_rule(r: Any) -> str:
    """A unit's inclusion rule in words: ``valid ≥ 10``."""
    from prereg.decide.units import rule_words

    return f"`{mdcode(r.get('figure'))}`" + rule_words(r)[len(str(r.get("figure"))) :]


def compute(c: Any) -> str:
    """A metric's compute block in words."""
    if not c:
        return ""
    kind = c.get("kind")
    among = f" among observed rows with {conditions(c.get('among'))}" if c.get("among") else ""
    if kind == "coverage":
        return "observed rows / registered rows"
    if kind == "units":
        return f"included units of `{mdcode(c.get('unit'))}` / the cell's units"
    if kind == "proportion":
        base = f"observed rows{among[len(' among observed rows') :]}" if among else "observed rows"
        return f"share of {base} with {conditions(c.get('where'))}"
    rows = f"observed rows{among[len(' among observed rows') :]}"
    field = f"`{mdcode(c.get('field'))}`"
    if kind == "mean":
        if c.get("transform") == "log":
            return f"mean of ln({field}) over {rows}"
        return f"mean of {field} over {rows}"
    if kind == "geometric_mean":
        return f"geometric mean of {field} (exp of the mean of its natural logs) over {rows}; contrasts are ratios a / b"
    if kind == "ece":
        edges = [f"{float(e):g}" for e in c.get("bins") or []]
        right = c.get("closed") == "right"
        bins = [
            ("[" if (not right or i == 0) else "(")
            + f"{edges[i]}, {edges[i + 1]}"
            + ("]" if (right or i == len(edges) - 2) else ")")
            for i in range(len(edges) - 1)
        ]
        return (
            f"expected calibration error of the confidence {field} over {rows}, in the bins"
            f" {' '.join(bins)}: the sum over bins of the bin's share of rows times the absolute"
            f" difference between the share of its rows with {conditions(c.get('where'))} and"
            " its mean confidence"
        )
    if kind == "auroc":
        return (
            f"area under the ROC curve of {field} over {rows}: the chance that a row with"
            f" {conditions(c.get('where'))} scores above one without (ties count one half)"
        )
    return str(kind)


def method_words(name: Any) -> str:
    """The registered summary of an interval or test method (for PREREG.md)."""
    from prereg.stats.methods import methods

    m = methods().get(str(name))
    return m.summary if m is not None else ""


def design_words(item: Any) -> str:
    """A paired design and a bootstrap's resamples, in words ('' when neither applies)."""
    parts = []
    if item.get("pair_by"):
        parts.append(f"paired by `{mdcode(item['pair_by'])}`")
        if item.get("pair_rows") == "mean":
            parts.append("each side's rows of a pair averaged first")
    boot = item.get("bootstrap")
    if boot:
        parts.append(f"{boot.get('resamples')} resamples, seed {boot.get('seed')}")
    return f" ({'; '.join(parts)})" if parts else ""


def _filters(flts: Any) -> str:
    return " ".join(
        f"{f.get('factor')}∈{'/'.join(str(v) for v in f.get('levels') or [])}" for f in flts or []
    )


def rate(r: Any) -> str:
    """A scenario rate in words (``pool∈pool-c → 0.5 + 1 × effect``)."""
    value = f"{r.get('rate')}"
    if r.get("effect") not in (None, 0, 0.0):
        value += f" {'+' if r['effect'] > 0 else '−'} {abs(r['effect']):g} × effect"
    return f"{_filters(r['where'])} → {value}" if r.get("where") else f"otherwise {value}"


def claim(c: Any) -> str:
    """A sizing claim's figure in words, with its threshold (for PREREG.md)."""
    op = _OP_WORDS.get(c.get("op"), c.get("op"))
    value = f"{op} {c.get('value')}"
    if c.get("half_width"):
        h = c["half_width"]
        rows = f"cell `{h['cell']}`" if h.get("cell") else f"a {h.get('rows')}-row cell"
        at = f"p = {h['p']}" if h.get("p_to") is None else f"every p from {h['p']} to {h['p_to']}"
        return f"half-width of the {h.get('interval')} {h.get('level')} interval of {rows} at {at} {value}"
    if c.get("power"):
        w = c["power"]
        alpha = f", alpha {w['alpha']}" if w.get("alpha") is not None else ""
        return (
            f"power of contrast `{w.get('contrast')}` at a − b = {w.get('difference')} from"
            f" b = {w.get('base')}{alpha} {value}"
        )
    if c.get("detectable"):
        d = c["detectable"]
        side = "below" if d.get("sign") == -1 else "above"
        return (
            f"smallest difference (a {side} b = {d.get('base')}) at which contrast"
            f" `{d.get('contrast')}` reaches power {d.get('power')} {value}"
        )
    v = c.get("verdict") or {}
    at = f" at effect {v['effect']}" if v.get("effect") is not None else ""
    return (
        f"P({v.get('hypothesis')} {v.get('verdict') or 'supported'} | scenario"
        f" `{v.get('scenario')}`{at}) {value}"
    )


def claim_method(c: Any) -> str:
    """How diagnose checks a claim."""
    if c.get("half_width"):
        return "closed form"
    if c.get("power") or c.get("detectable"):
        return "exact binomial sums"
    return "exact where one binomial count decides, else simulation"


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates cached between runs (keyed by each template's source checksum, so a
    changed template is recompiled), under $PREREG_CACHE_DIR or the user's cache folder;
    none when that folder cannot be made (compiling is then only slower)."""
    import os
    from pathlib import Path

    base = os.environ.get("PREREG_CACHE_DIR")
    if base is None:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        base = os.path.join(xdg, "prereg")
    folder = os.path.join(base, f"jinja-{jinja2.__version__}")
    try:
        os.makedirs(folder, exist_ok=True)
        if not os.access(folder, os.W_OK):
            return None
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(folder)


_DICT_ATTRIBUTES = frozenset(dir(dict))


class _Environment(jinja2.Environment):
    """Jinja2's environment, with ``spec.id`` on a plain dict looked up as the item directly.

    Jinja2 tries the attribute first and takes the item when that raises AttributeError, which a
    plain dict does for every name that is not one of its own attributes: the templates read
    spec data that way tens of thousands of times a compile, and the exception was the cost.
    The result is the same: a dict's own attributes (``items``, ``get``, ...) still come first.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = _Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        bytecode_cache=_bytecode_cache(),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.Undefined,  # absent optional keys are falsy; `py` refuses them
        autoescape=False,
    )
    env.filters.update(
        py=py,
        ident=ident,
        attr=attr,
        const=const,
        constant=constant,
        camel=camel,
        md=md,
        mdcode=mdcode,
        js=js,
        doc=doc,
        condition=condition,
        conditions=conditions,
        compute=compute,
        unit_rule=unit_rule,
        row_naming=row_naming,
        method_words=method_words,
        design_words=design_words,
        rate=rate,
        level_filters=_filters,
        claim=claim,
        claim_method=claim_method,
        nested=nested,
    )
    env.tests["short"] = short
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
