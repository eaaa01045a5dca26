"""Where `prereg check` (all specs) spends its time: its imports in a fresh process, then each
stage in process, median and min of N (the whole command is a row of workloads.py).

    python bench/bench_check.py [--runs 7]

Stages, over every spec of the project: the language schema's source digest (the LinkML source
parsed), parsing the specs, the language predicate (jsonschema only when it refuses), the
semantic checks, the engine stage (constants' predicate, the engines' own checks), rendering
every generated file, ruff formatting the Python (one process), and comparing with generated/.
Figures, not pass/fail: nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

IMPORTS = (
    "import prereg.cli, prereg.compiler.build, prereg.compiler.seal, prereg.compiler.language,"
    " prereg.compiler.langdoc"
)


def _row(name: str, times: list[float]) -> None:
    print(
        f"  {name:<44} median {statistics.median(times) * 1000:8.1f} ms"
        f" (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f})",
        flush=True,
    )


def _process(code: str, runs: int) -> list[float]:
    out = []
    for k in range(runs + 1):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, check=True)
        if k:  # the first run writes bytecode
            out.append(time.perf_counter() - t)
    return out


def _stage(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    print(f"prereg check, stages (median of {a.runs}; load average {os.getloadavg()[0]:.2f})")
    _row("python -c pass (interpreter start)", _process("pass", a.runs))
    _row("imports of the check path", _process(IMPORTS, a.runs))

    from prereg.compiler import build, language, seal, semantic
    from prereg.compiler.engines import engine_problems
    from prereg.compiler.fmt import format_python
    from prereg.compiler.load import load_yaml
    from prereg.compiler.project import find_project
    from prereg.compiler.validate import validate
    from prereg.engines import registry

    project = find_project(str(ROOT))
    paths = project.spec_files()
    t = time.perf_counter()
    registry.registry()
    loaded = [load_yaml(p, display=Path(project.rel(p))) for p in paths]
    for item, path in zip(loaded, paths, strict=True):  # the first pass imports what they use
        validate(item, project.schema_path)
        semantic.run_checks(item, expected_id=path.stem)
        engine_problems(item)
    studies = build.load_all(project)
    files = build.render_studies(studies)
    print(
        f"  (first pass, imports of the engines' checks included: {time.perf_counter() - t:.3f} s)"
    )

    _row("language source digest", _stage(lambda: language.schema_is_current(project), a.runs))
    _row(
        "parse the specs",
        _stage(lambda: [load_yaml(p, display=Path(project.rel(p))) for p in paths], a.runs),
    )
    _row(
        "language schema (predicate)",
        _stage(lambda: [validate(x, project.schema_path) for x in loaded], a.runs),
    )
    _row(
        "semantic checks",
        _stage(
            lambda: [
                semantic.run_checks(x, expected_id=p.stem)
                for x, p in zip(loaded, paths, strict=True)
            ],
            a.runs,
        ),
    )
    _row("engine stage", _stage(lambda: [engine_problems(x) for x in loaded], a.runs))
    python = {rel: t for s in studies for rel, t in build._render_unformatted(s)[0].items()}
    _row("render every file (ruff included)", _stage(lambda: build.render_studies(studies), a.runs))
    _row("ruff format (one process)", _stage(lambda: format_python(python), a.runs))
    encoded = {rel: text.encode("utf-8") for rel, text in files.items()}
    _row("compare with generated/", _stage(lambda: build.diff_generated(project, encoded), a.runs))
    _row("seals", _stage(lambda: seal.check_seals(project, studies), a.runs))


if __name__ == "__main__":
    main()
