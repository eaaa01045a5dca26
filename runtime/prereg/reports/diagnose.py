"""The report section of a ``diagnose`` run (any engine): the sizing claims with their checked
figures, power against effect size per hypothesis for each scenario family (with Monte Carlo
error bars), and each condition's verdict shares, gate failures and family-wise rejection.

Everything comes from DIAGNOSE.json (:mod:`prereg.diagnose.command`); hypothesis titles from
the study's spec.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from prereg.reports import Step, StudyInfo
from prereg.reports.common import fmt, read_json
from prereg.reports.page import Facts, Figure, Heading, Para, Table


def document(info: StudyInfo, steps: Sequence[Step]) -> Mapping[str, Any] | None:
    found = info.steps_for(steps, "diagnose")
    return read_json(found[-1].option("--out")) if found else None


def failing_claims(info: StudyInfo, steps: Sequence[Step]) -> list[str]:
    """The ids of the registered sizing claims the study's diagnose run found failing."""
    doc = document(info, steps)
    if not doc:
        return []
    return [str(c.get("id")) for c in doc.get("claims") or () if not c.get("holds")]


def unchecked_claims(info: StudyInfo, steps: Sequence[Step]) -> int:
    """The registered sizing claims no diagnose step of the run checked (all or none)."""
    n = len(info.spec.get("claims") or ())
    return n if n and document(info, steps) is None else 0


def claims_status(
    status: str, ok: bool, failing: Sequence[str], unchecked: int = 0
) -> tuple[str, bool]:
    """A study's status line and whether it is well, with failing sizing claims named: a
    design that does not meet its own claims needs attention even when every step ran.  Claims
    no step diagnosed are said too (without turning the status red: nothing is known to fail)."""
    if not failing:
        if unchecked:
            s = "" if unchecked == 1 else "s"
            return f"{status}; {unchecked} sizing claim{s} not diagnosed", ok
        return status, ok
    said = f"sizing claim{'s' if len(failing) > 1 else ''} FAIL{'' if len(failing) > 1 else 'S'}:"
    said += " " + ", ".join(failing)
    return (f"needs attention: {said}" if ok else f"{status}; {said}"), False


def _label(c: Mapping[str, Any]) -> str:
    return c["scenario"] + ("" if c["effect"] is None else f" @ {fmt(c['effect'])}")


def power_figure(family: Mapping[str, Any], name: str) -> Figure:
    from prereg.reports import plot

    colours = [
        plot.BLUE,
        plot.ORANGE,
        plot.GREEN,
        plot.VERMILION,
        plot.REDDISH_PURPLE,
        plot.SKY_BLUE,
        plot.GREY,
    ]
    curves = [c for c in family["curves"] if c["verdict"] != "reported-only"]
    title = f"Power against effect size under {family['scenario']}"

    def draw(width: float, narrow: bool = False) -> str:
        """``narrow``: for a phone, the legend under the axes in one column (beside them on a
        desktop), the axis label on two lines."""
        with plot.figure(width, 3.4 + (0.16 * len(curves) if narrow else 0)) as (fig, ax):
            if narrow:
                fig.set_layout_engine("constrained")
            for i, c in enumerate(curves):
                xs = [p["effect"] for p in c["points"]]
                ys = [p["share"] or 0.0 for p in c["points"]]
                es = [2 * (p["mcSe"] or 0.0) for p in c["points"]]
                colour = colours[i % len(colours)]
                ax.errorbar(
                    xs, ys, yerr=es, color=colour, marker="o", ms=3.5, lw=1.4, capsize=2,
                    label=f"{c['hypothesis']} ({c['verdict']})",
                )  # fmt: skip
            ax.axhline(family["power"], color=plot.GREY, lw=0.8, ls="--")
            ax.set_ylim(-0.02, 1.02)
            label = f"effect size of scenario {family['scenario']}"
            ax.set_xlabel(textwrap.fill(label, 36) if narrow else label)
            ax.set_ylabel("share of simulated studies")
            if narrow:
                fig.legend(fontsize=8, loc="outside lower center", ncols=1)
            else:
                ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
            return plot.svg(fig, f"{name}-narrow" if narrow else name, title)

    return Figure(
        name,
        f"Power against effect size: {family['scenario']}",
        draw(6.4),
        "Per hypothesis, the share of simulated studies giving its first verdict (supported"
        " for a rule) at each registered effect size of the scenario family, with ±2 Monte"
        f" Carlo SE; the grey dashed line is the target power {fmt(family['power'])}.",
        narrow=plot.fit_width(lambda width: draw(width, narrow=True), 3.7),
    )


def blocks(info: StudyInfo, steps: Sequence[Step]) -> list:
    doc = document(info, steps)
    if doc is None:
        return []
    out: list = [
        Heading("Operating characteristics (diagnose)"),
        Para(
            f"{fmt(doc['simulations'])} simulated studies per condition (a registered scenario"
            f" at one effect size), seed {doc['seed']}, each scored by the registered rules; shares"
            " carry their Monte Carlo SE.",
            note=True,
        ),
        Facts(
            [
                ("conditions", fmt(len(doc["conditions"]))),
                ("rows per study", f"{fmt(doc['rows'])} in {fmt(doc['rowGroups'])} row groups"),
                (
                    "claims",
                    f"{sum(c['holds'] for c in doc['claims'])} of {len(doc['claims'])} hold",
                ),
            ]
        ),
    ]
    if doc["claims"]:
        out += [
            Heading("Sizing claims", 3),
            Table(
                ("claim", "registered", "checked figure", "method", "holds"),
                [
                    (
                        c["id"],
                        c["claim"].replace("`", ""),
                        fmt(c["figure"])
                        + (f" ± {fmt(c['mcSe'])}" if c.get("mcSe") is not None else ""),
                        c["method"],
                        ("yes" if c["holds"] else "NO")
                        + (" (within MC error)" if c.get("withinMonteCarloError") else ""),
                    )
                    for c in doc["claims"]
                ],
                code=frozenset({0}),
                stack=True,  # the registered claim is a long sentence: a card on a phone
            ),
        ]
    red = doc.get("redesign")
    if red and red["points"]:
        ids = [c["id"] for c in red["points"][0]["claims"]]

        def cell(c):
            se = f" ± {fmt(c['mcSe'])}" if c.get("mcSe") is not None else ""
            return f"{fmt(c['figure'])}{se} " + ("holds" if c["holds"] else "FAILS")

        out += [
            Heading(f"Redesign: {red['parameter']}", 3),
            Para(
                "The whole diagnosis again at each value of the varied size (the same seed at"
                " every value); each sizing claim's figure there and whether it holds.",
                note=True,
            ),
            Table(
                # the varied size may itself be rows (per cell): the columns are told apart
                (f"{red['parameter']} (varied)", "rows per study", *ids, "every claim holds"),
                [
                    (
                        fmt(p["value"]),
                        fmt(p["rows"]),
                        *(cell(c) for c in p["claims"]),
                        "yes" if p["allHold"] else "NO",
                    )
                    for p in red["points"]
                ],
            ),
        ]
        t = red.get("target")
        if t is not None:
            out.append(
                Para(
                    f"No listed value of {red['parameter']} meets every claim."
                    if t["value"] is None
                    else f"Smallest listed value meeting every claim: {red['parameter']} ="
                    f" {fmt(t['value'])}; under the fresh seed {t['confirmation']['seed']} every"
                    " claim " + ("holds again." if t["confirmed"] else "does NOT hold again.")
                )
            )
    for i, fam in enumerate(doc["families"]):
        out += [Heading(f"Power against effect size: {fam['scenario']}", 3)]
        out.append(power_figure(fam, f"power-{i + 1}"))
        out.append(
            Table(
                ("hypothesis", "verdict", f"effect reaching power {fmt(fam['power'])}"),
                [
                    (c["hypothesis"], c["verdict"], fmt(c["detectable"]))
                    for c in fam["curves"]
                    if c["verdict"] != "reported-only"
                ],
                code=frozenset({0}),
            )
        )
    conds = doc["conditions"]
    hyps = [h["id"] for h in conds[0]["hypotheses"]] if conds else []
    out += [
        Heading("Verdicts by condition", 3),
        Para(
            "Per condition, the share of simulated studies giving each hypothesis its first"
            " verdict (supported for a rule), and the share in which a gate failed.",
            note=True,
        ),
        Table(
            ("condition", *hyps, "gate failed"),
            [
                (
                    _label(c),
                    *(
                        f"{fmt(h['verdicts'][0]['share'])} ({h['verdicts'][0]['verdict']})"
                        for h in c["hypotheses"]
                    ),
                    fmt(c["gates"]["anyFailed"]["share"]),
                )
                for c in conds
            ],
            code=frozenset({0}),
        ),
    ]
    fam_rows = [
        (_label(c), f["id"], f["adjustment"], fmt(f["alpha"]), fmt(f["anyRejected"]["share"]))
        for c in conds
        for f in c["families"]
    ]
    if fam_rows:
        out += [
            Para(
                "Family-wise rejection: the share of simulated studies with any adjusted P of the"
                " family below its alpha (under a null scenario, the family-wise error).",
                note=True,
            ),
            Table(
                ("condition", "family", "adjustment", "alpha", "any rejected"),
                fam_rows,
                caption="Family-wise rejection by condition",
            ),
        ]
    return out
