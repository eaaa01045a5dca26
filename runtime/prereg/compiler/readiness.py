"""Is a study ready to be registered? What `prereg compile` warns about and `prereg seal`
refuses.

A study whose status is ``registered`` or ``amended`` must carry the preregistration record a
reviewer reads (``registration``: every slot present; prose slots say what the source
document says, or that it does not state it), and every hypothesis that is not reported only
must have a rule or verdicts. For any status, a contrast whose arms select no registered cell,
or exactly the same rows, decides nothing: it is reported too, and so is an analysis whose arms
or groups do.
"""

from __future__ import annotations

from prereg.compiler.expand import all_cells

REGISTERED = ("registered", "amended")
PROSE = (
    "source_title",
    "registration_date",
    "identifier",
    "data_status",
    "research_question",
    "rationale",
    "sampling_plan",
    "stopping_rule",
    "exclusions",
    "missing_data",
    "confirmatory",
    "exploratory",
    "blinding",
    "deviations",
)


def _filters(selection: dict) -> list[dict]:
    return [{"factor": k, "levels": list(v)} for k, v in selection.items()]


def _matching(selection: dict, cells: list[dict]) -> tuple[set[str], bool]:
    """(ids of the cells the selection may take, whether a filter names a row attribute)."""
    from prereg.compiler.vocabulary import _cell_matches

    ids, partial = set(), False
    for c in cells:
        hit = _cell_matches(_filters(selection), c)
        if hit is None:
            partial = True
            ids.add(str(c.get("id")))
        elif hit:
            ids.add(str(c.get("id")))
    return ids, partial


def gaps(spec: dict) -> list[tuple[str, str]]:
    """(JSON pointer, what is missing) for everything that keeps the study from being ready."""
    from prereg.compiler.build import _expanded

    out: list[tuple[str, str]] = []
    registered = spec.get("status") in REGISTERED
    if registered:
        reg = spec.get("registration")
        if not isinstance(reg, dict):
            out.append(
                (
                    "/status",
                    "a registered study needs its registration record (registration: with "
                    f"authors, {', '.join(PROSE)}; see docs/language.md, Registration)",
                )
            )
        else:
            for slot in PROSE:
                value = reg.get(slot)
                if not isinstance(value, str) or not value.strip():
                    out.append(
                        (
                            "/registration",
                            f"registration lacks {slot} (write what the source says, or that it"
                            " does not state it)",
                        )
                    )
            if "authors" not in reg:
                out.append(
                    (
                        "/registration",
                        "registration lacks authors (list them with their roles; [] when the"
                        " source names none)",
                    )
                )
        for i, h in enumerate(spec.get("hypotheses") or []):
            if not (h.get("rule") or h.get("verdicts") or h.get("reported_only")):
                out.append(
                    (
                        f"/hypotheses/{i}",
                        f"hypothesis {h.get('id')!r} has no rule and no verdicts (mark it"
                        " reported_only if it decides nothing)",
                    )
                )
    cells = [c for c in all_cells(spec) if isinstance(c, dict)]
    pointers = {}
    for i, h in enumerate(spec.get("hypotheses") or []):
        for j, c in enumerate(h.get("contrasts") or []):
            pointers[(h.get("id"), c.get("id"))] = f"/hypotheses/{i}/contrasts/{j}"
    templates = {}
    for h in spec.get("hypotheses") or []:
        for c in h.get("contrasts") or []:
            from prereg.compiler import semantic

            for binding in semantic._expansions(c):
                templates[semantic.fill(str(c["id"]), binding)] = c.get("id")
    for c in _expanded(spec, "contrasts"):
        ptr = pointers.get((c["hypothesis"], templates.get(c["id"])), "/hypotheses")
        a, pa = _matching(c["a"], cells)
        b, pb = _matching(c["b"], cells)
        if not a or not b:
            side = "a" if not a else "b"
            out.append((ptr, f"contrast {c['id']!r}: arm {side} selects no registered cell"))
        elif a == b and not (pa or pb) or c["a"] == c["b"]:
            out.append((ptr, f"contrast {c['id']!r}: both arms select the same rows"))
    out.extend(_analysis_gaps(spec, cells))
    return out


def _analysis_gaps(spec: dict, cells: list[dict]) -> list[tuple[str, str]]:
    """An analysis comparing arms (``a``, ``b``) or groups that select no registered cell, or
    two of them exactly the same rows (a McNemar test of a system against itself: P = 1)."""
    from prereg.compiler import semantic
    from prereg.compiler.build import _expanded_analyses

    pointers = {}
    for i, h in enumerate(spec.get("hypotheses") or []):
        for j, an in enumerate(h.get("analyses") or []):
            for binding in semantic._expansions(an):
                pointers[semantic.fill(str(an.get("id")), binding)] = (
                    f"/hypotheses/{i}/analyses/{j}"
                )
    out: list[tuple[str, str]] = []
    for an in _expanded_analyses(spec):
        ptr = pointers.get(an["id"], "/hypotheses")
        what = f"analysis {an['id']!r}"
        if "a" in an and "b" in an:
            sides = [("arm a", an["a"]), ("arm b", an["b"])]
        elif "groups" in an:
            sides = [(f"group {k + 1}", g) for k, g in enumerate(an["groups"])]
        else:
            continue
        seen: list[tuple[str, set[str], bool, dict]] = []
        for name, sel in sides:
            ids, partial = _matching(sel, cells)
            if not ids:
                out.append((ptr, f"{what}: {name} selects no registered cell"))
                continue
            for other, oids, opartial, osel in seen:
                if an.get("b_metric") is not None:
                    break  # two fields of the same rows: the rows alike is the design
                if ids == oids and not (partial or opartial) or sel == osel:
                    out.append((ptr, f"{what}: {other} and {name} select the same rows"))
                    break
            seen.append((name, ids, partial, sel))
    return out
