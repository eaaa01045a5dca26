"""Report of a multicorrect-scoring study (jev-multicorrect kind).

Reads the outputs its commands wrote (through the steps: the ``score`` step's ``--out`` report
and its ``--binary-outputs`` input; the ``diagnostic`` step's ``--out``):

- the fit split's exact-set accuracy over every grid threshold, with the fitted threshold
  marked (and the retrospective curve the report marks diagnostic-only);
- the ten-bin reliability diagram of the independent binary outputs (bins as the engine's ECE
  defines them, :func:`prereg.stats.calibration.ten_bin_index`), read from the input file the
  report names, after checking its SHA-256 against the digest the report recorded;
- the fit and evaluate split figures side by side; the diagnostic contracts per seed, and the
  diagnostic's pass as the verdict of its registered rule with the deciding figures;
- a ``diagnose`` step's operating characteristics (:mod:`prereg.reports.diagnose`): the
  registered diagnostic run on fresh seeds, each verdict's and decision's share; a claim that
  fails turns the status line red.

Split names, field names and the ECE bin count come from the study's compiled configuration.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from prereg.digest import file_sha256
from prereg.errors import UserError
from prereg.reports import Step, StudyInfo, plot
from prereg.reports.common import fmt, header, inputs_block, read_json, registered, steps_block
from prereg.reports.diagnose import blocks as diagnose_blocks
from prereg.reports.diagnose import claims_status, failing_claims, unchecked_claims
from prereg.reports.page import Facts, Figure, Heading, Para, Report, Table
from prereg.reports.verdicts import figure_verdicts
from prereg.stats.calibration import ten_bin_index

#: The registered metric each figure of REPORT.json reports (the study's metric ids, as the
#: engine's diagnose reads them too): the report names it beside the figure, so that every
#: registered metric can be found in the report.
METRICS = {
    "refusals": "refusals",
    "exactSetAccuracy": "exact-set-accuracy",
    "microPrecision": "micro-precision",
    "microRecall": "micro-recall",
    "microF1": "micro-f1",
    "topKExactShare": "top-g-exact-share",
    "gapMean": "gap",
    "belowUniformShare": "below-uniform-share",
    "noCorrectMeanMax": "no-correct-confidence",
    "ece": "ece",
    "eceExcludingFirstBin": "ece-without-first-bin",
}


def split_figures(multi_min: int, gap_scale: float) -> tuple[tuple[str, str, str], ...]:
    """Figures of a split shown in the comparison table, in this order: the report's key, what
    the figure is, and what it counts or is a share of (|G| is a list's number of correct
    options; the multi-correct minimum and the gap's scale are the study's constants)."""
    multi = f"|G| ≥ {multi_min:g}"
    return (
        ("lists", "lists", "count"),
        ("answered", "answered lists", "count"),
        ("refusals", "refusals", "count (each scores 0)"),
        ("refusalsEmptyCorrect", "refusals of lists with no correct option", "count (still 0)"),
        (
            "refusalsNonemptyCorrect",
            "refusals of lists with a correct option",
            "count (their correct options are FN)",
        ),
        ("exactCount", "lists whose selection is exactly G", "count"),
        ("exactSetAccuracy", "exact-set accuracy", "share of all lists"),
        ("microPrecision", "micro precision", "share of selected options that are correct"),
        ("microRecall", "micro recall", "share of correct options selected"),
        ("microF1", "micro F1", "2PR / (P + R)"),
        ("multiCorrectLists", f"answered lists with {multi}", "count"),
        ("topKExactShare", "top-|G| options are exactly G", f"share of lists with {multi}"),
        (
            "gapMean",
            "multi-correct gap, mean",
            f"points: {gap_scale:g} × (max − min) of G's probabilities",
        ),
        (
            "belowUniformShare",
            "correct options below 1/|G|",
            "share of G's options, where top-|G| is G",
        ),
        ("noCorrectCount", "answered lists with no correct option", "count"),
        ("noCorrectMeanMax", "no-correct confidence", "mean of the largest probability"),
        ("noCorrectMax", "no-correct confidence, highest", "largest probability of those lists"),
    )


def _engine_config(info: StudyInfo):
    from prereg.engines.multicorrect.config import engine_config

    return engine_config(info.config)


def curve_figure(doc: dict, fit: str, name: str = "threshold-curve") -> Figure:
    points = doc.get("fitCurve") or []
    retro = (doc.get("retrospectiveCurve") or {}).get("points") or []
    retro_splits = (doc.get("retrospectiveCurve") or {}).get("splits") or []
    t = doc.get("threshold")
    title = f"Exact-set accuracy on the {fit} split over {len(points)} thresholds"

    def draw(width: float, narrow: bool = False) -> str:
        """``narrow``: for a phone, the legend in one column, title and axis label wrapped."""
        with plot.figure(width, 3.6 + (0.5 if narrow else 0.3), layout="constrained") as (
            fig,
            ax,
        ):
            ax.plot(
                [p["threshold"] for p in points],
                [p["exactSetAccuracy"] for p in points],
                color=plot.BLUE,
                lw=1.4,
                label=f"{fit} (fits the threshold)",
            )
            if retro:
                ax.plot(
                    [p["threshold"] for p in retro],
                    [p["exactSetAccuracy"] for p in retro],
                    color=plot.GREY,
                    lw=1,
                    ls="--",
                    label=f"{' + '.join(retro_splits)} (retrospective, diagnostic only)",
                )
            if t is not None:
                best = next((p for p in points if p["threshold"] == t), None)
                ax.axvline(
                    t, color=plot.VERMILION, lw=1, ls=":", label=f"fitted threshold {fmt(t)}"
                )
                if best is not None:
                    ax.plot([t], [best["exactSetAccuracy"]], "o", color=plot.VERMILION, ms=5)
            top = max([p["exactSetAccuracy"] for p in points + retro] or [1.0])
            ax.set_xlim(0, 1)
            ax.set_ylim(0, top * 1.1)
            xlabel = "selection threshold (select options with p ≥ threshold)"
            ax.set_xlabel(textwrap.fill(xlabel, 36) if narrow else xlabel)
            ax.set_ylabel("exact-set accuracy")
            ax.set_title(textwrap.fill(title, 40) if narrow else title)
            # under the axes, where it covers no curve (inside, "lower center" could)
            fig.legend(loc="outside lower center", fontsize=8, ncols=1 if narrow else 2)
            return plot.svg(fig, f"{name}-narrow" if narrow else name, title)

    svg = draw(6.4)
    narrow = plot.fit_width(lambda width: draw(width, narrow=True), 3.65)
    return Figure(
        name,
        title,
        svg,
        f"A list counts as exact when the selected options are exactly its correct set. The"
        f" threshold is fitted on the {fit} split only (the vermilion dotted line) and then frozen;"
        " the grey dashed curve is reported for diagnosis and plays no part in the fit.",
        narrow=narrow,
    )


def binary_bins(path: Path, fields: Mapping[str, str], bins: int) -> dict:
    """Per bin: count, mean probability, observed frequency (from a binary-outputs JSONL)."""
    q, y = [], []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                q.append(float(rec[fields["probability"]]))
                y.append(int(rec[fields["label"]]))
            except (ValueError, KeyError, TypeError) as exc:
                raise UserError(f"{path}:{n}: not a binary output record ({exc})") from None
    qa, ya = np.array(q, dtype=np.float64), np.array(y, dtype=np.float64)
    idx = ten_bin_index(qa)
    n_b = np.bincount(idx, minlength=bins)
    sq = np.bincount(idx, weights=qa, minlength=bins)
    sy = np.bincount(idx, weights=ya, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"n": n_b, "mean_q": sq / n_b, "freq": sy / n_b, "total": int(qa.size)}


def reliability_figure(b: dict, ece: float | None, bins: int, name: str = "reliability") -> Figure:
    title = f"Reliability of the binary outputs ({bins} bins)"
    edges = np.arange(bins + 1) / bins
    with plot.figure(4.6, 4.6, nrows=2, sharex=True, gridspec_kw={"height_ratios": [3, 1]}) as (
        fig,
        (ax, axn),
    ):
        ax.plot([0, 1], [0, 1], color=plot.GREY, lw=1, ls="--", label="perfect calibration")
        keep = b["n"] > 0
        ax.bar(
            edges[:-1][keep],
            b["freq"][keep],
            width=1 / bins,
            align="edge",
            color=plot.BLUE,
            alpha=0.35,
            edgecolor=plot.BLUE,
            label="observed frequency",
        )
        ax.plot(b["mean_q"][keep], b["freq"][keep], "o", color=plot.BLUE, ms=4, label="bin mean p")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_ylabel("share labelled correct")
        ax.set_title(title)
        ax.legend(loc="upper left", title=None if ece is None else f"ECE {fmt(ece)}")
        axn.bar(edges[:-1], b["n"], width=1 / bins, align="edge", color=plot.GREY)
        axn.set_ylabel("outputs")
        axn.set_xlabel("stated probability")
        svg = plot.svg(fig, name, title)
    return Figure(
        name,
        title,
        svg,
        f"{fmt(b['total'])} yes/no outputs, one per option, binned by stated probability"
        f" (bins [0, 0.1], (0.1, 0.2], …, as the registered ECE bins them). A bar below the"
        " diagonal means overconfidence. The lower panel counts the outputs per bin.",
    )


def build(info: StudyInfo, folder: Path, steps: Sequence[Step]) -> Report:
    cfg = _engine_config(info)
    fit, evaluate = cfg.fit_split, cfg.evaluate_split
    bins = cfg.ece_bins
    score_steps = info.steps_for(steps, "score")
    diag_steps = info.steps_for(steps, "diagnostic")
    score_step = score_steps[-1] if score_steps else None
    doc = read_json(score_step.option("--out")) if score_step else None
    diag = read_json(diag_steps[-1].option("--out")) if diag_steps else None

    parts = []
    if doc:
        ev = (doc.get("splits") or {}).get(evaluate) or {}
        parts.append(
            f"threshold {fmt(doc.get('threshold'))} fitted on {fit}; {evaluate} exact-set"
            f" accuracy {fmt(ev.get('exactSetAccuracy'))}, micro F1 {fmt(ev.get('microF1'))}"
        )
    if diag:
        parts.append("diagnostic " + ("passed" if diag.get("passed") else "FAILED"))
    steps_ok = all(s.ok for s in steps)
    ok = steps_ok and doc is not None and (diag is None or bool(diag.get("passed")))
    status, ok = claims_status(
        "; ".join(parts) or "no outputs",
        ok,
        failing_claims(info, steps),
        unchecked_claims(info, steps),
    )
    report = Report(info.study_id, info.title, status, ok)
    report.add(
        *header(
            info,
            [
                ("score report", (doc or {}).get("specDigest")),
                ("diagnostic", (diag or {}).get("specDigest")),
            ],
        )
    )
    if doc:
        inputs = doc.get("inputs") or {}
        report.add(
            *inputs_block([(k, v.get("sha256"), v.get("bytes")) for k, v in sorted(inputs.items())])
        )
        report.add(Heading("Score"))
        report.add(
            Facts(
                [
                    ("fitted threshold", f"{fmt(doc.get('threshold'))} (on {fit}, then frozen)"),
                    ("ECE (ten bins), metric ece", fmt(doc.get("ece"))),
                    (
                        "ECE without the first bin, metric ece-without-first-bin",
                        fmt(doc.get("eceExcludingFirstBin")),
                    ),
                    ("binary outputs", fmt(doc.get("binaryOutputs"))),
                    (
                        "rounding",
                        "none: figures as computed (rounding only when asked)"
                        if doc.get("roundingDecimals") is None
                        else f"half up to {doc.get('roundingDecimals')} decimals",
                    ),
                ]
            ),
            curve_figure(doc, fit),
        )
        binary_path = score_step.option("--binary-outputs")
        recorded = (inputs.get("binaryOutputs") or {}).get("sha256")
        if binary_path and recorded and Path(binary_path).is_file():
            hexd, _ = file_sha256(binary_path)
            if hexd != recorded.split(":")[-1]:
                report.add(
                    Para(
                        f"The binary outputs file {binary_path} changed since it was scored"
                        " (its SHA-256 differs from the report's); no reliability diagram.",
                        note=True,
                    )
                )
            else:
                b = binary_bins(Path(binary_path), cfg.fields["binary"], bins)
                report.add(reliability_figure(b, doc.get("ece"), bins))
                report.add(
                    Table(
                        ("bin", "outputs", "mean p", "share correct"),
                        [
                            (
                                f"{'[' if i == 0 else '('}{i / bins:.1f}, {(i + 1) / bins:.1f}]",
                                fmt(int(b["n"][i])),
                                fmt(float(b["mean_q"][i])) if b["n"][i] else None,
                                fmt(float(b["freq"][i])) if b["n"][i] else None,
                            )
                            for i in range(bins)
                        ],
                        numeric=frozenset({1, 2, 3}),
                        caption="Reliability bins: the binary outputs per bin, their mean stated"
                        " probability and the share that is correct (computed here from the"
                        " binary outputs file, to 4 decimals; REPORT.json's rounding is not"
                        " applied)",
                    )
                )
        splits = doc.get("splits") or {}
        report.add(
            Heading(f"{fit.capitalize()} and {evaluate} splits"),
            Table(
                ("figure", "unit", fit, evaluate, "key", "metric"),
                [
                    (
                        label,
                        unit,
                        fmt(splits.get(fit, {}).get(k)),
                        fmt(splits.get(evaluate, {}).get(k)),
                        k,
                        METRICS.get(k, "–"),
                    )
                    for k, label, unit in split_figures(cfg.multi_correct_min, cfg.gap_scale)
                    if k in splits.get(fit, {}) or k in splits.get(evaluate, {})
                ],
                numeric=frozenset({2, 3}),
                code=frozenset({4, 5}),
                caption=f"Figures of the {fit} and {evaluate} splits at the frozen threshold"
                " (key: the figure's name in REPORT.json; metric: the registered metric it"
                " reports)",
            ),
        )
    if diag:
        seeds = diag.get("seeds") or []
        contracts: list[tuple[int, str]] = []
        for s in seeds:
            for c in s.get("contracts", []):
                if (c.get("number"), c.get("contract")) not in contracts:
                    contracts.append((c.get("number"), c.get("contract")))
        rows = []
        for number, cid in contracts:
            row = [fmt(number), cid]
            for s in seeds:
                c = next((c for c in s.get("contracts", []) if c.get("contract") == cid), None)
                row.append("–" if c is None else "holds" if c.get("passed") else "FAILS")
            rows.append(row)
        report.add(
            Heading("Diagnostic contracts"),
            Para(
                "Synthetic data per seed, scored through the public interface; each contract"
                " checks one property of the scoring."
            ),
            Table(
                ("#", "contract", *(f"seed {s.get('seed')}" for s in seeds)),
                rows,
                numeric=frozenset({0}),
                code=frozenset({1}),
            ),
        )
        from prereg.engines.multicorrect.figures import held_figures

        decision = cfg.diagnostic.decision
        report.add(
            *figure_verdicts(
                info,
                {decision.hypothesis: "supported" if diag.get("passed") else "not-supported"},
                held_figures(seeds, cfg.diagnostic.contracts),
                "The diagnostic passes when the registered rule holds (as PREREG.md states it,"
                " linked) over the figures the engine reports: each contract's share of the"
                " seeds on which it held.",
                report,
            )
        )
    report.add(*diagnose_blocks(info, steps))
    report.add(*steps_block(steps), *registered(info))
    return report
