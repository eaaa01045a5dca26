"""Report of a reachability-probe study (d17-multifact kind).

Reads what the study's steps wrote:

- the prepared folder (found as the folder holding ``preregistration.json``; its
  ``audit.json``): the corpus digests and the shortcut audit, with a figure of each audit
  group's best learner score against the audit limit;
- the collection hand-off, when the steps ran it: the bundle (the ``bundle`` step's
  ``--out``), the seed ledger (the ``ledger-show`` step's), the score from the run lineage (a
  ``score --config`` step's ``--out``);
- the score (the last flag-form ``score`` step's ``--out``), when the steps scored: verdicts and decision,
  gates, a forest plot of per-cell raw accuracy with its Wilson interval (panels by the first
  factor, rows by the other factors, in the spec's level order, for the split with the most
  registered rows), a per-cell reliability diagram of the calibrated confidences, two
  per-cell tables of every figure the score reports (coverage, raw accuracy, said-yes rate,
  accuracy by failure position; calibrated accuracy, mean confidence, their gap, decile ECE,
  the unreliable flag), and the registered estimates and contrasts; figures rounded as SCORE.md
  rounds them (the scoring constant's decimals and P-value digits).

Metric ids, factor order, levels and hypothesis titles come from the study's spec and compiled
configuration (the metrics' roles), figures from the output files.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prereg.decide.decision import in_words as decision_words
from prereg.errors import UserError
from prereg.reports import Step, StudyInfo, decides, plot
from prereg.reports.common import (
    decision_blocks,
    fmt,
    fmt_p,
    header,
    inputs_block,
    read_json,
    registered,
    steps_block,
)
from prereg.reports.diagnose import blocks as diagnose_blocks
from prereg.reports.diagnose import claims_status, failing_claims, unchecked_claims
from prereg.reports.page import Facts, Figure, Heading, Para, Report, Table
from prereg.reports.verdicts import anchor, deciding_figures, rule_text

PREREGISTRATION = "preregistration.json"
AUDIT = "audit.json"
ENGINE_QUANTITIES = {  # engine quantity (metric role) -> the key used when no metric has the role
    "coverage": "coverage",
    "accuracy": "accuracy",
    "saidYes": "saidYes",
    "calibratedAccuracy": "calibratedAccuracy",
    "meanConfidence": "meanConfidence",
    "ece": "ece",
    "auroc": "auroc",
}


def _metrics(info: StudyInfo) -> dict[str, str]:
    """Engine quantity -> metric id: the spec's metric roles (``metrics[].role``)."""
    metrics = dict(ENGINE_QUANTITIES)
    for m in info.config.get("metrics") or ():
        if isinstance(m, Mapping) and m.get("role") in metrics:
            metrics[str(m["role"])] = str(m["id"])
    return metrics


def _factors(info: StudyInfo, cells: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """(factor id, level ids in spec order) for each factor, in spec order."""
    out = []
    for f in info.config.get("factors") or info.spec.get("factors") or []:
        out.append((str(f["id"]), [str(lv["id"]) for lv in f.get("levels", [])]))
    if not out and cells:  # no declared factors: the order the score lists them in
        keys = list(cells[0].get("levels", {}))
        out = [(k, sorted({str(c["levels"][k]) for c in cells})) for k in keys]
    return out


def _titles(info: StudyInfo) -> dict[str, str]:
    return {str(h.get("id")): str(h.get("title", "")) for h in info.spec.get("hypotheses") or []}


def _prepared(folder: Path, steps: Sequence[Step]) -> Path | None:
    for s in steps:  # a step's positional argument naming a prepared folder
        for a in s.args[1:]:
            if (Path(a) / PREREGISTRATION).is_file():
                return Path(a)
    found = sorted(folder.rglob(PREREGISTRATION))
    return found[0].parent if found else None


# -- figures ------------------------------------------------------------------------------------


def _split_cells(doc: Mapping[str, Any]) -> tuple[str | None, list[Mapping[str, Any]]]:
    rows: dict[str, int] = {}
    for c in doc.get("cells", []):
        rows[c["split"]] = rows.get(c["split"], 0) + int(c.get("rows", 0))
    if not rows:
        return None, []
    split = max(rows, key=lambda s: (rows[s], s))
    return split, [c for c in doc["cells"] if c["split"] == split]


def _order(cells, factors):
    rank = {f: {lv: i for i, lv in enumerate(levels)} for f, levels in factors}

    def key(c):
        return tuple(rank[f].get(str(c["levels"].get(f, c.get(f))), 99) for f, _ in factors)

    return sorted(cells, key=key)


def forest_figure(
    doc: Mapping[str, Any], factors, metric: str, failed: set[str], name: str = "forest"
) -> Figure | None:
    split, cells = _split_cells(doc)
    cells = [
        c for c in cells if ((c.get("metrics") or {}).get(metric) or {}).get("estimate") is not None
    ]
    if not cells or not factors:
        return None
    panel_factor, panel_levels = factors[0]
    rest = factors[1:]
    panels = [lv for lv in panel_levels if any(c["levels"][panel_factor] == lv for c in cells)]
    per_panel = {
        lv: _order([c for c in cells if c["levels"][panel_factor] == lv], rest) for lv in panels
    }
    labels: list[tuple] = []
    for lv in panels:
        for c in per_panel[lv]:
            t = tuple(str(c["levels"].get(f)) for f, _ in rest)
            if t not in labels:
                labels.append(t)
    labels = sorted(labels, key=lambda t: tuple(
        dict(rest)[f].index(v) if v in dict(rest)[f] else 99 for (f, _), v in zip(rest, t, strict=True)
    ))  # fmt: skip
    ypos = {t: len(labels) - 1 - i for i, t in enumerate(labels)}
    title = f"{metric} per cell ({split} split) with Wilson intervals"
    height = 1.2 + 0.22 * len(labels)
    names = [
        " · ".join(f"{f} {v}" if v.isdigit() else v for (f, _), v in zip(rest, t, strict=True))
        for t in labels
    ]

    def draw(width: float, narrow: bool = False) -> str:
        """The panels side by side, or for a phone (``narrow``) one above another, each with
        its rows' names, the title on lines of the phone's width."""
        if narrow:
            shape = {"nrows": len(panels), "sharex": True}
            size = (width, 0.5 + (0.75 + 0.36 * len(labels)) * len(panels))
        else:
            shape = {"ncols": len(panels), "sharey": True}
            size = (width, height)
        with plot.figure(*size, squeeze=False, **shape) as (fig, axes):
            grid = [row[0] for row in axes] if narrow else list(axes[0])
            for ax, lv in zip(grid, panels, strict=True):
                for j, t in enumerate(labels):
                    if j % 2 == 0:
                        ax.axhspan(ypos[t] - 0.5, ypos[t] + 0.5, color="#f3f3f3", lw=0, zorder=0)
                for c in per_panel[lv]:
                    a = c["metrics"][metric]
                    y = ypos[tuple(str(c["levels"].get(f)) for f, _ in rest)]
                    colour = plot.VERMILION if c["cell"] in failed else plot.BLUE
                    if narrow:  # the row's name above its interval, in the row's band
                        y -= 0.22
                    ax.plot([a["lower"], a["upper"]], [y, y], color=colour, lw=1.3)
                    ax.plot([a["estimate"]], [y], "o", color=colour, ms=3.5)
                ax.set_xlim(-0.02, 1.02)
                ax.set_ylim(-0.6, len(labels) - 0.4)
                ax.set_title(f"{panel_factor} {lv}")
                if not narrow or ax is grid[-1]:
                    ax.set_xlabel(metric)
                ax.grid(axis="y", visible=False)
                if narrow:
                    ax.set_yticks([])
                    for t, text in zip(labels, names, strict=True):
                        ax.text(0.0, ypos[t] - 0.05, text, fontsize=7.5, va="bottom")
            if not narrow:
                axes[0][0].set_yticks([ypos[t] for t in labels], names, fontsize=7.5)
            fig.suptitle(textwrap.fill(title, 44) if narrow else title)
            if narrow:
                fig.set_layout_engine("constrained")
            return plot.svg(fig, f"{name}-narrow" if narrow else name, title)

    svg = draw(2.0 + 2.3 * len(panels))
    narrow = plot.fit_width(lambda width: draw(width, narrow=True), 3.4)
    caption = (
        f"One row per registered cell of the {split} split: the point is {metric} (correct /"
        f" observed rows), the bar its Wilson interval. Panels are levels of {panel_factor};"
        f" rows are {' · '.join(f for f, _ in rest)}."
    )
    if failed:
        caption += " Vermilion cells fail a registered gate; the others are blue."
    return Figure(name, title, svg, caption, narrow=narrow)


def reliability_figure(
    doc: Mapping[str, Any], m: Mapping[str, str], name: str = "reliability"
) -> Figure | None:
    split, cells = _split_cells(doc)
    cal, conf = m["calibratedAccuracy"], m["meanConfidence"]
    cells = [
        c
        for c in cells
        if c.get("observed") and (c.get("metrics") or {}).get(conf) is not None
        and ((c.get("metrics") or {}).get(cal) or {}).get("estimate") is not None
    ]  # fmt: skip
    if not cells:
        return None
    title = f"Calibrated confidence against {cal} per cell ({split} split)"

    def draw(width: float, narrow: bool = False) -> str:
        """``narrow``: for a phone, the title wrapped and the legend under the axes."""
        with plot.figure(width, 4.4 + (0.6 if narrow else 0)) as (fig, ax):
            if narrow:
                fig.set_layout_engine("constrained")
            ax.plot([0, 1], [0, 1], color=plot.GREY, ls="--", lw=1, label="perfect calibration")
            for flag, colour, label in (
                (False, plot.BLUE, "cell"),
                (True, plot.ORANGE, "calibration unreliable"),
            ):
                sel = [c for c in cells if bool(c.get("calibrationUnreliable")) == flag]
                if not sel:
                    continue
                x = [c["metrics"][conf] for c in sel]
                y = [c["metrics"][cal]["estimate"] for c in sel]
                lo = [
                    max(0.0, c["metrics"][cal]["estimate"] - c["metrics"][cal]["lower"])
                    for c in sel
                ]
                hi = [
                    max(0.0, c["metrics"][cal]["upper"] - c["metrics"][cal]["estimate"])
                    for c in sel
                ]
                ax.errorbar(
                    x, y, yerr=[lo, hi], fmt="o", ms=3.5, color=colour, elinewidth=0.8,
                    capsize=0, alpha=0.85, label=label,
                )  # fmt: skip
            lo_x = min(0.5, min(c["metrics"][conf] for c in cells) - 0.05)
            ax.set_xlim(lo_x, 1.01)
            ax.set_ylim(min(lo_x, min(c["metrics"][cal]["lower"] for c in cells) - 0.05), 1.01)
            ax.set_xlabel(f"{conf} (calibrated)")
            ax.set_ylabel(f"{cal} (Wilson interval)")
            ax.set_title(textwrap.fill(title, 36) if narrow else title)
            if narrow:  # under the axes, where it covers no cell
                fig.legend(loc="outside lower center", ncols=1)
            else:
                ax.legend(loc="lower right")
            return plot.svg(fig, f"{name}-narrow" if narrow else name, title)

    svg = draw(4.8)
    narrow = plot.fit_width(lambda width: draw(width, narrow=True), 4.0)
    return Figure(
        name,
        title,
        svg,
        "One point per observed cell: the mean calibrated confidence of its answers against the"
        " share the calibrated answers got right, the bar its Wilson interval. Points below the"
        " grey dashed diagonal are overconfident"
        + (
            "; orange cells are flagged as unreliable by the registered rule, blue ones are not."
            if any(c.get("calibrationUnreliable") for c in cells)
            else "."
        )
        + f" Each cell's decile ECE ({m['ece']}) is in the table below.",
        narrow=narrow,
    )


def _calibrator_note(
    folder: Path, step: Step, doc: Mapping[str, Any], m: Mapping[str, str]
) -> str | None:
    """Why calibrated accuracy is 0 or 1 in every cell, when the calibrator maps every score
    below one half (its highest calibrated P(yes), (yes + 1)/(n + 2) of a block, is under 0.5:
    every calibrated answer is no)."""
    given = step.option("--calibrator")
    cal = None
    if given:
        path = Path(given)
        cal = read_json(path if path.is_file() else folder / path.name)
    blocks = [b for b in (cal or {}).get("blocks") or [] if isinstance(b, Mapping) and b.get("n")]
    if not blocks:
        return None
    top = max((b["yes"] + 1) / (b["n"] + 2) for b in blocks)  # as the calibrator maps a score
    if top >= 0.5:
        return None
    return (
        f"Every cell's {m['calibratedAccuracy']} is exactly 0 or 1, and that is what this"
        f" calibrator implies: its highest block maps scores to P(yes) = {fmt(top, 3)}, below"
        " one half, so every calibrated answer is no; cells whose gold is no score 1 and cells"
        " whose gold is yes score 0, whatever their raw accuracy. The demo calibrator is fitted"
        " on the demo observations themselves, where most rows are missing-link rows with gold"
        " no and the simulated respondent gives them high P(yes), so high scores are mostly"
        " wrong yeses. The registered D17 member calibrator is fitted elsewhere; with it the"
        " plot is read as described above."
    )


def audit_figure(audit: Mapping[str, Any], name: str = "audit") -> Figure | None:
    groups = audit.get("groups") or []
    if not groups:
        return None
    limit = audit.get("limit")
    title = "Shortcut audit: best surface-cue learner per group"
    names = [g["group"] for g in groups][::-1]
    vals = [g["max"] for g in groups][::-1]
    colours = [
        plot.GREY if g.get("passes") is None else plot.GREEN if g["passes"] else plot.VERMILION
        for g in groups
    ][::-1]
    xlabel = "best cross-validated balanced accuracy of a cue-only learner"

    def draw(width: float, narrow: bool = False) -> str:
        """Each group's name beside its bar, or for a phone (``narrow``) above it, and the
        limit's legend under the axes (where no bar runs)."""
        rows = 0.5 if narrow else 0.28
        with plot.figure(width, 0.9 + rows * len(groups) + (0.5 if narrow else 0)) as (fig, ax):
            if narrow:
                fig.set_layout_engine("constrained")
            ax.barh(range(len(names)), vals, color=colours, height=0.45 if narrow else 0.6)
            if limit is not None:
                ax.axvline(limit, color=plot.VERMILION, ls="--", lw=1, label=f"limit {fmt(limit)}")
                if narrow:
                    fig.legend(loc="outside lower center")
                else:
                    ax.legend(loc="lower right")
            if narrow:
                ax.set_yticks(range(len(names)), [""] * len(names))
                ax.tick_params(axis="y", length=0)
                for i, group in enumerate(names):
                    ax.text(0.005, i + 0.26, group, fontsize=7.5, va="bottom", ha="left")
                ax.set_ylim(-0.5, len(names) - 0.1)
            else:
                ax.set_yticks(range(len(names)), names, fontsize=7.5)
            ax.set_xlim(0, 1.02)
            ax.set_xlabel(textwrap.fill(xlabel, 36) if narrow else xlabel)
            ax.set_title(textwrap.fill(title, 36) if narrow else title)
            ax.grid(axis="y", visible=False)
            return plot.svg(fig, f"{name}-narrow" if narrow else name, title)

    svg = draw(6.4)
    narrow = plot.fit_width(lambda width: draw(width, narrow=True), 3.4)
    return Figure(
        name,
        title,
        svg,
        "Each bar is the best cross-validated balanced accuracy (the mean of the rates of yes and"
        " no rows predicted right, as the audit rounds it) any shortcut learner reached from"
        " surface cues alone in that group. Green groups are gated and pass (at or below the"
        " limit), vermilion gated groups fail (above it), grey groups are not gated (controls,"
        " which should be solvable)."
        + (" The vermilion dashed line is the limit." if limit is not None else ""),
        narrow=narrow,
    )


# -- the collection hand-off --------------------------------------------------------------------


def _ledger_state(info: StudyInfo, steps: Sequence[Step]) -> tuple[Path | None, dict | None]:
    """The ledger the last ``ledger-show`` step printed (its ARTIFACT_ROOT or --ledger)."""
    from prereg.ledger import open_existing

    shows = [s for s in info.steps_for(steps, "ledger_show") if s.ok]
    if not shows:
        return None, None
    s = shows[-1]
    name = ((info.config.get("constants") or {}).get("hand-off") or {}).get("ledgerFile")
    given = s.option("--ledger")
    path = Path(given) if given else (Path(s.args[1]) / name if name else None)
    if path is None:
        return None, None
    led = open_existing(path)
    if led is None:
        return path, None
    with led:
        return path, led.state()


def handoff_blocks(info: StudyInfo, steps: Sequence[Step]) -> list:
    """The collection hand-off: the bundle, the seed ledger's state and the score from the run
    lineage (when the steps ran them)."""
    bundles = [s for s in info.steps_for(steps, "bundle") if s.ok and s.exit == 0]
    bundle = read_json(bundles[-1].option("--out")) if bundles else None
    _, state = _ledger_state(info, steps)
    lineage_steps = [s for s in info.steps_for(steps, "score") if s.option("--config")]
    lineage = read_json(lineage_steps[-1].option("--out")) if lineage_steps else None
    refused = [s for s in info.steps_for(steps, "bundle") if s.ok and s.exit != 0]
    if not (bundle or state or lineage):
        return []
    out: list = [
        Heading("Collection hand-off"),
        Para(
            "The operator procedure after prepare: the approval, the bundle a collector"
            " receives, the seed ledger (seeds frozen with their corpus and preregistration,"
            " sessions with their start instants and evidence digests, attested spend) and the"
            " score computed from the run lineage."
            + (
                f" {len(refused)} bundle step(s) were refused as the plan expected (for instance"
                " a public seed)."
                if refused
                else ""
            ),
            note=True,
        ),
    ]
    if bundle:
        cal = bundle.get("calibration") or {}
        win = bundle.get("window") or {}
        out.append(
            Facts(
                [
                    ("seed", f"{bundle.get('seed')} ({fmt(bundle.get('rows'))} rows)"),
                    ("corpus", bundle.get("corpusDigest")),
                    ("preregistration", bundle.get("preregistrationDigest")),
                    ("approval", bundle.get("approvalDigest")),
                    ("development review", bundle.get("devReviewDigest")),
                    ("calibration", f"{cal.get('mode')} {cal.get('calibrationArtifactDigest')}"),
                    (
                        "session window",
                        f"{win.get('sessionMinutes')}-minute sessions may start until"
                        f" {win.get('latestSessionStart')} (calibrator expiry"
                        f" {cal.get('expiresAt')}); calls time out after"
                        f" {win.get('callTimeoutSeconds')} s",
                    ),
                ]
            )
        )
    if state is not None:
        spend = state.get("spend") or {}
        aborted = {a["runId"] for a in state.get("aborts", [])}
        out += [
            Heading("Seed ledger", 3),
            Para(
                f"Schema version {state.get('ledgerSchemaVersion')}; {len(state.get('seeds', []))}"
                f" seed(s) frozen, {len(state.get('sessions', []))} session(s), recorded spend"
                f" {fmt(spend.get('calls'))} calls, {fmt(spend.get('tokens'))} tokens, USD"
                f" {spend.get('usd')}; {len(state.get('events', []))} event(s)."
            ),
            # the two digests last: at 1280 px the table is wider than the page, and what
            # scrolls out of sight is the tail of a digest, not the instant the seed was frozen
            Table(
                ("seed", "frozen at", "corpus", "preregistration"),
                [
                    (s["seed"], s["frozenAt"], s["corpusDigest"], s["preregistrationDigest"])
                    for s in state.get("seeds", [])
                ],
                code=frozenset({0, 2, 3}),
                caption="Seeds frozen in the ledger",
                stack=True,  # digests: a card per row on a phone
            ),
            Table(
                ("run", "started", "evidence", "calls", "tokens", "USD"),
                [
                    (
                        s["runId"],
                        s["startedAt"],
                        s["evidenceDigest"]
                        or ("aborted" if s["runId"] in aborted else "not ended"),
                        fmt(s["calls"]),
                        fmt(s["tokens"]),
                        s["usd"] if s["usd"] is not None else "–",
                    )
                    for s in state.get("sessions", [])
                ],
                numeric=frozenset({3, 4, 5}),
                code=frozenset({0, 2}),
                caption="Collection sessions in the ledger",
                stack=True,  # digests: a card per row on a phone
            ),
        ]
    if lineage:
        lin = lineage.get("lineage") or {}
        clock = lineage.get("clock") or {}
        obs = lineage.get("observations") or {}
        out += [
            Heading("Score from the run lineage", 3),
            Para(
                f"{fmt(obs.get('observedRows'))} of {fmt(obs.get('rows'))} rows observed over"
                f" {len(lin.get('runs') or [])} run(s) (observations {obs.get('sha256')});"
                f" collection-end bound {clock.get('collectionEndBound')}, evaluated at"
                f" {clock.get('evaluatedAt')}; corpus {lineage.get('corpusDigest')}."
                f" **Decision: {decision_words(lineage.get('decision'))}**"
            ),
            Table(
                ("run", "session start", "evidence"),
                [
                    (r.get("runId"), r.get("collectionStartedAt"), r.get("evidenceDigest"))
                    for r in lin.get("runs") or []
                ],
                code=frozenset({0, 2}),
                caption="Runs of the lineage the score read",
                stack=True,  # digests: a card per row on a phone
            ),
            Table(
                ("hypothesis", "verdict"),
                list((lineage.get("verdicts") or {}).items()),
                code=frozenset({0}),
                caption="Verdicts of the score from the run lineage",
            ),
        ]
    return out


# -- the report ---------------------------------------------------------------------------------


def _rounder(info: StudyInfo):
    """A per-cell figure as SCORE.md shows it: rounded half up to the registered decimals of
    the scoring constant (its shortest decimal form, so 1/32 shows as 0.0313), then written as
    the report writes every figure."""
    from prereg.stats.rounding import round_half_up_shortest

    scoring = (info.config.get("constants") or {}).get("scoring") or {}
    decimals = scoring.get("decimals") if isinstance(scoring, Mapping) else None
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        return fmt

    def num(x: Any) -> str:
        if isinstance(x, float):
            return fmt(round_half_up_shortest(x, decimals), digits=decimals)
        return fmt(x)

    return num


def _p_rounder(info: StudyInfo):
    """A P value as SCORE.md shows it: to the registered significant digits of the scoring
    constant (``pValueDigits``); without them, the report's usual style."""
    scoring = (info.config.get("constants") or {}).get("scoring") or {}
    digits = scoring.get("pValueDigits") if isinstance(scoring, Mapping) else None
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        return fmt_p
    return lambda p: "–" if p is None else f"{float(f'{float(p):.{digits}g}')}"


def _interval(figure: Mapping[str, Any] | None, num) -> str:
    figure = figure or {}
    return f"[{num(figure.get('lower'))}, {num(figure.get('upper'))}]"


def _by_position(cell: Mapping[str, Any], num) -> str:
    """Raw accuracy at each failure position of the cell: ``first 0.5 (2 of 4 rows)``."""
    parts = []
    for label, p in (cell.get("byPosition") or {}).items():
        parts.append(
            f"{label} {num(p.get('accuracy'))} ({fmt(p.get('observed'))} of {fmt(p.get('rows'))})"
        )
    return "; ".join(parts) or "–"


def accuracy_table(cells: Sequence[Mapping[str, Any]], m: Mapping[str, str], num=fmt) -> Table:
    """Every registered cell's coverage, raw accuracy with its interval, said-yes rate and
    raw accuracy by failure position (observed of registered rows at each position)."""
    acc = m["accuracy"]
    return Table(
        (
            "cell",
            "rows",
            "observed",
            m["coverage"],
            acc,
            "Wilson interval",
            m["saidYes"],
            "by failure position",
        ),
        [
            (
                c["cell"],
                fmt(c.get("rows")),
                fmt(c.get("observed")),
                num(c["metrics"].get(m["coverage"])),
                num((c["metrics"].get(acc) or {}).get("estimate")),
                _interval(c["metrics"].get(acc), num),
                num(c["metrics"].get(m["saidYes"])),
                _by_position(c, num),
            )
            for c in cells
        ],
        numeric=frozenset({1, 2, 3, 4, 6}),
        code=frozenset({0}),
        caption=f"{acc} per cell: coverage, interval, said-yes rate and failure positions",
    )


def calibration_table(cells: Sequence[Mapping[str, Any]], m: Mapping[str, str], num=fmt) -> Table:
    """Every registered cell's calibrated accuracy with its interval, mean confidence, their
    gap, decile ECE and the calibration-unreliable flag (which reads the gap and the
    interval's upper bound)."""
    cal = m["calibratedAccuracy"]
    return Table(
        (
            "cell",
            cal,
            "Wilson interval",
            m["meanConfidence"],
            "confidence − accuracy",
            m["ece"],
            "unreliable",
        ),
        [
            (
                c["cell"],
                num((c["metrics"].get(cal) or {}).get("estimate")),
                _interval(c["metrics"].get(cal), num),
                num(c["metrics"].get(m["meanConfidence"])),
                num(c.get("confidenceMinusAccuracy")),
                num(c["metrics"].get(m["ece"])),
                "yes" if c.get("calibrationUnreliable") else "no",
            )
            for c in cells
        ],
        numeric=frozenset({1, 3, 4, 5}),
        code=frozenset({0}),
        caption=f"{cal} per cell: interval, confidence, gap, decile ECE and the flag",
    )


def _size_if(path, digest, *, without: str | None = None) -> int | None:
    """The size of the file at ``path`` when ``digest`` verifies against it (else None: the
    table shows bytes only for a file that is the input it names). Without ``without`` the
    digest is the SHA-256 of the file's bytes; with it, the file is a JSON object and the digest
    is the engine's digest of that object without its ``without`` member (the gold and audit
    files without ``specDigest``, the calibrator without its own ``digest``)."""
    from prereg.digest import file_sha256

    if not path or not digest or not Path(path).is_file():
        return None
    try:
        if without is None:
            hexd, size = file_sha256(path)
            return size if str(digest).removeprefix("sha256:") == hexd else None
        obj = read_json(Path(path))
        if not isinstance(obj, dict):
            return None
        if without == "digest":
            from prereg.engines.reachability.calibrator import artifact_digest

            actual = artifact_digest(obj, without)
        else:
            from prereg.engines.reachability.canon import record_digest

            actual = record_digest({k: v for k, v in obj.items() if k != without})
        return Path(path).stat().st_size if actual == digest else None
    except (OSError, ValueError, UserError):
        return None


DIGESTS_NOTE = (
    "The corpus and observation digests are of the files' bytes; the gold and audit digests are"
    " of each file's JSON content without its specDigest, and the calibrator's of its content"
    " without its own digest field (the sizes shown are of files these digests verify); the"
    " dispatch order's digest is of the corpus's row order, which is no file of its own."
)


def build(info: StudyInfo, folder: Path, steps: Sequence[Step]) -> Report:
    m = _metrics(info)
    titles = _titles(info)
    prepared = _prepared(folder, steps)
    prereg = read_json(prepared / PREREGISTRATION) if prepared else None
    audit = read_json(prepared / AUDIT) if prepared else None
    # the scores of the flag form (development scoring of the demo corpus) lead the report; a
    # score from the run lineage (--config) is shown in the hand-off section
    all_scores = info.steps_for(steps, "score")
    score_steps = [s for s in all_scores if s.option("--config") is None] or all_scores
    doc = read_json(score_steps[-1].option("--out")) if score_steps else None
    steps_ok = all(s.ok for s in steps)

    audit_ok = None if audit is None else bool(audit.get("equalizedPasses"))
    if doc:
        counts: dict[str, int] = {}
        for v in (doc.get("verdicts") or {}).values():
            counts[v] = counts.get(v, 0) + 1
        decision = f"decision {decision_words(doc.get('decision'))}; verdicts: " + ", ".join(
            f"{n} {v}" for v, n in counts.items()
        )
        gates_ok = all(g.get("passed") for g in doc.get("gates", []))
        ok = steps_ok and gates_ok and audit_ok is not False
        from prereg.engines.reachability.score_commands import incomplete_line

        incomplete = incomplete_line(doc)
        status = (
            "every step ran; gates held" + ("" if audit_ok is not False else "; audit FAILS")
            if ok
            else f"needs attention: incomplete: {incomplete}"
            + ("; a step failed" if not steps_ok else "")
            + ("; the shortcut audit failed" if audit_ok is False else "")
            if incomplete
            else "needs attention: "
            + ("a step failed" if not steps_ok else "a gate or the audit failed")
        )
    elif prereg:
        status = f"prepared {fmt(prereg.get('rows'))} rows; not scored"
        if audit is not None:
            status += "; shortcut audit " + ("passes" if audit_ok else "FAILS")
        ok = steps_ok and audit_ok is not False
    else:
        status, ok = "no outputs", False
    status, ok = claims_status(
        status, ok, failing_claims(info, steps), unchecked_claims(info, steps)
    )
    report = Report(info.study_id, info.title, status, ok)
    if doc:
        report.decision = decision
    report.add(
        *header(
            info,
            [
                ("preparation", (prereg or {}).get("specDigest")),
                ("audit", (audit or {}).get("specDigest")),
                ("score", (doc or {}).get("specDigest")),
            ],
        )
    )
    if doc:
        report.add(*decision_blocks(doc.get("decision")))
    inputs = []
    files = {"corpusDigest": "corpus.jsonl", "goldDigest": "gold.json", "auditDigest": AUDIT}
    if prereg:
        for k in ("corpusDigest", "goldDigest", "auditDigest", "dispatchOrderDigest"):
            label = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", k.removesuffix("Digest")).lower()
            path = prepared / files[k] if k in files and prepared else None
            without = None if k == "corpusDigest" else "specDigest"
            size = _size_if(path, prereg.get(k), without=without)
            inputs.append((f"prepared {label}", prereg.get(k), size))
    if doc:
        obs = doc.get("observations") or {}
        cal = doc.get("calibrator") or {}
        step = score_steps[-1]
        inputs.append(
            (
                "observations",
                obs.get("sha256"),
                _size_if(step.args[2] if len(step.args) > 2 else None, obs.get("sha256")),
            )
        )
        inputs.append(
            (
                f"calibrator {cal.get('id')}",
                cal.get("digest"),
                _size_if(step.option("--calibrator"), cal.get("digest"), without="digest"),
            )
        )
    report.add(*inputs_block(inputs))
    if prereg:
        report.add(Para(DIGESTS_NOTE, note=True))

    if doc:
        failed = {f["cell"] for g in doc.get("gates", []) for f in g.get("failures", [])}
        num, p_num = _rounder(info), _p_rounder(info)
        report.add(Heading("Verdicts"))
        hyps = {str(h.get("id")): h for h in info.spec.get("hypotheses") or []}
        figures = list(doc.get("contrasts") or []) + list(doc.get("estimates") or [])
        report.add(
            Para(
                "Each verdict with the registered rule it applies (as PREREG.md states it, linked)"
                " and the deciding figures: every comparison the rule reads, with the contrasts"
                " or estimates that met it (values as reported, rounded).",
                note=True,
            ),
            Table(
                ("hypothesis", "title", "verdict", "registered rule", "deciding figures"),
                [
                    (
                        f"[{h}](#{anchor(hyps[h])})" if h in hyps else h,
                        titles.get(h, ""),
                        v,
                        rule_text(info.prereg_md, h),
                        deciding_figures(hyps.get(h, {}), figures, number=num, p_value=p_num),
                    )
                    for h, v in (doc.get("verdicts") or {}).items()
                ],
                markdown=frozenset({0, 3}),
                stack=True,
            ),
            *decides.blocks(
                info.spec.get("hypotheses") or [], doc, doc.get("verdicts"), p_value=p_num
            ),
        )
        obs = doc.get("observations") or {}
        clock = doc.get("clock") or {}
        cal = doc.get("calibrator") or {}
        report.add(
            Facts(
                [
                    ("seed", doc.get("seed")),
                    (
                        "observed rows",
                        f"{fmt(obs.get('observedRows'))} of {fmt(obs.get('rows'))}"
                        f" ({fmt(obs.get('records'))} observation records)",
                    ),
                    (
                        "calibrator",
                        f"{cal.get('id')}, valid {cal.get('effectiveAt')} to"
                        f" {cal.get('expiresAt')}",
                    ),
                    ("collection-end bound", clock.get("collectionEndBound")),
                    ("evaluated at", clock.get("evaluatedAt")),
                    ("complete", fmt(doc.get("complete"))),
                ]
            ),  # fmt: skip
            Heading("Gates", 3),
            Table(
                ("gate", "rule", "result"),
                [
                    (
                        g.get("id"),
                        f"{g.get('metric')} {g.get('op')} {fmt(g.get('value'))}"
                        + "".join(
                            f"; {k} in {', '.join(v)}" for k, v in (g.get("where") or {}).items()
                        ),
                        "passed"
                        if g.get("passed")
                        else f"FAILED in {len(g.get('failures', []))} cell(s): "
                        + ", ".join(f["cell"] for f in g.get("failures", [])),
                    )
                    for g in doc.get("gates", [])
                ],
                code=frozenset({0}),
            ),  # fmt: skip
        )
        factors = _factors(info, doc.get("cells", []))
        forest = forest_figure(doc, factors, m["accuracy"], failed)
        rel = reliability_figure(doc, m)
        split, _ = _split_cells(doc)
        ordered = _order(doc.get("cells", []), [("split", [split])] + factors)
        report.add(
            Heading("Accuracy per cell"),
            *([forest] if forest else []),
            accuracy_table(ordered, m, num),
        )
        report.add(Heading("Calibration"), *([rel] if rel else []))
        note = _calibrator_note(folder, score_steps[-1], doc, m)
        if note:
            report.add(Para(note, note=True))
        report.add(calibration_table(ordered, m, num))
        if doc.get("auroc"):
            report.add(
                Heading(f"{m['auroc']} (report only)", 3),
                Table(
                    ("group", "negatives", "positives / negatives", "estimate", "interval"),
                    [
                        (
                            ", ".join(f"{k} {v}" for k, v in a["group"].items()),
                            a.get("negative"),
                            f"{fmt(a.get('positives'))} / {fmt(a.get('negatives'))}",
                            num(a.get("estimate")),
                            _interval(a, num),
                        )
                        for a in doc["auroc"]
                    ],
                    numeric=frozenset({2, 3}),
                ),
            )
        if doc.get("estimates") or doc.get("contrasts"):
            report.add(Heading("Registered estimates and contrasts"))
        if doc.get("estimates"):
            report.add(
                Table(
                    ("hypothesis", "estimate", "metric", "k / n", "value", "interval"),
                    [
                        (
                            e.get("hypothesis"),
                            e.get("id"),
                            e.get("metric"),
                            f"{fmt(e.get('k'))} / {fmt(e.get('n'))}",
                            num(e.get("estimate")),
                            _interval(e, num),
                        )
                        for e in doc["estimates"]
                    ],
                    numeric=frozenset({3, 4}),
                    code=frozenset({0, 1}),
                    # on a phone, each estimate a card: as columns, its value and interval
                    # sat past the window's edge behind a long id
                    stack=True,
                )  # fmt: skip
            )
        if doc.get("contrasts"):
            groups: dict[str, list] = {}
            for c in doc["contrasts"]:
                groups.setdefault(str(c.get("hypothesis")), []).append(c)
            for hyp, rows in groups.items():
                title = titles.get(hyp, "")
                report.add(
                    Table(
                        ("contrast", "a k/n", "b k/n", "a − b", "interval", "P", "adjusted P"),
                        [
                            (
                                c.get("id"),
                                f"{c['a']['k']}/{c['a']['n']}",
                                f"{c['b']['k']}/{c['b']['n']}",
                                num(c.get("estimate")),
                                _interval(c, num),
                                p_num(c.get("p")),
                                p_num(c.get("adjustedP")),
                            )
                            for c in rows
                        ],
                        numeric=frozenset({1, 2, 3, 5, 6}),
                        code=frozenset({0}),
                        caption=f"Contrasts of {hyp}" + (f": {title}" if title else ""),
                        folded=f"{hyp}: {len(rows)} contrast{'s' if len(rows) != 1 else ''}"
                        + (f" ({title})" if title else ""),
                        stack=True,
                    )  # fmt: skip
                )

    if prereg or audit:
        report.add(Heading("Prepared corpus"))
    if prereg:
        report.add(
            Facts(
                [
                    ("seed", f"{prereg.get('seed')} ({prereg.get('seedClass')})"),
                    ("rows", fmt(prereg.get("rows"))),
                    ("generator", prereg.get("generatorId")),
                ]
            )
        )
    if audit:
        report.add(
            Para(
                f"Shortcut audit: the best cue-only learner on a gated group reaches"
                f" {fmt(audit.get('equalizedMax'))} (limit {fmt(audit.get('limit'))}):"
                f" {'passes' if audit_ok else 'FAILS'}; controls reach"
                f" {fmt(audit.get('controlMax'))}, {fmt(audit.get('folds'))}-fold."
            )
        )
        fig = audit_figure(audit)
        if fig:
            report.add(fig)
    if not doc and prereg:
        report.add(
            Para("The steps did not score this study, so there are no verdicts yet.", note=True)
        )

    report.add(*handoff_blocks(info, steps))
    report.add(*diagnose_blocks(info, steps))
    report.add(*steps_block(steps), *registered(info))
    return report
