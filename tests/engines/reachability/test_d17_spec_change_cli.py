"""A fact changed in a copy of the spec changes what the commands do, with no runtime edit.

In a project copy, pool-c's contrastive verb becomes "stems" and one test cell loses 20 rows
(the registered totals follow).  Before recompiling, the study refuses to run; after
``prereg --project COPY compile``, dry-run and prepare follow the new spec.
"""

from __future__ import annotations

import json

from d17_helpers import STUDY

from tests.conftest import run_main, write_d17_cells

CELL = "tst-pool-c_h1_missing-contrastive_equalized"


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_the_commands_follow_a_changed_spec_with_no_runtime_edit(project_copy, tmp_path):
    spec = project_copy / "spec" / "studies" / f"{STUDY}.yaml"
    # an unsealed copy: this test changes registered content to see the runtime follow
    spec.with_name(spec.name.replace(".yaml", ".seal.json")).unlink()
    write_d17_cells(spec)  # the same registration written cell by cell, so one cell can change
    t = spec.read_text(encoding="utf-8")
    t = _edit(t, '{role: contrastive, text: "halts"}', '{role: contrastive, text: "stems"}')
    t = _edit(t, f"{{id: {CELL}, split: test, rows: 220,", f"{{id: {CELL}, split: test, rows: 200,")
    t = _edit(t, "{scope: test, rows: 5700}", "{scope: test, rows: 5680}")
    t = _edit(t, "{scope: all, rows: 5778}", "{scope: all, rows: 5758}")
    # the registered worst case counts the rows: restated with them (compile refuses otherwise)
    t = _edit(t, "worstCase: {calls: 11556,", "worstCase: {calls: 11516,")
    spec.write_text(t, encoding="utf-8")

    def study(*args):
        return run_main("--project", project_copy, STUDY, *args)

    # the generated code no longer matches the spec: refused until recompiled
    r = study("dry-run", "d17mf-public-demo")
    assert r.returncode == 2 and "spec changed since the last compile" in r.stderr
    assert "Traceback" not in r.stderr

    c = run_main("--project", project_copy, "compile", STUDY)
    assert c.returncode == 0, c.stdout + c.stderr
    r = study("dry-run", "d17mf-public-demo")
    assert r.returncode == 0, r.stderr
    assert "tuning 78, test 5,680; all 5,758 rows" in r.stdout
    assert "attempts = 5,758 rows × (1 + 1 retries) = 11,516" in r.stdout

    out = tmp_path / "prepared"
    r = study("prepare", "d17mf-public-demo", out)
    assert r.returncode == 0, r.stderr
    assert "prepared 5,758 rows" in r.stdout
    records = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    assert len(records) == 5758
    key = CELL.split("-", 1)[1]
    assert sum(rec["split"] == "test" and rec["slice"] == key for rec in records) == 200
    framing_c = "The following is an imaginary station log."
    pool_c = [r["input"]["payload"] for r in records if r["input"]["payload"].startswith(framing_c)]
    assert len(pool_c) > 1000
    assert not any(" halts " in p for p in pool_c)
    assert sum(" stems " in p for p in pool_c) > 500
    # stamped with the copy's spec digest, not the repository's
    pre = json.loads((out / "preregistration.json").read_text())
    assert pre["specDigest"] not in run_main(STUDY, "dry-run", "d17mf-public-demo").stdout
