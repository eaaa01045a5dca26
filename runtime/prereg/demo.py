"""The demo: run every study's operator commands on bundled inputs, into one output folder.

The steps are data (examples/demo.json): each names a study command and its arguments, with
``{out}`` standing for the step's output folder (``OUT/<study>``) and ``{root}`` for the
project root; ``{sha256:PATH}`` stands for the digest of a file an earlier step wrote (what an
operator anchors) and ``{json:PATH#/pointer}`` for a string in one.  A step with ``"json"``
writes a file an operator would write by hand (``args``: ``["write", PATH]``; its strings
filled in the same way) instead of running a command.  The runner checks that generated/ is current, runs the steps in order with
visible progress, builds each study's report from its folder once the study's last step has
run (:mod:`prereg.reports`: ``OUT/<study>/report.html``, ``report.md`` and ``figures/``; in a
forked process, beside the next steps, where fork is available) and writes ``OUT/index.html``
and ``OUT/index.md`` linking them with each study's status.  A failed step stops the demo: the
studies finished before it keep their reports, the index names the step.  Nothing written carries a timestamp
or an absolute path of the machine, so two runs give the same bytes.

``OUT`` is new for every run: an existing one is refused unless ``force`` is given (then it is
removed first).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import pickle
import re
import shutil
import sys
import time
import traceback
from pathlib import Path

from prereg.compiler import build
from prereg.compiler.project import Project
from prereg.errors import UserError
from prereg.files import write_new

PLAN = Path("examples/demo.json")


_SHA256 = re.compile(r"\{sha256:([^{}]+)\}")
_JSON = re.compile(r"\{json:([^{}#]+)#(/[^{}]*)\}")


def fill_arg(arg: str, out: Path, root: Path) -> str:
    """``{out}`` and ``{root}`` filled in, then ``{sha256:PATH}`` (``sha256:`` and the hex
    SHA-256 of the file's bytes: the digest an operator anchors) and ``{json:PATH#/pointer}``
    (a string in a JSON file an earlier step wrote, such as a printed digest)."""
    arg = arg.replace("{out}", str(out)).replace("{root}", str(root))

    def sha(m: re.Match) -> str:
        path = Path(m.group(1))
        if not path.is_file():
            raise UserError(f"{PLAN}: {{sha256:{m.group(1)}}}: no such file (yet)")
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()

    def pointer(m: re.Match) -> str:
        path = Path(m.group(1))
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
            for key in m.group(2).strip("/").split("/"):
                value = value[int(key)] if isinstance(value, list) else value[key]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            raise UserError(f"{PLAN}: {{json:{m.group(1)}#{m.group(2)}}}: not found") from None
        return str(value)

    return _JSON.sub(pointer, _SHA256.sub(sha, arg))


def _filled(value, out: Path, root: Path):
    """A JSON value with every string filled in (:func:`fill_arg`)."""
    if isinstance(value, str):
        return fill_arg(value, out, root)
    if isinstance(value, list):
        return [_filled(v, out, root) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, out, root) for k, v in value.items()}
    return value


def write_step(step: dict, args: list[str], out: Path, root: Path) -> int:
    """A plan step that writes a file an operator would write by hand (``"json"``: its content,
    strings filled in; ``args``: ``["write", PATH]``); never overwrites."""
    path = Path(args[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_filled(step["json"], out, root), indent=2, ensure_ascii=False) + "\n"
    write_new(path, text)
    print(f"      wrote {path}", flush=True)
    return 0


def _need_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError(
            "the demo's reports need matplotlib (the 'reports' extra):"
            " pip install -e '.[reports]', or run make demo"
        ) from None


def run_demo(project: Project, out: Path, force: bool = False) -> int:
    # The example projects' generated modules are imported from OUT/projects/: no bytecode is
    # written beside them, so OUT holds only what the steps and reports wrote (the index lists
    # every file, and a .pyc would carry the copy's time).
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        return _run_demo(project, out, force)
    finally:
        sys.dont_write_bytecode = before


def _run_demo(project: Project, out: Path, force: bool) -> int:
    from prereg.cli import main as cli_main
    from prereg.reports import Step

    plan_path = project.root / PLAN
    if not plan_path.exists():
        raise UserError(f"{PLAN}: the demo plan is missing")
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    _need_matplotlib()
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
    projects = _example_projects(project, plan, out)
    results: list[Step] = []
    total = len(plan["steps"])
    last = {s["study"]: i for i, s in enumerate(plan["steps"], start=1)}
    building: dict[str, _Built] = {}
    started = time.perf_counter()
    for i, step in enumerate(plan["steps"], start=1):
        step_out = out / step["study"]
        step_out.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        try:
            args = [fill_arg(a, step_out, project.root) for a in step["args"]]
        except UserError as exc:
            print(f"[{i}/{total}] {step['title']}: {exc.message}", file=sys.stderr, flush=True)
            args, code = list(step["args"]), 2
        else:
            home = projects.get(step["study"], project)
            argv = ["--project", str(home.root), step["study"], *args]
            if "json" in step:  # a file the operator writes: no command runs
                print(f"[{i}/{total}] {step['title']}: write {args[1]}", flush=True)
                code = write_step(step, args, step_out, project.root)
            else:
                print(f"[{i}/{total}] {step['title']}: prereg {' '.join(argv[2:])}", flush=True)
                try:
                    code = cli_main(argv)
                except SystemExit as exc:  # the command's parser refused the step's arguments
                    code = exc.code if isinstance(exc.code, int) else 2
        seconds = time.perf_counter() - t0
        ok = code in step.get("expect_exit", [0])
        results.append(
            Step(
                title=step["title"],
                command=step["args"][0] if step["args"] else "",
                template=list(step["args"]),
                args=args,
                exit=code,
                ok=ok,
            )
        )
        print(f"      {'ok' if ok else 'FAILED'} in {seconds:.1f} s", flush=True)
        if not ok:
            print(f"demo step failed (exit {code}): {step['title']}", file=sys.stderr)
            studies = _studies(plan, results)
            # the studies whose steps all ran before the failure keep their reports
            _write_index(out, studies, {st: b.result() for st, b in building.items()})
            return 1
        if i == last[step["study"]]:  # the study's steps are done: its report can be built
            study = step["study"]
            steps = _studies(plan, results)[study]
            building[study] = _Built(
                lambda study=study, steps=steps: _write_report(project, out, study, steps, projects)
            )
    studies = _studies(plan, results)
    print("writing reports ...", flush=True)
    reports = {study: building[study].result() for study in studies if study in building}
    _write_index(out, studies, reports)
    seconds = time.perf_counter() - started
    print(f"demo finished: {len(results)} steps in {seconds:.1f} s", flush=True)
    for study, (status, good) in reports.items():
        print(f"  {study}: {status}{'' if good else '  [attention]'}")
        print(f"    {out / study / 'report.html'}")
    print(f"reports: {out / 'index.html'}")
    return 0


def _studies(plan: dict, results: list) -> dict[str, list]:
    """Study id -> the steps that ran for it, studies in the plan's order."""
    studies: dict[str, list] = {s["study"]: [] for s in plan["steps"]}
    for spec, result in zip(plan["steps"], results, strict=False):
        studies[spec["study"]].append(result)
    return studies


def _example_projects(project: Project, plan: dict, out: Path) -> dict[str, Project]:
    """Studies the plan runs from an example project of their own (``"project"``: a folder
    with spec/studies/, as a user's project would be): each is copied to OUT/projects/<name>/
    and compiled there, so the demo shows a study that needs no code of this repository."""
    found: dict[str, Project] = {}
    for step in plan["steps"]:
        rel = step.get("project")
        if rel is None or step["study"] in found:
            continue
        src = project.root / rel
        if not (src / "spec" / "studies").is_dir():
            raise UserError(
                f"{PLAN}: project {rel!r} of study {step['study']!r} has no spec/studies/"
            )
        dst = out / "projects" / Path(rel).name
        shutil.copytree(src / "spec", dst / "spec")
        example = Project(dst)
        print(f"compiling the example project {rel} ...", flush=True)
        build.write_generated(example, build.compile_project(example))
        found[step["study"]] = example
    return found


def _write_report(
    project: Project, out: Path, study: str, steps: list, projects: dict[str, Project]
) -> tuple[str, bool]:
    """Build and write ``study``'s report into OUT/<study>/; (its status line, whether it is
    good)."""
    from prereg.reports import build_report, study_info
    from prereg.reports.page import write_report

    home = projects.get(study, project)
    report = build_report(study_info(home, study), out / study, steps)
    write_report(report, out / study)
    status = report.status + (f" · {report.decision}" if report.decision else "")
    return status, report.ok


class _Built:
    """A study's report, built in a forked child while the demo's next steps run (each report
    reads only its own study's folder, which no later step writes), or in this process when
    fork is not available (:meth:`result` then builds it).

    The child sends back its result, or the exception it raised, pickled through a pipe, and
    leaves with ``os._exit`` (no exit handlers, no second flush of the parent's buffers). A
    child that dies without answering is reported as an error naming its exit status.
    """

    def __init__(self, build):
        self._build = build
        self._pid = None
        if "fork" not in multiprocessing.get_all_start_methods():
            return
        import prereg.reports.plot  # noqa: F401  (matplotlib, imported once for every child)

        sys.stdout.flush()
        sys.stderr.flush()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read)
            try:
                try:
                    payload = pickle.dumps((True, build()))
                except BaseException as exc:  # sent to the parent, raised there
                    try:
                        payload = pickle.dumps((False, exc))
                    except Exception:
                        payload = pickle.dumps((False, RuntimeError(traceback.format_exc())))
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(payload)
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(0)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self) -> tuple[str, bool]:
        if self._pid is None:
            return self._build()
        with os.fdopen(self._read, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if not payload:
            raise RuntimeError(f"a report's process ended without a result (wait status {status})")
        good, value = pickle.loads(payload)
        if not good:
            raise value
        return value


def _write_index(out: Path, studies: dict[str, list], reports: dict) -> None:
    from prereg.reports.page import render_index

    files = sorted(
        p.relative_to(out).as_posix()
        for p in out.rglob("*")
        if p.is_file() and p.name not in ("index.html", "index.md")
    )
    md = ["# prereg demo", ""]
    all_ok = all(s.ok for steps in studies.values() for s in steps) and all(
        ok for _, ok in reports.values()
    )
    ran = all(s for s in studies.values())
    overall = "every step ran" if ran and all_ok else "attention needed (see below)"
    md += [f"**{overall}**", ""]
    rows = []
    md += ["| study | status | report |", "|---|---|---|"]
    for study, steps in studies.items():
        row: dict[str, object] = {"study": study}
        if study in reports:
            status, ok = reports[study]
            row.update(report=f"{study}/report.html", markdown=f"{study}/report.md")
            mdlink = f"[report]({study}/report.md)"
        else:
            failed = [s for s in steps if not s.ok]
            if failed:
                status, ok = f"step failed (exit {failed[0].exit}): {failed[0].title}", False
            elif not steps:
                status, ok = "not run", False
            else:
                status, ok = "steps ran; no report", False
            mdlink = "–"
        rows.append({**row, "status": status, "ok": ok})
        md.append(f"| `{study}` | {status} | {mdlink} |")
    md += ["", "## Steps", "", "| study | step | result |", "|---|---|---|"]
    step_rows = []
    for study, steps in studies.items():
        for s in steps:
            res = "ok" if s.ok else f"FAILED (exit {s.exit})"
            step_rows.append({"study": study, "title": s.title, "result": res})
            md.append(f"| `{study}` | {s.title} | {res} |")
    md += ["", "## Outputs", ""]
    md += [f"- [{f}]({f})" for f in files]
    page = render_index("prereg demo", overall, ran and all_ok, rows, step_rows, files)
    write_new(out / "index.html", page)
    write_new(out / "index.md", "\n".join(md) + "\n")
