"""End to end: ``prereg d17-multifact <command>`` as an operator runs it: the two prepared
folders in a subprocess (with their pool of two workers), the other commands through the same
``main`` in this process (a subprocess each was half a CPU-second of start-up).

Expected figures come from the spec file itself (read here with PyYAML, not through the
compiler or the engine) and from the reference generator's summary (tests/fixtures/d17).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
import rfc8785
from d17_helpers import ROOT, STUDY, summary

from tests.conftest import d17_written_cells, run_main, run_prereg, safe_yaml

SPEC_FILE = ROOT / "spec" / "studies" / f"{STUDY}.yaml"
SPEC = safe_yaml(SPEC_FILE.read_text(encoding="utf-8"))
CELLS = d17_written_cells()  # the registered cells, written out (the spec crosses them)
DEMO = SPEC["seed_policy"]["demo_seed"]
CONSTANTS = {c["id"]: c["value"] for c in SPEC["constants"]}
OUTPUTS = ("corpus.jsonl", "gold.json", "audit.json", "analysis.json", "preregistration.json")


def cli(*args, project: Path | None = None, run=run_main):
    pre = ("--project", project) if project is not None else ()
    return run(*pre, STUDY, *args)


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def refused(r, *needles: str) -> None:
    """A user's mistake: exit 2, an ``error:`` line naming the problem, no traceback."""
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: ") or "error:" in r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("d17cli") / "prepared"
    r = cli("prepare", DEMO, out, "--workers", "2", run=run_prereg)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    return out


@pytest.fixture(scope="module")
def private_prepared(tmp_path_factory) -> Path:
    """A private seed's prepared folder (development review material is written for no other)."""
    out = tmp_path_factory.mktemp("d17cli-private") / "prepared"
    r = cli("prepare", "d17mf-5e0c7b19a3f48d26b1e97a0c3d", out, "--workers", "2", run=run_prereg)
    assert r.returncode == 0, r.stderr
    return out


# -- dry-run -------------------------------------------------------------------------------------


def test_dry_run_prints_the_registered_cells_and_budget():
    r = cli("dry-run", DEMO, "--now", "2026-11-01T09:32:34.263Z")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    rows = sum(c["rows"] for c in CELLS)
    per_split = {
        s["id"]: sum(c["rows"] for c in CELLS if c["split"] == s["id"]) for s in SPEC["splits"]
    }
    assert rows == 5778 and per_split == {"tuning": 78, "test": 5700}
    assert f"totals: {len(CELLS)} cells; tuning 78, test 5,700; all 5,778 rows" in out
    assert f"seed {DEMO!r}: syntax ok; public: {DEMO!r} is a listed committed seed" in out
    budget = {b["id"]: b["value"] for b in SPEC["budget"]}
    attempts = rows * (1 + budget["retries-per-request"])
    assert f"= {attempts:,}" in out  # 11,556: the seed document's worst-case call count
    assert (
        f"calls: budget 16,000, worst case {attempts:,}, headroom {16000 - attempts:,} (ok)" in out
    )
    assert "expires 2026-11-01T10:02:34.263Z" in out
    assert "a 30-minute session may still start" in out


def test_dry_run_a_minute_late_says_no_session_may_start():
    r = cli("dry-run", DEMO, "--now", "2026-11-01T09:32:34.264Z")
    assert r.returncode == 1  # a bound exceeded: the window, at --now
    assert "a 30-minute session may no longer start" in r.stdout


def test_dry_run_of_a_private_seed():
    # 26 hex characters, computed so that no committed file holds the seed (a seed written in
    # one, as this file's other seeds are, is public: tests/hostile/test_committed_seed.py)
    seed = "d17mf-" + hashlib.sha256(b"prereg: a private seed for the dry run").hexdigest()[:26]
    r = cli("dry-run", seed)
    assert r.returncode == 0, r.stderr
    assert f"seed {seed!r}: syntax ok; private:" in r.stdout
    assert "may be bundled for live collection" in r.stdout


def test_dry_run_refuses_a_bad_seed_and_a_zoneless_instant():
    wording = CONSTANTS["seed-syntax"]["wording"]
    refused(
        cli("dry-run", "Bad_Seed"), f"seed 'Bad_Seed' is invalid: a corpus seed must be {wording}"
    )
    r = cli("dry-run", DEMO, "--now", "2026-11-01T09:00:00")
    assert r.returncode == 2 and "date-time needs a zone" in r.stderr
    assert "Traceback" not in r.stderr


# -- prepare -------------------------------------------------------------------------------------


def test_prepare_writes_the_five_files_matching_the_reference(prepared):
    assert sorted(p.name for p in prepared.iterdir()) == sorted(OUTPUTS)
    pre = load(prepared / "preregistration.json")
    # the spec digest: SHA-256 of the RFC 8785 JSON of the parsed spec
    assert pre["specDigest"] == "sha256:" + hashlib.sha256(rfc8785.dumps(SPEC)).hexdigest()
    ref = summary()
    assert pre["rows"] == ref["totalRows"] == 5778
    for k in ("goldDigest", "auditDigest", "dispatchOrderDigest"):
        assert pre[k] == ref[k], k
    corpus = (prepared / "corpus.jsonl").read_bytes()
    assert pre["corpusDigest"] == "sha256:" + hashlib.sha256(corpus).hexdigest()
    assert corpus.count(b"\n") == 5778
    assert pre["studyId"] == STUDY and pre["seed"] == DEMO and pre["seedClass"] == "public"
    assert pre["generatorId"] == CONSTANTS["generator-id"]
    assert stat.S_IMODE(os.stat(prepared / "gold.json").st_mode) == 0o600
    gold = load(prepared / "gold.json")
    assert gold["schemaVersion"] == CONSTANTS["schema-versions"]["gold"]
    assert gold["specDigest"] == pre["specDigest"]
    analysis = load(prepared / "analysis.json")
    got = {f"{c['split']}:{c['cell']}": c["rows"] for c in analysis["cells"]}
    # a spec cell id is the split code, a dash and the cell key
    assert got == {f"{c['split']}:{c['id'].split('-', 1)[1]}": c["rows"] for c in CELLS}


def test_prepare_with_one_worker_gives_the_same_bytes_and_prints_the_digests(prepared):
    out = prepared.parent / "again"
    r = cli("prepare", DEMO, out, "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert f"prepared 5,778 rows for seed {DEMO!r}" in r.stdout
    assert f"auditDigest: {summary()['auditDigest']}" in r.stdout
    assert "shortcut audit: equalizedMax 0.5518 (limit 0.6)" in r.stdout
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (prepared / name).read_bytes(), name


def test_prepare_never_overwrites(prepared):
    before = {n: (prepared / n).read_bytes() for n in OUTPUTS}
    refused(cli("prepare", DEMO, prepared), "exists")
    assert {n: (prepared / n).read_bytes() for n in OUTPUTS} == before


def test_prepare_refuses_a_bad_seed_and_writes_nothing(tmp_path):
    refused(cli("prepare", "Bad", tmp_path / "out", "--workers", "1"), "seed 'Bad' is invalid")
    assert not (tmp_path / "out").exists()


# -- dev-review-material -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    """The project copied outside git: the private seed of ``private_prepared`` is written in
    this (committed) file, so in the repository itself it is public
    (tests/hostile/test_committed_seed.py)."""
    from tests.conftest import copy_project

    return copy_project(tmp_path_factory.mktemp("d17cli-outside") / "project")


def test_dev_review_material(private_prepared, outside):
    out = private_prepared.parent / "review" / "DEV_REVIEW_MATERIAL.json"
    out.parent.mkdir()
    r = cli("dev-review-material", private_prepared, out, project=outside)
    assert r.returncode == 0, r.stderr
    per = CONSTANTS["dev-review"]["perOutcome"]
    want = sum(p["items"] for p in per)
    assert want == 40
    assert f"wrote {want} development rows for blind review" in r.stdout
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    m = load(out)
    assert m["schemaVersion"] == CONSTANTS["schema-versions"]["devReview"]
    assert len(m["items"]) == want
    outcomes = [it["unblind"]["factors"]["outcome"] for it in m["items"]]
    assert outcomes == [p["outcome"] for p in per for _ in range(p["items"])]
    for it in m["items"]:
        u = it["unblind"]
        assert u["factors"]["split"] == "tuning"
        assert u["goldLabel"] == u["textOracleLabel"]
        assert list(it) == ["blind", "unblind"]
    # again: never overwritten
    refused(cli("dev-review-material", private_prepared, out, project=outside), "exists")


def test_dev_review_material_refuses_outside_the_artifact_root(private_prepared, outside, tmp_path):
    out = tmp_path / "elsewhere.json"
    refused(
        cli("dev-review-material", private_prepared, out, project=outside),
        "must lie under the artifact root",
    )
    assert not out.exists()
    r = cli(
        "dev-review-material", private_prepared, out, "--artifact-root", tmp_path, project=outside
    )
    assert r.returncode == 0, r.stderr
    assert out.exists()


def test_dev_review_material_refuses_a_public_seed(prepared, tmp_path):
    out = prepared.parent / "PUBLIC_MATERIAL.json"
    refused(cli("dev-review-material", prepared, out), "public-demo-seed: ")
    assert not out.exists()


def test_dev_review_material_refuses_a_tampered_corpus(private_prepared, outside, tmp_path):
    bad = tmp_path / "prepared"
    bad.mkdir()
    for n in OUTPUTS:
        (bad / n).write_bytes((private_prepared / n).read_bytes())
    with open(bad / "corpus.jsonl", "ab") as fh:
        fh.write(b"\n")
    refused(
        cli("dev-review-material", bad, tmp_path / "m.json", project=outside),
        "digest differs from corpusDigest",
    )


# -- audit-sweep ---------------------------------------------------------------------------------


def test_audit_sweep_passes_and_the_positive_control_fails():
    r = cli("audit-sweep", "d17mf-sweep-", "1", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "shortcut audit sweep of 1 seed(s) d17mf-sweep-0" in r.stdout
    assert "passing: 1 of 1 seed(s)" in r.stdout
    r = cli("audit-sweep", "d17mf-sweep-", "1", "--positive-control", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "positive control: the audit fails on 1 of 1 seed(s)" in r.stdout


def test_audit_sweep_argument_errors():
    r = cli("audit-sweep", "d17mf-sweep-", "many")
    assert r.returncode == 2 and "invalid int value: 'many'" in r.stderr
    refused(cli("audit-sweep", "d17mf-sweep-", "0"), "COUNT: must be at least 1")
    refused(cli("audit-sweep", "Sweep", "1"), "seed 'Sweep0' is invalid")


def test_help_lists_the_declared_commands():
    r = run_prereg(STUDY, "--help")
    assert r.returncode == 0
    for c in SPEC["commands"]:
        assert c["id"] in r.stdout
