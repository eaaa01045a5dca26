"""The demo: run every study's operator commands on bundled inputs, into one output folder.

The steps are data (examples/demo.json): each names a study command and its arguments, with
``{out}`` standing for the step's output folder (``OUT/<study>``) and ``{root}`` for the
project root; ``{sha256:PATH}`` stands for the digest of a file an earlier step wrote (what an
operator anchors) and ``{json:PATH#/pointer}`` for a string in one.  A step with ``"json"``
writes a file an operator would write by hand (``args``: ``["write", PATH]``; its strings
filled in the same way) instead of running a command.  A step with ``"lane"`` (a name) runs
side by side with the study's other laned steps next to it (:func:`lane_blocks`): a plan marks
as lanes the steps that read nothing the others of the block write (d17's public-seed chain,
its diagnosis and the private seed's first hand-off steps), and the steps after the block
begin once every lane has ended.

The runner checks that generated/ is current, then runs the studies side by side: each study's
steps in the plan's order, then its report from its folder (:mod:`prereg.reports`:
``OUT/<study>/report.html``, ``report.md`` and ``figures/``), each study in a forked process
of its own where fork is available (:func:`side_by_side`; a study's steps read and write only
its own folder, ``OUT/<study>``).  The output reads as if the studies had run one after
another in the plan's order: the first study's steps as they run, each later study's once the
one before it has ended.  Then ``OUT/index.html`` and ``OUT/index.md`` link the reports with
each study's status.  A failed step stops its study (no report for it); the other studies
still run, the index names the failed step and the demo exits 1.  Nothing written carries a timestamp
or an absolute path of the machine, so two runs give the same bytes.

``OUT`` is new for every run: an existing one is refused unless ``force`` is given (then it is
removed first).  Another plan of the same form (a user's own study and its steps) runs the same
way (``prereg demo --plan FILE``); a plan is read strictly and checked (:func:`plan_problems`)
before anything runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import multiprocessing
import os
import pickle
import re
import shutil
import signal
import struct
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prereg import kept
from prereg.compiler import build
from prereg.compiler.project import Project
from prereg.errors import UserError
from prereg.files import write_new

PLAN = Path("examples/demo.json")


_SHA256 = re.compile(r"\{sha256:([^{}]+)\}")
_JSON = re.compile(r"\{json:([^{}#]+)#(/[^{}]*)\}")


def fill_arg(arg: str, out: Path, root: Path, plan: Path | str = PLAN) -> str:
    """``{out}`` and ``{root}`` filled in, then ``{sha256:PATH}`` (``sha256:`` and the hex
    SHA-256 of the file's bytes: the digest an operator anchors) and ``{json:PATH#/pointer}``
    (a string in a JSON file an earlier step wrote, such as a printed digest).  A PATH is read
    only inside the study's output folder or the project (a regular file, read strictly)."""
    from prereg.files import read_regular
    from prereg.records import loads_strict

    arg = arg.replace("{out}", str(out)).replace("{root}", str(root))

    def inside(text: str) -> Path:
        path = Path(text)
        if not _under(path, out) and not _under(path, root):
            raise UserError(f"{plan}: {text}: outside the output folder and the project")
        return path

    def sha(m: re.Match) -> str:
        path = inside(m.group(1))
        try:
            data = read_regular(path)
        except OSError:
            raise UserError(f"{plan}: {{sha256:{m.group(1)}}}: no such file (yet)") from None
        return "sha256:" + hashlib.sha256(data).hexdigest()

    def pointer(m: re.Match) -> str:
        path = inside(m.group(1))
        try:
            value = loads_strict(read_regular(path).decode("utf-8"))
            for key in m.group(2).strip("/").split("/"):
                value = value[int(key)] if isinstance(value, list) else value[key]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            raise UserError(f"{plan}: {{json:{m.group(1)}#{m.group(2)}}}: not found") from None
        return str(value)

    return _JSON.sub(pointer, _SHA256.sub(sha, arg))


def _under(path: Path, folder: Path) -> bool:
    """Whether ``path`` (its links followed, ``..`` resolved) lies in ``folder``."""
    try:
        real = Path(os.path.realpath(path))
        base = Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return False
    return real == base or base in real.parents


# arguments that name another project (and so import its generated Python) or a global option
_GLOBAL = ("--project",)


def confinement_problems(plan: dict, root: Path, *, exists: bool = True) -> list[tuple[str, str]]:
    """(JSON pointer, rule) of each way a plan's steps would reach outside what the runner
    confines them to: a step runs a command of a study of this project only (no
    ``--project``), writes only under the output folder (``{out}``: the value of ``--out``,
    a written file, any path starting ``{out}``, which must stay in it) and reads only
    existing files of the project (``{root}``); an absolute or ``..`` path, or ``~``, is
    refused, and an example project is a folder of this project."""
    out_base = Path("/__prereg_out__")
    problems: list[tuple[str, str]] = []
    for i, step in enumerate(plan["steps"]):
        at = f"/steps/{i}"
        rel = step.get("project")
        if isinstance(rel, str):
            path = root / rel
            if Path(rel).is_absolute() or ".." in Path(rel).parts or not _under(path, root):
                problems.append((f"{at}/project", f"{rel!r} is not a folder of the project"))
        args = step["args"]
        for j, arg in enumerate(args):
            where = f"{at}/args/{j}"
            if arg in _GLOBAL or any(arg.startswith(g + "=") for g in _GLOBAL):
                problems.append((where, f"{arg!r}: a step runs this project's commands only"))
                continue
            written = (j > 0 and args[j - 1] == "--out") or ("json" in step and j == 1)
            if arg.startswith("{out}"):
                target = os.path.normpath(str(out_base) + arg[len("{out}") :])
                if (
                    not _under(Path(target), out_base)
                    or "{" in arg[len("{out}") :]
                    or ".." in arg.split("/")
                ):
                    problems.append((where, f"{arg!r}: outside the output folder {{out}}"))
            elif written:
                problems.append((where, f"{arg!r}: a step writes only under {{out}}"))
            elif arg.startswith("{root}"):
                target = Path(os.path.normpath(str(root) + arg[len("{root}") :]))
                if (
                    not _under(target, root)
                    or "{" in arg[len("{root}") :]
                    or ".." in arg.split("/")
                ):
                    problems.append((where, f"{arg!r}: outside the project {{root}}"))
                elif exists and not target.exists():
                    problems.append(
                        (where, f"{arg!r}: no such file in the project (a step reads there)")
                    )
            elif (
                arg.startswith(("/", "~", "./", "../"))
                or arg == ".."
                or "/../" in arg
                or arg.endswith("/..")
            ):
                problems.append(
                    (where, f"{arg!r}: a path is {{out}}/... or {{root}}/... (no absolute or ..)")
                )
    return problems


def _filled(value, out: Path, root: Path, plan: Path | str = PLAN):
    """A JSON value with every string filled in (:func:`fill_arg`)."""
    if isinstance(value, str):
        return fill_arg(value, out, root, plan)
    if isinstance(value, list):
        return [_filled(v, out, root, plan) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, out, root, plan) for k, v in value.items()}
    return value


def write_step(step: dict, args: list[str], out: Path, root: Path, plan: Path | str = PLAN) -> int:
    """A plan step that writes a file an operator would write by hand (``"json"``: its content,
    strings filled in; ``args``: ``["write", PATH]``, in the output folder); never
    overwrites."""
    path = Path(args[1])
    if not _under(path.parent if path.parent.exists() else path, out.parent):
        raise UserError(f"{plan}: {path}: a step writes only under the output folder")
    path.parent.mkdir(parents=True, exist_ok=True)
    filled = _filled(step["json"], out, root, plan)
    text = json.dumps(filled, indent=2, ensure_ascii=False) + "\n"
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


def run_demo(project: Project, out: Path, force: bool = False, plan: Path | None = None) -> int:
    # The example projects' generated modules are imported from OUT/projects/: no bytecode is
    # written beside them, so OUT holds only what the steps and reports wrote (the index lists
    # every file, and a .pyc would carry the copy's time).
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        return _run_demo(project, out, force, plan)
    finally:
        sys.dont_write_bytecode = before


def load_plan(project: Project, path: Path | None = None) -> tuple[dict, Path | str]:
    """The plan at ``path`` (default: the project's examples/demo.json) and the name its
    messages use, read strictly and checked step by step (:func:`plan_problems`)."""
    from prereg.records import read_json_file

    if path is None:
        path, name = project.root / PLAN, PLAN
        if not path.exists():
            raise UserError(f"{PLAN}: the demo plan is missing (give another with --plan)")
    else:
        name = path
    plan = read_json_file(path, missing="the plan of steps to run", obj=False)
    studies = {p.stem for p in project.spec_files()}
    # a study the plan runs from an example project of its own ("project": a folder of this
    # project holding its spec)
    steps = plan.get("steps") if isinstance(plan, dict) else None
    for step in steps if isinstance(steps, list) else ():
        if isinstance(step, dict) and isinstance(step.get("project"), str):
            study = step.get("study")
            spec = project.root / step["project"] / "spec" / "studies" / f"{study}.yaml"
            if isinstance(study, str) and spec.is_file():
                studies.add(study)
    problems = plan_problems(plan, studies)
    if not problems:
        # the structure now; that each {root} input exists, when its step runs (an earlier
        # step cannot create one: it writes under {out} only)
        problems = confinement_problems(plan, project.root, exists=False)
    if problems:
        raise UserError(
            f"{name}: not a plan of steps this project can run",
            problems=[f"at {where}: {what}" for where, what in problems],
        )
    return plan, name


_STEP_KEYS = ("title", "study", "args", "expect_exit", "lane", "project", "json")


def _control(text: str) -> str | None:
    """The first control character of ``text`` (a line break, a tab, U+2028...) named, or
    None: a step's title is a line of a report (a heading, a Markdown table's cell) and its
    arguments are paths and words, which a line break would split."""
    import unicodedata

    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            return f"control character U+{ord(ch):04X}"
    return None


def plan_problems(plan: Any, studies: set[str]) -> list[tuple[str, str]]:
    """(JSON pointer, rule) of each way ``plan`` is not a plan: an object whose ``steps`` is a
    non-empty list of steps, each an object with ``title`` (a string), ``study`` (a study of
    the project), ``args`` (strings; a ``json`` step's are ``["write", PATH]``) and,
    optionally, ``expect_exit`` (exit codes), ``lane`` (a non-empty string), ``project`` (a
    folder of the plan's project holding the study's spec) and ``json`` (the file to write)."""
    if not isinstance(plan, dict):
        return [("/", "a plan is a JSON object with steps")]
    out = [(f"/{k}", "unknown key (a plan holds steps)") for k in plan if k != "steps"]
    steps = plan.get("steps")
    if not isinstance(steps, list) or not steps:
        return out + [("/steps", "a non-empty list of steps")]
    for i, step in enumerate(steps):
        at = f"/steps/{i}"
        if not isinstance(step, dict):
            out.append((at, "a step is an object (title, study, args)"))
            continue
        out += [
            (f"{at}/{k}", f"unknown key (a step has {', '.join(_STEP_KEYS)})")
            for k in step
            if k not in _STEP_KEYS
        ]
        for key in ("title", "study", "args"):
            if key not in step:
                out.append((at, f"a step needs {key}"))
        if "title" in step and not isinstance(step["title"], str):
            out.append((f"{at}/title", "a string"))
        elif "title" in step and _control(step["title"]):
            out.append(
                (f"{at}/title", f"{_control(step['title'])}: a title is one line of a report")
            )
        study = step.get("study")
        if "study" in step and (not isinstance(study, str) or study not in studies):
            known = ", ".join(sorted(studies)) or "none"
            out.append(
                (f"{at}/study", f"{study!r} is not a study of the project (studies: {known})")
            )
        args = step.get("args")
        if "args" in step:
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                out.append((f"{at}/args", "a list of strings"))
            elif "json" in step and (len(args) != 2 or args[0] != "write"):
                out.append((f"{at}/args", 'a step with json writes a file: ["write", PATH]'))
            else:
                out += [
                    (f"{at}/args/{j}", f"{_control(a)}: an argument is one line (a path, a word)")
                    for j, a in enumerate(args)
                    if _control(a)
                ]
        codes = step.get("expect_exit")
        if "expect_exit" in step and not (
            isinstance(codes, list)
            and codes
            and all(type(c) is int and 0 <= c <= 255 for c in codes)
        ):
            out.append((f"{at}/expect_exit", "a non-empty list of exit codes (0 to 255)"))
        lane = step.get("lane")
        if "lane" in step and (not isinstance(lane, str) or not lane):
            out.append((f"{at}/lane", "a non-empty string"))
        if "project" in step and (not isinstance(step["project"], str) or not step["project"]):
            out.append((f"{at}/project", "a folder of the project (a string)"))
    return out


def _run_demo(project: Project, out: Path, force: bool, plan_file: Path | None = None) -> int:
    plan, plan_name = load_plan(project, plan_file)
    _need_matplotlib()
    created = not os.path.lexists(out)
    lock = _claim(out, force, project.root)
    from prereg.development import development_texts

    # every argument the plan writes is public with the plan: a seed among them reaches gold
    # material only as a labelled development seed (prereg.development)
    texts = [a for step in plan["steps"] for a in step["args"]]
    try:
        with development_texts(texts, str(plan_name)):
            return _run_claimed(project, out, plan, plan_name, plan_file, lock)
    except UserError:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # refused before anything was written: no folder left behind
        raise
    finally:
        os.close(lock)


def _claim(out: Path, force: bool, root: Path | None = None) -> int:
    """Take ``out`` for this run (a descriptor holding its lock): a new or empty folder, or,
    with ``force``, an earlier run's (emptied).  Refused: an earlier run without ``force``,
    another demo run writing there now, something that is not a folder, and, even with
    ``force``, a folder no demo run could have made: one holding a project (spec/studies/),
    the project ``root`` or the current folder or one above them, the home folder."""
    import fcntl

    try:
        out.mkdir(parents=True)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UserError(f"{out}: cannot create the output folder: {exc.strerror}") from None
    if out.is_symlink() or not out.is_dir():
        raise UserError(f"{out}: not a folder; the demo writes its output folder there")
    fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise UserError(
            f"{out}: another demo run is writing there now; wait for it or choose another --out"
        ) from None
    if any(out.iterdir()):
        if not force:
            os.close(fd)
            raise UserError(f"{out}: an earlier demo run is there; remove it or pass --force")
        why = _not_a_run(out, root)
        if why is not None:  # --force empties an earlier run, never a user's folder
            os.close(fd)
            raise UserError(f"{out}: {why}; --force empties only an earlier demo run's folder")
        for child in out.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    return fd


def _not_a_run(out: Path, root: Path | None) -> str | None:
    """Why ``out`` cannot be an earlier demo run's folder (``prereg demo --out . --force`` in a
    project emptied the project), or None."""
    here = out.resolve()
    if (out / "spec" / "studies").is_dir():
        return "it holds a prereg project (spec/studies/)"
    for place, what in ((root, "the project"), (Path.cwd(), "the current folder")):
        if place is not None and Path(place).resolve().is_relative_to(here):
            return f"it is {what} or a folder above it"
    if here == Path.home().resolve():
        return "it is the home folder"
    return None


def _run_claimed(project, out: Path, plan, plan_name, plan_file, lock: int) -> int:
    from prereg.cli import main as cli_main
    from prereg.reports import Step

    print("checking that generated/ matches the specs ...", flush=True)
    # the check runs in a process of its own while this one imports what every study's
    # process shares (matplotlib, the page templates): both are on the critical path
    checked = in_background(lambda: build.diff_generated(project, build.compile_project(project)))
    forkable = "fork" in multiprocessing.get_all_start_methods()
    if len(plan["steps"]) and forkable:
        import prereg.reports.plot  # noqa: F401  (matplotlib, imported once for every study)
        from prereg.reports.page import warm

        warm()  # Jinja2, the page templates and markdown-it, built once for every study
    stale = checked()
    if stale:
        raise UserError(
            "generated/ is stale: run prereg compile", problems=[s.splitlines()[0] for s in stale]
        )
    projects = _example_projects(project, plan, out, plan_name)
    total = len(plan["steps"])
    chains: dict[str, list[tuple[int, dict]]] = {}
    for i, step in enumerate(plan["steps"], start=1):
        chains.setdefault(step["study"], []).append((i, step))

    def run_steps(steps: list[tuple[int, dict]]) -> tuple[list[tuple[int, Step]], bool]:
        """Steps in order until one fails: (each step run with its number, all held)."""
        ran: list[tuple[int, Step]] = []
        for i, step in steps:
            result = _run_step(project, projects, out, step, i, total, cli_main, plan_name)
            ran.append((i, result))
            if not result.ok:
                print(f"demo step failed (exit {result.exit}): {step['title']}", file=sys.stderr)
                return ran, False
        return ran, True

    def run_lane(steps: list[tuple[int, dict]]):
        ran, held = run_steps(steps)
        return ran, held, kept.snapshot()

    def run_chain(study: str) -> tuple[list[Step], tuple[str, bool] | None]:
        """The study's steps until one fails (a block of lanes side by side, see
        :func:`lane_blocks`); then its report if every step held."""
        if study in projects:
            _compile_example(project, projects[study], plan, study)
        ran: list[tuple[int, Step]] = []
        for block in lane_blocks(chains[study]):
            if len(block) == 1 or not forkable:
                in_order = sorted((s for steps in block.values() for s in steps), key=_number)
                done, held = run_steps(in_order)
                ran += done
            else:
                lanes = {
                    name: (lambda steps=steps: run_lane(steps)) for name, steps in block.items()
                }
                held = True
                for done, lane_held, snap in side_by_side(lanes).values():
                    ran += done
                    held = held and lane_held
                    kept.merge(snap)
                ran.sort(key=_number)
            if not held:
                return [s for _, s in ran], None
        steps = [s for _, s in ran]
        return steps, _write_report(project, out, study, steps, projects)

    started = time.perf_counter()
    jobs = {study: (lambda study=study: run_chain(study)) for study in chains}
    if len(jobs) > 1 and forkable:
        outcomes = side_by_side(jobs)
    else:
        outcomes = {study: job() for study, job in jobs.items()}
    studies = {study: ran for study, (ran, _) in outcomes.items()}
    reports = {study: rep for study, (_, rep) in outcomes.items() if rep is not None}
    # the bundled demo's title, or the plan's file name for a plan of one's own
    title = "prereg demo" if plan_file is None else f"prereg: {Path(plan_file).name}"
    _write_index(out, studies, reports, title)
    if any(not s.ok for ran in studies.values() for s in ran):
        return 1
    seconds = time.perf_counter() - started
    steps_run = sum(len(ran) for ran in studies.values())
    print(f"demo finished: {steps_run} steps in {seconds:.1f} s", flush=True)
    for study, (status, good) in reports.items():
        print(f"  {study}: {status}{'' if good else '  [attention]'}")
        print(f"    {out / study / 'report.html'}")
    print(f"reports: {out / 'index.html'}")
    return 0


def _number(pair: tuple[int, Any]) -> int:
    return pair[0]


def lane_blocks(steps: list[tuple[int, dict]]) -> list[dict[str, list[tuple[int, dict]]]]:
    """A study's steps cut into blocks run one after another: a step without a ``"lane"`` is a
    block of its own (lane ``""``); consecutive steps with one form a block of lanes, each
    lane's steps in plan order, the lanes side by side (each in a process of its own, what
    it keeps merged back: :mod:`prereg.kept`). The steps after a block begin once every lane
    of it has ended; a failed step stops its lane, and the study after its block."""
    blocks: list[dict[str, list[tuple[int, dict]]]] = []
    laned = False
    for i, step in steps:
        lane = step.get("lane")
        if lane is None:
            blocks.append({"": [(i, step)]})
        elif laned:
            blocks[-1].setdefault(lane, []).append((i, step))
        else:
            blocks.append({lane: [(i, step)]})
        laned = lane is not None
    return blocks


def _run_step(project, projects, out: Path, step: dict, i: int, total: int, cli_main, plan=PLAN):
    """Run plan step ``i`` (a command, or a file the operator writes); its :class:`Step`."""
    from prereg.reports import Step

    step_out = out / step["study"]
    step_out.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    try:
        missing = confinement_problems({"steps": [step]}, project.root)
        if missing:
            where, what = missing[0]
            raise UserError(f"{plan}: at /steps/{i - 1}{where[len('/steps/0') :]}: {what}")
        args = [fill_arg(a, step_out, project.root, plan) for a in step["args"]]
    except UserError as exc:
        print(f"[{i}/{total}] {step['title']}: {exc.message}", file=sys.stderr, flush=True)
        args, code = list(step["args"]), 2
    else:
        home = projects.get(step["study"], project)
        argv = ["--project", str(home.root), step["study"], *args]
        if "json" in step:  # a file the operator writes: no command runs
            print(f"[{i}/{total}] {step['title']}: write {args[1]}", flush=True)
            try:
                code = write_step(step, args, step_out, project.root, plan)
            except UserError as exc:
                print(f"error: {exc.message}", file=sys.stderr, flush=True)
                code = 2
        else:
            print(f"[{i}/{total}] {step['title']}: prereg {' '.join(argv[2:])}", flush=True)
            try:
                code = cli_main(argv)
            except SystemExit as exc:  # the command's parser refused the step's arguments
                code = exc.code if isinstance(exc.code, int) else 2
    seconds = time.perf_counter() - t0
    ok = code in step.get("expect_exit", [0])
    print(f"      {'ok' if ok else 'FAILED'} in {seconds:.1f} s", flush=True)
    return Step(
        title=step["title"],
        command=step["args"][0] if step["args"] else "",
        template=list(step["args"]),
        args=args,
        exit=code,
        ok=ok,
    )


def _example_projects(
    project: Project, plan: dict, out: Path, plan_name: Path | str = PLAN
) -> dict[str, Project]:
    """Studies the plan runs from an example project of their own (``"project"``: a folder
    with spec/studies/, as a user's project would be), each to be copied to
    OUT/projects/<name>/ and compiled there (:func:`_compile_example`), so the demo shows a
    study that needs no code of this repository."""
    found: dict[str, Project] = {}
    for step in plan["steps"]:
        rel = step.get("project")
        if rel is None or step["study"] in found:
            continue
        src = project.root / rel
        if not (src / "spec" / "studies").is_dir():
            raise UserError(
                f"{plan_name}: project {rel!r} of study {step['study']!r} has no spec/studies/"
            )
        found[step["study"]] = Project(out / "projects" / Path(rel).name)
    return found


def _compile_example(project: Project, example: Project, plan: dict, study: str) -> None:
    """Copy a study's example project into OUT/projects/ and compile it there; run in the
    study's own process before its first step, so the other studies need not wait."""
    rel = next(s["project"] for s in plan["steps"] if s["study"] == study and "project" in s)
    shutil.copytree(project.root / rel / "spec", example.root / "spec")
    print(f"compiling the example project {rel} ...", flush=True)
    build.write_generated(example, build.compile_project(example))


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


# -- studies side by side ----------------------------------------------------------------------

_HEADER = struct.Struct("<I")


def _send(fd: int, frame: tuple) -> None:
    data = pickle.dumps(frame)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


class _Relay(io.TextIOBase):
    """A child's sys.stdout or sys.stderr: each write goes to the parent as one frame. Written
    from another process (a worker the child forked), it goes to the real stream instead, so
    that no two processes write frames into one pipe."""

    def __init__(self, fd: int, stream: int, tty: bool):
        self._fd, self._stream, self._tty, self._pid = fd, stream, tty, os.getpid()

    def write(self, text: str) -> int:
        if text:
            if os.getpid() != self._pid:
                real = sys.__stdout__ if self._stream == 1 else sys.__stderr__
                if real is not None:
                    real.write(text)
                    real.flush()
            else:
                _send(self._fd, ("text", self._stream, text))
        return len(text)

    def isatty(self) -> bool:
        return self._tty

    def writable(self) -> bool:
        return True


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Child:
    def __init__(self, name: str, pid: int, fd: int):
        self.name, self.pid, self.fd = name, pid, fd
        self.buffer = bytearray()
        self.pending: list[tuple[int, str]] = []
        self.frame: tuple | None = None
        self.open = True
        self.status: int | None = None

    def take(self, data: bytes) -> None:
        """Frames out of the bytes read so far: texts wait in ``pending``, the last frame is
        the job's result (or the exception it raised)."""
        self.buffer += data
        while len(self.buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self.buffer)
            if len(self.buffer) < _HEADER.size + size:
                return
            frame = pickle.loads(bytes(self.buffer[_HEADER.size : _HEADER.size + size]))
            del self.buffer[: _HEADER.size + size]
            if frame[0] == "text":
                self.pending.append((frame[1], frame[2]))
            else:
                self.frame = frame

    def result(self) -> Any:
        """The job's result; its exception raised; a RuntimeError if it sent neither."""
        if self.frame is None:
            raise RuntimeError(
                f"{self.name}: its process ended without a result (wait status {self.status})"
            )
        kind, value = self.frame
        if kind == "error":
            raise value
        return value


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def _child(job, fd: int, tty: tuple[bool, bool]) -> None:
    """Run ``job`` in this forked child with its output sent to the parent; never returns.

    The parent stops a child with SIGTERM; here that is an interrupt, so a job that runs
    jobs of its own (a study's lanes) stops them on its way out instead of leaving them."""
    try:
        signal.signal(signal.SIGTERM, _interrupted)
        sys.stdout = _Relay(fd, 1, tty[0])
        sys.stderr = _Relay(fd, 2, tty[1])
        try:
            frame = ("result", job())
        except BaseException as exc:  # sent to the parent, raised there
            frame = ("error", exc)
        try:
            _send(fd, frame)
        except Exception:  # an exception or result that does not pickle
            _send(fd, ("error", RuntimeError(traceback.format_exc())))
    finally:
        os._exit(0)


def _start(name: str, job: Callable[[], Any], others: list[_Child]) -> _Child:
    """``job`` forked into a process of its own, its output and result coming through a pipe
    (the pipes of ``others``, children started before, closed in it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    tty = (_isatty(sys.stdout), _isatty(sys.stderr))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        for c in others:
            os.close(c.fd)
        _child(job, write, tty)
    os.close(write)
    return _Child(name, pid, read)


def in_background(job: Callable[[], Any]) -> Callable[[], Any]:
    """``job`` started now in a forked process; the function returned waits for it, shows
    what it printed (stdout and stderr apart) and returns its result or raises its exception.
    Without fork, ``job`` runs when that function is called."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return job
    c = _start("the background job", job, [])

    def finish() -> Any:
        try:
            while data := os.read(c.fd, 1 << 16):
                c.take(data)
        finally:
            os.close(c.fd)
            _, c.status = os.waitpid(c.pid, 0)
        for stream, text in c.pending:
            (sys.stdout if stream == 1 else sys.stderr).write(text)
        return c.result()

    return finish


def side_by_side(jobs: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Each job's result, the jobs run at the same time, each in a forked process.

    What a job prints is shown in the jobs' order, as if they had run one after another: the
    first job's output as it comes, the next job's (kept until then) once the first has ended,
    and so on; stdout and stderr stay apart and in order within a job. A job's exception is
    raised here once every job has ended (the first job's first); a job's process that ends
    without a result is a RuntimeError naming it. On any exception here (an interrupt) the
    jobs still running are stopped.
    """
    import selectors

    children: list[_Child] = []
    try:
        for name, job in jobs.items():
            children.append(_start(name, job, children))
        with selectors.DefaultSelector() as sel:
            for c in children:
                sel.register(c.fd, selectors.EVENT_READ, c)
            head = 0
            while head < len(children):
                for key, _ in sel.select():
                    c = key.data
                    data = os.read(c.fd, 1 << 16)
                    if data:
                        c.take(data)
                        continue
                    sel.unregister(c.fd)
                    os.close(c.fd)
                    c.open = False
                    _, c.status = os.waitpid(c.pid, 0)
                while head < len(children):  # the head job's output, as it comes
                    c = children[head]
                    for stream, text in c.pending:
                        target = sys.stdout if stream == 1 else sys.stderr
                        target.write(text)
                        target.flush()
                    c.pending.clear()
                    if c.open:
                        break
                    head += 1
    finally:
        for c in children:
            if c.open:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(c.pid, signal.SIGTERM)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(c.pid, 0)
                os.close(c.fd)
                c.open = False
    return {c.name: c.result() for c in children}


def _write_index(out: Path, studies: dict[str, list], reports: dict, title: str) -> None:
    from prereg.reports.page import render_index

    files = sorted(
        p.relative_to(out).as_posix()
        for p in out.rglob("*")
        if p.is_file() and p.name not in ("index.html", "index.md")
    )
    md = [f"# {title}", ""]
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
    page = render_index(title, overall, ran and all_ok, rows, step_rows, files)
    write_new(out / "index.html", page)
    write_new(out / "index.md", "\n".join(md) + "\n")
