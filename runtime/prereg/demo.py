"""The demo: run every study's operator commands on bundled inputs, into one output folder.

The steps are data (examples/demo.json): each names a study command and its arguments, with
``{out}`` standing for the step's output folder and ``{root}`` for the project root.  The
runner checks that generated/ is current, runs the steps in order with visible progress, and
writes index.html and index.md listing what each step produced.
"""

from __future__ import annotations

import html
import json
import shutil
import sys
import time
from pathlib import Path

from prereg.compiler import build
from prereg.compiler.project import Project
from prereg.errors import UserError

PLAN = Path("examples/demo.json")


def _fill(arg: str, out: Path, root: Path) -> str:
    return arg.replace("{out}", str(out)).replace("{root}", str(root))


def run_demo(project: Project, out: Path, force: bool = False) -> int:
    from prereg.cli import main as cli_main

    plan_path = project.root / PLAN
    if not plan_path.exists():
        raise UserError(f"{PLAN}: the demo plan is missing")
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    if out.exists():
        if not force:
            raise UserError(f"{out}: an earlier demo run is there; remove it or pass --force")
        shutil.rmtree(out)
    print("checking that generated/ matches the specs ...", flush=True)
    stale = build.diff_generated(project, build.compile_project(project))
    if stale:
        raise UserError(
            "generated/ is stale: run make generate", problems=[s.splitlines()[0] for s in stale]
        )
    out.mkdir(parents=True)
    results = []
    for i, step in enumerate(plan["steps"], start=1):
        step_out = out / step["study"]
        step_out.mkdir(exist_ok=True)
        argv = [
            "--project",
            str(project.root),
            step["study"],
            *(_fill(a, step_out, project.root) for a in step["args"]),
        ]
        print(
            f"[{i}/{len(plan['steps'])}] {step['title']}: prereg {' '.join(argv[2:])}", flush=True
        )
        t0 = time.perf_counter()
        code = cli_main(argv)
        seconds = time.perf_counter() - t0
        ok = code in step.get("expect_exit", [0])
        results.append(
            {
                "step": step["title"],
                "study": step["study"],
                "exit": code,
                "ok": ok,
                "seconds": round(seconds, 2),
            }
        )
        if not ok:
            print(f"demo step failed (exit {code}): {step['title']}", file=sys.stderr)
            _write_index(out, results)
            return 1
    _write_index(out, results)
    print(f"demo finished: {len(results)} steps; reports in {out}/index.html")
    return 0


def _write_index(out: Path, results: list[dict]) -> None:
    files = sorted(
        p.relative_to(out).as_posix()
        for p in out.rglob("*")
        if p.is_file() and p.name not in ("index.html", "index.md")
    )
    rows = "".join(
        f"<tr><td>{html.escape(r['study'])}</td><td>{html.escape(r['step'])}</td><td>{'ok' if r['ok'] else 'FAILED'}</td></tr>"
        for r in results
    )
    links = "".join(f'<li><a href="{html.escape(f)}">{html.escape(f)}</a></li>' for f in files)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>prereg demo</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}td{padding:.2em .8em}</style>"
        f"</head><body><h1>prereg demo</h1><table>{rows}</table><h2>Outputs</h2><ul>{links}</ul></body></html>\n"
    )
    (out / "index.html").write_text(page, encoding="utf-8")
    md = ["# prereg demo", "", "| study | step | result |", "|---|---|---|"]
    md += [f"| {r['study']} | {r['step']} | {'ok' if r['ok'] else 'FAILED'} |" for r in results]
    md += ["", "## Outputs", ""] + [f"- [{f}]({f})" for f in files]
    (out / "index.md").write_text("\n".join(md) + "\n", encoding="utf-8")
