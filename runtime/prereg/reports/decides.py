"""Figures that show why a verdict is what it is: per hypothesis, its contrasts, estimates or
analyses (one figure per scale: a kind and its metric or method) with each interval, and
drawn over them every threshold the registered rule compares them with on that scale (a
labelled red line over the rows the comparison reads), a contrast test's margin, and, for a
comparison of a P value, a column of the P values with whether each met it.

A row's marker is filled when the row meets every comparison the rule applies to it, and
open when it misses one; the comparison is decided as the engine decides it (the exact
fraction of the counts for a proportion's estimate, the threshold rounded as registered),
over the figures as reported.  Reported-only hypotheses (no threshold) get no figure: the
tables show them.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prereg.reports.numbers import fmt, fmt_p, written
from prereg.reports.page import Figure
from prereg.reports.verdicts import OPS, Comparison, comparisons, exact_figure
from prereg.stats.compare import threshold

#: Quantities drawn on the figure's own scale, and the row field each reads.
ON_SCALE = {"estimate": "estimate", "abs_estimate": "estimate", "lower": "lower", "upper": "upper"}
#: Quantities shown in a column beside the figure.
COLUMNS = {"p": ("P", "p"), "adjusted_p": ("adjusted P", "adjustedP")}
_WORDS = {
    "estimate": "estimate",
    "abs_estimate": "|estimate|",
    "lower": "lower bound",
    "upper": "upper bound",
}
KINDS = (("contrasts", "contrast"), ("estimates", "estimate"), ("analyses", "analysis"))


@dataclass
class Panel:
    """One figure's rows: a hypothesis's figures of one kind on one scale."""

    hypothesis: str
    kind: str  # contrast, estimate or analysis
    scale: str  # the metric (contrasts, estimates) or the method (analyses)
    rows: list[Mapping[str, Any]] = field(default_factory=list)


def panels(
    hypotheses: Sequence[Mapping[str, Any]], doc: Mapping[str, Any]
) -> list[tuple[Mapping[str, Any], Panel]]:
    """Each decided hypothesis (in registered order) with its panels: the figures of ``doc``
    (a SCORE.json) registered with it or read by its rule (a rule may read another
    hypothesis's contrasts), grouped by kind and scale in reported order."""
    out = []
    for h in hypotheses:
        read = comparisons(h)
        if h.get("reported_only") or not read:
            continue
        hid = str(h.get("id"))
        groups: dict[tuple[str, str], Panel] = {}
        for key, kind in KINDS:
            for row in doc.get(key) or []:
                if row.get("estimate") is None:
                    continue
                rid = str(row.get("id"))
                if str(row.get("hypothesis")) != hid and not any(c.reads(rid) for c in read):
                    continue
                scale = str(row.get("method") if kind == "analysis" else row.get("metric"))
                groups.setdefault((kind, scale), Panel(hid, kind, scale)).rows.append(row)
        out.extend((h, p) for p in groups.values())
    return out


def figure_value(row: Mapping[str, Any], quantity: str):
    """The value a comparison reads from a reported row: an estimate as the exact figure the
    engine decides it with (a proportion's k/n or a difference of two, an ECE's or an
    analysis' exact value: :func:`prereg.reports.verdicts.exact_figure`); else the reported
    number (None: not reported)."""
    name = ON_SCALE.get(quantity) or COLUMNS.get(quantity, (None, quantity))[1]
    x = row.get(name)
    if not isinstance(x, int | float) or isinstance(x, bool):
        x = None
    elif quantity == "abs_estimate":
        x = abs(x)
    return exact_figure(row, quantity, x)


def meets(row: Mapping[str, Any], comparison: Comparison) -> bool:
    """Whether ``row`` meets ``comparison`` as the rule needs it (a negated comparison when
    it does not hold); a missing figure meets no comparison."""
    from prereg.stats.compare import compare

    leaf = comparison.leaf
    decimals = leaf.get("decimals")
    x = figure_value(row, str(leaf.get("quantity")))
    if x is None:
        return False
    held = compare(
        x,
        str(leaf.get("op")),
        leaf.get("value"),
        decimals=None if decimals is None else int(decimals),
    )
    return held != comparison.negated


def _runs(ys: list[int]) -> list[tuple[int, int]]:
    """Sorted row positions as runs of neighbours ``(low, high)``."""
    out: list[tuple[int, int]] = []
    for y in sorted(ys):
        if out and y == out[-1][1] + 1:
            out[-1] = (out[-1][0], y)
        else:
            out.append((y, y))
    return out


def wrap(label: str, width: int = 24) -> str:
    """A row's id on lines of at most ``width`` characters where it can, broken after a
    separator (``-``, ``_``, ``.``, ``:``) only, so that a long id does not squeeze the plot."""
    if len(label) <= width:
        return label
    lines = [""]
    for part in re.findall(r"[^-_.:]+[-_.:]?|[-_.:]", label):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _threshold_words(comparison: Comparison) -> str:
    leaf = comparison.leaf
    said = f"{_WORDS[str(leaf.get('quantity'))]} {OPS.get(str(leaf.get('op')))}"
    said += f" {written(leaf.get('value'))}"
    said = f"not ({said})" if comparison.negated else said
    return f"{comparison.verdict or 'rule'}: {said}"


#: Dash patterns telling a panel's thresholds apart (all drawn in the same red).
DASHES = ((0, (5, 2.5)), (0, (8, 2, 2, 2)), (0, (2.5, 1.5)), (0, (10, 3)), (0, (6, 2, 1, 2, 1, 2)))


@dataclass
class Threshold:
    """A line drawn over rows: where (``x``), over which runs of row positions, and its
    legend label (a threshold of the rule, or a test's margin)."""

    label: str
    xs: list[float]
    runs: list[tuple[int, int]]


@dataclass
class Column:
    """A P value comparison shown beside the rows: its heading and each read row's value and
    whether it met it (``cells``: row index -> (value shown, met))."""

    heading: str
    cells: dict[int, tuple[str, bool]]


@dataclass
class Plan:
    """What one panel's figure draws (row positions count from the bottom: the first row is on
    top), decided before any drawing so that it can be checked without reading an SVG."""

    state: list[str]  # per row: met, missed, read or unread
    thresholds: list[Threshold]
    margins: list[Threshold]
    columns: list[Column]


def plan(
    hypothesis: Mapping[str, Any], panel: Panel, p_value: Callable[[Any], str] | None = None
) -> Plan:
    """The thresholds, margins, P columns and row states of one panel (see the module).
    ``p_value`` writes a P value as the study's tables do (a study that registers its P
    rounding), with more digits where that rounding would read on the other side of the
    threshold than the figure does; by default, the reports' usual style."""
    rows = panel.rows
    n = len(rows)
    applies = [
        (c, [i for i, r in enumerate(rows) if c.reads(str(r["id"]))])
        for c in comparisons(hypothesis, by_verdict=True)
    ]
    applies = [(c, idx) for c, idx in applies if idx]
    # Each row: "met" (it meets every comparison the rule makes of it), "missed" (it misses
    # one), "unread" (the rule makes none) or "read" (a list of verdicts reads it: their
    # conditions are alternatives, so no row has to meet them all).
    alternatives = bool(hypothesis.get("verdicts"))
    state: list[str] = []
    for i, r in enumerate(rows):
        read = [c for c, idx in applies if i in idx]
        if not read:
            state.append("unread")
        elif alternatives:
            state.append("read")
        else:
            state.append("met" if all(meets(r, c) for c in read) else "missed")
    thresholds: dict[str, Threshold] = {}
    columns: list[Column] = []
    for c, idx in applies:
        quantity = str(c.leaf.get("quantity"))
        if quantity in ON_SCALE:
            value = float(threshold(c.leaf["value"]))
            xs = [-value, value] if quantity == "abs_estimate" else [value]
            label = _threshold_words(c)
            t = thresholds.setdefault(label, Threshold(label, xs, []))
            t.runs = _runs([n - 1 - i for i in idx] + [y for lo, hi in t.runs for y in range(lo, hi + 1)])  # fmt: skip
        elif quantity in COLUMNS:
            words = COLUMNS[quantity][0]
            heading = f"{'not ' if c.negated else ''}{words}\n{OPS.get(str(c.leaf['op']))}"
            heading += f" {written(c.leaf['value'])}?"
            cells = {}
            for i in idx:
                x = figure_value(rows[i], quantity)
                against = None if x is None else (x, c.leaf["value"], c.leaf.get("decimals"))
                cells[i] = (_p_text(x, against, p_value), meets(rows[i], c))
            columns.append(Column(heading, cells))
    margins: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        m = r.get("margin")
        if panel.kind == "contrast" and r.get("test") not in (None, "none") and m:
            margins.setdefault((float(m), str(r.get("alternative") or "")), []).append(n - 1 - i)
    return Plan(
        state,
        list(thresholds.values()),
        [
            Threshold(f"test's margin {fmt(m)}" + (f" ({alt})" if alt else ""), [m], _runs(ys))
            for (m, alt), ys in margins.items()
        ],
        columns,
    )


def _p_text(x: Any, against: tuple | None, p_value: Callable[[Any], str] | None) -> str:
    """A P value of a figure's column: as the study's tables write it (``p_value``), unless
    those digits would read on the other side of the threshold (or on it) than the figure
    does: then with as many digits as it takes (:func:`fmt_against`). Without ``p_value``, in
    the reports' usual style."""
    if p_value is None or x is None or against is None:
        return fmt_p(x, against=against)
    from fractions import Fraction

    from prereg.reports.numbers import _sides

    text = p_value(x)
    try:
        shown = Fraction(text)
    except (ValueError, ZeroDivisionError):
        return fmt_p(x, against=against)
    if _sides(shown, *against[1:]) == _sides(*against):
        return text
    from prereg.reports.numbers import fmt_against

    return fmt_against(*against, digits=3, style="g")


def figure(
    hypothesis: Mapping[str, Any],
    panel: Panel,
    name: str,
    verdict: str | None = None,
    p_value: Callable[[Any], str] | None = None,
) -> Figure:
    """The figure of one panel, drawn from its :func:`plan`."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    from prereg.reports import plot

    rows = panel.rows
    n = len(rows)
    drawn = plan(hypothesis, panel, p_value)
    state = drawn.state
    met_colour, missed_colour = plot.BLUE, plot.GREY
    colours = {"met": met_colour, "read": met_colour, "missed": missed_colour, "unread": "#444444"}
    legend = {
        "met": "meets the comparisons the rule makes of it",
        "missed": "misses one of them",
        "read": "read by a verdict's condition",
        "unread": "not compared by the rule",
    }
    labels = [wrap(str(r["id"])) for r in rows]
    lines = max(label.count("\n") + 1 for label in labels)
    title = _title(panel, verdict)

    def draw(width: float, narrow: bool = False) -> str:
        """The figure ``width`` inches wide; ``narrow``: for a phone (the legend in one
        column, fewer ticks on the axis)."""
        handles: list = []
        # on a phone each row's name stands above its interval, on a line of its own
        rows_high = 0.36 * n + 0.5 if narrow else (0.18 + 0.12 * lines) * n
        with plot.figure(width, 1.6 + rows_high) as (fig, ax):
            fig.set_layout_engine("constrained")
            for i, r in enumerate(rows):
                y = n - 1 - i - (0.2 if narrow else 0)
                colour = colours[state[i]]
                if r.get("lower") is not None and r.get("upper") is not None:
                    ax.plot([r["lower"], r["upper"]], [y, y], color=colour, lw=1.6, zorder=3)
                ax.plot(
                    [r["estimate"]], [y], "o", ms=5, zorder=4, color=colour,
                    markerfacecolor="white" if state[i] == "missed" else colour,
                )  # fmt: skip
            if panel.kind == "contrast":
                ax.axvline(0.0, color="#999999", lw=0.8, ls=(0, (2, 2)), zorder=1)
                handles.append(Line2D([], [], color="#999999", lw=0.8, ls=(0, (2, 2)), label="no difference"))  # fmt: skip
            styles = [(t, plot.VERMILION, 1.4, DASHES[k % len(DASHES)]) for k, t in enumerate(drawn.thresholds)]  # fmt: skip
            styles += [(t, plot.ORANGE, 1.6, ":") for t in drawn.margins]
            for t, colour, lw, ls in styles:
                handles.append(Line2D([], [], color=colour, lw=lw, ls=ls, label=t.label))
                for x in t.xs:
                    for lo, hi in t.runs:
                        ax.plot(
                            [x, x], [lo - 0.45, hi + 0.45], color=colour, lw=lw, ls=ls, zorder=2
                        )
            for key, label in legend.items():
                if key in state:
                    handles.append(Line2D(
                        [], [], color=colours[key], marker="o", ls="-", ms=5, label=label,
                        markerfacecolor="white" if key == "missed" else colours[key],
                    ))  # fmt: skip
            # The P columns: one per comparison of a P value, at the right of the axes.
            for j, column in enumerate(drawn.columns):
                x = 1.03 + 0.24 * j
                ax.annotate(
                    column.heading, xy=(x, n - 0.4), xycoords=("axes fraction", "data"),
                    fontsize=7, ha="left", va="bottom", annotation_clip=False,
                )  # fmt: skip
                for i, (shown, ok) in column.cells.items():
                    ax.annotate(
                        f"{shown} {'yes' if ok else 'no'}",
                        xy=(x, n - 1 - i - (0.2 if narrow else 0)),
                        xycoords=("axes fraction", "data"), fontsize=7,
                        ha="left", va="center", annotation_clip=False,
                        color=met_colour if ok else missed_colour,
                        fontweight="bold" if ok else "normal",
                    )  # fmt: skip
            ax.set_ylim(-0.6, n - 0.4)
            # Every interval, threshold and margin inside the axes, none on its edge.
            xs = [x for line in ax.get_lines() for x in line.get_xdata()]
            lo, hi = min(xs), max(xs)
            pad = 0.06 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1.0)
            ax.set_xlim(lo - pad, hi + pad)
            if narrow:
                ax.xaxis.set_major_locator(MaxNLocator(4))
            if narrow:
                ax.set_yticks(range(n), [""] * n)
                ax.tick_params(axis="y", length=0)
                for i, r in enumerate(rows):
                    ax.text(
                        0.01, n - 1 - i + 0.02, str(r["id"]), fontsize=7.5, va="bottom",
                        transform=ax.get_yaxis_transform(), zorder=5,
                        bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none"},
                    )  # fmt: skip
            else:
                ax.set_yticks(range(n), list(reversed(labels)), fontsize=7.5, linespacing=1.05)
            ax.grid(axis="y", visible=False)
            label = _axis_label(panel)
            ax.set_xlabel(textwrap.fill(label, 34) if narrow else label)
            if drawn.columns:
                fig.get_layout_engine().set(rect=(0, 0, 1 - 0.15 * len(drawn.columns), 1))
            if narrow:  # each entry on lines of a phone's width
                for h in handles:
                    h.set_label(textwrap.fill(h.get_label(), 36))
            fig.legend(
                handles=handles, loc="outside lower center", ncols=1 if narrow else 2, fontsize=7,
                handlelength=2.2, columnspacing=1.2,
            )  # fmt: skip
            return plot.svg(fig, f"{name}-narrow" if narrow else name, title)

    svg = draw(5.2)
    narrow = plot.fit_width(lambda width: draw(width, narrow=True), 3.2)
    return Figure(name, title, svg, _caption(panel, drawn, verdict), narrow=narrow)


def _axis_label(panel: Panel) -> str:
    rows = panel.rows
    intervals = {(r.get("interval"), r.get("level")) for r in rows}
    if len(intervals) == 1:
        interval, level = next(iter(intervals))
        shown = f"{fmt(100 * float(level))}% {interval} interval" if level is not None else ""
        shown = shown or str(interval or "interval as reported")
    else:
        shown = "intervals as registered"
    what = {"contrast": f"a − b in {panel.scale}", "estimate": panel.scale}.get(
        panel.kind, f"{panel.scale} estimate"
    )
    return f"{what} ({shown})"


def _title(panel: Panel, verdict: str | None) -> str:
    kinds = {"contrast": "contrasts", "estimate": "estimates", "analysis": "analyses"}
    said = f"{panel.hypothesis}: {kinds[panel.kind]} of {panel.scale}"
    return said + (f" (verdict {verdict})" if verdict else "")


def _caption(panel: Panel, drawn: Plan, verdict: str | None) -> str:
    state = drawn.state
    kinds = {"contrast": "contrasts", "estimate": "estimates", "analysis": "analyses"}
    parts = [
        f"The {kinds[panel.kind]} of {panel.scale} registered with {panel.hypothesis} or read by"
        " its rule, each with its interval."
    ]
    if drawn.thresholds:
        parts.append(
            "Vermilion lines: the thresholds the rule compares them with (one dash pattern each),"
            " drawn over the rows each comparison reads"
            + (", labelled with the verdict whose condition makes it." if "read" in state else ".")
        )
    if drawn.margins:
        parts.append("Dotted orange: the margin the test is against.")
    if drawn.columns:
        parts.append("At the right: each P value the rule compares, and whether it met it.")
    if "met" in state or "missed" in state:
        parts.append(
            "A filled marker meets every comparison the rule makes of its row, an open one"
            " misses one; the rule's quantifiers turn these into the verdict"
            + (f" ({verdict})." if verdict else ".")
        )
    elif "read" in state:
        parts.append(
            "The verdicts' conditions are tried in the registered order; the first that holds"
            " gives the verdict" + (f" ({verdict})." if verdict else ".")
        )
    return " ".join(parts)


def blocks(
    hypotheses: Sequence[Mapping[str, Any]],
    doc: Mapping[str, Any],
    verdicts: Mapping[str, str] | None = None,
    prefix: str = "decides",
    p_value: Callable[[Any], str] | None = None,
) -> list[Figure]:
    """One figure per decided hypothesis and scale (see :func:`panels`), named
    ``{prefix}-{hypothesis}`` (with ``-2``, ``-3`` … for a hypothesis's further scales)."""
    verdicts = verdicts or {}
    out: list[Figure] = []
    taken: set[str] = set()
    for h, panel in panels(hypotheses, doc):
        name = base = f"{prefix}-{_slug(panel.hypothesis)}"
        k = 2
        while name in taken:
            name, k = f"{base}-{k}", k + 1
        taken.add(name)
        out.append(figure(h, panel, name, verdicts.get(panel.hypothesis), p_value))
    return out
