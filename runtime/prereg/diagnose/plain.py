"""``diagnose`` for engines whose simulated studies are not row groups of a factorial design
(the cluster power plan, the multi-correct scoring): each engine simulates its own studies,
with its own registered code; this module gives them the options, the document and its
writing that :mod:`.command` gives the factorial engines.

The options are the same: ``--simulations``, ``--seed``, ``--out`` (DIAGNOSE.json, and
DIAGNOSE.md beside it, neither overwritten, both written together or neither), ``--workers``,
``--scheduler``, ``--scenario`` (repeatable), ``--vary NAME=V1,V2,...`` (the engine's
registered size) and ``--target`` (the smallest listed value at which every claim holds,
confirmed with the fresh seed :func:`.redesign.confirmation_seed`).  The document is
``prereg-diagnose/v1`` (validated against the shipped schema before it is written), with
``designDigest``; work is cut into tasks whose results depend on their inputs alone, run by
:mod:`.runner`, so the bytes do not depend on ``--workers`` or the scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prereg.console import console_of
from prereg.errors import UserError

from .redesign import whole_values

__all__ = [
    "Options",
    "command",
    "condition",
    "confirmation_seed",
    "options",
    "parse_vary",
    "run_tasks",
    "share",
    "verdicts",
    "write",
]


@dataclass(frozen=True)
class Options:
    simulations: int
    seed: int
    workers: int
    scheduler: str | None
    scenarios: tuple[str, ...]  # as asked, in order (empty: every registered one)
    vary: str | None
    target: bool
    out: Path
    md: Path


def _int(args, name: str, minimum: int, default: int | None = None) -> int:
    v = getattr(args, name, None)
    if v is None and default is not None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise UserError(f"--{name.replace('_', '-')}: must be an integer ≥ {minimum} (got {v!r})")
    return v


def options(args, registered: Sequence[str]) -> Options:
    """The shared options, each refused with its name before any work; ``registered`` are the
    scenario names the study registers (``--scenario`` must name them)."""
    from prereg import runner
    from prereg.files import output_file, refuse_existing, refuse_report_on_output

    simulations = _int(args, "simulations", 1)
    seed = _int(args, "seed", 0)
    workers = _int(args, "workers", 1, default=1)
    scheduler = getattr(args, "scheduler", None)
    if scheduler is not None:
        runner.scheduler_address(scheduler)
    asked = getattr(args, "scenario", None)
    if isinstance(asked, str):
        asked = [asked]
    for s in asked or ():
        if s not in registered:
            raise UserError(
                f"--scenario {s!r}: not a registered scenario (registered: {', '.join(registered)})"
            )
    vary = getattr(args, "vary", None)
    target = bool(getattr(args, "target", False))
    if target and vary is None:
        raise UserError("--target: needs --vary (the values to choose the smallest from)")
    out = output_file(args.out)
    md = out.with_suffix(".md") if out.suffix else out.with_name(out.name + ".md")
    refuse_report_on_output(out, md)
    refuse_existing(out, md)
    return Options(
        simulations,
        seed,
        workers,
        scheduler,
        tuple(dict.fromkeys(asked or ())),
        vary,
        target,
        out,
        md,
    )


def r(x) -> float | None:
    """A figure as the document rounds it (:func:`.summary.r`)."""
    from .summary import r as rounded

    return rounded(x)


def share(k: int, n: int) -> dict:
    """``{"count", "share", "mcSe"}`` of k in n (:func:`.summary.share`)."""
    from .summary import share as of

    return of(k, n)


def confirmation_seed(seed: int) -> int:
    """The fresh seed ``--target`` confirms with (:func:`.redesign.confirmation_seed`)."""
    from .redesign import confirmation_seed as fresh

    return fresh(seed)


def parse_vary(text: str, names: Sequence[str], low: int, high: int, what: str) -> tuple[int, ...]:
    """``NAME=V1,V2,...``: distinct whole numbers in [low, high] (``what`` says why those
    bounds); NAME one of ``names`` (the engine's registered sizes)."""
    where = f"--vary {text!r}"
    name, sep, values = str(text).partition("=")
    if not sep:
        raise UserError(f"{where}: expected NAME=V1,V2,... (for example {names[0]}=50,100,200)")
    if name.strip() not in names:
        raise UserError(
            f"{where}: {name.strip()!r} cannot be varied here; the registered size is"
            f" {' or '.join(names)}"
        )

    def inside(v: int) -> str | None:
        return None if low <= v <= high else f"{v} is outside {low}..{high} ({what})"

    return tuple(whole_values(where, values, "", inside))


def refuse_beyond_memory(
    simulations: int, conditions: int, study_bytes: int, memory: int | None = None
) -> None:
    """Refuse, before any work, ``--simulations`` whose studies (``conditions`` of them each,
    ``study_bytes`` held per study) would not fit in half the available memory, naming the most
    that fits (the task list alone of 10^11 simulations grew until the OOM killer came)."""
    from .command import available_memory

    memory = available_memory() if memory is None else memory
    need = simulations * conditions * study_bytes
    if need > memory // 2:
        most = max(1, (memory // 2) // (conditions * study_bytes))
        raise UserError(
            f"--simulations: {simulations:,} simulated studies for each of {conditions}"
            f" condition(s) need about {need / 2**30:,.1f} GiB, more than half the"
            f" {memory / 2**30:,.1f} GiB available; at most {most:,} here (nothing was run)"
        )


def run_tasks(args, opts: Options, label: str, fn: Callable, payload: Any, tasks: list) -> list:
    """``[fn(payload, t) for t in tasks]`` in this process, local workers or on Dask."""
    from prereg import runner

    con = console_of(args)
    progress = con.progress(label, len(tasks), unit="tasks")
    try:
        return runner.run(
            fn,
            payload,
            tasks,
            workers=opts.workers,
            scheduler=opts.scheduler,
            progress=progress,
        )
    finally:
        progress.close()


def verdicts(hypothesis: str, counts: Mapping[str, int], n: int) -> dict:
    """One hypothesis' verdict shares, in the order given."""
    return {
        "id": hypothesis,
        "verdicts": [{"verdict": v, **share(k, n)} for v, k in counts.items()],
    }


def condition(
    scenario: str,
    effect: float | None,
    simulations: int,
    hypotheses: list[dict],
    decision: Mapping[str, int] | None,
    failed: Mapping[str, int],
    estimates: list[dict] | None = None,
) -> dict:
    """One condition as the schema has it: ``failed`` counts the studies each gate (a study
    the registered analysis could not complete, say) failed in, ``anyFailed`` their union
    (the gates given must be disjoint)."""
    return {
        "scenario": scenario,
        "effect": r(effect),
        "simulations": simulations,
        "decision": None
        if decision is None
        else [{"outcome": o, **share(k, simulations)} for o, k in decision.items()],
        "gates": {
            "anyFailed": share(sum(failed.values()), simulations),
            "byGate": [{"id": g, "failed": share(k, simulations)} for g, k in failed.items()],
        },
        "hypotheses": hypotheses,
        "families": [],
        "estimates": list(estimates or ()),
        "contrasts": [],
    }


def head(ctx, simulations: int, seed: int, block_size: int, requested, rows, groups) -> dict:
    """The fields a diagnose document opens with, as :mod:`.command` writes them
    (``designDigest`` is added by :func:`write`)."""
    from .command import SCHEMA

    return {
        "schemaVersion": SCHEMA,
        "study": ctx.study_id,
        "version": ctx.version,
        "specDigest": ctx.spec_digest,
        "simulations": simulations,
        "seed": seed,
        "blockSize": block_size,
        "requested": list(requested),
        "rows": rows,
        "rowGroups": groups,
    }


def write(ctx, args, opts: Options, doc: dict, lines: Sequence[str] = ()) -> int:
    """Add ``designDigest`` after ``specDigest``, validate ``doc``, write DIAGNOSE.json and
    DIAGNOSE.md together (neither when either exists), and report as :mod:`.command` does,
    then ``lines``."""
    import json

    from prereg.files import write_files_new

    from .command import _design_digest, _report, markdown, validate

    keys = list(doc)
    at = keys.index("specDigest") + 1
    doc = {
        **{k: doc[k] for k in keys[:at]},
        **_design_digest(args, ctx),
        **{k: doc[k] for k in keys[at:]},
    }
    validate(doc)
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    write_files_new([(opts.out, text, 0o644), (opts.md, markdown(doc), 0o644)])
    con = console_of(args)
    _report(con, doc, opts.out, opts.md)
    for line in lines:
        con.line("  " + line)
    return 0


def command(
    inputs: list[dict], scenarios: Sequence[str], vary: str, summary: str, description: str
) -> dict:
    """The ``diagnose`` command an engine offers as a standard command: its own ``inputs``
    (what its simulation reads besides the spec), then the shared options."""

    def option(name: str, type_: str, help_: str, required: bool = True, **more) -> dict:
        return {
            "name": name,
            "kind": "option",
            "type": type_,
            "required": required,
            "help": help_,
            **more,
        }

    return {
        "id": "diagnose",
        "handler": "diagnose",
        "summary": summary,
        "description": description,
        "arguments": [
            *inputs,
            option(
                "--scenario",
                "string",
                f"a registered scenario (repeat for several; default all: {', '.join(scenarios)})",
                required=False,
                repeated=True,
            ),
            option("--simulations", "integer", "simulated studies per scenario and size"),
            option("--seed", "integer", "the simulation seed"),
            option("--out", "path", "DIAGNOSE.json to create; DIAGNOSE.md is written beside it"),
            option(
                "--workers",
                "integer",
                "local worker processes (default 1); the output does not depend on it",
                required=False,
            ),
            option(
                "--scheduler",
                "string",
                "the address of a Dask distributed scheduler to run on (needs prereg[distributed])",
                required=False,
            ),
            option("--vary", "string", vary, required=False),
            {
                "name": "--target",
                "kind": "flag",
                "help": "with --vary: the smallest listed value meeting every claim,"
                " confirmed with a fresh seed",
            },
        ],
    }
