"""The ``diagnose`` command, for every engine that can describe its rows as row groups.

Arguments (as a spec declares them): ``--scenario NAME`` (repeatable; default every registered
scenario), ``--simulations N``, ``--seed S``, ``--out FILE`` (DIAGNOSE.json; DIAGNOSE.md is
written beside it, neither overwritten), optional ``--workers K`` (local processes),
``--scheduler ADDRESS`` (a Dask distributed scheduler) and ``--power P`` (the target of each
family's minimum detectable effect; default 0.8), ``--vary rows=V1,...`` and ``--target``
(:mod:`.redesign`).  Every registered claim is checked; a
verdict claim that needs simulation adds its scenario at its effect size to the run.

The document (schema ``prereg-diagnose/v1``, :data:`SCHEMA_FILE` ships with the package and
every document is validated against it before it is written) records the study, its spec
digest, N, the seed and the block size, each condition's operating characteristics
(:mod:`.summary`), each family's power curve per hypothesis and the effect reaching the target
power, and the claims.  It records nothing about where it ran: the same inputs give the same
bytes with any ``--workers`` or scheduler.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from prereg import runner
from prereg.console import console_of
from prereg.decide import scenarios as registered
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import output_file, refuse_existing, refuse_report_on_output, write_files_new
from prereg.rules import REPORTED_ONLY

from . import claims as claim_checks
from . import redesign
from .design import Design, Rules, leave_out_unread, refuse_unmodelled
from .model import Condition, conditions
from .rows import needs_rows
from .run import BLOCK_SIZE, Plan, run_task
from .summary import detectable, power_share, r, summarize

SCHEMA = "prereg-diagnose/v1"
SCHEMA_FILE = "diagnose.schema.json"
DEFAULT_POWER = 0.8


def schema() -> dict:
    return json.loads(resources.files("prereg.diagnose").joinpath(SCHEMA_FILE).read_text("utf-8"))


_OBJECT_KEYS = frozenset(
    {"type", "properties", "required", "additionalProperties", "title", "description"}
)


def _fast_schema(node: Any, defs: Mapping[str, Any]) -> Any:
    """The schema with the keywords :func:`prereg.records.schema_predicate` lacks rewritten
    into ones it has, each rewrite accepting exactly what the original accepts: a bare local
    ``$ref`` by its definition, a string ``const`` by a one-string ``enum``, and ``oneOf`` an
    object schema or null by that object schema whose type also admits null (its other
    keywords hold for anything that is not an object).  ValueError for anything else."""
    if isinstance(node, list):
        return [_fast_schema(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        if set(node) - {"$ref", "description"} or not ref.startswith("#/$defs/"):
            raise ValueError(f"$ref {ref!r} beside other keywords")
        return _fast_schema(defs[ref.removeprefix("#/$defs/")], defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$defs":
            continue
        if key == "const":
            if not isinstance(value, str):
                raise ValueError("a const that is not a string")
            out["enum"] = [value]
        elif key == "oneOf":
            options = [_fast_schema(x, defs) for x in value]
            nulls = [x for x in options if x == {"type": "null"}]
            objects = [x for x in options if x not in nulls]
            if len(nulls) != 1 or len(objects) != 1:
                raise ValueError("a oneOf other than an object or null")
            (obj,) = objects
            if obj.get("type") != "object" or set(obj) - _OBJECT_KEYS:
                raise ValueError("a oneOf other than an object or null")
            out.update({**obj, "type": ["object", "null"]})
        elif key in ("properties", "$defs"):
            out[key] = {k: _fast_schema(v, defs) for k, v in value.items()}
        else:
            out[key] = _fast_schema(value, defs)
    return out


@functools.cache
def _accepts():
    """A compiled predicate of the document schema (True only for a valid document), or None."""
    from prereg.records import schema_predicate

    s = schema()
    try:
        return schema_predicate(_fast_schema(s, s.get("$defs", {})))
    except (ValueError, KeyError):
        return None


def validate(doc: Mapping[str, Any]) -> None:
    """Refuse a document that does not match the shipped schema.  A document the compiled
    predicate accepts is valid; any other is validated by jsonschema, which names the problems."""
    accepts = _accepts()
    if accepts is not None and accepts(doc):
        return
    import jsonschema

    errors = sorted(
        jsonschema.Draft202012Validator(schema()).iter_errors(doc), key=lambda e: list(e.path)
    )
    if errors:
        raise UserError(
            "internal: the diagnose document does not match its schema",
            problems=[f"/{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:20]],
        )


def _int(args, name: str, minimum: int, default: int | None = None) -> int:
    v = getattr(args, name, None)
    if v is None and default is not None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise UserError(f"--{name.replace('_', '-')}: must be an integer ≥ {minimum} (got {v!r})")
    return v


# a simulated study's figures kept until the summary (verdicts, gates, estimates, contrasts),
# in bytes: a tuple of shared verdict names, one bool per gate, 3 and 5 doubles per estimate
# and contrast, with the arrays' and the tuple's own overhead; the summary copies them once
_STUDY_OVERHEAD = 120


def study_bytes(rules) -> int:
    """Bytes one simulated study holds until the summary."""
    return (
        _STUDY_OVERHEAD
        + 8 * len(rules.HYPOTHESES)
        + len(rules.GATES)
        + 8 * 3 * len(rules.ESTIMATES)
        + 8 * 5 * len(rules.CONTRASTS)
        + 8 * 5 * len(getattr(rules, "ANALYSES", ()))
    )


def available_memory() -> int:
    """Bytes of memory this machine has available (MemAvailable), or its physical memory."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 1 << 33


def refuse_beyond_memory(plan, memory: int | None = None) -> None:
    """Refuse, before any work, a diagnosis whose simulated studies (scenarios × effects ×
    ``--simulations``) would not fit in half the available memory (held twice at the
    summary)."""
    memory = available_memory() if memory is None else memory
    studies = len(plan.conditions) * plan.simulations
    need = 2 * studies * study_bytes(plan.rules)
    if need > memory // 2:
        most = max(1, (memory // 2) // (2 * study_bytes(plan.rules) * len(plan.conditions)))
        raise UserError(
            f"--simulations: {plan.simulations:,} simulated studies for each of"
            f" {len(plan.conditions)} scenario and effect conditions need about"
            f" {need / 2**30:,.1f} GiB, more than half the {memory / 2**30:,.1f} GiB available;"
            f" at most {most:,} here (nothing was run)"
        )


def _rules_module(ctx: StudyContext, args):
    import importlib

    from prereg.compiler.project import Project
    from prereg.study import load_generated

    root = getattr(args, "project_root", None)
    if root is None:
        raise UserError("internal: the command needs the project root (args.project_root)")
    module = load_generated(Project(Path(root)), ctx.study_id)
    return importlib.import_module(module.__name__ + ".rules")


def build_plan(
    ctx: StudyContext,
    design: Design,
    rules: Rules,
    scenario_ids: list[str],
    simulations: int,
    seed: int,
    path: str = "counts",
) -> tuple[Plan, dict]:
    """The plan: the requested scenarios' conditions, then those the claims need."""
    found = registered.registered(ctx.config)
    for sid in scenario_ids:
        registered.scenario(ctx.config, sid)
    conds: list[Condition] = []
    for sid in scenario_ids:
        conds += conditions(design, found[sid])
    plan = Plan(ctx.study_id, design, rules, tuple(conds), seed, simulations, BLOCK_SIZE, "", path)
    have = {(c.scenario, c.effect) for c in conds}
    for c in ctx.config.get("claims") or ():
        body = c.get("verdict")
        if not body:
            continue
        if body["scenario"] not in found:
            raise UserError(f"claim {c['id']}: unknown scenario {body['scenario']!r}")
        cond = claim_checks.verdict_condition(plan, body, found)
        if (cond.scenario, cond.effect) in have:
            continue
        if claim_checks.needs_simulation(plan, body, found):
            conds.append(cond)
            have.add((cond.scenario, cond.effect))
    # the per-process caches of a plan are keyed by this: the group rows are in it because a
    # redesign runs the same spec at other row counts (other groups, other selections)
    rows = (design.group_cell.tolist(), design.group_rows.tolist())
    key = hashlib.sha256(
        repr(
            (
                ctx.spec_digest,
                [(c.scenario, c.effect) for c in conds],
                seed,
                simulations,
                rows,
                path,
                _rules_key(rules),
            )
        ).encode()
    ).hexdigest()
    plan = Plan(ctx.study_id, design, rules, tuple(conds), seed, simulations, BLOCK_SIZE, key, path)
    return plan, found


def _rules_key(rules) -> tuple:
    """What a redesign may change in the rules (alpha, margins): part of a plan's cache key."""
    return (
        repr(rules.ESTIMATES),
        repr(rules.CONTRASTS),
        repr(getattr(rules, "ANALYSES", ())),
        repr(rules.RULES),
    )


def _families(plan: Plan, summaries: list[dict], found, target: float) -> list[dict]:
    out = []
    for sid in dict.fromkeys(c.scenario for c in plan.conditions):
        effects = registered.effects(found[sid])
        rows = [s for s in summaries if s["scenario"] == sid and s["effect"] is not None]
        if not effects or not rows:
            continue
        rows.sort(key=lambda s: s["effect"])
        curves = []
        for h in plan.rules.HYPOTHESES:
            verdict = plan.rules.first_verdict(h)
            if verdict == REPORTED_ONLY:
                continue  # no rule, so no power: its share is 1 at every effect
            points = []
            for s in rows:
                got = power_share(s, h, verdict)
                points.append(
                    {"effect": s["effect"], **{k: got[k] for k in ("count", "share", "mcSe")}}
                )
            mde = detectable(
                [p["effect"] for p in points], [p["share"] or 0.0 for p in points], target
            )
            curves.append(
                {"hypothesis": h, "verdict": verdict, "points": points, "detectable": r(mde)}
            )
        out.append({"scenario": sid, "power": target, "curves": curves})
    return out


def _diagnosis(
    ctx: StudyContext,
    rules: Rules,
    build_design: Callable[[Mapping[str, Any]], Design],
    scenario_ids: list[str],
    simulations: int,
    seed: int,
    run_blocks: Callable[[Plan, str], list],
    label: str,
) -> dict:
    """One whole diagnosis of ``ctx.config``: its design, plan, summaries and claims."""
    design = build_design(ctx.config)
    claims = ctx.config.get("claims") or ()
    path = "counts"
    if design.rows is not None and needs_rows(design, rules, claims):
        # the row path simulates everything the rules register: nothing is left out
        path, left_out = "rows", []
    else:
        left_out = leave_out_unread(design, rules, claims)
        refuse_unmodelled(design, rules)
    plan, found = build_plan(ctx, design, rules, scenario_ids, simulations, seed, path)
    if path == "rows" and hasattr(design.rows, "prepare"):
        design.rows.prepare(list(dict.fromkeys(c.scenario for c in plan.conditions)))
    refuse_beyond_memory(plan)
    blocks = run_blocks(plan, label)
    summaries = []
    for ci in range(len(plan.conditions)):
        mine = [b for b in blocks if b.condition == ci]
        mine.sort(key=lambda b: b.block)
        summaries.append(summarize(plan, ci, mine))
    by_cond = {(s["scenario"], s["effect"]): s for s in summaries}
    checked = claim_checks.check(plan, ctx.config.get("claims") or (), found, by_cond)
    return {
        "design": design,
        "plan": plan,
        "found": found,
        "left_out": left_out,
        "summaries": summaries,
        "claims": checked,
    }


def run(
    ctx: StudyContext,
    args,
    build_design: Callable[[Mapping[str, Any]], Design],
) -> int:
    simulations = _int(args, "simulations", 1)
    seed = _int(args, "seed", 0)
    workers = _int(args, "workers", 1, default=1)
    scheduler = getattr(args, "scheduler", None)
    if scheduler is not None:
        runner.scheduler_address(scheduler)  # a malformed address is refused before any work
    target = getattr(args, "power", None)
    target = DEFAULT_POWER if target is None else float(target)
    if not 0 < target < 1:
        raise UserError(f"--power: {target} is not a power strictly between 0 and 1")
    vary_text = getattr(args, "vary", None)
    redesign.refuse_registered_beyond_memory(ctx.config)
    rules = Rules(_rules_module(ctx, args))
    vary = redesign.parse_vary(vary_text, ctx.config, rules) if vary_text is not None else None
    find_target = bool(getattr(args, "target", False))
    if find_target and vary is None:
        raise UserError("--target: needs --vary (the values to choose the smallest from)")
    out = output_file(args.out)
    md = out.with_suffix(".md") if out.suffix else out.with_name(out.name + ".md")
    refuse_report_on_output(out, md)
    refuse_existing(out, md)
    asked = getattr(args, "scenario", None)
    if isinstance(asked, str):
        asked = [asked]
    scenario_ids = list(dict.fromkeys(asked or registered.registered(ctx.config)))
    con = console_of(args)

    def run_blocks(plan: Plan, label: str) -> list:
        tasks = plan.tasks()
        progress = con.progress(label, len(tasks), unit="blocks")
        try:
            return runner.run(
                run_task, plan, tasks, workers=workers, scheduler=scheduler, progress=progress
            )
        finally:
            progress.close()

    def diagnosis(context: StudyContext, at_seed: int, label: str, value=None) -> dict:
        at_rules = rules
        if value is not None and vary is not None and vary.parameter != "rows":
            at_rules = redesign.varied_rules(rules, vary, value)
        return _diagnosis(
            context, at_rules, build_design, scenario_ids, simulations, at_seed, run_blocks, label
        )

    base = diagnosis(ctx, seed, f"diagnose {ctx.study_id}")
    design, plan, found = base["design"], base["plan"], base["found"]
    summaries, checked = base["summaries"], base["claims"]
    doc = {
        "schemaVersion": SCHEMA,
        "study": ctx.study_id,
        "version": ctx.version,
        "specDigest": ctx.spec_digest,
        **_design_digest(args, ctx),
        "simulations": simulations,
        "seed": seed,
        "blockSize": plan.block_size,
        "requested": scenario_ids,
        "rows": int(design.group_rows.sum()),
        "rowGroups": design.groups,
        "notes": list(design.notes) + base["left_out"] + _path_notes(plan),
        "conditions": summaries,
        "families": _families(plan, summaries, found, target),
        "claims": checked,
    }
    if vary is not None:
        doc["redesign"] = redesign.redesign(ctx, vary, seed, find_target, diagnosis)
    validate(doc)
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    write_files_new([(out, text, 0o644), (md, markdown(doc), 0o644)])
    _report(con, doc, out, md)
    return 0


def _design_digest(args, ctx: StudyContext) -> dict:
    """``designDigest`` (:func:`.standing.design_digest` of the spec as it is now), by which
    ``prereg check`` finds the study's current diagnosis; nothing when the spec cannot be
    read (the study was run without its project)."""
    from .standing import design_digest_of

    root = getattr(args, "project_root", None)
    found = design_digest_of(Path(root), ctx.study_id) if root is not None else None
    return {"designDigest": found} if found else {}


def _path_notes(plan: Plan) -> list[str]:
    if plan.path != "rows":
        return []
    return [
        "Simulated row by row: each simulated study is the observation records of every"
        " registered row, drawn under the scenario and scored by the study's own scoring code"
        " (the rules read figures the counts of rows do not give)."
    ]


def _report(con, doc: Mapping[str, Any], out: Path, md: Path) -> None:
    w = con.line
    w(
        f"wrote {out} and {md.name}: {doc['simulations']:,} simulated studies under each of"
        f" {len(doc['conditions'])} condition(s) (seed {doc['seed']})"
    )
    conditions = []
    for s in doc["conditions"]:
        label = s["scenario"] + ("" if s["effect"] is None else f" at effect {s['effect']:g}")
        parts = []
        for h in s["hypotheses"]:
            top = h["verdicts"][0]
            parts.append(f"{h['id']} {top['verdict']} {top['share']:.3f}")
        gate = s["gates"]["anyFailed"]["share"]
        w(f"  {label}: {'; '.join(parts)}; a gate failed in {gate:.3f}")
        conditions.append(
            {
                "scenario": s["scenario"],
                "effect": s["effect"],
                "hypotheses": {
                    h["id"]: {v["verdict"]: v["share"] for v in h["verdicts"]}
                    for h in s["hypotheses"]
                },
                "gateFailedShare": gate,
            }
        )
    for c in doc["claims"]:
        fig = "none" if c["figure"] is None else f"{c['figure']:.4f}"
        se = f" ± {c['mcSe']:.4f}" if c.get("mcSe") is not None else ""
        w(f"  claim {c['id']}: {fig}{se} ({c['method']}): {'holds' if c['holds'] else 'FAILS'}")
    failing = [c["id"] for c in doc["claims"] if not c["holds"]]
    if doc["claims"]:
        w(
            f"  every sizing claim holds ({len(doc['claims'])})"
            if not failing
            else f"  sizing claims FAIL: {', '.join(failing)} (of {len(doc['claims'])})"
        )
    red = doc.get("redesign")
    for line in redesign_lines(red) if red else ():
        w("  " + line)
    con.summary(
        {
            "outputs": [str(out), str(md)],
            "claimsHold": not failing,
            "failingClaims": failing,
            "simulations": doc["simulations"],
            "seed": doc["seed"],
            "conditions": conditions,
            "claims": [
                {k: c.get(k) for k in ("id", "figure", "mcSe", "method", "holds")}
                for c in doc["claims"]
            ],
            **({"redesign": red} if red else {}),
        }
    )


def _claim_cell(c: Mapping[str, Any]) -> str:
    se = f" ± {_fmt(c['mcSe'])}" if c.get("mcSe") is not None else ""
    near = " (within MC error)" if c.get("withinMonteCarloError") else ""
    return f"{_fmt(c['figure'])}{se} {'holds' if c['holds'] else 'FAILS'}{near}"


def redesign_lines(red: Mapping[str, Any]) -> list[str]:
    """The redesign in words: one line per value, then the target and its confirmation."""
    lines = []
    for p in red["points"]:
        claims = "; ".join(f"{c['id']} {_claim_cell(c)}" for c in p["claims"])
        verdict = "every claim holds" if p["allHold"] else "a claim fails"
        sized = red["parameter"].startswith(("rows", "units"))
        if sized and p["claims"]:
            lines.append(
                f"{red['parameter']}={p['value']} ({p['rows']:,} rows): {claims}: {verdict}"
            )
            continue
        # alpha or a margin: the claims, then each condition's first verdict shares
        shares = "; ".join(
            f"{c['scenario']}"
            + ("" if c["effect"] is None else f" at effect {c['effect']:g}")
            + ": "
            + ", ".join(f"{h['id']} {h['verdict']} {_fmt(h['share'])}" for h in c["hypotheses"])
            for c in p["conditions"]
        )
        head = f"{red['parameter']}={p['value']:g}: "
        if sized:
            head = f"{red['parameter']}={p['value']} ({p['rows']:,} rows): "
        lines.append(head + (f"{claims}: {verdict}; " if p["claims"] else "") + shares)
    t = red.get("target")
    if t is not None:
        if t["value"] is None:
            lines.append(f"target: no listed value of {red['parameter']} meets every claim")
        else:
            c = t["confirmation"]
            held = "; ".join(f"{x['id']} {_claim_cell(x)}" for x in c["claims"])
            lines.append(
                f"target: {red['parameter']}={t['value']}, the smallest listed value meeting every"
                f" claim; confirmed with fresh seed {c['seed']}: "
                + ("every claim holds" if t["confirmed"] else "NOT confirmed, a claim fails")
                + (f" ({held})" if held else " (the study registers no sizing claim)")
            )
    return lines


def _fmt(x) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.4f}".rstrip("0").rstrip(".") if x else "0"
    return str(x)


def _no_truth_lines(rows) -> list[str]:
    """A line under a table per figure without a truth, saying why."""
    out = [
        f"- `{r['id']}` has no truth here: {r['truthUndefined']}."
        for r in rows
        if r.get("truthUndefined")
    ]
    return [*out, ""] if out else []


def _undefined_lines(rows, simulations: int) -> list[str]:
    """A line per analysis whose estimate some simulated studies did not give (no pairable
    ratings, an empty arm): a rule reading it cannot hold in those studies."""
    out = [
        f"- `{r['id']}` gave no estimate in {simulations - r['defined']:,} of {simulations:,}"
        " simulated studies (the method found nothing to estimate from in their rows); a rule"
        " reading it does not hold there."
        for r in rows
        if r.get("defined") is not None and r["defined"] < simulations
    ]
    return [*out, ""] if out else []


def markdown(doc: Mapping[str, Any]) -> str:
    """DIAGNOSE.md: the claims, then each condition's verdict shares, gates and contrasts."""
    lines = [
        f"# {doc['study']} {doc['version']}: diagnose",
        "",
        f"Spec digest `{doc['specDigest']}`; {doc['simulations']:,} simulated studies per"
        f" condition, seed {doc['seed']} (blocks of {doc['blockSize']}).",
        "",
    ]
    left_out = [n for n in doc["notes"] if " is not simulated: " in n]
    if left_out:
        lines += ["Not simulated (reported figures no rule reads):", ""]
        lines += [f"- {n}" for n in left_out] + [""]
    if doc["claims"]:
        lines += [
            "## Sizing claims",
            "",
            "| claim | figure | method | holds |",
            "|---|---|---|---|",
        ]
        for c in doc["claims"]:
            se = f" ± {_fmt(c['mcSe'])}" if c.get("mcSe") is not None else ""
            mark = "yes" if c["holds"] else "**no**"
            # the conditional bar of P(h1 supported | scenario …), escaped for the table as
            # PREREG.md escapes it (a slash there read as a division)
            claim = c["claim"].replace("|", "\\|")
            lines.append(
                f"| `{c['id']}`: {claim} | {_fmt(c['figure'])}{se} | {c['method']} | {mark} |"
            )
        lines.append("")
    red = doc.get("redesign")
    if red:
        ids = [c["id"] for c in red["points"][0]["claims"]] if red["points"] else []
        lines += [
            f"## Redesign: `{red['parameter']}`",
            "",
            "Each sizing claim's figure at each value of the varied size (seed"
            f" {doc['seed']} at every value).",
            "",
            f"| {red['parameter']} | total rows | "
            + " | ".join(f"`{i}`" for i in ids)
            + " | all hold |",
            "|---|---|" + "---|" * (len(ids) + 1),
        ]
        for p in red["points"]:
            lines.append(
                f"| {p['value']} | {p['rows']:,} | "
                + " | ".join(_claim_cell(c) for c in p["claims"])
                + f" | {'yes' if p['allHold'] else '**no**'} |"
            )
        lines.append("")
        for line in redesign_lines(red)[len(red["points"]) :]:
            lines += [line[0].upper() + line[1:] + ".", ""]
    for fam in doc["families"]:
        lines += [f"## Power against effect size: `{fam['scenario']}`", ""]
        effects = [p["effect"] for p in fam["curves"][0]["points"]] if fam["curves"] else []
        lines.append(
            "| hypothesis (verdict) | "
            + " | ".join(f"{e:g}" for e in effects)
            + f" | effect at power {fam['power']:g} |"
        )
        lines.append("|---|" + "---|" * (len(effects) + 1))
        for c in fam["curves"]:
            lines.append(
                f"| {c['hypothesis']} ({c['verdict']}) | "
                + " | ".join(_fmt(p["share"]) for p in c["points"])
                + f" | {_fmt(c['detectable'])} |"
            )
        lines.append("")
    for s in doc["conditions"]:
        label = s["scenario"] + ("" if s["effect"] is None else f" at effect {s['effect']:g}")
        lines += [f"## {label}", ""]
        if s.get("decision"):
            shares = "; ".join(
                f"{o['outcome']} {_fmt(o['share'])} ± {_fmt(o['mcSe'])}" for o in s["decision"]
            )
            lines += [f"Decision: {shares}.", ""]
        lines += ["| hypothesis | verdict shares (± MC SE) |", "|---|---|"]
        for h in s["hypotheses"]:
            shares = "; ".join(
                f"{v['verdict']} {_fmt(v['share'])} ± {_fmt(v['mcSe'])}" for v in h["verdicts"]
            )
            lines.append(f"| {h['id']} | {shares} |")
        g = s["gates"]["anyFailed"]
        lines += ["", f"A gate failed in {_fmt(g['share'])} of the studies.", ""]
        for f in s["families"]:
            lines.append(
                f"- family `{f['id']}` ({f['adjustment']}, alpha {f['alpha']:g}): any adjusted"
                f" P below alpha in {_fmt(f['anyRejected']['share'])}"
            )
        if s["families"]:
            lines.append("")
        if s["contrasts"]:
            lines += [
                "| contrast | truth | bias | RMSE | coverage | rejected (raw) |"
                " rejected (adjusted) |",
                "|---|---|---|---|---|---|---|",
            ]
            for c in s["contrasts"]:
                cov = c["coverage"]["share"] if c["coverage"] else None
                raw = c.get("rejected", {}).get("share")
                adj = c.get("rejectedAdjusted", {}).get("share")
                lines.append(
                    f"| `{c['id']}` | {_fmt(c['truth'])} | {_fmt(c['bias'])} |"
                    f" {_fmt(c.get('rmse'))} | {_fmt(cov)} | {_fmt(raw)} | {_fmt(adj)} |"
                )
            lines.append("")
            lines += _no_truth_lines(s["contrasts"])
        if s.get("analyses"):
            lines += [
                "| analysis | method | mean estimate | truth | bias | RMSE | coverage |"
                " rejected (raw) | rejected (adjusted) |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
            for a in s["analyses"]:
                raw = a.get("rejected", {}).get("share")
                adj = a.get("rejectedAdjusted", {}).get("share")
                cov = (a.get("coverage") or {}).get("share")
                lines.append(
                    f"| `{a['id']}` | {a['method']} | {_fmt(a['meanEstimate'])} |"
                    f" {_fmt(a.get('truth'))} | {_fmt(a.get('bias'))} | {_fmt(a.get('rmse'))} |"
                    f" {_fmt(cov)} | {_fmt(raw)} | {_fmt(adj)} |"
                )
            lines.append("")
            lines += _no_truth_lines(s["analyses"])
            lines += _undefined_lines(s["analyses"], doc["simulations"])
        if s["estimates"]:
            lines += ["| estimate | truth | bias | RMSE | coverage |", "|---|---|---|---|---|"]
            for e in s["estimates"]:
                cov = e["coverage"]["share"] if e["coverage"] else None
                lines.append(
                    f"| `{e['id']}` | {_fmt(e['truth'])} | {_fmt(e['bias'])} |"
                    f" {_fmt(e.get('rmse'))} | {_fmt(cov)} |"
                )
            lines.append("")
            lines += _no_truth_lines(s["estimates"])
    return "\n".join(lines).rstrip("\n") + "\n"
