"""``diagnose`` for the multi-correct scoring: its registered decision and figures over many
runs of its registered synthetic scenario, at the registered list counts or others.

The scenario is the one the spec registers in constant ``diagnostic`` (choice lists per split,
candidates, |G| weights, refusal rate, probability weight scales, binary draws): the study
registers no other.  A simulated study is the diagnostic as registered: one run on as many
fresh seeds as constant ``diagnostic-seeds`` lists, each seed's synthetic lists scored by the
engine's own code (:func:`.contracts.diagnostic_run`: the threshold fitted on the fit split
and frozen, the evaluate split scored once, every contract checked), the hypothesis decided by
its registered rule over that study's ``held-<contract>`` shares, and the study's decision by
the registered decision.  Study b's seeds are the first words of
``SeedSequence(--seed, spawn_key=(b, i)).generate_state`` (i the seed's place), so a study's
figures depend on --seed and b alone, never on --workers.

Reported per condition: the share of each verdict and each decision outcome; per contract the
share of studies in which it failed on some seed (as gates); and the mean over every seed run
of the figures the report gives for the evaluate split (fitted threshold, exact-set accuracy,
micro F1, multi-correct gap, below-uniform share) and the ECE of the binary outputs (the
scenario registers no true value, so no bias or coverage).  The sizing claim is the registered
rule itself: every simulated study reaches the outcome the decision gives when the hypothesis
is supported (a correct scorer's diagnostic should not fail by chance: a failing contract whose
figures need a case the data happen to lack, such as a ranked-but-not-recovered list, fails
the decision).  ``--vary lists=V1,...`` sets both splits' list counts (``lists:fit``,
``lists:evaluate`` one of them) and ``--target`` gives the smallest listed count at which no
simulated study failed, confirmed with a fresh seed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from prereg.diagnose import plain
from prereg.engines import StudyContext
from prereg.rules import NOT_SUPPORTED, SUPPORTED

from .config import EngineConfig, engine_config

SCENARIO = "diagnostic"
VARIED = ("lists", "lists:fit", "lists:evaluate")
MAX_LISTS = 100_000
#: Studies per task: enough work to outweigh sending the task to a worker.
CHUNK = 8
#: Bytes held per simulated study (its verdict, failed contracts and figures per seed, and its
#: share of the task list): about 1.4 KB measured at 400 studies of the registered 3 seeds,
#: rounded up; a study of more seeds is taken to hold proportionally more (its figures are
#: per seed), so a registration of 1,000 seeds is refused its share of memory too.
STUDY_BYTES = 2048
STUDY_SEEDS = 3
#: The figures averaged per seed: (id, where it is read).
FIGURES = (
    ("threshold", "threshold"),
    ("exact-set-accuracy", "exact_set_accuracy"),
    ("micro-f1", "micro_f1"),
    ("gap", "gap_mean"),
    ("below-uniform-share", "below_uniform_share"),
    ("ece", None),
)


def study_seeds(seed: int, study: int, count: int) -> list[int]:
    """The diagnostic seeds of simulated study ``study``."""
    return [
        int(
            np.random.SeedSequence(seed, spawn_key=(study, i)).generate_state(1, dtype=np.uint32)[0]
        )
        for i in range(count)
    ]


def _sized(cfg: EngineConfig, fit: int, evaluate: int) -> EngineConfig:
    d = dataclasses.replace(cfg.diagnostic, fit_lists=fit, evaluate_lists=evaluate)
    return dataclasses.replace(cfg, diagnostic=d)


def _chunk(payload: dict, task: tuple[int, int, int, int, int]) -> list[tuple]:
    """Studies lo..hi−1 at (fit, evaluate) lists: per study (contract → held on every seed,
    verdict, per seed the figures)."""
    from .contracts import diagnostic_run
    from .ece import binary_ece
    from .figures import held_figures
    from .scoring import evaluate_test

    seed, lo, hi, fit_n, eval_n = task
    cfg = _sized(payload["cfg"], fit_n, eval_n)
    decision = cfg.diagnostic.decision
    out = []
    for b in range(lo, hi):
        results, figures = [], []
        for s in study_seeds(seed, b, payload["seeds"]):
            res, ctx = diagnostic_run(s, cfg)
            results.append(res)
            pairs = [(r, ctx["preds"][r.request_id]) for r in ctx["syn"].evaluate_rows]
            m = evaluate_test(ctx["fit"], pairs, cfg)
            row = [getattr(m, k) if k else None for _, k in FIGURES]
            row[-1] = binary_ece(ctx["syn"].binary, config=cfg)
            figures.append(tuple(row))
        held = held_figures(results, cfg.diagnostic.contracts)
        from prereg.rules import figure_result

        verdict = decision.decide({k: figure_result(k, v) for k, v in held.items()})
        failed = tuple(c for c in cfg.diagnostic.contracts if held[f"held-{c}"] != 1)
        out.append((failed, verdict, tuple(figures)))
    return out


def _outcome(registered, hypothesis: str, verdict: str) -> str:
    from prereg.decide.decision import decide

    record = decide(registered, {hypothesis: verdict}, {}, {})
    return record["outcome"] if record else verdict


def _mean_sd(values: list[float]) -> tuple[float | None, float | None, int]:
    x = [v for v in values if v is not None and not math.isnan(v)]
    if not x:
        return None, None, 0
    mean = math.fsum(x) / len(x)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in x) / (len(x) - 1)) if len(x) > 1 else None
    return mean, sd, len(x)


def diagnose(ctx: StudyContext, args: Any) -> int:
    from prereg.diagnose.command import _rules_module

    cfg = engine_config(ctx.config)
    opts = plain.options(args, (SCENARIO,))
    d = cfg.diagnostic
    values = None
    varied = None
    if opts.vary is not None:
        varied = str(opts.vary).partition("=")[0].strip()
        values = plain.parse_vary(
            opts.vary, VARIED, 1, MAX_LISTS, "choice lists per split of a synthetic run"
        )
    registered = getattr(_rules_module(ctx, args), "DECISION", None)
    hyp = d.hypothesis
    passing = _outcome(registered, hyp, SUPPORTED)
    seeds_per_study = len(cfg.diagnostic_seeds)
    sims, seed = opts.simulations, opts.seed

    def sizes(v: int | None) -> tuple[int, int]:
        if v is None:
            return d.fit_lists, d.evaluate_lists
        return (
            v if varied in ("lists", "lists:fit") else d.fit_lists,
            v if varied in ("lists", "lists:evaluate") else d.evaluate_lists,
        )

    def tasks_at(at_seed: int, v: int | None) -> list[tuple]:
        fit_n, eval_n = sizes(v)
        return [(at_seed, lo, min(lo + CHUNK, sims), fit_n, eval_n) for lo in range(0, sims, CHUNK)]

    payload = {"cfg": cfg, "seeds": seeds_per_study}
    points = [None, *(values or ())]
    per_study = -(-STUDY_BYTES * max(seeds_per_study, STUDY_SEEDS) // STUDY_SEEDS)
    plain.refuse_beyond_memory(sims, len(points), per_study)
    tasks = list(dict.fromkeys(t for v in points for t in tasks_at(seed, v)))
    done = plain.run_tasks(args, opts, f"diagnose {ctx.study_id}", _chunk, payload, tasks)
    got = dict(zip(tasks, done, strict=True))

    def studies(at_seed: int, v: int | None) -> list[tuple]:
        return [s for t in tasks_at(at_seed, v) for s in got[t]]

    def condition(at_seed: int, v: int | None) -> dict:
        runs = studies(at_seed, v)
        verdicts = {SUPPORTED: 0, NOT_SUPPORTED: 0}
        outcomes = {o.id: 0 for o in registered.outcomes} if registered else None
        failed = {c: 0 for c in d.contracts}
        for fails, verdict, _ in runs:
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
            if outcomes is not None:
                outcomes[_outcome(registered, hyp, verdict)] += 1
            for c in fails:
                failed[c] += 1
        estimates = []
        for i, (fid, _) in enumerate(FIGURES):
            mean, _sd, n = _mean_sd([f[i] for _, _, per in runs for f in per])
            estimates.append(
                {
                    "id": fid,
                    "hypothesis": hyp,
                    "truth": None,
                    "defined": n,
                    "meanEstimate": plain.r(mean),
                    "bias": None,
                    "biasMcSe": None,
                    "coverage": None,
                }
            )
        out = plain.condition(
            SCENARIO, None, sims, [plain.verdicts(hyp, verdicts, sims)], outcomes, {}, estimates
        )
        # a study may fail several contracts: anyFailed is the share failing any
        any_failed = sum(1 for fails, _, _ in runs if fails)
        out["gates"] = {
            "anyFailed": plain.share(any_failed, sims),
            "byGate": [{"id": c, "failed": plain.share(k, sims)} for c, k in failed.items()],
        }
        return out

    def claim_at(at_seed: int, v: int | None) -> dict:
        runs = studies(at_seed, v)
        k = sum(1 for _, verdict, _ in runs if _outcome(registered, hyp, verdict) == passing)
        p = k / sims
        se = math.sqrt(p * (1 - p) / sims)
        return {
            "id": passing,
            "method": "simulation",
            "figure": plain.r(p),
            "mcSe": plain.r(se),
            "withinMonteCarloError": False if k == sims else 1.0 - p <= 2 * se,
            "op": "ge",
            "value": 1.0,
            "holds": k == sims,
        }

    base_condition = condition(seed, None)
    base = claim_at(seed, None)
    claim = {
        **{k: base[k] for k in ("id", "method", "figure", "mcSe", "withinMonteCarloError")},
        "kind": "verdict",
        "claim": f"every simulated run of the registered diagnostic reaches {passing}"
        f" (hypothesis {hyp} supported: every contract holds on each of its"
        f" {seeds_per_study} seeds)",
        "statement": None,
        "op": "ge",
        "value": 1.0,
        "holds": base["holds"],
        "details": {
            "lists": {"fit": d.fit_lists, "evaluate": d.evaluate_lists},
            "seedsPerStudy": seeds_per_study,
        },
    }
    doc: dict[str, Any] = {
        **plain.head(ctx, sims, seed, CHUNK, [SCENARIO], d.fit_lists + d.evaluate_lists, 2),
        "notes": [
            f"Each simulated study is the registered diagnostic (constant diagnostic: {d.fit_lists}"
            f" + {d.evaluate_lists} choice lists) run on {seeds_per_study} fresh seeds, scored"
            " by the engine's own code; estimates are means over every seed run (the scenario"
            " registers no true value: no bias or coverage).",
        ],
        "conditions": [base_condition],
        "families": [],
        "claims": [claim],
    }
    if values is not None:
        doc["redesign"] = _redesign(
            args, opts, varied, values, seed, payload, got, tasks_at, sizes, condition, claim_at
        )
    lines = []
    for e in base_condition["estimates"]:
        lines.append(f"{e['id']}: mean {e['meanEstimate']} over {e['defined']} seeds run")
    return plain.write(ctx, args, opts, doc, lines)


def _redesign(
    args, opts, varied, values, seed, payload, got, tasks_at, sizes, condition, claim_at
) -> dict:
    def point(v: int, at_seed: int) -> dict:
        c = claim_at(at_seed, v)
        cond = condition(at_seed, v)
        fit_n, eval_n = sizes(v)
        return {
            "value": v,
            "seed": at_seed,
            "rows": fit_n + eval_n,
            "claims": [c],
            "allHold": c["holds"],
            "conditions": [
                {
                    "scenario": cond["scenario"],
                    "effect": cond["effect"],
                    "decision": [dict(o) for o in cond["decision"] or ()],
                    "hypotheses": [
                        {
                            "id": h["id"],
                            **{k: h["verdicts"][0][k] for k in ("verdict", "share", "mcSe")},
                        }
                        for h in cond["hypotheses"]
                    ],
                }
            ],
        }

    points = [point(v, seed) for v in values]
    out: dict[str, Any] = {"parameter": varied, "values": list(values), "points": points}
    if opts.target:
        meeting = [p["value"] for p in points if p["allHold"]]
        target: dict[str, Any] = {"value": min(meeting) if meeting else None, "confirmation": None}
        if meeting:
            fresh = plain.confirmation_seed(seed)
            more = tasks_at(fresh, target["value"])
            res = plain.run_tasks(
                args, opts, f"confirm {varied}={target['value']}", _chunk, payload, more
            )
            got.update(zip(more, res, strict=True))
            target["confirmation"] = point(target["value"], fresh)
            target["confirmed"] = target["confirmation"]["allHold"]
        else:
            target["confirmed"] = False
        out["target"] = target
    return out
