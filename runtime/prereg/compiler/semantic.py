"""Semantic checks that a JSON Schema cannot express.

Each check is a small function over the loaded spec that reports problems as
``file:line: at /pointer: message``: ids are unique, references resolve, cells do not overlap,
declared totals equal the sum of their cells, wording-pool properties hold, amendments are in
order, conditions are well formed and every placeholder is bound.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from prereg.compiler.expand import PLACEHOLDER as _CELL_PLACEHOLDER
from prereg.compiler.expand import all_cells, cell_entries
from prereg.compiler.load import Loaded
from prereg.compiler.project import class_name, constant_name, function_name, python_name
from prereg.rules import INCONCLUSIVE, NOT_SUPPORTED, NOT_TESTED, REPORTED_ONLY, SUPPORTED
from prereg.splits import IMPLICIT as IMPLICIT_SPLIT
from prereg.splits import of as split_of

Check = Callable[[dict, "Reporter"], None]
CHECKS: list[Check] = []

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


class Reporter:
    def __init__(self, loaded: Loaded):
        self.loaded = loaded
        self.problems: list[tuple[int, str]] = []

    def __call__(self, ptr: str, message: str) -> None:
        self.problems.append(
            (self.loaded.line_of(ptr) or 0, f"{self.loaded.where(ptr)}: at {ptr}: {message}")
        )


def check(fn: Check) -> Check:
    CHECKS.append(fn)
    return fn


def items(spec: dict, section: str) -> Iterator[tuple[str, dict]]:
    for i, item in enumerate(spec.get(section) or []):
        yield f"/{section}/{i}", item


def _unique(report: Reporter, entries, key: str, what: str) -> None:
    seen: dict[Any, str] = {}
    for ptr, item in entries:
        value = item.get(key)
        if value in seen:
            report(f"{ptr}/{key}", f"duplicate {what} {value!r} (first at {seen[value]})")
        else:
            seen[value] = ptr


#: The sections whose ids name something in generated code beyond :func:`python_name`: the
#: function, the constant or the class an id becomes (keyword-safe), and what it is called.
_GENERATED_NAMES = {
    "hypotheses": (function_name, "the function"),
    "constants": (constant_name, "the constant"),
    "record_contracts": (class_name, "the class"),
}


@check
def unique_ids(spec: dict, report: Reporter) -> None:
    _unique(report, cell_entries(spec), "id", "cell id")
    for section, what in [
        ("splits", "split id"),
        ("factors", "factor id"),
        ("pools", "pool id"),
        ("record_contracts", "record contract id"),
        ("metrics", "metric id"),
        ("families", "family id"),
        ("hypotheses", "hypothesis id"),
        ("freeze_roles", "freeze role id"),
        ("constants", "constant id"),
        ("commands", "command id"),
        ("budget", "budget item id"),
        ("row_attributes", "row attribute id"),
        ("gates", "gate id"),
    ]:
        _unique(report, items(spec, section), "id", what)
        names: dict[str, str] = {}
        for ptr, item in items(spec, section):
            pyname = python_name(str(item.get("id", "")))
            if pyname in names and item.get("id") != names[pyname]:
                report(
                    f"{ptr}/id",
                    f"{what} {item['id']!r} clashes with {names[pyname]!r} in generated code",
                )
            names.setdefault(pyname, item.get("id"))
        made = _GENERATED_NAMES.get(section)
        if made is None:
            continue
        taken: dict[str, str] = {}
        for ptr, item in items(spec, section):
            ident = str(item.get("id", ""))
            name = made[0](ident)
            first = taken.setdefault(name, ident)
            if first != ident and python_name(first) != python_name(ident):
                report(
                    f"{ptr}/id",
                    f"{what} {ident!r} clashes with {first!r} in generated code (both are"
                    f" {made[1]} {name}): choose an id that differs in more than case"
                    " or separators",
                )
    for ptr, split in items(spec, "splits"):
        if split.get("id") == IMPLICIT_SPLIT:
            report(
                f"{ptr}/id",
                f"split id {IMPLICIT_SPLIT!r} is reserved: a total's scope {IMPLICIT_SPLIT} means"
                " every row (and a study without splits has that one population)",
            )
    _unique(report, items(spec, "amendments"), "version", "amendment version")
    for ptr, factor in items(spec, "factors"):
        _unique(
            report,
            ((f"{ptr}/levels/{i}", lv) for i, lv in enumerate(factor.get("levels") or [])),
            "id",
            f"level of factor {factor.get('id')!r}",
        )
    for ptr, contract in items(spec, "record_contracts"):
        _unique(
            report,
            ((f"{ptr}/fields/{i}", f) for i, f in enumerate(contract.get("fields") or [])),
            "name",
            "field",
        )
        _unique(
            report,
            (
                (f"{ptr}/fields/{i}", f)
                for i, f in enumerate(contract.get("fields") or [])
                if f.get("role") is not None
            ),
            "role",
            "field role",
        )
    _unique(
        report,
        ((ptr, c) for ptr, c in items(spec, "record_contracts") if c.get("role") is not None),
        "role",
        "record contract role",
    )
    for ptr, command in items(spec, "commands"):
        _unique(
            report,
            ((f"{ptr}/arguments/{i}", a) for i, a in enumerate(command.get("arguments") or [])),
            "name",
            "argument",
        )
    for ptr, pool in items(spec, "pools"):
        _unique(
            report,
            ((f"{ptr}/words/{i}", w) for i, w in enumerate(pool.get("words") or [])),
            "role",
            "word role",
        )


def _levels(spec: dict) -> dict[str, list[str]]:
    return {
        f["id"]: [str(lv["id"]) for lv in (f.get("levels") or [])]
        for f in spec.get("factors") or []
    }


@check
def cells_resolve_and_do_not_overlap(spec: dict, report: Reporter) -> None:
    splits = {s["id"] for s in spec.get("splits") or []}
    levels = _levels(spec)
    assignments = []
    for ptr, cell in cell_entries(spec):
        if ptr.startswith("/cells/"):  # a crossing's cells are checked at the crossing
            _split_named(report, ptr, f"cell {cell.get('id')!r}", cell, splits)
        assign: dict[str, str] = {}
        for j, ref in enumerate(cell.get("levels") or []):
            rptr = f"{ptr}/levels/{j}"
            factor, level = ref.get("factor"), str(ref.get("level"))
            if factor not in levels:
                report(f"{rptr}/factor", f"cell {cell.get('id')!r} names unknown factor {factor!r}")
                continue
            if level not in levels[factor]:
                report(
                    f"{rptr}/level",
                    f"cell {cell.get('id')!r} uses level {level!r}, which factor {factor!r} does not have",
                )
            if factor in assign:
                report(f"{rptr}/factor", f"cell {cell.get('id')!r} sets factor {factor!r} twice")
            assign[factor] = level
        assignments.append((ptr, cell.get("id"), split_of(cell), assign))
    by_split: dict[str, list] = {}
    for entry in assignments:
        by_split.setdefault(entry[2], []).append(entry)
    for group in by_split.values():
        for i, j in _overlapping([a for *_, a in group]):
            (_, id1, _, _), (p2, id2, _, _) = group[i], group[j]
            report(p2, f"cell {id2!r} overlaps cell {id1!r}: a row could belong to both")


def _overlapping(assigns: list[dict[str, str]]) -> list[tuple[int, int]]:
    """Every pair ``i < j`` (sorted) of level assignments a row could match both of: one's
    factors are among the other's, with the same levels. Found through an index of the cells by
    their factor set, so a crossing of thousands of cells is checked in time linear in its
    cells (times the number of distinct factor sets), not in their pairs (10,000 cells took
    minutes)."""
    index: dict[frozenset, dict[tuple, list[int]]] = {}
    for i, a in enumerate(assigns):
        keys = frozenset(a)
        index.setdefault(keys, {}).setdefault(tuple(sorted(a.items())), []).append(i)
    pairs: set[tuple[int, int]] = set()
    for j, b in enumerate(assigns):
        mine = b.keys()
        for keys, cells in index.items():
            if keys <= mine:  # the cells of this factor set that b's levels match
                for i in cells.get(tuple(sorted((f, b[f]) for f in keys)), ()):
                    if i != j:
                        pairs.add((min(i, j), max(i, j)))
    return sorted(pairs)


@check
def levels_and_alphas_lie_strictly_between_0_and_1(spec: dict, report: Reporter) -> None:
    """A confidence level, an alpha or a power of 0 or 1 is no level at all: the language lets
    them through (its bounds are inclusive) and score or diagnose raised a ValueError."""

    def strictly(ptr: str, value, what: str) -> None:
        if isinstance(value, int | float) and not isinstance(value, bool) and not 0 < value < 1:
            report(ptr, f"{what} {value} must lie strictly between 0 and 1")

    for hptr, hyp in items(spec, "hypotheses"):
        for kind in ("estimates", "contrasts"):
            for i, item in enumerate(hyp.get(kind) or []):
                if isinstance(item, dict):
                    strictly(f"{hptr}/{kind}/{i}/level", item.get("level"), "the confidence level")
    for ptr, fam in items(spec, "families"):
        strictly(f"{ptr}/alpha", fam.get("alpha"), "alpha")
    for ptr, claim in items(spec, "claims"):
        for kind in ("half_width", "detectable", "power"):
            body = claim.get(kind)
            if isinstance(body, dict):
                strictly(f"{ptr}/{kind}/level", body.get("level"), "the confidence level")
                strictly(f"{ptr}/{kind}/alpha", body.get("alpha"), "alpha")
                if kind == "detectable":
                    strictly(f"{ptr}/{kind}/power", body.get("power"), "the power")


def _split_named(report: Reporter, ptr: str, what: str, entry: dict, splits: set) -> None:
    """A cell or crossing names one of the study's splits, or none when it registers none."""
    split = entry.get("split")
    if split is None:
        if splits:
            report(
                ptr,
                f"{what} names no split; the study registers splits ({', '.join(sorted(splits))}),"
                " so each cell names one",
            )
    elif not splits:
        report(
            f"{ptr}/split",
            f"{what} names split {split!r}, but the study registers no splits (its rows are one"
            " population): leave split out, or declare the study's splits",
        )
    elif split not in splits:
        report(f"{ptr}/split", f"{what} names unknown split {split!r}")


def _crossing_shape(crossing: dict, ptr: str, factors: list, levels: dict, report) -> None:
    """rows or rows_by (covering every crossed level), subset and exclude name real levels."""
    by = crossing.get("rows_by")
    if (crossing.get("rows") is None) == (by is None):
        report(ptr, "a crossing takes exactly one of rows and rows_by")
    for j, flt in enumerate(crossing.get("subset") or []):
        factor = flt.get("factor")
        if factor not in factors:
            report(f"{ptr}/subset/{j}/factor", f"subset names {factor!r}, which is not crossed")
            continue
        for lv in flt.get("levels") or []:
            if str(lv) not in levels.get(factor, []):
                report(f"{ptr}/subset/{j}/levels", f"factor {factor!r} has no level {lv!r}")
    if by is not None:
        factor = by.get("factor")
        if factor not in factors:
            report(f"{ptr}/rows_by/factor", f"rows_by names {factor!r}, which is not crossed")
        else:
            sub = next((f for f in crossing.get("subset") or [] if f.get("factor") == factor), None)
            want = [str(v) for v in sub["levels"]] if sub else levels.get(factor, [])
            given = [str(r.get("level")) for r in by.get("rows") or []]
            missing = [lv for lv in want if lv not in given]
            extra = [lv for lv in given if lv not in want]
            if missing or extra:
                report(
                    f"{ptr}/rows_by",
                    f"rows_by must give the rows of each crossed level of {factor!r} once"
                    + (f"; missing {missing}" if missing else "")
                    + (f"; not crossed {extra}" if extra else ""),
                )
    for j, x in enumerate(crossing.get("exclude") or []):
        for k, ref in enumerate(x.get("levels") or []):
            factor, level = ref.get("factor"), str(ref.get("level"))
            if factor not in levels or level not in levels[factor]:
                report(
                    f"{ptr}/exclude/{j}/levels/{k}",
                    f"exclusion names {factor}={level}, which the study does not have",
                )


@check
def crossings_resolve(spec: dict, report: Reporter) -> None:
    splits = {s["id"] for s in spec.get("splits") or []}
    levels = _levels(spec)
    for ptr, crossing in items(spec, "crossings"):
        _split_named(report, ptr, "crossing", crossing, splits)
        factors = list(crossing.get("factors") or [])
        for j, factor in enumerate(factors):
            if factor not in levels:
                report(f"{ptr}/factors/{j}", f"crossing names unknown factor {factor!r}")
            elif factor in factors[:j]:
                report(f"{ptr}/factors/{j}", f"crossing names factor {factor!r} twice")
        for j, ref in enumerate(crossing.get("fixed") or []):
            factor, level = ref.get("factor"), str(ref.get("level"))
            if factor in factors:
                report(f"{ptr}/fixed/{j}/factor", f"factor {factor!r} is both crossed and fixed")
            elif factor not in levels:
                report(f"{ptr}/fixed/{j}/factor", f"crossing fixes unknown factor {factor!r}")
            elif level not in levels[factor]:
                report(
                    f"{ptr}/fixed/{j}/level",
                    f"crossing fixes level {level!r}, which factor {factor!r} does not have",
                )
        _crossing_shape(crossing, ptr, factors, levels, report)
        allowed = {*factors, *(r.get("factor") for r in crossing.get("fixed") or [])}
        if splits:  # a study without splits has no split to name in a cell id
            allowed.add("split")
        left = _CELL_PLACEHOLDER.sub("", str(crossing.get("id", "")))
        stray = re.search(r"\{[^{}]*\}?|\}", left)
        if stray:  # {split.__class__}, {0}, {split!r}, an unclosed brace: never a placeholder
            report(
                f"{ptr}/id",
                f"{stray.group(0)!r} in the cell id template is not a placeholder: a placeholder"
                " is a plain name, {split}, {<factor>}, {<factor>.id} or {<factor>.code}",
            )
            continue
        for name in _CELL_PLACEHOLDER.findall(str(crossing.get("id", ""))):
            if name not in allowed:
                report(
                    f"{ptr}/id",
                    "placeholder {split} of the cell id names the split, but the study registers"
                    " no splits"
                    if name == "split"
                    else f"placeholder {{{name}}} of the cell id is neither split nor a crossed or fixed factor",
                )
                break
        else:
            named = set(_CELL_PLACEHOLDER.findall(str(crossing.get("id", ""))))
            if not {f for f in factors if f in levels} <= named:
                report(
                    f"{ptr}/id",
                    "the cell id template must name every crossed factor ({factor}), or the cells' ids repeat",
                )


@check
def rows_within_bound(spec: dict, report: Reporter) -> None:
    """A study registers at most :data:`prereg.compiler.expand.MAX_ROWS` rows: score lists
    each registered row (rows: 9007199254740991 compiled, and score ran without end)."""
    from prereg.compiler.expand import MAX_ROWS

    total = 0
    for ptr, cell in cell_entries(spec):
        rows = cell.get("rows")
        if type(rows) is int and rows > 0:
            total += rows
        if total > MAX_ROWS:
            where = f"{ptr}/rows" if ptr.startswith("/cells/") else ptr
            report(
                where,
                f"with cell {cell.get('id')!r} ({rows:,} rows) the study registers {total:,}"
                f" rows; a study registers at most {MAX_ROWS:,} (score lists each row)",
            )
            return


@check
def totals_match_cells(spec: dict, report: Reporter) -> None:
    splits = {s["id"] for s in spec.get("splits") or []}
    for ptr, total in items(spec, "totals"):
        scope = total.get("scope")
        if scope != "all" and scope not in splits:
            report(
                f"{ptr}/scope",
                f"total names unknown split {scope!r}"
                + ("" if splits else " (the study registers no splits: its scope is all)"),
            )
            continue
        rows = [c.get("rows") for c in all_cells(spec) if scope == "all" or c.get("split") == scope]
        if any(not isinstance(r, int) for r in rows):
            continue  # a cell without its rows (a rows_by missing a level) is reported itself
        actual = sum(rows)
        if actual != total.get("rows"):
            report(
                f"{ptr}/rows",
                f"declared total {total.get('rows')} for {scope!r} differs from the sum of its cells, {actual}",
            )


@check
def pools_resolve(spec: dict, report: Reporter) -> None:
    levels = _levels(spec)
    roles_seen: list[set[str]] = []
    for ptr, pool in items(spec, "pools"):
        ref = pool.get("level")
        if ref:
            factor, _, level = ref.partition(":")
            if factor not in levels or level not in levels[factor]:
                report(
                    f"{ptr}/level", f"pool {pool.get('id')!r} names unknown factor level {ref!r}"
                )
        roles_seen.append({w.get("role") for w in (pool.get("words") or [])})
    if roles_seen and any(r != roles_seen[0] for r in roles_seen):
        for (ptr, pool), roles in zip(items(spec, "pools"), roles_seen, strict=True):
            if roles != roles_seen[0]:
                diff = sorted(roles ^ roles_seen[0])
                report(
                    f"{ptr}/words",
                    f"pool {pool.get('id')!r} does not have the same word roles as the first pool (differs in {', '.join(diff)})",
                )


def _word(pool: dict, role: str) -> str | None:
    for w in pool.get("words") or []:
        if w.get("role") == role:
            return w.get("text")
    return None


@check
def pool_constraints_hold(spec: dict, report: Reporter) -> None:
    pools = spec.get("pools") or []
    for ptr, c in items(spec, "pool_constraints"):
        kind, roles = c.get("kind"), (c.get("roles") or [])
        missing = [r for r in roles if any(_word(p, r) is None for p in pools)]
        if missing:
            report(
                f"{ptr}/roles",
                f"pool constraint names role(s) not in every pool: {', '.join(missing)}",
            )
            continue
        if kind == "disjoint":
            owner: dict[str, str] = {}
            for p in pools:
                for r in roles:
                    for token in _word(p, r).split():
                        if token in owner and owner[token] != p["id"]:
                            report(
                                ptr,
                                f"word {token!r} is shared by pools {owner[token]!r} and {p['id']!r}",
                            )
                        owner.setdefault(token, p["id"])
        elif kind == "equal_length":
            for p in pools:
                lengths = {r: len(_word(p, r)) for r in roles}
                if len(set(lengths.values())) > 1:
                    shown = ", ".join(f"{r}={n}" for r, n in lengths.items())
                    report(
                        ptr,
                        f"pool {p['id']!r}: words of roles {', '.join(roles)} differ in length ({shown})",
                    )
        elif kind == "no_shared_positions":
            if len(roles) != 2:
                report(f"{ptr}/roles", "no_shared_positions takes exactly two roles")
                continue
            final = c.get("except_final") or ""
            for p in pools:
                a, b = _word(p, roles[0]), _word(p, roles[1])
                shared = [
                    i
                    for i, (x, y) in enumerate(zip(a, b, strict=False))
                    if x == y and not (final and i == len(a) - 1 == len(b) - 1 and x == final)
                ]
                if shared:
                    report(
                        ptr,
                        f"pool {p['id']!r}: {a!r} and {b!r} share letters at positions {shared}",
                    )


def _expansions(item: dict) -> list[dict[str, str]]:
    """Every binding of an estimate's or contrast's placeholders (cartesian over dimensions)."""
    combos: list[dict[str, str]] = [{}]
    for ex in item.get("expand") or []:
        if ex.get("pairs_of") is not None:
            first, second = (list(ex.get("names") or []) + ["", ""])[:2]
            pairs = list(itertools.combinations([str(v) for v in ex["pairs_of"]], 2))
            combos = [{**c, first: x, second: y} for c in combos for x, y in pairs]
        else:
            combos = [
                {**c, ex.get("name", ""): str(v)} for c in combos for v in ex.get("values") or []
            ]
    return combos


def fill(text: str, binding: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda m: binding.get(m.group(1), m.group(0)), text)


def _scalar(text: str):
    """A placeholder's value as an option takes it: a whole number, a decimal or true/false
    when it reads as one ("5" is 5, "0.05" is 0.05), else the text. As where a spec writes a
    number: a whole number of more than 20 digits, or a decimal beyond a double ("1e400",
    which would be infinite), is no number, and stays text (the method refuses it)."""
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text) if len(text.lstrip("+-")) <= 20 else text
    if len(text) <= 400 and re.fullmatch(
        r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?[0-9]+[eE][+-]?[0-9]+", text
    ):
        value = float(text)
        return value if math.isfinite(value) else text
    return {"true": True, "false": False}.get(text, text)


def whole_placeholder(value) -> str | None:
    """The placeholder name an option value is, whole ("{k}"), or None."""
    if isinstance(value, str):
        m = PLACEHOLDER.fullmatch(value)
        if m is not None:
            return m.group(1)
    return None


def fill_options(options: dict, binding: dict[str, str]) -> dict:
    """An analysis' options under one binding of its expansion: an option whose value is a
    placeholder, whole, takes the placeholder's value read as a number or true/false when it
    is one (``k: "{k}"`` over ``values: ["1", "5", "10"]`` gives k 1, 5 and 10)."""
    out = {}
    for k, v in options.items():
        name = whole_placeholder(v)
        out[k] = _scalar(binding[name]) if name is not None and name in binding else v
    return out


def group_ids(an: dict, binding: dict[str, str]) -> list[str | None]:
    """The ids of an analysis' groups under one binding of its expansion, in order (None for a
    group registered without one)."""
    return [
        None if g.get("id") is None else fill(str(g["id"]), binding)
        for g in an.get("groups") or []
        if isinstance(g, dict)
    ]


def named_groups(an: dict, options: dict, names, binding: dict[str, str]):
    """(options, problems): ``options`` with each option of ``names`` (an entry's
    ``group_options``) that gives a group's id replaced by that group's position in
    ``groups``, counted from 1, as the method takes it; problems are (option, words) for an id
    that names no group. A position, and anything else, is left to the method's own check."""
    ids = group_ids(an, binding)
    out = dict(options)
    problems = []
    for o in names:
        value = out.get(o)
        if not isinstance(value, str):
            continue
        if value in ids:
            out[o] = ids.index(value) + 1
            continue
        named = [i for i in ids if i is not None]
        problems.append(
            (
                o,
                f"option {o} is {value!r}, which names no group"
                + (
                    f" (the groups' ids, in order: {', '.join(named)})"
                    if named
                    else "; give the groups ids ({id: ft1, where: [...]}) to name them, or"
                    " write the group's position in groups, counted from 1"
                ),
            )
        )
    return out, problems


def _selectable(spec: dict) -> dict[str, list[str]]:
    """Factors, the split and row attributes, with their values: what a selection may filter on."""
    out = _levels(spec)
    if spec.get("splits"):  # without splits, the study's rows are one population
        out.setdefault("split", [str(sp["id"]) for sp in spec.get("splits") or []])
    for attr in spec.get("row_attributes") or []:
        out.setdefault(attr["id"], [str(v) for v in (attr.get("values") or [])])
    return out


def _targets(spec: dict):
    """(kind, pointer, item) for every estimate, contrast and analysis of every hypothesis."""
    for hptr, hyp in items(spec, "hypotheses"):
        for kind, one in (
            ("estimates", "estimate"),
            ("contrasts", "contrast"),
            ("analyses", "analysis"),
        ):
            for i, item in enumerate(hyp.get(kind) or []):
                if isinstance(item, dict):
                    yield one, f"{hptr}/{kind}/{i}", item


def contrast_ids(spec: dict) -> dict[str, str]:
    """Every estimate, contrast and analysis id after expansion, mapped to its pointer."""
    out: dict[str, str] = {}
    for _, ptr, item in _targets(spec):
        for binding in _expansions(item):
            out.setdefault(fill(item["id"], binding), ptr)
    return out


def no_split(factor: object) -> str:
    """Why ``split`` is no factor to select on, when it is not (a study without splits)."""
    return (
        " (the study registers no splits: its rows are one population)" if factor == "split" else ""
    )


def _check_selection(sel: dict | None, ptr: str, name: str, binding, selectable, report) -> None:
    for j, flt in enumerate((sel or {}).get("where") or []):
        fptr = f"{ptr}/where/{j}"
        factor = flt.get("factor")
        if factor not in selectable:
            report(
                f"{fptr}/factor", f"{name} selects on unknown factor {factor!r}{no_split(factor)}"
            )
            continue
        for lv in flt.get("levels") or []:
            value = fill(str(lv), binding)
            if value not in selectable[factor]:
                report(
                    f"{fptr}/levels",
                    f"{name} selects level {value!r}, which factor {factor!r} does not have",
                )


@check
def expansions_well_formed(spec: dict, report: Reporter) -> None:
    for _, ptr, item in _targets(spec):
        for k, ex in enumerate(item.get("expand") or []):
            plain = ex.get("name") is not None and ex.get("values") is not None
            pairs = ex.get("names") is not None and ex.get("pairs_of") is not None
            if plain == pairs or (pairs and len(ex["names"]) != 2):
                report(
                    f"{ptr}/expand/{k}",
                    "an expansion takes either name and values, or two names and pairs_of",
                )


@check
def contrasts_resolve(spec: dict, report: Reporter) -> None:
    metrics = {m["id"] for m in spec.get("metrics") or []}
    families = {f["id"] for f in spec.get("families") or []}
    selectable = _selectable(spec)
    seen: dict[str, str] = {}
    for kind, ptr, c in _targets(spec):
        if c.get("metric") not in metrics and not (kind == "analysis" and c.get("metric") is None):
            report(
                f"{ptr}/metric", f"{kind} {c.get('id')!r} names unknown metric {c.get('metric')!r}"
            )
        if c.get("family") is not None and c.get("family") not in families:
            report(
                f"{ptr}/family", f"{kind} {c.get('id')!r} names unknown family {c.get('family')!r}"
            )
        for side in ("of", "a", "b"):
            sel = c.get(side)
            if isinstance(sel, dict) and sel.get("id") is not None:
                report(
                    f"{ptr}/{side}/id",
                    f"{kind} {c.get('id')!r}: an id names one of an analysis' groups; {side}"
                    " needs none (it is named by its place)",
                )
        for binding in _expansions(c):
            cid = fill(c["id"], binding)
            if PLACEHOLDER.search(cid):
                report(f"{ptr}/id", f"{kind} id {c['id']!r} has an unbound placeholder")
                break
            if cid in seen:
                report(f"{ptr}/id", f"duplicate {kind} id {cid!r} (first at {seen[cid]})")
            seen.setdefault(cid, ptr)
            sides = ("a", "b") if kind == "contrast" else ("of",)
            if kind == "analysis":
                sides = tuple(s for s in ("of", "a", "b") if isinstance(c.get(s), dict))
                for j, g in enumerate(c.get("groups") or []):
                    _check_selection(
                        g, f"{ptr}/groups/{j}", f"{kind} {cid!r}", binding, selectable, report
                    )
            for side in sides:
                _check_selection(
                    c.get(side), f"{ptr}/{side}", f"{kind} {cid!r}", binding, selectable, report
                )


@check
def gates_resolve(spec: dict, report: Reporter) -> None:
    metrics = {m["id"] for m in spec.get("metrics") or []}
    selectable = _selectable(spec)
    for ptr, gate in items(spec, "gates"):
        _threshold_word(gate.get("value"), f"{ptr}/value", report)
        if gate.get("metric") not in metrics:
            report(
                f"{ptr}/metric",
                f"gate {gate.get('id')!r} names unknown metric {gate.get('metric')!r}",
            )
        _check_selection(gate, ptr, f"gate {gate.get('id')!r}", {}, selectable, report)


def _threshold_word(value, ptr: str, report: Reporter) -> None:
    """A threshold written as text is an exact fraction "p/q" a double holds, q not 0."""
    from prereg.stats.compare import is_fraction_word

    if isinstance(value, str) and not is_fraction_word(value):
        report(
            ptr,
            f"threshold {value!r} is not an exact fraction: write a number (0.95) or a fraction"
            ' of whole numbers as a string, "2/3" (its denominator not 0, each side at most'
            " 4,300 digits, its value within a double's range)",
        )


def figure_ids(spec: dict) -> dict[str, dict]:
    """Every study figure by id (the first of a duplicated id)."""
    out: dict[str, dict] = {}
    for f in spec.get("figures") or []:
        if isinstance(f, dict) and f.get("id") is not None:
            out.setdefault(str(f["id"]), f)
    return out


@check
def figures_resolve(spec: dict, report: Reporter) -> None:
    seen: dict[str, str] = {}
    targets = contrast_ids(spec)
    for ptr, fig in items(spec, "figures"):
        fid = str(fig.get("id"))
        if fid in seen:
            report(f"{ptr}/id", f"duplicate figure id {fid!r} (first at {seen[fid]})")
        seen.setdefault(fid, ptr)
        if fid in targets:
            report(
                f"{ptr}/id",
                f"figure id {fid!r} is also a contrast or estimate id (at {targets[fid]}):"
                " a comparison's target must name one figure",
            )


def _walk_condition(
    cond: dict,
    ptr: str,
    bound: dict[str, list[str]],
    ids: dict[str, str],
    report: Reporter,
    figures: dict[str, dict] | None = None,
    reported_only: bool = False,
    decision: DecisionNames | None = None,
) -> None:
    figures = figures or {}
    kinds = ("compare", "all_of", "any_of", "at_least", "for_each", "not", "verdict", "gate")
    keys = [k for k in kinds if cond.get(k) is not None]
    if len(keys) != 1:
        report(
            ptr,
            f"a condition takes exactly one of {', '.join(kinds)} (found {len(keys)})",
        )
        return
    key = keys[0]
    body = cond[key]

    def walk(sub, sub_ptr, inner=bound):
        _walk_condition(sub, sub_ptr, inner, ids, report, figures, reported_only, decision)

    if key in ("verdict", "gate") and decision is None:
        report(
            f"{ptr}/{key}",
            f"a {key} condition belongs in the study's decision rules (decision: rules:), not"
            " in a hypothesis' rule (a hypothesis reads earlier verdicts with tested_after)",
        )
        return
    if key == "verdict":
        hid = str(body.get("hypothesis"))
        if hid not in decision.verdicts:
            report(
                f"{ptr}/verdict/hypothesis", f"verdict condition names unknown hypothesis {hid!r}"
            )
            return
        possible = decision.verdicts[hid]
        for i, v in enumerate(body.get("is") or []):
            if str(v) not in possible:
                report(
                    f"{ptr}/verdict/is/{i}",
                    f"hypothesis {hid!r} can never have verdict {v!r}; its verdicts are"
                    f" {', '.join(possible)}",
                )
        return
    if key == "gate":
        if not decision.gates:
            report(f"{ptr}/gate", "gate condition in a study that registers no gate")
        elif body.get("id") is not None and str(body["id"]) not in decision.gates:
            report(
                f"{ptr}/gate/id",
                f"gate condition names unknown gate {body['id']!r} (gates: {', '.join(decision.gates)})",
            )
        return
    if key == "not":
        walk(body, f"{ptr}/not")
        return
    if key == "compare":
        _threshold_word(body.get("value"), f"{ptr}/compare/value", report)
        target = body.get("target", "")
        names = PLACEHOLDER.findall(target)
        unbound = [n for n in names if n not in bound]
        if unbound:
            report(
                f"{ptr}/compare/target",
                f"placeholder {{{unbound[0]}}} is not bound by an enclosing for_each",
            )
            return
        combos: list[dict[str, str]] = [{}]
        for n in dict.fromkeys(names):
            combos = [{**c, n: v} for c in combos for v in bound[n]]
        for combo in combos:
            tid = fill(target, combo)
            if tid in figures:
                if body.get("quantity") != "estimate":
                    report(
                        f"{ptr}/compare/quantity",
                        f"figure {tid!r} is compared with quantity estimate only"
                        f" (not {body.get('quantity')!r}): a study figure is one value",
                    )
                    break
                if figures[tid].get("external") and not reported_only:
                    report(
                        f"{ptr}/compare/target",
                        f"figure {tid!r} is external (the engine never reports it): only a"
                        " reported-only hypothesis may read it",
                    )
                    break
                continue
            if tid not in ids:
                report(
                    f"{ptr}/compare/target",
                    f"comparison names unknown contrast, estimate, analysis or figure {tid!r}",
                )
                break
    elif key in ("all_of", "any_of"):
        if not body:  # of no conditions: vacuous, never what a registration means
            report(f"{ptr}/{key}", f"{key} lists no conditions; list at least one")
        for i, sub in enumerate(body):
            walk(sub, f"{ptr}/{key}/{i}")
    elif key == "at_least":
        if body.get("count", 0) > len(body.get("of") or []):
            report(
                f"{ptr}/at_least/count",
                f"at_least {body.get('count')} of {len(body.get('of', []))} conditions can never hold",
            )
        for i, sub in enumerate(body.get("of") or []):
            walk(sub, f"{ptr}/at_least/of/{i}")
    else:
        if body.get("quantifier") == "at_least" and not body.get("count"):
            report(f"{ptr}/for_each", "quantifier at_least needs a count")
        if body.get("quantifier") != "at_least" and body.get("count") is not None:
            report(f"{ptr}/for_each/count", "count is only for quantifier at_least")
        inner = {**bound, body["name"]: [str(v) for v in (body.get("values") or [])]}
        walk(body.get("condition") or {}, f"{ptr}/for_each/condition", inner)


@check
def conditions_well_formed(spec: dict, report: Reporter) -> None:
    ids = contrast_ids(spec)
    figures = figure_ids(spec)
    for hptr, hyp in items(spec, "hypotheses"):
        only = bool(hyp.get("reported_only"))
        if hyp.get("rule") is not None:
            _walk_condition(hyp["rule"], f"{hptr}/rule", {}, ids, report, figures, only)
        for i, v in enumerate(hyp.get("verdicts") or []):
            if v.get("when") is not None:
                _walk_condition(
                    v["when"], f"{hptr}/verdicts/{i}/when", {}, ids, report, figures, only
                )


@dataclass(frozen=True)
class DecisionNames:
    """What a decision rule may read beside figures: each hypothesis' possible verdicts and
    the gate ids."""

    verdicts: dict[str, list[str]]
    gates: list[str]


def possible_verdicts(spec: dict) -> dict[str, list[str]]:
    """Each hypothesis' possible verdicts, in a fixed order: its own (a rule's supported and
    not-supported, or its named verdicts), not-tested under tested_after, and each gate's
    otherwise; reported-only for a hypothesis reported only."""
    gate_words = list(
        dict.fromkeys(str(g.get("otherwise") or INCONCLUSIVE) for g in spec.get("gates") or [])
    )
    out: dict[str, list[str]] = {}
    for h in spec.get("hypotheses") or []:
        if not isinstance(h, dict) or h.get("id") is None:
            continue
        if h.get("reported_only") or (h.get("rule") is None and not h.get("verdicts")):
            out[str(h["id"])] = [REPORTED_ONLY]
            continue
        own = (
            [str(v.get("verdict")) for v in h["verdicts"]]
            if h.get("verdicts")
            else [SUPPORTED, NOT_SUPPORTED]
        )
        if h.get("tested_after"):
            own.append(NOT_TESTED)
        out[str(h["id"])] = list(dict.fromkeys(own + gate_words))
    return out


@check
def gate_words_are_their_own(spec: dict, report: Reporter) -> None:
    for ptr, gate in items(spec, "gates"):
        word = gate.get("otherwise")
        if word in (SUPPORTED, NOT_SUPPORTED, NOT_TESTED, REPORTED_ONLY):
            report(
                f"{ptr}/otherwise",
                f"gate {gate.get('id')!r}: otherwise {word!r} would give a failed gate the word"
                f" of another verdict; a failed gate's verdict is {INCONCLUSIVE!r} (the default)"
                " or a word of the study's own",
            )


@check
def decision_well_formed(spec: dict, report: Reporter) -> None:
    from prereg.compiler.reach import unreachable_rules

    dec = spec.get("decision")
    if not isinstance(dec, dict):
        return
    before = len(report.problems)
    outcomes: dict[str, str] = {}
    for i, o in enumerate(dec.get("outcomes") or []):
        oid = str(o.get("id"))
        if oid in outcomes:
            report(
                f"/decision/outcomes/{i}/id",
                f"duplicate outcome {oid!r} (first at {outcomes[oid]})",
            )
        outcomes.setdefault(oid, f"/decision/outcomes/{i}")
    names = DecisionNames(
        possible_verdicts(spec), [str(g.get("id")) for g in spec.get("gates") or []]
    )
    ids = contrast_ids(spec)
    figures = figure_ids(spec)
    used: set[str] = set()
    for i, rule in enumerate(dec.get("rules") or []):
        ptr = f"/decision/rules/{i}"
        oid = str(rule.get("outcome"))
        used.add(oid)
        if oid not in outcomes:
            report(
                f"{ptr}/outcome",
                f"decision rule gives unknown outcome {oid!r} (outcomes: {', '.join(outcomes)})",
            )
        if rule.get("when") is not None:
            _walk_condition(rule["when"], f"{ptr}/when", {}, ids, report, figures, False, names)
    other = str(dec.get("otherwise"))
    used.add(other)
    if other not in outcomes:
        report(
            "/decision/otherwise",
            f"otherwise names unknown outcome {other!r} (outcomes: {', '.join(outcomes)})",
        )
    for oid, ptr in outcomes.items():
        if oid not in used:
            report(
                ptr,
                f"outcome {oid!r} can never be reached: no rule gives it and it is not otherwise",
            )
    if len(report.problems) > before:
        return
    for i, why in unreachable_rules(spec, names.verdicts):
        report(f"/decision/rules/{i}", why)


_ALLOWED_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


@check
def patterns_compile(spec: dict, report: Reporter) -> None:
    policy = spec.get("seed_policy")
    if policy:
        try:
            rx = re.compile(policy.get("pattern", ""))
        except re.error as exc:
            report("/seed_policy/pattern", f"not a valid regular expression: {exc}")
        else:
            demo = policy.get("demo_seed")
            if demo is not None and not rx.fullmatch(demo):
                report(
                    "/seed_policy/demo_seed", f"demo seed {demo!r} does not match the seed pattern"
                )
    for ptr, contract in items(spec, "record_contracts"):
        for i, f in enumerate(contract.get("fields") or []):
            fptr = f"{ptr}/fields/{i}"
            if f.get("pattern") is not None:
                try:
                    re.compile(f["pattern"])
                except re.error as exc:
                    report(f"{fptr}/pattern", f"not a valid regular expression: {exc}")
            lo, hi = f.get("minimum"), f.get("maximum")
            if lo is not None and hi is not None and lo > hi:
                report(f"{fptr}/minimum", f"minimum {lo} is above maximum {hi}")
            kind = f.get("type")
            if f.get("allowed") and kind not in _ALLOWED_TYPES:
                report(
                    f"{fptr}/allowed",
                    "allowed values are only for string, integer, number and boolean fields",
                )
            elif f.get("allowed"):
                wrong = [a for a in f["allowed"] if not _ALLOWED_TYPES[kind](a)]
                if wrong:
                    report(f"{fptr}/allowed", f"allowed values {wrong} are not of type {kind}")
                twins = _normal_form_twins(f["allowed"])
                if twins:
                    report(
                        f"{fptr}/allowed/{twins[1]}",
                        f"allowed values {ascii(f['allowed'][twins[0]])} and"
                        f" {ascii(f['allowed'][twins[1]])} are the same text in two Unicode"
                        " normalisation forms: they look the same; keep one",
                    )
            if f.get("items") and f.get("type") != "array":
                report(f"{fptr}/items", "items is only for array fields")
            tokens = f.get("null_values")
            if tokens:
                if kind not in _ALLOWED_TYPES:
                    report(
                        f"{fptr}/null_values",
                        "null_values are only for string, integer, number and boolean fields"
                        " (the cells of a CSV file)",
                    )
                elif not f.get("nullable") and f.get("required", True):
                    report(
                        f"{fptr}/null_values",
                        f"field {f.get('name')!r} is neither nullable nor optional, so a cell"
                        f" written {tokens[0]!r} would be refused as the field missing; write"
                        " nullable: true (or required: false) or leave null_values out",
                    )
                both = [t for t in tokens if t in (f.get("allowed") or [])]
                if both:
                    report(
                        f"{fptr}/null_values",
                        f"{both} are both allowed values and null_values of field"
                        f" {f.get('name')!r}: a cell so written cannot be both",
                    )
            _boolean_words(f, fptr, report)
        _per_file(spec, contract, ptr, report)


def _normal_form_twins(values: list) -> tuple[int, int] | None:
    """The positions of the first two strings of ``values`` that differ but are equal once
    normalised (NFC), or None."""
    import unicodedata

    seen: dict[str, int] = {}
    for i, v in enumerate(values):
        if isinstance(v, str):
            j = seen.setdefault(unicodedata.normalize("NFC", v), i)
            if j != i and values[j] != v:
                return j, i
    return None


def _shown_path(path) -> str:
    """A field's path as the spec writes it: ``[scores, match, value]``."""
    import json

    return "[" + ", ".join(json.dumps(k, ensure_ascii=False) for k in path) + "]"


_CSV_ONLY = ("null_values", "true_values", "false_values")


@check
def field_paths(spec: dict, report: Reporter) -> None:
    """Where each field of a record contract is found (its ``path``, else its name): no two
    fields at one place, no field's path running through another field (whose value would then
    be both a field and the object holding it), and a nested field without the keys that only
    a CSV file's cells need (CSV holds no nested values)."""
    for ptr, contract in items(spec, "record_contracts"):
        cid = contract.get("id")
        seen: dict[tuple, tuple[str, str]] = {}
        fields = [
            (f"{ptr}/fields/{i}", f)
            for i, f in enumerate(contract.get("fields") or [])
            if isinstance(f, dict) and isinstance(f.get("name"), str)
        ]
        for fptr, f in fields:
            path = f.get("path")
            if not path:
                continue
            if not isinstance(path, list) or not all(isinstance(k, str) for k in path):
                continue  # the language schema words it
            if spec.get("engine") != "factorial":
                # the other engines read their inputs by their own readers, key by key
                report(
                    f"{fptr}/path",
                    f"record contract {cid!r}, field {f['name']!r}: path is read by the"
                    f" factorial engine's readers; engine {spec.get('engine')!r} reads each"
                    " field at its top-level key (its name)",
                )
                continue
            if len(path) > 1:
                for k in _CSV_ONLY:
                    if f.get(k) is not None:
                        report(
                            f"{fptr}/{k}",
                            f"record contract {cid!r}, field {f['name']!r}: {k} names CSV"
                            f" cells, and a field at a nested path {_shown_path(path)} is"
                            " never read from CSV (a CSV cell holds no object); leave it out",
                        )
            if f.get("per_file"):
                report(
                    f"{fptr}/per_file",
                    f"record contract {cid!r}, field {f['name']!r}: a field given per file is"
                    " written at the top of its records (without path)",
                )
        for fptr, f in fields:
            path = f.get("path") or [f["name"]]
            if not isinstance(path, list) or not all(isinstance(k, str) for k in path):
                continue
            key = tuple(path)
            if key in seen:
                other, optr = seen[key]
                report(
                    f"{fptr}/path" if f.get("path") else f"{fptr}/name",
                    f"record contract {cid!r}: fields {other!r} and {f['name']!r} are both at"
                    f" {_shown_path(key)} (first at {optr}); a value is one field",
                )
                continue
            seen[key] = (f["name"], fptr)
        for key, (name, fptr) in seen.items():
            for n in range(1, len(key)):
                if key[:n] in seen:
                    other, optr = seen[key[:n]]
                    kind = next((g.get("type") for _, g in fields if g["name"] == other), "?")
                    report(
                        f"{fptr}/path",
                        f"record contract {cid!r}: field {name!r} at {_shown_path(key)} runs"
                        f" through field {other!r} at {_shown_path(key[:n])} (of type {kind},"
                        f" at {optr}); the object on a field's path is not itself a field: give"
                        f" the fields inside it paths of their own, or drop {other!r}",
                    )
                    break


def _per_file(spec: dict, contract: dict, ptr: str, report: Reporter) -> None:
    """A field given per observations file: in the factorial engine's observation contract, a
    string field whose values are listed (so each file's is checked; with several such fields,
    none with a comma, which joins them on the command line), never null nor left out (every
    record of a file has the file's value)."""
    given = [
        (i, f)
        for i, f in enumerate(contract.get("fields") or [])
        if isinstance(f, dict) and f.get("per_file")
    ]
    for i, f in given:
        fptr = f"{ptr}/fields/{i}/per_file"
        name = f.get("name")
        if spec.get("engine") != "factorial" or contract.get("role") != "observation":
            report(
                fptr,
                f"field {name!r}: per_file is for the observations of a factorial study (the"
                " record contract with role observation), whose score reads one file or several",
            )
            continue
        if len(given) > 1:
            # several fields given per file: a file is named V1,V2=PATH, so no value has a comma
            values = f.get("allowed") or next(
                (
                    [lv.get("id") for lv in fa.get("levels") or [] if isinstance(lv, dict)]
                    for fa in spec.get("factors") or []
                    if isinstance(fa, dict) and fa.get("id") == f.get("factor")
                ),
                [],
            )
            comma = next((v for v in values if "," in str(v)), None)
            if comma is not None:
                report(
                    fptr,
                    f"field {name!r}: its value {comma!r} has a comma, and the values of the"
                    f" {len(given)} fields given per file are written together, joined by"
                    " commas (--observations V1,V2=PATH): give the value without one",
                )
        if f.get("type") != "string" or not (f.get("allowed") or f.get("factor")):
            report(
                fptr,
                f"field {name!r}: a field given per file is a string with its values listed"
                " (allowed: [...], or factor: naming a factor), so that each file's value is"
                " checked",
            )
        if f.get("nullable") or f.get("required") is False or f.get("null_values"):
            report(
                fptr,
                f"field {name!r}: every record of a file has the file's value, so a field given"
                " per file is neither nullable nor optional",
            )


def _boolean_words(f: dict, fptr: str, report: Reporter) -> None:
    """A field's ``true_values`` and ``false_values``: the CSV cells of a boolean field, given
    together, as text, each word in one list only (and none of its ``null_values``)."""
    words = {k: f.get(k) for k in ("true_values", "false_values") if f.get(k) is not None}
    if not words:
        return
    if f.get("type") != "boolean":
        for k in words:
            report(f"{fptr}/{k}", f"{k} are only for boolean fields (the cells of a CSV file)")
        return
    if len(words) == 1:
        (given,) = words
        other = "false_values" if given == "true_values" else "true_values"
        report(
            f"{fptr}/{given}",
            f"field {f.get('name')!r} gives {given} without {other}: give both, so that every"
            " cell of the field is read as the export wrote it",
        )
        return
    seen: dict[str, str] = {}
    for k, listed in words.items():
        if not isinstance(listed, list) or not listed:
            report(f"{fptr}/{k}", f"{k} must list at least one cell")
            continue
        for i, w in enumerate(listed):
            if not isinstance(w, str):
                report(
                    f"{fptr}/{k}/{i}",
                    f"{w!r} is not text: quote each cell as the file writes it (YAML reads"
                    ' True, TRUE and yes unquoted as a boolean; write "True")',
                )
            elif w == "":
                report(f"{fptr}/{k}/{i}", "an empty cell is a null, not a boolean")
            elif w in seen:
                report(
                    f"{fptr}/{k}/{i}",
                    f"{w!r} is listed twice"
                    + (f" (also in {seen[w]})" if seen[w] != k else "")
                    + ": a cell stands for one value",
                )
            else:
                seen[w] = k
    nulls = [str(t) for t in f.get("null_values") or []]
    for w in [w for w in seen if w in nulls]:
        report(
            f"{fptr}/{seen[w]}",
            f"{w!r} is both in {seen[w]} and in null_values of field {f.get('name')!r}",
        )


@check
def amendments_in_order(spec: dict, report: Reporter) -> None:
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in str(v).split("."))

    previous = None
    for ptr, a in items(spec, "amendments"):
        version = a.get("version")
        if previous is not None and key(version) <= key(previous):
            report(f"{ptr}/version", f"amendment {version} does not come after {previous}")
        previous = version
    if previous is not None and key(previous) != key(spec.get("version", "0")):
        report(
            "/version",
            f"study version {spec.get('version')} differs from the latest amendment, {previous}",
        )
    if spec.get("amendments") and spec.get("status") == "draft":
        report("/status", "a draft study has no amendments; register it first")


@check
def commands_well_formed(spec: dict, report: Reporter) -> None:
    for ptr, command in items(spec, "commands"):
        optional_seen = False
        for i, arg in enumerate(command.get("arguments") or []):
            aptr = f"{ptr}/arguments/{i}"
            name = arg.get("name", "")
            is_option = name.startswith("--")
            if arg.get("kind") == "positional" and is_option:
                report(f"{aptr}/name", f"positional argument {name!r} must not start with --")
            if arg.get("kind") in ("option", "flag") and not is_option:
                report(f"{aptr}/name", f"option {name!r} must start with --")
            if arg.get("kind") == "flag" and arg.get("type") is not None:
                report(f"{aptr}/type", f"flag {name!r} takes no type")
            if arg.get("kind") != "flag" and arg.get("type") is None:
                report(f"{aptr}/type", f"argument {name!r} needs a type")
            if arg.get("repeated") and arg.get("kind") != "option":
                report(
                    f"{aptr}/repeated",
                    f"only an option may be repeated ({name!r} is a {arg.get('kind')})",
                )
            if arg.get("kind") == "positional":
                if arg.get("required") is False:
                    optional_seen = True
                elif optional_seen:
                    report(aptr, f"required positional {name!r} follows an optional one")


#: The longest study id: files are named after it (a 250-character id compiled, and seal and
#: every command of the study failed with an ENAMETOOLONG traceback).
MAX_STUDY_ID = 128


def run_checks(loaded: Loaded, expected_id: str | None = None) -> list[str]:
    from prereg.compiler import analyses, structure, vocabulary  # noqa: F401  (their checks)

    report = Reporter(loaded)
    spec = loaded.data
    if expected_id is not None and spec.get("id") != expected_id:
        report("/id", f"study id {spec.get('id')!r} differs from its file name {expected_id!r}")
    from prereg.compiler.project import CORE_COMMANDS

    sid = spec.get("id")
    if isinstance(sid, str) and len(sid) > MAX_STUDY_ID:
        report(
            "/id",
            f"study id of {len(sid)} characters is longer than {MAX_STUDY_ID}: the files named"
            " after it (<id>.seal.json, <id>.intoto.dsse.json, ...) must fit a file system's"
            " 255-byte limit on a name",
        )
    if spec.get("id") in CORE_COMMANDS:
        report(
            "/id",
            f"study id {spec.get('id')!r} is a prereg command ({', '.join(sorted(CORE_COMMANDS))});"
            " `prereg <study-id>` could not reach the study",
        )
    from prereg.compiler.expand import size_problems

    too_many = size_problems(spec)  # before any check lists the crossings' cells
    for ptr, rule in too_many:
        report(ptr, rule)
    for fn in CHECKS if not too_many else ():
        fn(spec, report)
    report.problems.sort(key=lambda p: p[0])
    return [p[1] for p in report.problems]
