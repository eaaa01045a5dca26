"""Which rules of a study's decision can fire: an enumeration over what the rules read.

A rule can fire when some state of the study makes its condition hold and every earlier
rule's fail.  The state is what the rules read: each gate held or failed, each hypothesis'
verdict, and each comparison of a figure, true or false.  They are not independent: when a
gate fails, every hypothesis that is not reported only gets the first failed gate's
``otherwise``; when every gate holds, no hypothesis gets a gate's word unless it is one of its
own, and ``not-tested`` is possible only then.  Comparisons are free (two comparisons of one
figure are treated as independent, which can only make a rule look reachable).

The enumeration stops at 2**16 states; a decision that reads more is not checked for
reachability (its references and outcomes still are).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

LIMIT = 2**16


def _atoms(cond, out: dict) -> None:
    if not isinstance(cond, dict):
        return
    if cond.get("compare") is not None:
        c = cond["compare"]
        key = ("compare", repr(sorted(c.items())))
        out.setdefault(key, None)
    elif cond.get("verdict") is not None:
        out.setdefault(("verdict", str(cond["verdict"].get("hypothesis"))), None)
    elif cond.get("gate") is not None:
        out.setdefault(("gates",), None)
    elif cond.get("not") is not None:
        _atoms(cond["not"], out)
    elif cond.get("all_of") is not None or cond.get("any_of") is not None:
        for sub in cond.get("all_of") or cond.get("any_of") or []:
            _atoms(sub, out)
    elif cond.get("at_least") is not None:
        for sub in cond["at_least"].get("of") or []:
            _atoms(sub, out)
    elif cond.get("for_each") is not None:
        fe = cond["for_each"]
        # the instances of a compare under a placeholder are one atom per value
        for v in fe.get("values") or []:
            _atoms(_bind(fe.get("condition"), fe.get("name"), str(v)), out)


def _bind(cond, name, value):
    if isinstance(cond, dict):
        return {k: _bind(v, name, value) for k, v in cond.items()}
    if isinstance(cond, list):
        return [_bind(v, name, value) for v in cond]
    if isinstance(cond, str):
        return cond.replace("{" + str(name) + "}", value)
    return cond


def _holds(cond, state: dict) -> bool:
    if cond.get("compare") is not None:
        return state[("compare", repr(sorted(cond["compare"].items())))]
    if cond.get("verdict") is not None:
        v = cond["verdict"]
        return state[("verdict", str(v.get("hypothesis")))] in [str(x) for x in v.get("is") or []]
    if cond.get("gate") is not None:
        g = cond["gate"]
        held = state[("gates",)]
        got = all(held.values()) if g.get("id") is None else held[str(g["id"])]
        return got if g.get("is") == "held" else not got
    if cond.get("not") is not None:
        return not _holds(cond["not"], state)
    if cond.get("all_of") is not None:
        return all(_holds(c, state) for c in cond["all_of"])
    if cond.get("any_of") is not None:
        return any(_holds(c, state) for c in cond["any_of"])
    if cond.get("at_least") is not None:
        a = cond["at_least"]
        return sum(_holds(c, state) for c in a.get("of") or []) >= int(a.get("count") or 0)
    fe = cond["for_each"]
    hits = [
        _holds(_bind(fe.get("condition"), fe.get("name"), str(v)), state)
        for v in fe.get("values") or []
    ]
    q = fe.get("quantifier")
    if q == "all":
        return all(hits)
    if q == "any":
        return any(hits)
    return sum(hits) >= int(fe.get("count") or 0)


def _states(spec: dict, atoms: dict, verdicts: dict[str, list[str]]) -> Iterator[dict] | None:
    gates = [g for g in spec.get("gates") or [] if isinstance(g, dict)]
    gate_ids = [str(g.get("id")) for g in gates]
    gate_words = {str(g.get("otherwise") or "inconclusive") for g in gates}
    hyps = [k[1] for k in atoms if k[0] == "verdict"]
    compares = [k for k in atoms if k[0] == "compare"]
    own = {}
    for h in hyps:
        own[h] = [v for v in verdicts.get(h, []) if v not in gate_words or v in _own_words(spec, h)]
    size = (2 ** len(gate_ids)) * (2 ** len(compares))
    for h in hyps:
        size *= max(len(verdicts.get(h, [])), 1)
    if size > LIMIT:
        return None

    def gen():
        for held in itertools.product((True, False), repeat=len(gate_ids)):
            gate_state = dict(zip(gate_ids, held, strict=True))
            failed = [g for g, h in zip(gates, held, strict=True) if not h]
            if failed:
                word = str(failed[0].get("otherwise") or "inconclusive")
                choices = [
                    ["reported-only"] if verdicts.get(h) == ["reported-only"] else [word]
                    for h in hyps
                ]
            else:
                choices = [own[h] or ["reported-only"] for h in hyps]
            for vs in itertools.product(*choices):
                for cs in itertools.product((True, False), repeat=len(compares)):
                    state = {("gates",): gate_state}
                    state.update({("verdict", h): v for h, v in zip(hyps, vs, strict=True)})
                    state.update(dict(zip(compares, cs, strict=True)))
                    yield state

    return gen()


def _own_words(spec: dict, hid: str) -> list[str]:
    for h in spec.get("hypotheses") or []:
        if isinstance(h, dict) and str(h.get("id")) == hid:
            return [str(v.get("verdict")) for v in h.get("verdicts") or []]
    return []


def unreachable_rules(spec: dict, verdicts: dict[str, list[str]]) -> list[tuple[int, str]]:
    """(index, why) of every decision rule that no state of the study can fire."""
    rules = [r for r in (spec.get("decision") or {}).get("rules") or [] if isinstance(r, dict)]
    if not rules:
        return []
    atoms: dict = {}
    for r in rules:
        _atoms(r.get("when"), atoms)
    states = _states(spec, atoms, verdicts)
    if states is None:
        return []
    fires = [False] * len(rules)
    for state in states:
        for i, r in enumerate(rules):
            if _holds(r["when"], state):
                fires[i] = True
                break
        if all(fires):
            return []
    out = []
    for i, fired in enumerate(fires):
        if not fired:
            out.append(
                (
                    i,
                    f"decision rule {i + 1} (outcome {rules[i].get('outcome')!r}) can never fire:"
                    " no gate result, verdict or figure makes its condition hold while every"
                    " earlier rule fails",
                )
            )
    return out
