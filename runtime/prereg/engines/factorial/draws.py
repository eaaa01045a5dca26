"""What a simulated row draws and the records it writes: the per-row random words of
``simulate`` (:mod:`.rowhash` of the scenario, seed and row), the draws of numbers, confidences and
latents, and :class:`RecordWriter`, which shapes a row's observation records as real data
carry them. ``simulation`` (batches), ``structure`` (clusters, ratings) and ``commands``
(``simulate``, diagnose's row path) build on this module; it imports none of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from prereg.decide import attempts as attempt_policy
from prereg.decide import scenarios as registered
from prereg.decide.table import RowTable, cell_attributes, level_value
from prereg.errors import UserError
from prereg.stats.rounding import round_half_up, round_half_up_array

from . import rowhash

#: Uniforms of a row before its numbers' (coverage, failed attempt, outcome, confidence).
FIXED_DRAWS = 4


_U53 = 2.0**-53


def row_words(scenario_id: str, seed, names: Sequence[Any], k: int) -> np.ndarray:
    """The first ``k`` 64-bit words of each row (``len(names)`` × ``k``, uint64): the keyed
    words of :mod:`.rowhash` of the row's name (:func:`name_text`) under the purpose ``rows``."""
    texts = names if all(type(r) is str for r in names) else [name_text(r) for r in names]
    k0, k1 = rowhash.key(scenario_id, seed, "rows")
    return rowhash.words(rowhash.text_keys(texts, k0, k1), k)


def name_text(name: Any) -> str:
    """A row's name as its words read it: a string as it is, a tuple of key values as the
    canonical JSON of their list, anything else as its JSON."""
    from prereg.digest import canonical_json

    if type(name) is str:
        return name
    if isinstance(name, tuple):
        name = list(name)
    return canonical_json(name).decode("utf-8")


def uniforms(words: np.ndarray) -> np.ndarray:
    """Uniforms on [0, 1) of 64-bit words: the top 53 bits."""
    return (words >> np.uint64(11)).astype(np.float64) * _U53


def midpoints(words: np.ndarray) -> np.ndarray:
    """Uniforms on (0, 1) of 64-bit words: the midpoint of the top 52 bits' interval."""
    return ((words >> np.uint64(12)).astype(np.float64) * 2.0 + 1.0) * _U53


def normals(words: np.ndarray) -> np.ndarray:
    """Standard normals of 64-bit words: Φ⁻¹ at the midpoint of the top 52 bits' interval."""
    from scipy.special import ndtri

    return ndtri(midpoints(words))


def item_normals(scenario_id: str, seed, items: Sequence[Any], what: str) -> np.ndarray:
    """The normal shared by the rows of each item (a paired scenario), for the outcome or a
    field (``what``): from word 0 of the item's text under the purpose ``pair:<what>``."""
    k0, k1 = rowhash.key(scenario_id, seed, f"pair:{what}")
    return normals(rowhash.words(rowhash.text_keys([str(i) for i in items], k0, k1), 1)[:, 0])


def numbers_of(
    v: Mapping[str, Any], z: np.ndarray, integer: bool, command: str = "simulate"
) -> np.ndarray:
    """Numbers of value entry ``v`` from standard normal latents: made, clipped and rounded as
    :func:`~.commands._finish` does (an integer field's as int64, else float64); a number
    beyond what the field holds is refused naming ``command``."""
    from scipy.special import ndtr

    from prereg.stats.rounding import round_half_up_array

    dist = v["distribution"]
    if dist == "normal":
        x = float(v.get("mean") or 0.0) + float(v.get("sd") or 0.0) * z
    elif dist == "lognormal":
        with np.errstate(over="ignore"):
            x = np.exp(float(v.get("mean") or 0.0) + float(v.get("sd") or 0.0) * z)
    else:
        x = float(v["low"]) + (float(v["high"]) - float(v["low"])) * ndtr(z)
    if v.get("low") is not None:
        x = np.maximum(x, float(v["low"]))
    if v.get("high") is not None:
        x = np.minimum(x, float(v["high"]))
    if integer:
        if not np.all(np.abs(x) < 2.0**53):
            raise UserError(
                f"{command}: a drawn whole number of {v['field']!r} is beyond ±2^53 (clip it"
                " with low/high)"
            )
        return np.rint(x).astype(np.int64)
    if v.get("decimals") is not None:
        x = round_half_up_array(x, int(v["decimals"]))
    if not np.all(np.isfinite(x)):
        raise UserError(
            f"{command}: a drawn number of {v['field']!r} is not finite (clip it with low/high)"
        )
    return x


def entry_table(cells, entries) -> np.ndarray:
    """Per cell and outcome (wrong, right), the index of the first value entry whose ``where``
    and ``outcome`` hold (-1: none)."""
    from prereg.rules import selection_matches

    out = np.full((len(cells), 2), -1, dtype=np.int64)
    for c, cell in enumerate(cells):
        attrs = cell_attributes(cell)
        for right in (0, 1):
            for j, v in enumerate(entries):
                if not selection_matches(registered.selection(v.get("where")), attrs):
                    continue
                if v.get("outcome") is not None and bool(v["outcome"]) != bool(right):
                    continue
                out[c, right] = j
                break
    return out


def row_numbers(writer, rid, cell: Mapping[str, Any], right: bool, seed, item=None) -> dict:
    """One row's numbers (its ``values`` fields, not a calibration's confidence) as
    :meth:`Simulation.draw` draws them: under a pairing only when ``item`` is given."""
    from prereg.rules import selection_matches

    words = row_words(str(writer.scenario_id), seed, [rid], FIXED_DRAWS + len(writer.values))
    attrs = cell_attributes(cell)
    out: dict[str, Any] = {}
    for f, (name, entries) in enumerate(writer.values):
        for v in entries:
            if not selection_matches(registered.selection(v.get("where")), attrs):
                continue
            if v.get("outcome") is not None and bool(v["outcome"]) != bool(right):
                continue
            z = normals(words[:, FIXED_DRAWS + f])
            if writer.pairing is not None and item is not None:
                rho = float(writer.pairing["correlation"])
                w = item_normals(str(writer.scenario_id), seed, [item], name)
                z = math.sqrt(rho) * w + math.sqrt(1.0 - rho) * z
            out[name] = numbers_of(v, z, writer.integer[name], writer.command)[0].item()
            break
        else:
            raise UserError(
                f"{writer.command}: scenario {writer.scenario_id} draws no value of {name!r} for a row"
                f" of cell {cell['id']} (end the field's entries with one without where)"
            )
    return out


def _contract(config: Mapping[str, Any], role: str) -> Mapping[str, Any]:
    found = [c for c in config["record_contracts"] if c.get("role") == role]
    if not found:
        raise UserError(
            f"study {config['study_id']}: the factorial engine needs a record contract with"
            f" role {role!r}"
        )
    return found[0]


def _has(config: Mapping[str, Any], role: str) -> bool:
    return any(c.get("role") == role for c in config["record_contracts"])


def _failed_conditions(policy: Mapping[str, Any]) -> tuple[str, list]:
    """The conditions a simulated failed attempt meets, with the key of the policy they are
    read from: its ``failed`` conditions, or, without them, the first of ``failed_if_any``."""
    if policy.get("failed"):
        return "failed", list(policy["failed"])
    return "failed_if_any", list(policy.get("failed_if_any") or ())[:1]


def failed_problem(policy: Mapping[str, Any]) -> tuple[str, str] | None:
    """Why no failed attempt can be written that meets the policy's failed conditions, as
    ``(pointer into the spec, rule)``, or None when one can (:func:`_failed_record`)."""
    key, conds = _failed_conditions(policy)
    for k, c in enumerate(conds):
        writable = (
            c["op"] == "is_null"
            or (c["op"] == "eq" and c.get("other") is None)
            or (c["op"] == "in" and c.get("values"))
        )
        if not writable:
            return (
                f"/attempts/{key}/{k}",
                f"cannot write a failed attempt meeting {c['field']} {c['op']} (only is_null,"
                " eq with a value, and in)",
            )
    if not conds:
        return "/attempts", "the attempt policy registers no failed condition"
    return None


def _failed_record(policy: Mapping[str, Any], command: str = "simulate") -> dict[str, Any]:
    """Field values that make an attempt meet the policy's ``failed`` conditions (or, without
    them, the first of its ``failed_if_any`` conditions)."""
    problem = failed_problem(policy)
    if problem is not None:
        raise UserError(f"{command}: {problem[1]}")
    out: dict[str, Any] = {}
    for c in _failed_conditions(policy)[1]:
        if c["op"] == "is_null":
            out[c["field"]] = None
        elif c["op"] == "eq":
            out[c["field"]] = c.get("value")
        else:
            out[c["field"]] = c["values"][0]
    return out


def _fixed_fields(policy: Mapping[str, Any]) -> dict[str, Any]:
    """Fields the scored attempts must carry (``where`` conditions eq a value, and for
    ``first-match`` the ``select`` conditions the attempt that counts meets)."""
    out = {}
    conds = list(policy.get("where") or ())
    if policy.get("counts") == "first-match":
        conds += list(policy.get("select") or ())
    for c in conds:
        if c["op"] == "eq" and c.get("other") is None:
            out[c["field"]] = c.get("value")
        elif c["op"] == "in" and c.get("values"):
            out[c["field"]] = c["values"][0]
    return out


def _value_specs(scenario: Mapping[str, Any]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """The scenario's numeric fields in order of first mention, each with its entries."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for v in scenario.get("values") or ():
        out.setdefault(str(v["field"]), []).append(v)
    return list(out.items())


def _draw(v: Mapping[str, Any], rng: np.random.Generator, integer: bool):
    dist = v["distribution"]
    if dist == "normal":
        x = float(rng.normal(float(v.get("mean") or 0.0), float(v.get("sd") or 0.0)))
    elif dist == "lognormal":
        x = float(np.exp(rng.normal(float(v.get("mean") or 0.0), float(v.get("sd") or 0.0))))
    else:
        x = float(rng.uniform(float(v["low"]), float(v["high"])))
    if v.get("low") is not None:
        x = max(x, float(v["low"]))
    if v.get("high") is not None:
        x = min(x, float(v["high"]))
    if integer:
        return int(round(x))
    if v.get("decimals") is not None:
        return round_half_up(x, int(v["decimals"]))
    return x


def _from_latent(v: Mapping[str, Any], z: np.ndarray) -> np.ndarray:
    """Numbers of ``v``'s distribution from standard normal latents (a paired scenario)."""
    from scipy.special import ndtr

    dist = v["distribution"]
    if dist == "normal":
        return float(v.get("mean") or 0.0) + float(v.get("sd") or 0.0) * z
    if dist == "lognormal":
        return np.exp(float(v.get("mean") or 0.0) + float(v.get("sd") or 0.0) * z)
    return float(v["low"]) + (float(v["high"]) - float(v["low"])) * ndtr(z)


def _finish(v: Mapping[str, Any], x: np.ndarray, integer: bool, arrays: bool = False):
    """Clip to low/high and round, as :func:`_draw` does: a list, or with ``arrays`` a float
    array of the same numbers (a whole number rounded half to even, as ``round`` rounds)."""
    if v.get("low") is not None:
        x = np.maximum(x, float(v["low"]))
    if v.get("high") is not None:
        x = np.minimum(x, float(v["high"]))
    if arrays and v.get("decimals") is None:
        return np.rint(x) if integer else np.asarray(x, dtype=np.float64)
    if arrays:  # the same numbers as round_half_up gives each
        return round_half_up_array(x, int(v["decimals"]))
    if integer:
        return [int(round(t)) for t in x.tolist()]
    if v.get("decimals") is not None:
        d = int(v["decimals"])
        return [round_half_up(t, d) for t in x.tolist()]
    return x.tolist()


def _draw_many(
    v: Mapping[str, Any],
    rng: np.random.Generator,
    size: int,
    integer: bool,
    z=None,
    arrays: bool = False,
):
    """``size`` numbers drawn as :func:`_draw` draws one (the same clipping and rounding), or,
    given standard normal latents ``z``, their numbers (a paired scenario); a list, or with
    ``arrays`` a float array (:func:`_finish`)."""
    if z is not None:
        return _finish(v, _from_latent(v, np.asarray(z, dtype=np.float64)), integer, arrays)
    dist = v["distribution"]
    if dist == "normal":
        x = rng.normal(float(v.get("mean") or 0.0), float(v.get("sd") or 0.0), size)
    elif dist == "lognormal":
        x = np.exp(rng.normal(float(v.get("mean") or 0.0), float(v.get("sd") or 0.0), size))
    else:
        x = rng.uniform(float(v["low"]), float(v["high"]), size)
    return _finish(v, x, integer, arrays)


class WordLayout:
    """Where a simulated study of diagnose's row path reads each of its draws, as spans of its
    64-bit words (``spans[name] = (start, stop)``, ``width`` words in all; see
    :meth:`~.commands.DrawnRows.draw_words`), for a table of ``rows`` rows under ``writer``'s
    scenario (``items`` items under a pairing): a word per row for which rows are observed,
    whether a row's first attempt failed and its outcome (under a pairing, a word per item
    first), a word per row for a calibration's confidence, and for each numeric field (in
    order of first mention) a word per row (under a pairing, a word per item first).  Every
    study reads the same number of words, whatever its draws come to."""

    def __init__(self, writer, rows: int, items: int = 0):
        self.spans: dict[str, tuple[int, int]] = {}
        self.width = 0
        paired = writer.pairing is not None
        self._take("observed", rows)
        self._take("failed", rows)
        if paired:
            self._take("items:outcome", items)
        self._take("outcome", rows)
        if writer.calibration:
            self._take("confidence", rows)
        for name, _ in writer.values:
            if paired:
                self._take(f"items:{name}", items)
            self._take(f"value:{name}", rows)

    def _take(self, name: str, k: int) -> None:
        self.spans[name] = (self.width, self.width + int(k))
        self.width += int(k)

    def part(self, words: np.ndarray, name: str) -> np.ndarray:
        """The words of span ``name`` of each study (``words``: (studies, width))."""
        a, b = self.spans[name]
        return words[:, a:b]


def latent_values(v: Mapping[str, Any], z: np.ndarray, integer: bool) -> np.ndarray:
    """Numbers of value entry ``v`` from standard normal latents ``z``, clipped and rounded as
    :func:`_draw` draws one (a float array; a whole number rounded half to even)."""
    return _finish(v, _from_latent(v, np.asarray(z, dtype=np.float64)), integer, arrays=True)


def word_values(v: Mapping[str, Any], words: np.ndarray, integer: bool) -> np.ndarray:
    """Numbers of value entry ``v``, one from each 64-bit word: a uniform entry's low +
    (high − low)·u, u the word's :func:`midpoints` (the uniform whose Φ⁻¹ is its normal),
    else the entry's distribution at the word's normal (:func:`normals`); clipped and rounded
    as :func:`_draw` draws one (a float array)."""
    if v["distribution"] == "uniform":
        low, high = float(v["low"]), float(v["high"])
        return _finish(v, low + (high - low) * midpoints(words), integer, arrays=True)
    return latent_values(v, normals(words), integer)


#: A calibration entry as a value entry (:func:`prereg.decide.scenarios.confidence_entry`).
_confidence_entry = registered.confidence_entry


def chance_right(entry: Mapping[str, Any], confidence):
    """The chance that a row is right given its drawn confidence, by the entry's registered
    calibration curve: the confidence itself (calibrated), or the confidence less the margin,
    at least 0 (over-confident by the margin)."""
    c = np.asarray(confidence, dtype=np.float64)
    if entry["curve"] == "calibrated":
        return c
    return np.maximum(c - float(entry.get("margin") or 0.0), 0.0)


def structure_fields(scenario: Mapping[str, Any]) -> set[str]:
    """The observation fields a structured scenario writes besides the outcome and values: its
    cluster fields and its ratings' label, item and rater (laid out, or copied from the item
    manifest when the observations carry them too)."""
    return structure_read(scenario) if registered.structured(scenario) else set()


#: The farthest a standard normal of ``simulate``'s words reaches: Φ⁻¹ at the midpoint of the
#: first (or last) interval of the top 52 bits of a word, Φ⁻¹(2⁻⁵³) (:func:`normals`).
WORD_NORMAL_REACH = 8.209536151601387


def _outcomes(scenario: Mapping[str, Any], cell: Mapping[str, Any]) -> tuple[bool, ...]:
    """The outcomes (right or not) a row of ``cell`` can have under ``scenario``: none is
    right without an outcome; a rate of 0 or 1 at every effect size allows one; a calibration
    curve (a chance that moves with each row's confidence) both."""
    from prereg.rules import selection_matches

    if scenario.get("outcome") is None:
        return (False,)
    attrs = cell_attributes(cell)
    for c in scenario.get("calibration") or ():
        if selection_matches(registered.selection(c.get("where")), attrs):
            return (False, True)
    rate = next(
        (r for r in registered.compiled_rates(scenario) if selection_matches(r[0], attrs)), None
    )
    if rate is None:
        return (False, True)  # refused as a missing rate
    chances = {rate[1] + rate[2] * e for e in registered.effects(scenario) or (0.0,)}
    return tuple(o for o in (False, True) if any((c > 0.0) if o else (c < 1.0) for c in chances))


def _reach(v: Mapping[str, Any]) -> tuple[float, float]:
    """The least and greatest number a value entry draws from a normal within
    :data:`WORD_NORMAL_REACH` (each draw is monotone in its normal), clipped to low/high."""
    dist = v["distribution"]
    ends = []
    for z in (-WORD_NORMAL_REACH, WORD_NORMAL_REACH):
        if dist == "uniform":
            x = float(v["low"]) if z < 0 else float(v["high"])
        else:
            x = float(v.get("mean") or 0.0) + float(v.get("sd") or 0.0) * z
            if dist == "lognormal":
                try:
                    x = math.exp(x)
                except OverflowError:
                    x = math.inf
        if v.get("low") is not None:
            x = max(x, float(v["low"]))
        if v.get("high") is not None:
            x = min(x, float(v["high"]))
        ends.append(x)
    return ends[0], ends[1]


def _unlisted(v: Mapping[str, Any], low: float, high: float, integer: bool, allowed) -> str | None:
    """Why an entry's draws, between ``low`` and ``high`` (its reach), may fall outside a
    field's ``allowed`` numbers (a grade in steps of 0.5 drawn with one decimal), or None."""
    from decimal import Decimal

    from prereg.stats.rounding import round_half_up

    listed = {Decimal(str(a)) for a in allowed if not isinstance(a, bool)}
    d = 0 if integer else v.get("decimals")
    if d is None:
        return "any number between its bounds (no decimals)"
    lo, hi = Decimal(str(round_half_up(low, int(d)))), Decimal(str(round_half_up(high, int(d))))
    step = Decimal(1).scaleb(-int(d))
    if (hi - lo) / step + 1 > len(listed):
        return f"more numbers with {d} decimal(s) between {lo} and {hi} than it lists"
    x = lo
    while x <= hi:
        if x not in listed:
            return f"{x}, which it does not list"
        x += step
    return None


def value_problems(
    cells,
    scenario: Mapping[str, Any],
    integer: Mapping[str, bool],
    allowed: Mapping[str, Sequence[Any]] | None = None,
) -> list:
    """Why the numbers of ``scenario``'s ``values`` cannot be drawn for every row, as
    ``(pointer relative to the scenario, rule)``: a cell whose rows, right or wrong as they can
    be, meet none of a field's entries; an entry whose draws reach a number that is not finite,
    or beyond ±2^53 for a whole-number field, within :data:`WORD_NORMAL_REACH` standard
    deviations (clip it with low/high)."""
    out: list[tuple[str, str]] = []
    sid = scenario.get("id")
    where: dict[str, list[int]] = {}
    for j, v in enumerate(scenario.get("values") or ()):
        where.setdefault(str(v["field"]), []).append(j)
    for name, entries in _value_specs(scenario):
        table = entry_table(cells, entries)
        for c, cell in enumerate(cells):
            lost = [o for o in _outcomes(scenario, cell) if table[c, int(o)] < 0]
            if lost:
                when = ""
                if scenario.get("outcome") is not None and len(lost) == 1:
                    when = " when they are right" if lost[0] else " when they are wrong"
                out.append(
                    (
                        f"values/{where[name][-1]}",
                        f"scenario {sid}: no entry of {name!r} draws a number for the rows of"
                        f" cell {cell['id']}{when} (end the field's entries with one without"
                        " where or outcome)",
                    )
                )
                break
        for j, v in zip(where[name], entries, strict=True):
            low, high = _reach(v)
            listed = (allowed or {}).get(name)
            if listed and math.isfinite(low) and math.isfinite(high):
                why = _unlisted(v, low, high, bool(integer.get(name)), listed)
                if why is not None:
                    out.append(
                        (
                            f"values/{j}",
                            f"scenario {sid}: {name!r} allows only the numbers it lists, and"
                            f" this entry draws {why} (round with decimals, and clip with"
                            " low/high, to numbers it lists)",
                        )
                    )
                    continue
            if not (math.isfinite(low) and math.isfinite(high)):
                bad = "is not finite"
            elif integer.get(name) and not max(abs(low), abs(high)) < 2.0**53:
                bad = "is a whole number beyond ±2^53"
            else:
                continue
            out.append(
                (
                    f"values/{j}",
                    f"scenario {sid}: a number of {name!r} drawn {WORD_NORMAL_REACH:.2f} standard"
                    f" deviations out {bad} (clip it with low/high)",
                )
            )
    return out


class RecordWriter:
    """Writes the observation records of one row the way ``simulate`` does: its scored
    attempts carry the fields the policy's ``where`` fixes and the row's split and levels when
    the observations place their rows; a failed attempt meets the policy's ``failed``.

    A scenario whose records cannot be written so (a required field it does not draw, a field
    the contract lacks, a failed attempt no value meets, a row of a cell with no value of a
    field, a number beyond what a field holds) is refused by the command building the writer
    (``command``, named in the message); with ``strict=False`` the writer keeps every such
    problem in :attr:`problems` instead, as ``(pointer, rule)`` (pointer: into the spec, or
    relative to the scenario when it does not start with ``/``), and compile reports them
    (:func:`prereg.engines.factorial.spec_checks.checks`)."""

    def __init__(
        self,
        config,
        scenario: Mapping[str, Any],
        command: str = "simulate",
        strict: bool = True,
    ):
        policy = config["attempts"]
        obs = _contract(config, "observation")
        names = {f["name"] for f in obs["fields"]}
        self.command = command
        self.problems: list[tuple[str, str]] = []
        self.row_field, self.order = policy["key"][0], policy.get("order")
        self.name = attempt_policy.row_name(policy)
        self.outcome = scenario.get("outcome")  # None: the scenario draws no outcome
        self.written = registered.outcome_values(scenario)
        self.fixed = _fixed_fields(policy)
        self.placing = {
            f["name"]: ("split", None) for f in obs["fields"] if f.get("role") == "split"
        }
        self.placing.update({f["name"]: ("factor", f) for f in obs["fields"] if f.get("factor")})
        # a failed attempt is written only before a later one (a policy with an order)
        self.failed = {}
        if self.order:
            problem = failed_problem(policy)
            if problem is None:
                self.failed = _failed_record(policy, command)
            else:
                self.problems.append(problem)
        types = {f["name"]: f.get("type") for f in obs["fields"]}
        # a required field with allowed values that nothing else draws takes, on a successful
        # attempt, the first allowed value that does not make the attempt failed
        failing = {}
        for c in (*(policy.get("failed") or ()), *(policy.get("failed_if_any") or ())):
            if c["op"] == "eq":
                failing.setdefault(c["field"], set()).add(c.get("value"))
            elif c["op"] == "in":
                failing.setdefault(c["field"], set()).update(c.get("values") or ())
        self.defaults: dict[str, Any] = {}
        # a required nullable field without allowed values (a sandbox's error message) is
        # written null on a successful attempt, unless a null there would mark the attempt
        # failed or leave it unscored (a null meets only is_null, ne and not_in)
        meets_null = ("is_null", "ne", "not_in")
        read = {
            c.get("field")
            for part in ("failed", "failed_if_any")
            for c in policy.get(part) or ()
            if c.get("op") in meets_null
        } | {
            c.get("field")
            for part in ("where", "select")
            for c in policy.get(part) or ()
            if c.get("op") not in meets_null
        }
        for f in obs["fields"]:
            if f.get("allowed") and f.get("required", True):
                ok = [v for v in f["allowed"] if v not in failing.get(f["name"], set())]
                if ok:
                    self.defaults[f["name"]] = ok[0]
            elif (
                f.get("nullable")
                and f.get("required", True)
                and f.get("type") != "object"
                and f["name"] not in read
            ):
                self.defaults[f["name"]] = None
        self.values = _value_specs(scenario)
        self.calibration = [dict(c) for c in scenario.get("calibration") or ()]
        self.pairing = scenario.get("pairing")
        calibrated = list(dict.fromkeys(str(c["field"]) for c in self.calibration))
        self.integer = {name: types.get(name) == "integer" for name, _ in self.values}
        self.scenario_id = scenario["id"]
        required = {f["name"] for f in obs["fields"] if f.get("required", True)}
        structure = structure_fields(scenario) & names
        drawn = {
            self.row_field,
            *([self.order] if self.order else []),
            *([self.outcome] if self.outcome else []),
            *self.fixed,
            *self.failed,
            *(name for name, _ in self.values),
            *calibrated,
            *structure,
            *self.name,  # a row named by several fields writes each
        }
        success = {self.row_field, *self.fixed, *self.placing, *structure}
        success |= {self.outcome} if self.outcome else set()
        success |= {self.order} if self.order else set()
        success |= {name for name, _ in self.values} | set(calibrated)
        self.defaults = {k: v for k, v in self.defaults.items() if k not in success}
        drawn |= set(self.defaults)
        # a field only a failed attempt carries is absent from a successful one
        written = drawn - (set(self.failed) - success - set(self.defaults))
        missing = sorted(required - written - set(self.placing))
        if missing:
            self.problems.append(
                (
                    "",
                    f"scenario {self.scenario_id}: the observation contract {obs.get('id')}"
                    f" requires field(s) {missing}, which the scenario does not draw (draw them"
                    " with values, or mark them required: false)",
                )
            )
        unknown = sorted(drawn - names)
        if unknown:
            self.problems.append(
                (
                    "",
                    f"scenario {self.scenario_id}: the observation contract {obs.get('id')} has"
                    f" no field(s) {unknown}, which the scenario's records carry",
                )
            )
        self.problems += value_problems(
            config.get("cells") or (),
            scenario,
            self.integer,
            {f["name"]: f["allowed"] for f in obs["fields"] if f.get("allowed")},
        )
        if strict and self.problems:
            raise UserError(f"{command}: {self.problems[0][1]}")

    def numbers(self, rid, cell: Mapping[str, Any], right: bool, seed, item=None) -> dict[str, Any]:
        """The numeric fields of one row's attempts as ``simulate`` draws them (see
        :mod:`.simulation`): for each field the first entry whose ``where`` and ``outcome``
        hold, from the row's own uniform for the field (under a pairing, with ``item``, from
        the latent √ρ·w + √(1 − ρ)·z, w the item's normal for the field)."""
        if not self.values:
            return {}
        return row_numbers(self, rid, cell, right, seed, item)

    def calibration_entry(self, cell: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The first calibration entry whose ``where`` holds for the rows of ``cell``."""
        from prereg.rules import selection_matches

        attrs = cell_attributes(cell)
        for c in self.calibration:
            if selection_matches(registered.selection(c.get("where")), attrs):
                return c
        return None

    def records(
        self,
        rid: str,
        cell: Mapping[str, Any],
        failed_first: bool,
        right: bool,
        seed=0,
        numbers: Mapping[str, Any] | None = None,
    ):
        if numbers is None:
            numbers = self.numbers(rid, cell, right, seed)
        return self.shaped(rid, cell, failed_first, self.written[bool(right)], numbers)

    def shaped(
        self, rid, cell: Mapping[str, Any], failed_first: bool, outcome, numbers: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """A row's records with these values as they are (``simulate``'s templates pass
        markers): one record, or, with an order field and ``failed_first``, a failed attempt
        and the one that counts."""
        levels = {
            name: cell["split"]
            if kind == "split"
            else level_value(field, cell["levels"].get(field["factor"]))
            for name, (kind, field) in self.placing.items()
        }
        named = dict(zip(self.name, rid, strict=True)) if isinstance(rid, tuple) else {}
        base = {self.row_field: rid, **self.defaults, **levels, **self.fixed, **named}
        drawn = {self.outcome: outcome} if self.outcome else {}
        if self.order is None:  # a series of one record: no failed attempt before it
            return [{**base, **drawn, **numbers}]
        out = []
        attempt = 1
        if failed_first:
            gone = {self.outcome: None} if self.outcome else {}
            out.append({**base, self.order: attempt, **gone, **numbers, **self.failed})
            attempt += 1
        out.append({**base, self.order: attempt, **drawn, **numbers})
        return out


def _entries_of(cells, name: str, entries) -> np.ndarray:
    """Per cell and outcome (wrong, right), the index of the value entry that draws ``name``
    (-1: none)."""
    return entry_table(cells, entries)


def fill_values(
    numbers, w, table: RowTable, right, rng, latent, words: str, entries_of=None, arrays=False
):
    """Each number field ``w`` draws, per row of ``table`` into ``numbers[name]`` (a list,
    None where nothing is drawn; with ``arrays`` a float array, NaN there): the value entry
    that holds for the row's cell and outcome (``right``), drawn from ``rng`` (through
    ``latent()``'s normals per row when given); a row no entry draws is refused, ``words``
    naming the scenario."""
    n = len(table)
    for name, entries in w.values:
        which = (entries_of or (lambda nm, es: _entries_of(table.cells, nm, es)))(name, entries)
        which = which[table.cell, np.asarray(right).astype(np.int64)]
        col = numbers.setdefault(name, np.full(n, np.nan) if arrays else [None] * n)
        z = latent() if latent is not None else None
        for j, v in enumerate(entries):
            rows = np.flatnonzero(which == j)
            if rows.size:
                got = _draw_many(
                    v, rng, int(rows.size), w.integer[name], None if z is None else z[rows],
                    arrays,
                )  # fmt: skip
                if arrays:
                    col[rows] = got
                    continue
                for i, x in zip(rows.tolist(), got, strict=True):
                    col[i] = x
        missing = np.flatnonzero(which < 0)
        if missing.size:
            cell = table.cells[int(table.cell[missing[0]])]
            raise UserError(
                f"{words} draws no value of {name!r} for a row of cell {cell['id']} (end the"
                " field's entries with one without where)"
            )
    return numbers


def structure_read(scenario: Mapping[str, Any]) -> set[str]:
    """The fields a structured scenario reads or writes: its cluster levels' fields and its
    ratings' label, item and rater fields."""
    out = {str(lv["field"]) for lv in registered.cluster_levels(scenario)}
    r = scenario.get("ratings")
    if r is not None:
        out |= {str(r[k]) for k in ("field", "item", "rater", "truth") if r.get(k)}
    return out


def calibration_rows(w, table: RowTable) -> list[np.ndarray]:
    """The rows of ``table`` each of ``w``'s calibration entries draws: those of the cells
    whose first matching entry it is."""
    out = []
    for entry in w.calibration:
        cells = [c for c, cell in enumerate(table.cells) if w.calibration_entry(cell) is entry]
        out.append(np.flatnonzero(np.isin(table.cell, cells)))
    return out


def fill_confidences(
    numbers, w, table: RowTable, chance: np.ndarray, rng, arrays: bool = False, rows_of=None
) -> None:
    """The confidences ``w``'s calibration entries draw for the rows of the cells each selects,
    into ``numbers[field]`` (a list per row, None elsewhere; with ``arrays`` a float array,
    NaN elsewhere), and each such row's chance of being right set by the entry's curve at its
    confidence (``chance`` changed in place); ``rows_of``: :func:`calibration_rows`, given
    when the caller keeps it."""
    n = len(table)
    if rows_of is None:
        rows_of = calibration_rows(w, table)
    for entry, rows in zip(w.calibration, rows_of, strict=True):
        if rows.size == 0:
            continue
        conf = _draw_many(_confidence_entry(entry), rng, int(rows.size), False, arrays=arrays)
        chance[rows] = chance_right(entry, conf)
        col = numbers.setdefault(str(entry["field"]), np.full(n, np.nan) if arrays else [None] * n)
        if arrays:
            col[rows] = conf
            continue
        for i, x in zip(rows.tolist(), conf, strict=True):
            col[i] = x
