"""The command handlers: dry-run, prepare, dev-review-material, audit-sweep."""

from __future__ import annotations

import argparse
import json
import os
import stat

import pytest
from d17_helpers import DEMO, SPEC_DIGEST, config, ctx, golden_lines, spec_config, summary

from prereg.digest import digest, sha256_hex
from prereg.engines.reachability import COMMANDS
from prereg.engines.reachability import commands as cmd
from prereg.engines.reachability.oracle import TextOracle
from prereg.engines.reachability.seeds import classify_seed
from prereg.errors import UserError

NS = argparse.Namespace
PRIVATE = "d17mf-" + "7c2e9a41f0b36d85e1a4c09b27"  # 26 hex characters, 32 in all


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# -- dry-run ------------------------------------------------------------------------------------


def test_dry_run_public_seed_plan_and_window(capsys):
    assert COMMANDS["dry_run"](ctx(), NS(seed=DEMO, now="2026-11-01T09:32:34.263Z")) == 0
    out = capsys.readouterr().out
    assert (
        "seed 'd17mf-public-demo': syntax ok; public: 'd17mf-public-demo' is a listed committed seed"
        in out
    )
    assert "  test         pool-c_h3_missing-absence_equalized           220" in out
    assert "totals: 78 cells; tuning 78, test 5,700; all 5,778 rows" in out
    assert "attempts = 5,778 rows × (1 + 1 retries) = 11,556" in out
    assert "reserved tokens = 11,556 attempts × 4,000 tokens per request = 46,224,000" in out
    assert (
        "reserved USD = 46,224,000 / 1,000,000 × 0.1 (reservation floor per 1M tokens) = 4.6224"
        in out
    )
    assert "calls: budget 16,000, worst case 11,556, headroom 4,444 (ok)" in out
    assert (
        "tokens: budget 30,000,000, worst case 46,224,000, headroom -16,224,000 (EXCEEDED)" in out
    )
    assert "USD: budget 5, worst case 4.6224, headroom 0.3776 (ok)" in out
    assert "cap USD 8 − attested study floor 0.892652 − reserved 4.6224 = 2.484948 (ok)" in out
    assert "expires 2026-11-01T10:02:34.263Z" in out
    assert "latest start of a 30-minute session: 2026-11-01T09:32:34.263Z" in out
    assert "a 30-minute session may still start" in out


def test_dry_run_window_closes_one_millisecond_later(capsys):
    COMMANDS["dry_run"](ctx(), NS(seed=PRIVATE, now="2026-11-01T11:32:34.264+02:00"))
    out = capsys.readouterr().out
    assert "a 30-minute session may no longer start" in out
    assert f"seed {PRIVATE!r}: syntax ok; private:" in out


@pytest.mark.parametrize(
    "seed, public, reason",
    [
        ("d17mf-smoke", True, "listed committed seed"),
        ("review-0123456789abcdef0123456789", True, "public prefix 'review-'"),
        ("d17mf-sweep-0123456789abcdef01234567"[:32], True, "public prefix 'd17mf-sweep'"),
        ("d17mf-7f3a9c2e1b", True, "listed committed seed"),
        ("d17mf-9f3b0e7a2c58d14e6a0b7c3f", False, "run of 24 lowercase hex"),
        ("d17mf-9f3b0e7a2c58d14e6a0b7c3", True, "is 23, fewer than 24"),
        ("x-9f3b0e7a2c58d14e6a0b7c3f", False, "run of 24 lowercase hex"),
        ("9f3b0e7a2c58d14e6a0b7c3f51d2e8a4", False, "run of 32"),
        # the entropy rule: typed, not drawn
        ("d17mf-0123456789abcdef01234567", True, "counts 24 digits in a row, more than 7"),
        ("d17mf-fedcba9876543210fedcba98", True, "counts 24 digits in a row"),
        ("d17mf-" + "a" * 26, True, "uses 1 distinct digits, fewer than 8"),
        ("d17mf-" + "0f1e" * 6 + "2d", True, "uses 6 distinct digits"),
        ("1", True, "is 1, fewer than 24"),
        ("d17mf-3a9c0e1234567b8d2f4c6a1f09", False, "run of 26"),  # a counting run of 7
    ],
)
def test_seed_policy(seed, public, reason):
    sc = classify_seed(seed, config()["seedPolicy"])
    assert sc.public is public
    assert reason in sc.reason


def test_the_entropy_rule_reads_its_registered_numbers():
    """The two numbers of the entropy rule are the spec's (constant seed-syntax), not the
    engine's: at the registered 8 and 7 the boundary seeds are public; move either number by
    one in the spec's configuration and the seed it decides becomes private."""
    policy = config()["seedPolicy"]
    assert (policy["minDistinctHex"], policy["maxCountingRun"]) == (8, 7)
    # 26 hex: a counting run 01234567 (8 digits), then 18 digits with no step of 1 or 15
    counting = "d17mf-01234567d9e3c0a7d5b1f8e2c6"
    # 26 hex of the 7 even digits 0, 2, 4, 6, 8, a, c: steps are even, so no counting run
    seven = "d17mf-0a4c82604ca8260a48c2064ac8"
    assert "counts 8 digits in a row, more than 7" in classify_seed(counting, policy).reason
    assert "uses 7 distinct digits, fewer than 8" in classify_seed(seven, policy).reason
    assert not classify_seed(counting, {**policy, "maxCountingRun": 8}).public
    assert classify_seed(seven, {**policy, "maxCountingRun": 8}).public
    assert not classify_seed(seven, {**policy, "minDistinctHex": 7}).public
    assert classify_seed(counting, {**policy, "minDistinctHex": 7}).public


@pytest.mark.parametrize("seed", ["", "-abc", "Abc", "a" * 33, "a_b", "a b", "abc\n"])
def test_invalid_seeds_are_refused(seed):
    with pytest.raises(UserError) as exc:
        COMMANDS["dry_run"](ctx(), NS(seed=seed, now=None))
    assert exc.value.exit_code == 2
    assert "1–32 characters of [a-z0-9-], the first alphanumeric" in exc.value.message


def test_dry_run_refuses_a_time_without_zone():
    with pytest.raises(UserError, match="has no time zone"):
        COMMANDS["dry_run"](ctx(), NS(seed=DEMO, now="2026-11-01T09:00:00"))


# -- prepare ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("d17")
    outdir = root / "runs" / "prepared"  # created by prepare
    assert COMMANDS["prepare"](ctx(), NS(seed=DEMO, outdir=str(outdir))) == 0
    return outdir


def test_prepare_writes_the_five_files(prepared):
    s = summary()
    assert sorted(os.listdir(prepared)) == sorted(cmd.OUTPUTS)
    assert mode(prepared / "gold.json") == 0o600
    for n in ("corpus.jsonl", "audit.json", "analysis.json", "preregistration.json"):
        assert mode(prepared / n) == 0o644
    corpus = (prepared / "corpus.jsonl").read_bytes()
    lines = corpus.decode().splitlines(keepends=True)
    for mine, gl in zip(lines, golden_lines(), strict=True):
        assert gl.startswith(mine[:-2] + ',"gold":')
    reg = json.loads((prepared / "preregistration.json").read_text())
    assert reg["specDigest"] == SPEC_DIGEST and reg["seed"] == DEMO
    assert reg["generatorId"] == "d17-multifact/v1" and reg["rows"] == 5778
    assert reg["corpusDigest"] == "sha256:" + sha256_hex(corpus)
    assert reg["goldDigest"] == s["goldDigest"]
    assert reg["auditDigest"] == s["auditDigest"]
    assert reg["dispatchOrderDigest"] == s["dispatchOrderDigest"]
    gold = json.loads((prepared / "gold.json").read_text())
    assert gold.pop("specDigest") == SPEC_DIGEST
    assert digest(gold) == s["goldDigest"] and gold["schemaVersion"] == "decision-d17mf-gold/v1"
    audit = json.loads((prepared / "audit.json").read_text())
    assert audit.pop("specDigest") == SPEC_DIGEST
    assert audit == s["audit"] and digest(audit) == s["auditDigest"]
    analysis = json.loads((prepared / "analysis.json").read_text())
    assert analysis["specDigest"] == SPEC_DIGEST
    assert analysis["dispatchOrderDigest"] == s["dispatchOrderDigest"]
    assert analysis["auditDigest"] == s["auditDigest"]
    cells = {f"{c['split']}:{c['cell']}": c for c in analysis["cells"]}
    assert {k: c["rows"] for k, c in cells.items()} == s["rowsPerCell"]
    assert {k: c["labels"] for k, c in cells.items()} == s["labelsPerCell"]


def test_prepare_refuses_an_existing_file_before_any_work(tmp_path, monkeypatch):
    (tmp_path / "audit.json").write_text("{}")

    def boom(*a, **k):
        raise AssertionError("prepared although an output exists")

    monkeypatch.setattr(cmd, "prepare_memory", boom)
    with pytest.raises(UserError, match="audit.json: output file already exists"):
        COMMANDS["prepare"](ctx(), NS(seed=DEMO, outdir=str(tmp_path)))
    assert os.listdir(tmp_path) == ["audit.json"]


def test_prepare_refuses_an_invalid_seed(tmp_path):
    with pytest.raises(UserError, match="seed 'Bad' is invalid"):
        COMMANDS["prepare"](ctx(), NS(seed="Bad", outdir=str(tmp_path / "out")))
    assert not (tmp_path / "out").exists()


def test_prepare_refuses_an_oracle_disagreement(tmp_path, monkeypatch):
    real = TextOracle.label
    first = json.loads(golden_lines()[0])  # row 0: development rows come first in both orders
    target = first["input"]["payload"]

    def label(self, payload):
        got = real(self, payload)
        return ("no" if got == "yes" else "yes") if payload == target else got

    monkeypatch.setattr(TextOracle, "label", label)
    with pytest.raises(UserError) as exc:
        COMMANDS["prepare"](ctx(), NS(seed=DEMO, outdir=str(tmp_path / "out"), workers=1))
    assert "text oracle disagrees with gold on 1 row(s)" in exc.value.message
    assert first["id"] == sha256_hex(b"D17MF:record-id:v1:d17mf-public-demo:0")
    assert exc.value.problems == [
        f"row {first['id']} (index 0, cell pool-a_h1_yes_equalized): text oracle says 'no', gold says 'yes'"
    ]
    assert not (tmp_path / "out").exists()


def test_oracle_disagreements_from_worker_processes_are_merged(tmp_path, monkeypatch):
    real = TextOracle.label
    seen = []

    def label(self, payload):  # each worker process flips the first row of each of its units
        got = real(self, payload)
        seen.append(payload)
        return ("no" if got == "yes" else "yes") if len(seen) == 1 else got

    monkeypatch.setattr(TextOracle, "label", label)
    with pytest.raises(UserError) as exc:
        COMMANDS["prepare"](ctx(), NS(seed=DEMO, outdir=str(tmp_path / "out"), workers=2))
    assert "text oracle disagrees with gold on" in exc.value.message
    indexes = [int(p.split("(index ")[1].split(",")[0]) for p in exc.value.problems]
    assert indexes == sorted(indexes) and 1 <= len(indexes) <= 2
    assert not (tmp_path / "out").exists()


def test_prepare_refuses_a_failing_audit_and_prints_every_group(tmp_path):
    cfg = spec_config()
    cfg["constants"]["audit"]["limit"] = 0.55  # the demo's equalizedMax is 0.5518
    with pytest.raises(UserError) as exc:
        COMMANDS["prepare"](ctx(cfg), NS(seed=DEMO, outdir=str(tmp_path / "out")))
    msg = exc.value.message
    assert (
        "shortcut audit failed for seed 'd17mf-public-demo': equalizedMax 0.5518 exceeds the limit 0.55"
        in msg
    )
    probs = exc.value.problems
    assert len(probs) == 9
    assert (
        "equalized:pool-a:h3: n 1030, yes 110: scalarThreshold 0.5518, tokenThreshold 0.4877,"
        " depth2Tree 0.4707, logistic 0.4872; max 0.5518 FAILS (> 0.55)" in probs
    )
    assert any(
        p.startswith("equalized:pool-c:h1:") and p.endswith("max 0.5156 passes") for p in probs
    )
    assert any(
        p.startswith("d17-faithful:pool-a:h1:") and p.endswith("reported only") for p in probs
    )
    assert not (tmp_path / "out").exists()


# -- dev-review-material ------------------------------------------------------------------------


def test_dev_review_material_of_a_public_seed_is_refused(prepared):
    out = prepared.parent / "review-public" / "dev.json"
    out.parent.mkdir()
    args = NS(outdir=str(prepared), out=str(out), artifact_root=None)
    with pytest.raises(UserError, match=r"^public-demo-seed: .*seed 'd17mf-public-demo' is public"):
        COMMANDS["dev_review_material"](ctx(), args)
    assert not out.exists()


def test_dev_review_material(prepared, capsys, monkeypatch):
    from prereg.engines.reachability.seeds import SeedClass

    # the material's content, checked on the golden (public) seed as if it were private
    monkeypatch.setattr(
        cmd, "classify_seed", lambda seed, policy, *a, **k: SeedClass(False, "test")
    )
    out = prepared.parent / "review" / "dev.json"
    out.parent.mkdir()
    args = NS(outdir=str(prepared), out=str(out), artifact_root=None)
    assert COMMANDS["dev_review_material"](ctx(), args) == 0
    assert mode(out) == 0o600
    m = json.loads(out.read_text())
    items = m["items"]
    assert len(items) == 40
    assert all(
        list(it) == ["blind", "unblind"] and list(it["blind"]) == ["payload"] for it in items
    )
    outcomes = [it["unblind"]["factors"]["outcome"] for it in items]
    assert outcomes == (
        ["yes"] * 8 + ["relay-off"] * 7 + ["missing-contrastive"] * 7 + ["missing-negation"] * 6
        + ["missing-unrelated"] * 6 + ["missing-absence"] * 6
    )  # fmt: skip
    cells = [it["unblind"]["cell"] for it in items]
    assert cells[:8] == [
        "pool-a_h1_yes_d17-faithful", "pool-a_h1_yes_equalized", "pool-a_h3_yes_equalized",
        "pool-b_h1_yes_d17-faithful", "pool-b_h1_yes_equalized", "pool-b_h3_yes_equalized",
        "pool-c_h1_yes_d17-faithful", "pool-c_h1_yes_equalized",
    ]  # fmt: skip
    assert cells[8:15] == [
        "pool-a_h1_relay-off_equalized", "pool-a_h3_relay-off_equalized",
        "pool-b_h1_relay-off_equalized", "pool-b_h3_relay-off_equalized",
        "pool-c_h1_relay-off_equalized", "pool-c_h3_relay-off_equalized",
        "pool-a_h1_relay-off_equalized",
    ]  # fmt: skip
    assert cells[34:] == ["pool-a_h3_missing-absence_equalized", "pool-b_h3_missing-absence_equalized",
                          "pool-c_h3_missing-absence_equalized"] * 2  # fmt: skip
    # the second round takes each cell's second row
    assert items[8]["unblind"]["rowId"] != items[14]["unblind"]["rowId"]
    golden = {json.loads(g)["id"]: json.loads(g) for g in golden_lines()}
    for it in items:
        u = it["unblind"]
        g = golden[u["rowId"]]
        assert g["split"] == "tuning" and g["input"]["payload"] == it["blind"]["payload"]
        assert u["goldLabel"] == u["textOracleLabel"] == g["gold"]
        assert u["latentWorld"] == g["world"] and u["cell"] == g["slice"]
    assert m["specDigest"] == SPEC_DIGEST and m["seed"] == DEMO


def test_dev_review_material_refusals(prepared, tmp_path, monkeypatch):
    from prereg.engines.reachability.seeds import SeedClass

    monkeypatch.setattr(
        cmd, "classify_seed", lambda seed, policy, *a, **k: SeedClass(False, "test")
    )
    outside = tmp_path / "dev.json"
    with pytest.raises(UserError, match="must lie under the artifact root"):
        COMMANDS["dev_review_material"](
            ctx(), NS(outdir=str(prepared), out=str(outside), artifact_root=None)
        )
    assert not outside.exists()
    # an explicit artifact root that does hold it
    COMMANDS["dev_review_material"](
        ctx(), NS(outdir=str(prepared), out=str(outside), artifact_root=str(tmp_path))
    )
    assert mode(outside) == 0o600
    with pytest.raises(UserError, match="output file already exists"):
        COMMANDS["dev_review_material"](
            ctx(), NS(outdir=str(prepared), out=str(outside), artifact_root=str(tmp_path))
        )
    other = tmp_path / "other.json"
    with pytest.raises(UserError, match="prepared under spec"):
        COMMANDS["dev_review_material"](
            ctx(spec_digest="sha256:" + "cd" * 32),
            NS(outdir=str(prepared), out=str(other), artifact_root=str(tmp_path)),
        )
    assert not other.exists()


# -- audit-sweep --------------------------------------------------------------------------------


def test_audit_sweep_two_seeds(capsys):
    rc = COMMANDS["audit_sweep"](
        ctx(), NS(prefix="d17mf-sweep-", count=2, positive_control=False, workers=1)
    )
    out = capsys.readouterr().out
    assert rc == 0
    values = []
    for k in range(2):
        line = next(ln for ln in out.splitlines() if ln.startswith(f"  d17mf-sweep-{k}: "))
        v = float(line.split("equalizedMax ")[1].split(" ")[0])
        assert line.endswith("(pass)")
        values.append(v)
    # the reference sweep: every seed passes, between 0.526 and 0.5994
    assert all(0.526 <= v <= 0.5994 for v in values)
    assert f"max {max(values)}" in out and f"min {min(values)}" in out
    assert "passing: 2 of 2 seed(s)" in out


def test_audit_sweep_refuses_a_bad_count_or_prefix():
    with pytest.raises(UserError, match="COUNT"):
        COMMANDS["audit_sweep"](ctx(), NS(prefix="d17mf-sweep-", count="x", positive_control=False))
    with pytest.raises(UserError, match="is invalid"):
        COMMANDS["audit_sweep"](ctx(), NS(prefix="Sweep", count=1, positive_control=False))


def test_audit_sweep_positive_control_shows_the_audit_failing(capsys):
    rc = COMMANDS["audit_sweep"](
        ctx(), NS(prefix="d17mf-sweep-", count=1, positive_control=True, workers=1)
    )
    out = capsys.readouterr().out
    assert rc == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("  d17mf-sweep-0: "))
    assert line.endswith("(audit fails, as it must)")
    assert float(line.split("chain-first order ")[1].split(" ")[0]) > 0.6
    assert "positive control: the audit fails on 1 of 1 seed(s)" in out
