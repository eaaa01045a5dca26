"""The d17 collection hand-off end to end through the CLI (prepare → review material →
approval → bundle → dry-run-ledger → freeze → two sessions → score from the lineage), every
refusal code (named in the message; nothing written), and the window arithmetic at its edges."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from prereg import outputs
from prereg.cli import main
from prereg.compiler.project import Project
from prereg.engines.reachability.handoff import evidence, validate_bundle
from prereg.errors import UserError
from prereg.ledger import Ledger
from prereg.study import study_context
from tests.conftest import copy_project

ROOT = Path(__file__).resolve().parents[3]
STUDY = "d17-multifact"
SEED = "d17mf-0b8e6f2a4c9d13e75a06b2f4c8"  # 26 hex characters of (once) fresh randomness
EFFECTIVE = "2026-10-02T10:02:34.263Z"
EXPIRES = datetime(2026, 11, 1, 10, 2, 34, 263000, tzinfo=UTC)  # effective + 30 days
LIMIT = timedelta(minutes=30)
BUNDLED_AT = "2026-10-14T12:00:00Z"
START_1, START_2 = "2026-10-15T09:00:00Z", "2026-10-15T09:30:00Z"
EVALUATED = "2026-10-16T12:00:00Z"
_, CTX = study_context(Project(ROOT), STUDY)
CODES = CTX.config["constants"]["refusal-codes"]


# The hand-off runs in a copy of the project outside git: the seeds of this file are committed
# (in this file), and the committed-seed rule refuses them for gold material in the repository
# itself (that rule: tests/hostile/test_committed_seed.py).
PROJECT = [ROOT]


@pytest.fixture(scope="module", autouse=True)
def _outside_git(tmp_path_factory):
    PROJECT[0] = copy_project(tmp_path_factory.mktemp("project") / "project")
    yield
    PROJECT[0] = ROOT


def cli(*args) -> int:
    return main(["--project", str(PROJECT[0]), STUDY, *map(str, args)])


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj) + "\n", encoding="utf-8")
    return path


def refused(capsys, rc: int, code: str, *needles: str, outputs=()) -> str:
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"error: {CODES[code]}: " in err, err
    for n in needles:
        assert n in err, err
    for p in outputs:
        assert not Path(p).exists(), p
    return err


@dataclass
class Walk:
    root: Path  # the artifact root: everything below is relative to it
    calibrator_digest: str
    review_digest: str
    approval_digest: str

    def __truediv__(self, rel: str) -> Path:
        return self.root / rel

    @property
    def ledger(self) -> Path:
        return self.root / "d17mf-ledger.sqlite3"

    def copy(self, dst: Path) -> Walk:
        shutil.copytree(self.root, dst)
        return Walk(dst, self.calibrator_digest, self.review_digest, self.approval_digest)

    def bundle_args(self, **over):
        a = {
            "outdir": self / "prepared",
            "approval": self / "APPROVAL.json",
            "review": self / "DEV_REVIEW.json",
            "review_digest": self.review_digest,
            "context": self / "CONTEXT.json",
        }
        a.update(over)
        return (
            "bundle", a["outdir"], a["approval"], a["review"], a["review_digest"], a["context"],
        )  # fmt: skip

    def score_config(self, name: str = "SCORE_CONFIG.json", **over) -> Path:
        cfg = {
            "schemaVersion": "prereg-d17mf-score-config/v1",
            "bundle": {"file": "BUNDLE.json", "trustedDigest": sha(self / "BUNDLE.json")},
            "runs": [
                {"dir": f"runs/{r}", "trustedEvidenceDigest": self.evidence(r)}
                for r in ("run-1", "run-2")
            ],
            "gold": {"file": "prepared/gold.json", "trustedDigest": sha(self / "prepared/gold.json")},
            "calibrationContext": {"file": "CONTEXT.json", "trustedDigest": sha(self / "CONTEXT.json")},
            "evaluatedAt": EVALUATED,
        }  # fmt: skip
        cfg.update(over)
        return write_json(self / name, cfg)

    def evidence(self, run: str) -> str:
        return json.loads((self / f"runs/{run}/integrity.json").read_text())["evidenceDigest"]


def _walk_to_bundle(root: Path) -> Walk:
    """Prepare a private seed, fit a calibrator, write the review, context and approval, bundle."""
    root.mkdir(parents=True)
    assert cli("prepare", SEED, root / "prepared") == 0
    assert (
        cli("simulate", root / "prepared", "--scenario", "d17-finding", "--seed", 3,
            "--out", root / "fit-observations.jsonl") == 0
    )  # fmt: skip
    assert (
        cli("calibrator-fit", root / "fit-observations.jsonl", root / "prepared/gold.json",
            "--effective-at", EFFECTIVE, "--out", root / "calibrator.json") == 0
    )  # fmt: skip
    cal = json.loads((root / "calibrator.json").read_text())["digest"]
    assert cli("dev-review-material", root / "prepared", root / "material.json") == 0
    corpus = json.loads((root / "prepared/preregistration.json").read_text())["corpusDigest"]
    review = write_json(
        root / "DEV_REVIEW.json",
        {"schemaVersion": "prereg-d17mf-dev-review/v1", "corpusDigest": corpus, "items": []},
    )
    write_json(
        root / "CONTEXT.json",
        {
            "schemaVersion": "prereg-d17mf-calibration-context/v1",
            "calibrator": {"file": "calibrator.json", "trustedDigest": cal},
        },
    )
    assert (
        cli("approval-template", root / "prepared", root / "APPROVAL.json",
            "--calibration-artifact-digest", cal, "--dev-review-digest", sha(review)) == 0
    )  # fmt: skip
    w = Walk(root, cal, sha(review), sha(root / "APPROVAL.json"))
    assert cli(*w.bundle_args(), "--out", root / "BUNDLE.json", "--now", BUNDLED_AT) == 0
    return w


def _sessions(w: Walk) -> None:
    b, r = w / "BUNDLE.json", w.root
    # each session ends on the same simulated clock it started on (run-1 at run-2's start): the
    # ledger refuses a start before its last event
    ends = {"run-1": START_2, "run-2": "2026-10-15T10:00:00Z"}
    for k, (run, start) in enumerate((("run-1", START_1), ("run-2", START_2)), start=1):
        assert (
            cli("session-start", b, r, run, "--run-dir", r / "runs" / run, "--at", start,
                "--now", start) == 0
        )  # fmt: skip
        assert (
            cli("simulate", r / "prepared", "--scenario", "d17-finding", "--seed", 1,
                "--part", f"{k}/2", "--out", r / "runs" / run / "observations.jsonl") == 0
        )  # fmt: skip
        assert (
            cli("session-end", b, r, "--run-dir", r / "runs" / run, "--calls", 2900,
                "--tokens", 2_000_000, "--usd", "0.085", "--now", ends[run]) == 0
        )  # fmt: skip


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> Walk:
    """The procedure up to the bundle (no ledger yet)."""
    return _walk_to_bundle(tmp_path_factory.mktemp("handoff") / "root")


@pytest.fixture(scope="module")
def walked(bundled, tmp_path_factory) -> Walk:
    """The whole procedure: dry-run ready, frozen, two sessions recorded and ended, scored."""
    w = bundled.copy(tmp_path_factory.mktemp("walked") / "root")
    b = w / "BUNDLE.json"
    assert cli("dry-run-ledger", b, w.approval_digest, w.root, "--now", "2026-10-15T08:55Z") == 0
    assert cli("ledger-freeze", b, w.root, "--now", "2026-10-15T08:56:00Z") == 0
    _sessions(w)
    assert cli("score", "--config", w.score_config(), "--out", w / "SCORE.json") == 0
    return w


# -- end to end ---------------------------------------------------------------------------------


def test_the_procedure_end_to_end(walked, capsys):
    w = walked
    doc = json.loads((w / "SCORE.json").read_text())
    bundle = json.loads((w / "BUNDLE.json").read_text())
    assert doc["seed"] == SEED and doc["decision"]["outcome"] == "HOLD" and doc["complete"] is True
    assert doc["observations"]["observedRows"] == doc["observations"]["rows"] == 5778
    lineage = doc["lineage"]
    assert lineage["bundleDigest"] == sha(w / "BUNDLE.json")
    assert lineage["approvalDigest"] == w.approval_digest == bundle["approvalDigest"]
    assert [r["runId"] for r in lineage["runs"]] == ["run-1", "run-2"]
    assert [r["evidenceDigest"] for r in lineage["runs"]] == [
        w.evidence("run-1"),
        w.evidence("run-2"),
    ]
    # collection end = the latest session start + the 30-minute limit
    assert doc["clock"]["sessionStarts"] == ["2026-10-15T09:00:00.000Z", "2026-10-15T09:30:00.000Z"]
    assert doc["clock"]["collectionEndBound"] == "2026-10-15T10:00:00.000Z"
    # the observations scored are both runs' together
    both = (w / "runs/run-1/observations.jsonl").read_bytes() + (
        w / "runs/run-2/observations.jsonl"
    ).read_bytes()
    assert doc["observations"]["sha256"] == "sha256:" + hashlib.sha256(both).hexdigest()
    # the second run names the first with its evidence digest
    frozen2 = json.loads((w / "runs/run-2/frozen.json").read_text())
    assert frozen2["priorRuns"] == [{"runId": "run-1", "evidenceDigest": w.evidence("run-1")}]
    assert frozen2["collectionStartedAt"] == "2026-10-15T09:30:00.000Z"
    # the ledger: one seed, two ended sessions, their spend, five events
    capsys.readouterr()
    assert cli("ledger-show", w.root, "--json") == 0
    state = json.loads(capsys.readouterr().out)
    # a document of its own kind: version id, camelCase keys, the shipped ledger-state schema
    assert state["schemaVersion"] == "prereg-ledger-state/v2" and state["ledgerSchemaVersion"] == 2
    assert outputs.problems(state, outputs.schema_for("reachability-probe", "ledger-state")) == []
    assert [s["seed"] for s in state["seeds"]] == [SEED]
    assert state["seeds"][0]["corpusDigest"] == bundle["corpusDigest"]
    assert state["seeds"][0]["preregistrationDigest"] == bundle["preregistrationDigest"]
    assert [s["runId"] for s in state["sessions"]] == ["run-1", "run-2"]
    assert [s["evidenceDigest"] for s in state["sessions"]] == [
        w.evidence("run-1"),
        w.evidence("run-2"),
    ]
    assert state["spend"] == {"calls": 5800, "tokens": 4000000, "usd": "0.170"}
    assert [e["kind"] for e in state["events"]] == [
        "freeze", "session-start", "session-end", "session-start", "session-end",
    ]  # fmt: skip
    with Ledger(w.ledger) as led:
        assert led.integrity() == "ok"
    assert cli("ledger-show", w.root) == 0
    text = capsys.readouterr().out
    assert "recorded spend: 5800 calls, 4000000 tokens, USD 0.170" in text


def test_files_are_private_and_the_bundle_binds_the_corpus(bundled):
    w = bundled
    for name in ("APPROVAL.json", "BUNDLE.json"):
        assert (w / name).stat().st_mode & 0o777 == 0o600
    b = json.loads((w / "BUNDLE.json").read_text())
    prereg = json.loads((w / "prepared/preregistration.json").read_text())
    assert b["corpus"] == {"file": "prepared/corpus.jsonl", "sha256": prereg["corpusDigest"]}
    assert b["calibration"] == {
        "mode": "artifact",
        "calibrationArtifactDigest": w.calibrator_digest,
        "effectiveAt": EFFECTIVE,
        "expiresAt": iso(EXPIRES),
    }
    assert b["devReviewDigest"] == w.review_digest and w.review_digest in b["approvalReference"]


def test_dry_run_ledger_on_a_fresh_ledger_plans_the_source_figures(bundled, capsys):
    w = bundled
    capsys.readouterr()
    rc = cli("dry-run-ledger", w / "BUNDLE.json", w.approval_digest, w.root, "--now", START_1)
    out = capsys.readouterr().out
    assert rc == 0 and out.rstrip().endswith("ready: yes")
    # the source: the fresh allowance less the worst case leaves 1,244 calls, 4.0M tokens, USD 2.29
    assert "12,800 left; worst case 11,556; headroom 1,244" in out
    assert "24,000,000 left; worst case 19,960,000; headroom 4,040,000" in out
    assert "4.0 left; worst case 1.706; headroom 2.294" in out
    assert not w.ledger.exists()  # a dry run creates no ledger


def test_the_python_boundary_function(bundled):
    _, ctx = study_context(Project(PROJECT[0]), STUDY)
    b = validate_bundle(ctx, bundled / "BUNDLE.json", now=datetime(2026, 10, 20, tzinfo=UTC))
    assert b.doc["seed"] == SEED and b.digest == sha(bundled / "BUNDLE.json")
    other = type(ctx)(ctx.study_id, "sha256:" + "0" * 64, ctx.version, ctx.config, ctx.extras)
    with pytest.raises(UserError, match=f"^{CODES['changedPreregistration']}: "):
        validate_bundle(other, bundled / "BUNDLE.json")


# -- the window at its edges --------------------------------------------------------------------


def test_session_window_edges(bundled, tmp_path, capsys):
    w = bundled.copy(tmp_path / "root")
    b = w / "BUNDLE.json"
    assert cli("ledger-freeze", b, w.root, "--now", START_1) == 0
    late = EXPIRES - LIMIT + timedelta(milliseconds=1)
    rc = cli("validate-bundle", b, "--session-start", iso(late), "--now", START_1)
    refused(capsys, rc, "sessionWindow", "false", iso(late))
    rc = cli("session-start", b, w.root, "r-late", "--run-dir", tmp_path / "late",
             "--at", iso(late), "--now", "2026-12-01T00:00:00Z")  # fmt: skip
    refused(capsys, rc, "sessionWindow", outputs=[tmp_path / "late" / "frozen.json"])
    capsys.readouterr()
    assert cli("dry-run-ledger", b, w.approval_digest, w.root, "--now", iso(late)) == 1
    assert "check sessionWindowOpen: NOT READY; false" in capsys.readouterr().out
    ok = EXPIRES - LIMIT - timedelta(seconds=60)
    assert cli("validate-bundle", b, "--session-start", iso(ok), "--now", START_1) == 0
    assert cli("dry-run-ledger", b, w.approval_digest, w.root, "--now", iso(ok)) == 0
    assert "check sessionWindowOpen: ok; true" in capsys.readouterr().out
    assert cli("session-start", b, w.root, "r-ok", "--run-dir", tmp_path / "ok",
               "--at", iso(ok), "--now", "2026-12-01T00:00:00Z") == 0  # fmt: skip
    with Ledger(w.ledger) as led:
        assert [s["run_id"] for s in led.sessions()] == ["r-ok"]  # the refused start left nothing


def test_call_timeout_edge_and_expiry(bundled, capsys):
    b = bundled / "BUNDLE.json"
    last = EXPIRES - timedelta(seconds=60)  # the 60 s timeout ends exactly at the expiry
    assert cli("validate-bundle", b, "--call-at", iso(last), "--now", START_1) == 0
    rc = cli("validate-bundle", b, "--call-at", iso(last + timedelta(milliseconds=1)),
             "--now", START_1)  # fmt: skip
    refused(capsys, rc, "calibrationExpired", "stop the collection")
    rc = cli("validate-bundle", b, "--now", iso(EXPIRES + timedelta(milliseconds=1)))
    refused(capsys, rc, "calibrationExpired", "past the calibrator's expiry")


# -- refusals of bundle -------------------------------------------------------------------------


def test_public_seed_is_refused(bundled, tmp_path, capsys):
    w = bundled
    pub = tmp_path / "public"
    assert cli("prepare", "d17mf-public-demo", pub) == 0
    capsys.readouterr()
    rc = cli(*w.bundle_args(outdir=pub), "--out", tmp_path / "B.json", "--now", BUNDLED_AT)
    refused(capsys, rc, "publicSeed", "d17mf-public-demo", outputs=[tmp_path / "B.json"])
    # a hand-built bundle naming a public seed stops at the collector boundary too
    doc = json.loads((w / "BUNDLE.json").read_text())
    doc["seed"] = "review-throwaway-a1"
    hand = write_json(w / "hand-built.json", doc)
    refused(capsys, cli("validate-bundle", hand, "--now", START_1), "publicSeed")


def _approval(w: Walk, tmp_path: Path, edit) -> Path:
    obj = json.loads((w / "APPROVAL.json").read_text())
    edit(obj)
    return write_json(tmp_path / "APPROVAL.json", obj)


@pytest.mark.parametrize(
    ("code", "edit", "needle"),
    [
        ("calibrationScope", lambda a: a["calibration"].update(mode="staged"), "'staged'"),
        (
            "calibrationScope",
            lambda a: a["calibration"].update(calibrationArtifactDigest="sha256:" + "1" * 64),
            "not the context's registered calibrator",
        ),
        ("approvalReference", lambda a: a.update(approvalReference="reviewed ok"), "does not cite"),
        ("approvalMismatch", lambda a: a.update(seed="d17mf-" + "a" * 26), "at /seed"),
        ("floorsBelowSpend", lambda a: a["floorsUsd"].update(study=0.5), "/floorsUsd/study"),
        (
            "floorsBelowSpend",
            lambda a: a["floorsUsd"].update(portfolio=2.0),
            "/floorsUsd/portfolio",
        ),
    ],
)
def test_approval_refusals(bundled, tmp_path, capsys, code, edit, needle):
    approval = _approval(bundled, tmp_path, edit)
    out = tmp_path / "B.json"
    rc = cli(*bundled.bundle_args(approval=approval), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, code, needle, outputs=[out])


def test_an_incomplete_approval_template_is_refused(bundled, tmp_path, capsys):
    tpl = tmp_path / "TEMPLATE.json"
    assert cli("approval-template", bundled / "prepared", tpl) == 0
    assert tpl.stat().st_mode & 0o777 == 0o600
    out = tmp_path / "B.json"
    rc = cli(*bundled.bundle_args(approval=tpl), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, "approvalIncomplete", "/calibration/calibrationArtifactDigest",
            "/approvalReference", outputs=[out])  # fmt: skip


def test_floors_must_cover_the_spend_the_ledger_records(walked, tmp_path, capsys):
    w = walked  # the ledger records USD 0.170 of spend; the approval attests the registered floors
    out = tmp_path / "B.json"
    rc = cli(*w.bundle_args(), "--out", out, "--now", BUNDLED_AT, "--ledger", w.ledger)
    refused(capsys, rc, "floorsBelowSpend", "USD 0.170 the ledger", outputs=[out])
    raised = _approval(w, tmp_path, lambda a: a["floorsUsd"].update(study=1.07, portfolio=2.37))
    rc = cli(
        *w.bundle_args(approval=raised), "--out", out, "--now", BUNDLED_AT, "--ledger", w.ledger
    )
    assert rc == 0, capsys.readouterr().err


def test_development_review_refusals(bundled, tmp_path, capsys):
    w, out = bundled, tmp_path / "B.json"
    rc = cli(*w.bundle_args(review_digest="sha256:" + "2" * 64), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, "devReviewDigest", "anchored", outputs=[out])
    other = write_json(
        tmp_path / "R.json",
        {"schemaVersion": "prereg-d17mf-dev-review/v1", "corpusDigest": "sha256:" + "3" * 64},
    )
    rc = cli(*w.bundle_args(review=other, review_digest=sha(other)), "--out", out)
    refused(capsys, rc, "devReviewCorpus", "/corpusDigest", outputs=[out])


def test_context_refusals(bundled, tmp_path, capsys):
    w, out = bundled, tmp_path / "B.json"
    ctx = json.loads((w / "CONTEXT.json").read_text())
    ctx["calibrator"] = {"file": str(w / "calibrator.json"), "trustedDigest": "sha256:" + "4" * 64}
    bad = write_json(tmp_path / "C.json", ctx)
    rc = cli(*w.bundle_args(context=bad), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, "contextDigest", "trustedDigest", outputs=[out])
    # a calibrator fitted with another effective date is not the registered artifact
    other = tmp_path / "other-cal.json"
    assert cli("calibrator-fit", w / "fit-observations.jsonl", w / "prepared/gold.json",
               "--effective-at", "2026-10-05T00:00:00Z", "--out", other) == 0  # fmt: skip
    digest = json.loads(other.read_text())["digest"]
    ctx["calibrator"] = {"file": str(other), "trustedDigest": digest}
    moved = write_json(tmp_path / "C2.json", ctx)
    approval = _approval(
        w, tmp_path, lambda a: a["calibration"].update(calibrationArtifactDigest=digest)
    )
    rc = cli(*w.bundle_args(context=moved, approval=approval), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, "calibrationScope", "not the registered window", outputs=[out])


def test_the_operators_files_are_checked_against_their_schemas(bundled, tmp_path, capsys):
    """A hand-written input that breaks its shipped schema is refused with the file, the JSON
    pointer and the schema named; nothing is written."""
    w, out = bundled, tmp_path / "B.json"

    def edited(name: str, edit) -> Path:
        obj = json.loads((w / name).read_text())
        edit(obj)
        return write_json(tmp_path / name, obj)

    approval = edited("APPROVAL.json", lambda a: a["floorsUsd"].update(study="lots"))
    rc = cli(*w.bundle_args(approval=approval), "--out", out, "--now", BUNDLED_AT)
    err = refused(capsys, rc, "approvalMismatch", f"{approval}: at /floorsUsd/study: 'lots'",
                  "prereg-reachability-approval/v1", outputs=[out])  # fmt: skip
    assert "Traceback" not in err
    approval = edited("APPROVAL.json", lambda a: a.update(approvedBy="someone"))
    rc = cli(*w.bundle_args(approval=approval), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, "approvalMismatch", "'approvedBy' was unexpected", outputs=[out])
    context = edited("CONTEXT.json", lambda c: c["calibrator"].pop("trustedDigest"))
    rc = cli(*w.bundle_args(context=context), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, "contextDigest", f"{context}: at /calibrator: 'trustedDigest' is a"
            " required property", outputs=[out])  # fmt: skip
    review = edited("DEV_REVIEW.json", lambda r: r.update(items=[{"row": 1}]))
    rc = cli(*w.bundle_args(review=review, review_digest=sha(review)), "--out", out)
    refused(capsys, rc, "devReviewCorpus", f"{review}: at /items/0:", outputs=[out])
    # the bundle, at the collector boundary
    bundle = edited("BUNDLE.json", lambda b: b["window"].update(sessionMinutes="30"))
    refused(capsys, cli("validate-bundle", bundle, "--now", START_1), "bundleDigest",
            f"{bundle}: at /window/sessionMinutes", "prereg-reachability-bundle/v1")  # fmt: skip


def test_expired_calibrator_at_bundle_time(bundled, tmp_path, capsys):
    out = tmp_path / "B.json"
    rc = cli(*bundled.bundle_args(), "--out", out, "--now", "2026-11-02T00:00:00Z")
    refused(capsys, rc, "calibrationExpired", "not valid at", outputs=[out])


def test_a_prepared_folder_that_differs_from_the_regenerated_study(bundled, tmp_path, capsys):
    prepared = tmp_path / "prepared"
    shutil.copytree(bundled / "prepared", prepared)
    analysis = json.loads((prepared / "analysis.json").read_text())
    analysis["cells"][0]["rows"] += 1
    (prepared / "analysis.json").write_text(json.dumps(analysis))
    out = tmp_path / "B.json"
    rc = cli(*bundled.bundle_args(outdir=prepared), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, "preparedMismatch", "analysis.json", outputs=[out])


def test_the_boundary_refuses_another_generator_and_another_corpus(bundled, tmp_path, capsys):
    doc = json.loads((bundled / "BUNDLE.json").read_text())
    doc["generatorId"] = "d17-multifact/v2"
    refused(capsys, cli("validate-bundle", write_json(bundled / "g.json", doc)),
            "generatorId", "keyed on 'd17-multifact/v1'")  # fmt: skip
    doc = json.loads((bundled / "BUNDLE.json").read_text())
    doc["calibration"]["mode"] = "staged"
    refused(capsys, cli("validate-bundle", write_json(bundled / "m.json", doc)),
            "calibrationScope")  # fmt: skip
    doc = json.loads((bundled / "BUNDLE.json").read_text())
    doc["corpusDigest"] = doc["corpus"]["sha256"] = "sha256:" + "5" * 64
    refused(capsys, cli("validate-bundle", write_json(bundled / "c.json", doc)),
            "preparedMismatch")  # fmt: skip


@pytest.mark.parametrize(
    "edits, code, needle",
    [
        # the fast reader reads the file (every record has the corpus shape): the second
        # record's generator is refused
        ([(1, b'"generatorId":"d17-multifact/v1"', b'"generatorId":"d17-multifact/v0"')],
         "generatorId", "corpus.jsonl:2: at /provenance/generatorId: 'd17-multifact/v0'"),
        # the strict reader reads it (line 3 is no JSON): line 2's generator comes first
        ([(1, b'"generatorId":"d17-multifact/v1"', b'"generatorId":"d17-multifact/v0"'),
          (2, b'"localOutcome":null', b'"localOutcome":NaN')],
         "generatorId", "corpus.jsonl:2: at /provenance/generatorId: 'd17-multifact/v0'"),
        ([(0, b'"localOutcome":null', b'"localOutcome":NaN')],
         None, "corpus.jsonl:1: not a corpus record (NaN is not a JSON value)"),
        ([(0, b'{"id":', b'{"split":"x","id":')],
         None, "corpus.jsonl:1: not a corpus record (duplicate key 'split')"),
    ],
)  # fmt: skip
def test_the_boundary_reads_every_corpus_record(bundled, tmp_path, capsys, edits, code, needle):
    """A bundle whose corpus digest is the edited corpus's: each record's generator is checked,
    by the fast reader or, for a file it cannot vouch for, the strict one, alike."""
    w = bundled.copy(tmp_path / "w")
    corpus = w / "prepared/corpus.jsonl"
    lines = corpus.read_bytes().splitlines(keepends=True)
    for n, old, new in edits:
        assert old in lines[n]
        lines[n] = lines[n].replace(old, new, 1)
    data = b"".join(lines)
    corpus.write_bytes(data)
    doc = json.loads((w / "BUNDLE.json").read_text())
    doc["corpusDigest"] = doc["corpus"]["sha256"] = "sha256:" + hashlib.sha256(data).hexdigest()
    rc = cli("validate-bundle", write_json(w / "BUNDLE.json", doc))
    if code is None:
        err = capsys.readouterr().err
        assert rc == 2 and f"{corpus}{needle[len('corpus.jsonl') :]}" in err, err
    else:
        refused(capsys, rc, code, f"{corpus}{needle[len('corpus.jsonl') :]}")


# -- refusals of the ledger ---------------------------------------------------------------------


def _foreign_freeze(ledger: Path, *, seed: str, corpus: str, prereg: str) -> None:
    with Ledger(ledger) as led:
        led.freeze(
            seed=seed, generator_id="d17-multifact/v0", corpus_digest=corpus,
            preregistration_digest=prereg, spec_digest="sha256:" + "6" * 64,
            bundle_digest="sha256:" + "7" * 64, at="2026-10-10T00:00:00.000Z", at_ms=0,
        )  # fmt: skip


def test_seed_reused(bundled, tmp_path, capsys):
    w = bundled.copy(tmp_path / "root")
    doc = json.loads((w / "BUNDLE.json").read_text())
    # the seed frozen earlier under another corpus (a generator revision, say)
    _foreign_freeze(w.ledger, seed=SEED, corpus="sha256:" + "8" * 64, prereg="sha256:" + "9" * 64)
    capsys.readouterr()
    assert (
        cli("dry-run-ledger", w / "BUNDLE.json", w.approval_digest, w.root, "--now", START_1) == 1
    )
    out = capsys.readouterr().out
    assert "check seed-reused: NOT READY" in out and out.rstrip().endswith("ready: no")
    rc = cli("ledger-freeze", w / "BUNDLE.json", w.root, "--now", START_1)
    refused(capsys, rc, "seedReused", SEED, "sha256:" + "8" * 64)
    with Ledger(w.ledger) as led:
        assert led.seed(SEED)["corpus_digest"] != doc["corpusDigest"]


def test_changed_preregistration(bundled, tmp_path, capsys):
    w = bundled.copy(tmp_path / "root")
    doc = json.loads((w / "BUNDLE.json").read_text())
    # the same corpus already frozen under another preregistration
    _foreign_freeze(
        w.ledger, seed="d17mf-" + "c" * 26, corpus=doc["corpusDigest"], prereg="sha256:" + "a" * 64
    )
    capsys.readouterr()
    assert (
        cli("dry-run-ledger", w / "BUNDLE.json", w.approval_digest, w.root, "--now", START_1) == 1
    )
    assert "check changed-preregistration: NOT READY" in capsys.readouterr().out
    rc = cli("ledger-freeze", w / "BUNDLE.json", w.root, "--now", START_1)
    refused(capsys, rc, "changedPreregistration", "sha256:" + "a" * 64)


def test_approval_digest_and_budget_are_reported_not_ready(walked, capsys):
    w = walked
    capsys.readouterr()
    rc = cli("dry-run-ledger", w / "BUNDLE.json", "sha256:" + "b" * 64, w.root, "--now", START_2)
    out = capsys.readouterr().out
    assert rc == 1
    assert "check approval-digest: NOT READY" in out
    # 5,800 calls recorded: 7,000 of the 12,800 left, fewer than the worst case of 11,556
    assert "check budget-exceeded: NOT READY" in out and "7,000 left; worst case 11,556" in out


def test_session_refusals(bundled, tmp_path, capsys):
    w = bundled.copy(tmp_path / "root")
    b, r = w / "BUNDLE.json", w.root

    def start(run, at=START_1, now=START_1):
        return cli(
            "session-start", b, r, run, "--run-dir", r / "runs" / run, "--at", at, "--now", now
        )

    refused(capsys, start("run-1"), "seedNotFrozen", outputs=[r / "runs/run-1/frozen.json"])
    assert cli("ledger-freeze", b, r, "--now", START_1) == 0
    refused(capsys, start("run-1", at=START_2), "futureInstant")
    assert start("run-1") == 0
    refused(capsys, start("run-2", at=START_2, now=START_2), "sessionOpen", "has not ended")
    (r / "runs/run-1/observations.jsonl").write_text("")
    end = ("session-end", b, r, "--run-dir", r / "runs/run-1", "--calls", 0, "--tokens", 0)
    assert cli(*end, "--usd", "0") == 0
    shutil.rmtree(r / "runs/run-1x", ignore_errors=True)
    shutil.copytree(r / "runs/run-1", r / "runs/run-1x")
    (r / "runs/run-1x/integrity.json").unlink()
    refused(capsys, cli(*end[:4], r / "runs/run-1x", *end[5:], "--usd", "0"), "runReused")
    shutil.rmtree(r / "runs/run-1")
    refused(capsys, start("run-1", at=START_2, now=START_2), "runReused")


# -- refusals of score --config -----------------------------------------------------------------


def _score(w: Walk, tmp_path: Path, config: Path) -> tuple[int, Path]:
    out = tmp_path / "SCORE.json"
    return cli("score", "--config", config, "--out", out), out


def test_score_config_digest_refusals(walked, tmp_path, capsys):
    w = walked
    for key, code in (("bundle", "bundleDigest"), ("gold", "goldDigest"),
                      ("calibrationContext", "contextDigest")):  # fmt: skip
        cfg = json.loads(w.score_config("C.json").read_text())
        cfg[key]["trustedDigest"] = "sha256:" + "d" * 64
        rc, out = _score(w, tmp_path, write_json(w / "C.json", cfg))
        refused(capsys, rc, code, f"/{key}/trustedDigest", outputs=[out])
    cfg = json.loads(w.score_config("C.json").read_text())
    cfg["runs"][0]["trustedEvidenceDigest"] = "sha256:" + "e" * 64
    rc, out = _score(w, tmp_path, write_json(w / "C.json", cfg))
    refused(capsys, rc, "lineageDigest", "/runs/0/trustedEvidenceDigest", outputs=[out])
    # the lineage must be whole: run-2 names run-1 as its prior run
    cfg = json.loads(w.score_config("C.json").read_text())
    del cfg["runs"][0]
    rc, out = _score(w, tmp_path, write_json(w / "C.json", cfg))
    refused(capsys, rc, "lineageDigest", "priorRuns", outputs=[out])


def test_the_score_configs_gold_file_is_the_bundled_gold_however_it_is_written(
    walked, tmp_path, capsys
):
    """A gold file as prepare writes it is read by the fast reader, another one (the same gold
    indented) by the strict reader: the same gold passes either way, a changed one is
    refused."""
    w = walked
    gold = json.loads((w / "prepared/gold.json").read_text())
    indented = w / "G-indented.json"
    indented.write_text(json.dumps(gold, indent=1) + "\n", encoding="utf-8")
    row = sorted(gold["labels"])[0]
    gold["labels"][row] = "no" if gold["labels"][row] == "yes" else "yes"
    changed = w / "G-changed.json"
    changed.write_bytes(
        json.dumps(gold, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    )
    for path, ok in ((changed, False), (indented, True)):
        g = {"file": path.name, "trustedDigest": sha(path)}
        (tmp_path / path.stem).mkdir()
        rc, out = _score(w, tmp_path / path.stem, w.score_config("C.json", gold=g))
        if ok:
            assert rc == 0, capsys.readouterr().err
        else:
            refused(capsys, rc, "goldDigest", f"{path}: not the bundled gold", outputs=[out])


def test_a_score_config_that_breaks_its_schema(walked, tmp_path, capsys):
    w = walked
    cfg = json.loads(w.score_config("C.json").read_text())
    cfg["runs"][1] = {"dir": "runs/run-2"}
    cfg["evaluatedAt"] = "tomorrow"
    rc, out = _score(w, tmp_path, write_json(w / "C.json", cfg))
    # led by the rule of its first problem (the clock's), not a digest's
    err = refused(capsys, rc, "scoringClock", "C.json: at /evaluatedAt: 'tomorrow'",
                  "at /runs/1: 'trustedEvidenceDigest' is a required property", outputs=[out])  # fmt: skip
    assert "prereg-reachability-score-config/v1" in err


def test_score_clock_refusals(walked, tmp_path, capsys):
    w = walked
    rc, out = _score(w, tmp_path, w.score_config("C.json", evaluatedAt="2026-10-15T09:59:59Z"))
    refused(
        capsys, rc, "scoringClock", "collection-end bound 2026-10-15T10:00:00.000Z", outputs=[out]
    )
    rc, out = _score(w, tmp_path, w.score_config("C.json", evaluatedAt="2999-01-01T00:00:00Z"))
    refused(capsys, rc, "scoringClock", "in the future", outputs=[out])
    rc, out = _score(w, tmp_path, w.score_config("C.json", evaluatedAt="2026-11-02T00:00:00Z"))
    refused(capsys, rc, "calibrationExpired", "evaluatedAt", outputs=[out])
    # exactly at the bound is allowed
    rc, out = _score(w, tmp_path, w.score_config("C.json", evaluatedAt="2026-10-15T10:00:00Z"))
    assert rc == 0, capsys.readouterr().err


def _reseal(w: Walk, run: str, edit) -> None:
    """Edit a run's frozen.json and recompute its integrity.json (as a collector would have)."""
    d = w / f"runs/{run}"
    frozen = json.loads((d / "frozen.json").read_text())
    edit(frozen)
    write_json(d / "frozen.json", frozen)
    h = type("H", (), {})()  # the hand-off facts evidence() reads
    h.raw = CTX.config["constants"]["hand-off"]
    h.version_of = lambda kind: h.raw["schemaVersions"][kind]
    ev = evidence(h, d)
    ev.pop("frozen")
    write_json(d / "integrity.json", ev)


def test_a_run_without_a_session_start_cannot_be_scored(walked, tmp_path, capsys):
    w = walked.copy(tmp_path / "root")
    _reseal(w, "run-1", lambda f: f.pop("collectionStartedAt"))
    _reseal(
        w,
        "run-2",
        lambda f: f.update(priorRuns=[{"runId": "run-1", "evidenceDigest": w.evidence("run-1")}]),
    )
    rc, out = _score(w, tmp_path, w.score_config())
    refused(capsys, rc, "sessionUnrecorded", "run-1", outputs=[out])


def test_a_run_under_another_preregistration_is_refused(walked, tmp_path, capsys):
    w = walked.copy(tmp_path / "root")
    _reseal(w, "run-2", lambda f: f.update(preregistrationDigest="sha256:" + "f" * 64))
    rc, out = _score(w, tmp_path, w.score_config())
    refused(capsys, rc, "changedPreregistration", "/preregistrationDigest", outputs=[out])


def test_an_altered_run_file_is_refused(walked, tmp_path, capsys):
    w = walked.copy(tmp_path / "root")
    cfg = w.score_config()  # trusted digests taken before the alteration
    with (w / "runs/run-1/observations.jsonl").open("a") as fh:
        fh.write("")
    lines = (w / "runs/run-1/observations.jsonl").read_text().splitlines(keepends=True)
    (w / "runs/run-1/observations.jsonl").write_text("".join(lines[:-1]))
    rc, out = _score(w, tmp_path, cfg)
    refused(capsys, rc, "lineageDigest", "integrity.json", outputs=[out])


def test_score_takes_one_form_or_the_other(walked, tmp_path, capsys):
    out = tmp_path / "S.json"
    rc = cli("score", walked / "prepared", "--config", walked.score_config(), "--out", out)
    err = capsys.readouterr().err
    assert rc == 2 and "either --config or the flag form" in err and "outdir" in err
    rc = cli("score", walked / "prepared", "--out", out)
    err = capsys.readouterr().err
    assert rc == 2 and "missing: OBSERVATIONS, --calibrator" in err
    assert not out.exists()


def test_the_flag_form_scores_exactly_as_the_lineage_does(walked, tmp_path):
    """Both forms run the same checks and the same scoring: with the runs' observations in one
    file and their session starts as flags, SCORE.json is the lineage's without its lineage."""
    w = walked
    both = tmp_path / "observations.jsonl"
    both.write_bytes(
        (w / "runs/run-1/observations.jsonl").read_bytes()
        + (w / "runs/run-2/observations.jsonl").read_bytes()
    )
    out = tmp_path / "SCORE.json"
    assert (
        cli("score", w / "prepared", both, "--calibrator", w / "calibrator.json",
            "--calibrator-digest", w.calibrator_digest, "--session-start", f"{START_1},{START_2}",
            "--evaluated-at", EVALUATED, "--out", out) == 0
    )  # fmt: skip
    flag = json.loads(out.read_text())
    lineage = json.loads((w / "SCORE.json").read_text())
    assert "lineage" not in flag and lineage.pop("lineage")
    # the flag form is labelled a development score (SCORE.json and SCORE.md); the lineage not
    development = flag.pop("development")
    assert development["form"] == "flags" and "development score" in development["reason"]
    assert "development" not in lineage
    assert flag == lineage
    md = out.with_suffix(".md").read_text()
    assert "**Development score**" in md.split("## Gates")[0]
    assert "Development score" not in (w / "SCORE.md").read_text()


def test_a_hand_off_command_imports_no_scoring_and_no_preparation(walked):
    """ledger-show and validate-bundle find their handlers without importing the scoring
    (numpy) or the preparation, and validate-bundle reads the corpus without jsonschema."""
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from prereg.cli import main\n"
        "assert main(sys.argv[1:]) == 0\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('numpy', 'scipy', 'jsonschema') or m.rsplit('.', 1)[-1] in"
        " ('commands', 'score_commands', 'scoring', 'pipeline', 'generate', 'audit'))))\n"
    )
    for args in (
        ("ledger-show", walked.root),
        ("validate-bundle", walked / "BUNDLE.json", "--session-start", START_2, "--now", START_2),
    ):
        argv = ["--project", str(PROJECT[0]), STUDY, *map(str, args)]
        done = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.strip().splitlines()[-1]) == [], args


# -- the run file before the ledger: a crash between them resumes -------------------------------


class _Killed(BaseException):
    """Stands for the process dying between the run file and the ledger's commit."""


def test_a_start_interrupted_after_its_run_file_resumes_and_a_refused_one_leaves_none(
    bundled, tmp_path, capsys, monkeypatch
):
    from prereg.engines.reachability import handoff
    from prereg.ledger import LedgerConflict

    w = bundled.copy(tmp_path / "root")
    b, r = w / "BUNDLE.json", w.root
    assert cli("ledger-freeze", b, r, "--now", START_1) == 0
    start = ("session-start", b, r, "run-1", "--run-dir", r / "runs/run-1", "--at", START_1)
    real = Ledger.start_session

    def dies_before_commit(self, **kw):
        if kw.get("record", True):
            raise _Killed
        return real(self, **kw)

    # killed after the run file was written, before the ledger recorded the start (a crash
    # runs no cleanup)
    monkeypatch.setattr(Ledger, "start_session", dies_before_commit)
    monkeypatch.setattr(handoff, "_unlink_quietly", lambda p: None)
    with pytest.raises(_Killed):
        cli(*start, "--now", START_1)
    assert (r / "runs/run-1/frozen.json").is_file()
    with Ledger(w.ledger) as led:
        assert led.sessions() == []
    monkeypatch.undo()
    capsys.readouterr()
    assert cli(*start, "--now", START_1) == 0  # the same command resumes the start
    assert "was already written" in capsys.readouterr().out
    with Ledger(w.ledger) as led:
        assert [s["run_id"] for s in led.sessions()] == ["run-1"]
    frozen = json.loads((r / "runs/run-1/frozen.json").read_text())
    assert (
        frozen["runId"] == "run-1" and frozen["collectionStartedAt"] == "2026-10-15T09:00:00.000Z"
    )

    # the ledger refusing after the run file was written: the run file goes again
    (r / "runs/run-1/observations.jsonl").write_text("")
    end = ("session-end", b, r, "--run-dir", r / "runs/run-1", "--calls", 0, "--tokens", 0)
    assert cli(*end, "--usd", "0", "--now", START_2) == 0  # on the simulated clock

    def refuses(self, **kw):
        if kw.get("record", True):
            raise LedgerConflict("session-open", "another session started meanwhile")
        return real(self, **kw)

    monkeypatch.setattr(Ledger, "start_session", refuses)
    rc = cli("session-start", b, r, "run-2", "--run-dir", r / "runs/run-2", "--at", START_2,
             "--now", START_2)  # fmt: skip
    refused(capsys, rc, "sessionOpen", "meanwhile", outputs=[r / "runs/run-2/frozen.json"])


def test_an_end_interrupted_after_its_integrity_file_resumes(
    bundled, tmp_path, capsys, monkeypatch
):
    from prereg.engines.reachability import handoff

    w = bundled.copy(tmp_path / "root")
    b, r = w / "BUNDLE.json", w.root
    assert cli("ledger-freeze", b, r, "--now", START_1) == 0
    assert cli("session-start", b, r, "run-1", "--run-dir", r / "runs/run-1", "--at", START_1,
               "--now", START_1) == 0  # fmt: skip
    (r / "runs/run-1/observations.jsonl").write_text("")
    end = ("session-end", b, r, "--run-dir", r / "runs/run-1", "--calls", 3, "--tokens", 4)
    real = Ledger.end_session

    def dies_before_commit(self, **kw):
        if kw.get("record", True):
            raise _Killed
        return real(self, **kw)

    monkeypatch.setattr(Ledger, "end_session", dies_before_commit)
    monkeypatch.setattr(handoff, "_unlink_quietly", lambda p: None)
    with pytest.raises(_Killed):
        cli(*end, "--usd", "0.5")
    assert (r / "runs/run-1/integrity.json").is_file()
    monkeypatch.undo()
    assert cli(*end, "--usd", "0.5") == 0
    with Ledger(w.ledger) as led:
        (s,) = led.sessions()
    assert (s["calls"], s["tokens"], s["usd"]) == (3, 4, "0.5")
    assert s["evidence_digest"] == w.evidence("run-1")


def test_a_session_start_before_the_seeds_freeze_is_refused(bundled, tmp_path, capsys):
    w = bundled.copy(tmp_path / "root")
    b, r = w / "BUNDLE.json", w.root
    assert cli("ledger-freeze", b, r, "--now", START_2) == 0
    rc = cli("session-start", b, r, "run-1", "--run-dir", r / "runs/run-1", "--at", START_1,
             "--now", START_2)  # fmt: skip
    refused(capsys, rc, "sessionOpen", "before the seed's freeze",
            outputs=[r / "runs/run-1/frozen.json"])  # fmt: skip


# -- the bundle re-checked against its sources at every later step ------------------------------


def _set(doc: dict, pointer: str, value) -> None:
    keys = pointer.strip("/").split("/")
    for k in keys[:-1]:
        doc = doc[k]
    doc[keys[-1]] = value


@pytest.mark.parametrize(
    "pointer, value, code",
    [
        ("/seed", "d17mf-9c1e4b7a2f8d06e35b7c9a1d42", "approvalMismatch"),
        ("/floorsUsd/study", 99, "approvalMismatch"),
        ("/floorsUsd/portfolio", 0.0, "approvalMismatch"),
        ("/calibration/calibrationArtifactDigest", "sha256:" + "0" * 64, "approvalMismatch"),
        ("/approvalReference", "approved by nobody", "approvalMismatch"),
        ("/approvalDigest", "sha256:" + "1" * 64, "approvalDigest"),
        ("/approval/sha256", "sha256:" + "1" * 64, "approvalDigest"),
        ("/goldDigest", "sha256:" + "2" * 64, "preparedMismatch"),
        ("/dispatchOrderDigest", "sha256:" + "3" * 64, "preparedMismatch"),
        ("/worstCase/usd", "0.01", "changedPreregistration"),
        ("/window/latestSessionStart", "2027-01-01T00:00:00.000Z", "changedPreregistration"),
        ("/window/sessionMinutes", 600, "changedPreregistration"),
    ],
)
def test_an_edited_bundle_is_refused_at_every_later_step(
    bundled, tmp_path, capsys, pointer, value, code
):
    w = bundled.copy(tmp_path / "root")
    doc = json.loads((w / "BUNDLE.json").read_text())
    _set(doc, pointer, value)
    b = write_json(w / "BUNDLE.json", doc)
    refused(capsys, cli("validate-bundle", b, "--now", START_1), code, f"at {pointer}:")
    refused(capsys, cli("ledger-freeze", b, w.root, "--now", START_1), code, f"at {pointer}:",
            outputs=[w.ledger])  # fmt: skip
    refused(capsys, cli("dry-run-ledger", b, w.approval_digest, w.root, "--now", START_1), code)


def test_an_approval_edited_after_the_bundle_is_refused(bundled, tmp_path, capsys):
    w = bundled.copy(tmp_path / "root")
    approval = json.loads((w / "APPROVAL.json").read_text())
    approval["floorsUsd"]["study"] = 50
    write_json(w / "APPROVAL.json", approval)
    rc = cli("validate-bundle", w / "BUNDLE.json", "--now", START_1)
    refused(capsys, rc, "approvalDigest", "at /approvalDigest:", str(w / "APPROVAL.json"))


def test_an_edited_bundle_does_not_reach_score(walked, tmp_path, capsys):
    w = walked.copy(tmp_path / "root")
    doc = json.loads((w / "BUNDLE.json").read_text())
    doc["floorsUsd"]["study"] = 1000
    write_json(w / "BUNDLE.json", doc)  # the score config then trusts the edited bundle
    rc, out = _score(w, tmp_path, w.score_config("EDITED.json"))
    refused(capsys, rc, "approvalMismatch", "at /floorsUsd/study:", outputs=[out])


# -- a session that can never end: an explicit, ledgered abort ------------------------------------


def test_a_session_whose_run_file_is_lost_is_aborted_and_the_collection_goes_on(
    bundled, tmp_path, capsys
):
    w = bundled.copy(tmp_path / "root")
    b, r = w / "BUNDLE.json", w.root
    assert cli("ledger-freeze", b, r, "--now", START_1) == 0
    assert cli("session-start", b, r, "run-1", "--run-dir", r / "runs/run-1", "--at", START_1,
               "--now", START_1) == 0  # fmt: skip
    (r / "runs/run-1/frozen.json").unlink()  # the run folder lost: the session cannot end
    capsys.readouterr()
    assert cli("session-end", b, r, "--run-dir", r / "runs/run-1", "--calls", 0, "--tokens", 0,
               "--usd", "0") == 2  # fmt: skip
    start_2 = ("session-start", b, r, "run-2", "--run-dir", r / "runs/run-2", "--at", START_2,
               "--now", START_2)  # fmt: skip
    refused(capsys, cli(*start_2), "sessionOpen", "session 'run-1'", outputs=[r / "runs/run-2"])
    # the abort: explicit, with its reason and the spend the session attested
    rc = main(["ledger-abort", str(w.ledger), "run-1", "--reason", "the run folder was lost",
               "--calls", "100", "--tokens", "9000", "--usd", "0.003",
               "--now", "2026-10-15T09:20:00Z"])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    assert cli(*start_2) == 0
    frozen = json.loads((r / "runs/run-2/frozen.json").read_text())
    assert frozen["priorRuns"] == []  # the aborted run has no evidence to chain
    assert cli("simulate", r / "prepared", "--scenario", "d17-finding", "--seed", 1,
               "--out", r / "runs/run-2/observations.jsonl") == 0  # fmt: skip
    assert cli("session-end", b, r, "--run-dir", r / "runs/run-2", "--calls", 2900,
               "--tokens", 2_000_000, "--usd", "0.085") == 0  # fmt: skip
    capsys.readouterr()
    assert cli("ledger-show", r) == 0
    shown = capsys.readouterr().out
    assert (
        "run-1 (" + SEED + "): started 2026-10-15T09:00:00.000Z; aborted 2026-10-15T09:20:00.000Z"
        " (the run folder was lost); 100 calls, 9000 tokens, USD 0.003"
    ) in shown
    assert "recorded spend: 3000 calls, 2009000 tokens, USD 0.088" in shown  # 0.003 + 0.085
    assert "3. session-abort " + SEED + " run-1 at 2026-10-15T09:20:00.000Z" in shown
    # scored from run-2 alone; the score lists the aborted run
    cfg = write_json(w / "ABORTED.json", {
        "schemaVersion": "prereg-d17mf-score-config/v1",
        "bundle": {"file": "BUNDLE.json", "trustedDigest": sha(w / "BUNDLE.json")},
        "runs": [{"dir": "runs/run-2", "trustedEvidenceDigest": w.evidence("run-2")}],
        "gold": {"file": "prepared/gold.json", "trustedDigest": sha(w / "prepared/gold.json")},
        "calibrationContext": {"file": "CONTEXT.json", "trustedDigest": sha(w / "CONTEXT.json")},
        "evaluatedAt": EVALUATED,
    })  # fmt: skip
    rc, out = _score(w, tmp_path, cfg)
    assert rc == 0, capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert [x["runId"] for x in doc["lineage"]["runs"]] == ["run-2"]
    assert doc["lineage"]["abortedRuns"] == [
        {"runId": "run-1", "startedAt": "2026-10-15T09:00:00.000Z",
         "abortedAt": "2026-10-15T09:20:00.000Z", "reason": "the run folder was lost",
         "usd": "0.003"},
    ]  # fmt: skip
    assert outputs.problems(doc, outputs.schema_for("reachability-probe", "lineage-score")) == []
    md = out.with_name("SCORE.md").read_text()
    assert "**Aborted sessions** (recorded in the ledger, not scored): run-1 (started" in md


# -- a seed committed to the project's repository ---------------------------------------------------


def test_a_seed_committed_to_the_repository_is_neither_bundled_nor_dispatched(
    bundled, tmp_path, capsys
):
    """The same bundle and prepared folder, in a project whose repository commits the seed: the
    collector's boundary refuses it (at every later step) and bundle refuses to bind it."""
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    project = copy_project(tmp_path / "project")
    (project / "SEEDS.md").write_text(f"collection seed: {SEED}\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
           "HOME": str(project), "PATH": "/usr/bin:/bin"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "seeds"]):
        subprocess.run(["git", "-C", str(project), *args], check=True, env=env)
    w = bundled.copy(tmp_path / "root")

    def run(*args) -> int:
        return main(["--project", str(project), STUDY, *map(str, args)])

    needle = f"seed {SEED!r} is public (it appears in the committed file SEEDS.md"
    refused(capsys, run("validate-bundle", w / "BUNDLE.json", "--now", START_1), "publicSeed",
            needle)  # fmt: skip
    refused(capsys, run("ledger-freeze", w / "BUNDLE.json", w.root, "--now", START_1),
            "publicSeed", needle, outputs=[w.ledger])  # fmt: skip
    out = tmp_path / "AGAIN.json"
    rc = run(*w.bundle_args(), "--out", out, "--now", BUNDLED_AT)
    refused(capsys, rc, "publicSeed", needle, outputs=[out])


def test_a_development_bundle_is_dispatched_only_inside_a_plan_run(bundled, tmp_path, capsys):
    from prereg.development import development_texts

    w = bundled.copy(tmp_path / "root")
    doc = json.loads((w / "BUNDLE.json").read_text())
    doc["development"] = "the seed is written in the plan p.json"
    b = write_json(w / "BUNDLE.json", doc)
    rc = cli("validate-bundle", b, "--now", START_1)
    refused(capsys, rc, "publicSeed", "at /development: a development bundle", "not dispatched")
    with development_texts([SEED], "p.json"):
        assert cli("validate-bundle", b, "--now", START_1) == 0


# -- the rest of the hand-off rules ---------------------------------------------------------------


def test_a_backdated_session_start_on_the_real_clock_is_refused(bundled, tmp_path, capsys):
    w = bundled.copy(tmp_path / "root")
    b, r = w / "BUNDLE.json", w.root
    assert cli("ledger-freeze", b, r, "--now", START_1) == 0
    capsys.readouterr()
    rc = cli(
        "session-start",
        b,
        r,
        "run-1",
        "--run-dir",
        r / "runs/run-1",
        "--at",
        "2026-10-20T00:00:00Z",
    )  # fmt: skip (no --now: the real clock)
    refused(capsys, rc, "sessionWindow", "before the clock", "a backdated start is for",
            outputs=[r / "runs/run-1/frozen.json"])  # fmt: skip
    with Ledger(w.ledger) as led:
        assert led.sessions() == []


def test_a_session_start_before_the_ledgers_last_event_is_refused(bundled, tmp_path, capsys):
    """Even on the development clock (--now), a session cannot start before the latest event
    the ledger records: here run-1 ended at 09:45, so run-2 at 09:30 would overlap it."""
    w = bundled.copy(tmp_path / "root")
    b, r = w / "BUNDLE.json", w.root
    assert cli("ledger-freeze", b, r, "--now", START_1) == 0
    assert cli("session-start", b, r, "run-1", "--run-dir", r / "runs/run-1", "--at", START_1,
               "--now", START_1) == 0  # fmt: skip
    assert cli("simulate", r / "prepared", "--scenario", "d17-finding", "--seed", 1,
               "--out", r / "runs/run-1/observations.jsonl") == 0  # fmt: skip
    assert cli("session-end", b, r, "--run-dir", r / "runs/run-1", "--calls", 0, "--tokens", 0,
               "--usd", "0", "--now", "2026-10-15T09:45:00Z") == 0  # fmt: skip
    capsys.readouterr()
    rc = cli("session-start", b, r, "run-2", "--run-dir", r / "runs/run-2", "--at", START_2,
             "--now", START_2)  # fmt: skip
    refused(capsys, rc, "sessionOpen", "is before the ledger's last event, the end of session"
            " run-1 at 2026-10-15T09:45:00.000Z", outputs=[r / "runs/run-2/frozen.json"])  # fmt: skip


def test_a_score_config_that_leaves_out_the_last_run_is_refused(walked, tmp_path, capsys):
    w = walked.copy(tmp_path / "root")
    cfg = json.loads(w.score_config().read_text())
    cfg["runs"] = cfg["runs"][:1]  # run-2, the last session, left out
    rc, out = _score(w, tmp_path, write_json(w / "ONE_RUN.json", cfg))
    refused(capsys, rc, "lineageDigest", "at /runs:", "left out: run-2", outputs=[out])


def test_a_malformed_evaluated_at_is_a_clock_refusal(walked, tmp_path, capsys):
    w = walked.copy(tmp_path / "root")
    for bad in ("2026-13-45T99:00:00Z", "yesterday", "2026-10-16T12:00:00"):
        cfg = w.score_config("BAD_CLOCK.json", evaluatedAt=bad)
        rc, out = _score(w, tmp_path, cfg)
        err = refused(capsys, rc, "scoringClock", "evaluatedAt", outputs=[out])
        assert CODES["bundleDigest"] not in err
        cfg.unlink()


def test_dry_run_exits_1_when_the_session_window_has_closed(capsys):
    assert cli("dry-run", SEED, "--now", "2026-10-20T00:00:00Z") == 0
    capsys.readouterr()
    assert cli("dry-run", SEED, "--now", "2026-11-01T10:00:00Z") == 1  # 30 min before expiry
    assert "may no longer start" in capsys.readouterr().out
    assert cli("dry-run", SEED, "--now", "2026-10-01T00:00:00Z") == 1  # not effective yet
    assert "may not start yet" in capsys.readouterr().out
