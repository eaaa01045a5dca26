"""Why the language's schema is checked by prereg's own compiled predicate
(prereg.compiler.predicate) and not by fastjsonschema: both only say whether a spec holds (the
located messages come from jsonschema's iter_errors either way, since fastjsonschema stops
at the first error), so what decides is the time to have a checker and to run it.

Measured: building the checker for generated/prereg.schema.json (predicate.compile_schema;
fastjsonschema.compile; importing fastjsonschema's generated code as a module, with and
without its bytecode), checking every spec of the project and its examples, and agreement of
the accept/refuse answers with jsonschema on random mutations of those specs.  fastjsonschema
is optional: without it only prereg's figures are printed.

    python bench/bench_predicate.py [--runs 5] [--mutations 400]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))


def median_ms(f, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def child_ms(code: str, runs: int, env: dict | None = None) -> float:
    """Median wall time of ``code`` run in a fresh interpreter (its own clock, in ms)."""
    out = []
    for _ in range(runs):
        timed = f"import time\nt = time.perf_counter()\n{code}\nprint(time.perf_counter() - t)"
        done = subprocess.run(
            [sys.executable, "-c", timed], capture_output=True, text=True, check=True, env=env
        )
        out.append(float(done.stdout.split()[-1]))
    return 1e3 * statistics.median(out)


def mutate(rng: random.Random, spec):
    """One random change a user might make: a scalar replaced, a key dropped or misspelt."""
    spec = copy.deepcopy(spec)
    paths: list[list] = []

    def walk(v, path):
        paths.append(path)
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, w in items:
            walk(w, [*path, k])

    walk(spec, [])
    path = rng.choice(paths[1:])
    parent = spec
    for k in path[:-1]:
        parent = parent[k]
    r = rng.random()
    if r < 0.4:
        parent[path[-1]] = rng.choice([1, 1.0, 1.5, -1, "x", "", None, True, [], {}, "2024-02-30"])
    elif r < 0.7 and isinstance(parent, dict):
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent["quantifer"] = "any"
    return spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mutations", type=int, default=400)
    a = ap.parse_args()

    import jsonschema

    from prereg.compiler import load, predicate

    path = ROOT / "generated" / "prereg.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    files = sorted((ROOT / "spec" / "studies").glob("*.yaml"))
    files += sorted(ROOT.glob("examples/*/spec/studies/*.yaml"))
    specs = [load.load_yaml(p).data for p in files]
    cls = jsonschema.validators.validator_for(schema)
    full = cls(schema, format_checker=cls.FORMAT_CHECKER)
    accepts = predicate.compile_schema(copy.deepcopy(schema))
    assert accepts is not None and all(accepts(s) for s in specs)
    print(f"language schema {path.stat().st_size:,} bytes; {len(specs)} specs")
    print(f"prereg predicate: build {median_ms(lambda: predicate.compile_schema(schema), a.runs):.1f} ms,"
          f" check every spec {median_ms(lambda: [accepts(s) for s in specs], a.runs):.1f} ms")  # fmt: skip
    env = {"PYTHONPATH": str(ROOT / "runtime")}
    imported = child_ms("import prereg.compiler.predicate", a.runs, env)
    print(f"prereg predicate: import in a fresh process {imported:.1f} ms")
    print(f"jsonschema: all errors of every spec {median_ms(lambda: [list(full.iter_errors(s)) for s in specs], a.runs):.1f} ms")  # fmt: skip
    try:
        import fastjsonschema
    except ImportError:
        print("fastjsonschema is not installed: nothing to compare with")
        return
    print(f"fastjsonschema {fastjsonschema.VERSION}")
    probe = copy.deepcopy(schema)
    fastjsonschema.compile(probe)
    print("  compile rewrites the schema it is given:", probe != schema)
    build = median_ms(lambda: fastjsonschema.compile(copy.deepcopy(schema)), max(1, a.runs // 2))
    check = fastjsonschema.compile(copy.deepcopy(schema))
    print(f"  build (compile) {build:.0f} ms; check every spec"
          f" {median_ms(lambda: [check(s) for s in specs], a.runs):.1f} ms")  # fmt: skip
    code = fastjsonschema.compile_to_code(copy.deepcopy(schema))
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "fjs_language.py").write_text(code, encoding="utf-8")
        site = str(Path(fastjsonschema.__file__).parents[1])
        env = {"PYTHONPATH": f"{tmp}:{site}", "PYTHONDONTWRITEBYTECODE": "1"}
        cold = child_ms("import fjs_language", max(1, a.runs // 2), env)
        subprocess.run([sys.executable, "-m", "compileall", "-q", tmp], check=True)
        env.pop("PYTHONDONTWRITEBYTECODE")
        warm = child_ms("import fjs_language", a.runs, env)
    print(f"  generated code {len(code.encode()):,} bytes: import {cold:.0f} ms without bytecode,"
          f" {warm:.0f} ms from bytecode")  # fmt: skip
    rng = random.Random(1)
    agree = 0
    for _ in range(a.mutations):
        m = mutate(rng, rng.choice(specs))
        valid = not list(full.iter_errors(m))
        try:
            check(m)
            fast = True
        except fastjsonschema.JsonSchemaValueException:
            fast = False
        agree += fast == valid
        assert not accepts(m) or valid  # the predicate is sound
    print(f"  accept/refuse agrees with jsonschema on {agree} of {a.mutations} mutated specs")


if __name__ == "__main__":
    main()
