"""diagnose --vary / --target: each sizing claim's figure at each varied row count, against
oracles computed here (a Wilson half-width by its formula, a pooled-z power by summing
binomial probabilities) and against a separate diagnose of the spec registered at that size;
the smallest value meeting every claim; the same bytes for any --workers; a failing claim
turning a report's status red."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.diagnose.redesign import CONFIRM_KEY, confirmation_seed
from prereg.errors import UserError
from prereg.reports import Step, build_report, study_info
from tests.conftest import ROOT
from tests.diagnose.helpers import AP, EXAMPLE

VALUES = (50, 100, 150, 200)
ARGS = ("--simulations", "200", "--seed", "3")
Z975 = 1.959963984540054


def _compile(root: Path, spec_text: str | None = None) -> Path:
    shutil.copytree(EXAMPLE / "spec", root / "spec")
    if spec_text is not None:
        (root / "spec" / "studies" / f"{AP}.yaml").write_text(spec_text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _spec_at(rows: int) -> str:
    """answer-position's spec with every cell (and the half-width claim) registered at
    ``rows`` rows: 16 cells per split, so each split's total is 16 × rows."""
    text = (EXAMPLE / "spec" / "studies" / f"{AP}.yaml").read_text(encoding="utf-8")
    text, n = re.subn(r"(split: (?:tuning|test), rows: )\d+", rf"\g<1>{rows}", text)
    assert n == 2
    text, n = re.subn(r"(\{scope: (?:tuning|test), rows: )\d+", rf"\g<1>{16 * rows}", text)
    assert n == 2
    text, n = re.subn(r"(half_width: \{rows: )150", rf"\g<1>{rows}", text)
    assert n == 1
    return text


def _diagnose(project: Path, out: Path, *extra: str, study: str = AP) -> dict:
    assert (
        main(["--project", str(project), study, "diagnose", *ARGS, "--out", str(out), *extra]) == 0
    )
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ap(tmp_path_factory) -> Path:
    return _compile(tmp_path_factory.mktemp("ap"))


@pytest.fixture(scope="module")
def varied(ap, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("varied") / "DIAGNOSE.json"
    vary = "rows=" + ",".join(map(str, VALUES))
    return out, _diagnose(ap, out, "--vary", vary, "--target")


def wilson_half_width(p: float, n: int) -> float:
    """The Wilson score interval's half-width at k = p·n (Wilson 1927; Newcombe 1998, eq. 3):
    z·sqrt(p(1-p)/n + z²/(4n²)) / (1 + z²/n)."""
    z = Z975
    return z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)


def pooled_z_power(n: int, pa: float, pb: float, alpha: float = 0.05) -> float:
    """P(two-sided pooled z P value < alpha) with n rows per arm, by summing the binomial
    probabilities of every (ka, kb) whose pooled z statistic rejects."""
    from scipy.stats import binom, norm

    k = np.arange(n + 1)
    ka, kb = np.meshgrid(k, k, indexing="ij")
    pooled = (ka + kb) / (2 * n)
    se = np.sqrt(pooled * (1 - pooled) * (2 / n))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, (ka / n - kb / n) / se, 0.0)
    reject = 2 * norm.sf(np.abs(z)) < alpha
    prob = np.outer(binom.pmf(k, n, pa), binom.pmf(k, n, pb))
    return float(prob[reject].sum())


def _claims(point) -> dict:
    return {c["id"]: c for c in point["claims"]}


def test_each_value_matches_the_exact_oracles(varied):
    _, doc = varied
    red = doc["redesign"]
    assert red["parameter"] == "rows" and red["values"] == list(VALUES)
    for point, n in zip(red["points"], VALUES, strict=True):
        got = _claims(point)
        # 32 cells of n rows (16 tuning, 16 test)
        assert point["rows"] == 32 * n
        assert got["cell-half-width"]["figure"] == pytest.approx(
            wilson_half_width(0.75, n), abs=1e-6
        )
        assert got["cell-half-width"]["holds"] is (wilson_half_width(0.75, n) <= 0.07)
        # a-vs-d-power: base 0.70, difference 0.15, one cell (n rows) per arm
        power = pooled_z_power(n, 0.85, 0.70)
        assert got["a-vs-d-power"]["figure"] == pytest.approx(power, abs=1e-6)
        assert got["a-vs-d-power"]["holds"] is (power >= 0.8)
        assert point["allHold"] is all(c["holds"] for c in point["claims"])
        for c in point["claims"]:
            if c["method"] == "simulation":  # marked when 2 MC SE reach the claimed value
                near = abs(c["figure"] - c["value"]) <= 2 * c["mcSe"]
                assert c["withinMonteCarloError"] is near
            else:
                assert "withinMonteCarloError" not in c


def test_a_value_equals_a_separate_diagnose_registered_at_that_size(varied, tmp_path):
    _, doc = varied
    point = next(p for p in doc["redesign"]["points"] if p["value"] == 100)
    project = _compile(tmp_path / "p100", _spec_at(100))
    alone = _diagnose(project, tmp_path / "alone.json")
    assert alone["rows"] == point["rows"]
    # every claim, simulated ones included (same seed, same rows: the same draws)
    want = {c["id"]: (c["figure"], c.get("mcSe"), c["holds"]) for c in alone["claims"]}
    got = {c["id"]: (c["figure"], c.get("mcSe"), c["holds"]) for c in point["claims"]}
    assert got == want
    assert [c["decision"] for c in point["conditions"]] == [
        c.get("decision") or [] for c in alone["conditions"]
    ]


def test_target_is_the_smallest_value_meeting_every_claim_confirmed_under_a_fresh_seed(varied):
    _, doc = varied
    red = doc["redesign"]
    # the half-width and power claims alone rule out 50 and 100 (oracles above)
    exact_ok = [
        n
        for n in VALUES
        if wilson_half_width(0.75, n) <= 0.07 and pooled_z_power(n, 0.85, 0.7) >= 0.8
    ]
    assert exact_ok == [150, 200]
    meeting = [p["value"] for p in red["points"] if p["allHold"]]
    t = red["target"]
    assert t["value"] == min(meeting) and t["value"] >= min(exact_ok)
    c = t["confirmation"]
    assert c["value"] == t["value"] and c["seed"] != doc["seed"]
    # the documented derivation, from the seed alone
    ss = np.random.SeedSequence(3, spawn_key=(CONFIRM_KEY,))
    assert c["seed"] == int(ss.generate_state(1, dtype=np.uint32)[0]) == confirmation_seed(3)
    assert t["confirmed"] is c["allHold"]
    # exact claims do not depend on the seed
    at = _claims(next(p for p in red["points"] if p["value"] == t["value"]))
    for cid in ("cell-half-width", "a-vs-d-power"):
        assert _claims(c)[cid]["figure"] == at[cid]["figure"]


def test_the_markdown_and_console_say_it(varied, capsys):
    out, doc = varied
    md = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "## Redesign: `rows`" in md
    assert f"Target: rows={doc['redesign']['target']['value']}, the smallest listed value" in md


def test_same_bytes_for_one_and_two_workers(ap, varied, tmp_path):
    out, _ = varied
    two = tmp_path / "two.json"
    _diagnose(ap, two, "--vary", "rows=" + ",".join(map(str, VALUES)), "--target", "--workers", "2")
    assert two.read_bytes() == out.read_bytes()
    assert two.with_suffix(".md").read_bytes() == out.with_suffix(".md").read_bytes()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--vary", "alpha=1.5"), "alpha 1.5 is not strictly between 0 and 1"),
        (("--vary", "margin:nope=0.1"), "no registered contrast with a test or analysis"),
        (("--vary", "seed=1,2"), "'seed' cannot be varied: rows (every cell)"),
        (("--vary", "rows=0,10"), "0 rows: a cell needs at least one row"),
        (("--vary", "rows=10,x"), "'x' is not a whole number of rows"),
        (("--vary", "rows=10,10"), "10 is listed twice"),
        (("--vary", "rows:nope=10"), "no registered cell 'nope'"),
        # int() reads these; a size on a command line is ASCII digits
        (("--vary", "rows=\u0665"), "'\u0665' is not a whole number of rows"),
        (("--vary", "rows=1_000"), "'1_000' is not a whole number of rows"),
        (("--vary", "rows=" + "9" * 30), "999999999999999999999999… is too large"),
        # 32 cells of 10^11 rows: petabytes (this ran for minutes and out of memory)
        (("--vary", "rows=50,99999999999"), "at 99,999,999,999 the study has 3,199,999,999,968"),
        (("--vary", "rows:tst-a-pa-plain=99999999999"), "the study has 100,000,002,409 rows"),
        (("--target",), "--target: needs --vary"),
    ],
)
def test_refusals_name_the_flag_and_write_nothing(ap, tmp_path, capsys, extra, message):
    out = tmp_path / "D.json"
    code = main(["--project", str(ap), AP, "diagnose", *ARGS, "--out", str(out), *extra])
    assert code != 0
    assert message in capsys.readouterr().err
    assert not out.exists() and not out.with_suffix(".md").exists()


@pytest.mark.parametrize(
    ("text", "most"),
    [
        # half of 1 GiB is 2^29 B: 524,288 rows of ROW_BYTES (1,024); 32 cells of 16,384 rows
        ("rows", 16_384),
        # one cell: the other 31 keep 2560 - 150 = 2,410 rows; 524,288 - 2,410 = 521,878
        ("rows:tst-a-pa-plain", 521_878),
    ],
)
def test_a_varied_size_beyond_memory_is_refused_at_the_most_that_fits(text, most, monkeypatch):
    from prereg.compiler.expand import with_expanded_cells
    from prereg.compiler.load import load_yaml
    from prereg.diagnose import command, redesign

    config = with_expanded_cells(load_yaml(EXAMPLE / "spec" / "studies" / f"{AP}.yaml").data)
    monkeypatch.setattr(command, "available_memory", lambda: 2**30)
    assert redesign.parse_vary(f"{text}={most}", config).values == (most,)
    with pytest.raises(UserError, match=f"at most {most:,} here"):
        redesign.parse_vary(f"{text}={most + 1}", config)


def test_one_cell_varied(ap, tmp_path):
    cell = "tst-a-pa-plain"
    doc = _diagnose(
        ap, tmp_path / "D.json", "--vary", f"rows:{cell}=50,300", "--scenario", "no-bias"
    )
    p50, p300 = doc["redesign"]["points"]
    # 2400 test rows + 160 tuning rows, one cell of 150 replaced
    assert (p50["rows"], p300["rows"]) == (2560 - 150 + 50, 2560 - 150 + 300)
    # arm a of a-vs-d-model-a-plain is that cell: n_a = 50 or 300 against n_b = 150
    assert _claims(p300)["a-vs-d-power"]["figure"] > _claims(p50)["a-vs-d-power"]["figure"]
    # the half-width claim states 150 rows of no named cell: unchanged
    assert _claims(p50)["cell-half-width"]["figure"] == _claims(p300)["cell-half-width"]["figure"]


# -- a small factorial study: the init starter ------------------------------------------------


@pytest.fixture(scope="module")
def starter(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("starter")
    here = Path.cwd()
    os.chdir(project)
    try:
        assert main(["init", "my-study"]) == 0
        assert main(["compile"]) == 0
    finally:
        os.chdir(here)
    return project


def starter_power(n: int) -> float:
    """P(h1 supported) of the starter at n rows a cell under `effect` (0.80 against 0.70 per
    system, two systems independent): Holm over two P values supports h1 when the smaller is
    below 0.025 and the larger below 0.05, so with A = P(p < 0.025), B = P(p < 0.05) of one
    system, P = A·B + (B − A)·A."""
    a, b = pooled_z_power(n, 0.8, 0.7, 0.025), pooled_z_power(n, 0.8, 0.7, 0.05)
    return a * b + (b - a) * a


def test_starter_says_its_power_claim_fails_and_its_redesign_meets_it(starter, tmp_path, capsys):
    capsys.readouterr()
    doc = _diagnose(
        starter, tmp_path / "D.json", "--vary", "rows=50,100,400", "--target", study="my-study"
    )
    out = capsys.readouterr().out
    # as registered (100 rows a cell), the power claim fails, as the starter's comment says
    assert [c["id"] for c in doc["claims"] if not c["holds"]] == ["h1-power"]
    assert "sizing claims FAIL: h1-power (of 3)" in out
    for point, n in zip(doc["redesign"]["points"], (50, 100, 400), strict=True):
        hw = _claims(point)["cell-half-width"]
        assert hw["figure"] == pytest.approx(wilson_half_width(0.75, n), abs=1e-6)
        assert hw["holds"] is (wilson_half_width(0.75, n) <= 0.09)
        power = _claims(point)["h1-power"]
        assert abs(power["figure"] - starter_power(n)) <= 3 * power["mcSe"], (n, power)
    # Wilson at 0.75: 0.1174 (50 rows) exceeds 0.09; the exact power is 0.127 at 100 rows and
    # 0.818 at 400: 400 is the smallest listed size meeting every claim
    assert starter_power(100) < 0.8 < starter_power(400)
    assert doc["redesign"]["target"]["value"] == 400
    assert "target: rows=400, the smallest listed value meeting every claim" in out


# -- a failing claim in the report's status ---------------------------------------------------


def _run(project: Path, *args: str) -> Step:
    argv = ["--project", str(project), AP, *args]
    code = main(argv)
    return Step(args[0], args[0], list(args), list(args), code, code == 0)


def _report_of(project: Path, out: Path, diagnose: bool = True):
    out.mkdir()
    steps = [
        _run(project, "items", "--out", str(out / "items.jsonl")),
        _run(project, "simulate", "--items", str(out / "items.jsonl"), "--scenario",
             "position-bias", "--seed", "1", "--out", str(out / "obs.jsonl")),
        _run(project, "score", "--items", str(out / "items.jsonl"), "--observations",
             str(out / "obs.jsonl"), "--out", str(out / "SCORE.json")),
        _run(project, "diagnose", "--simulations", "40", "--seed", "2", "--scenario", "no-bias",
             "--out", str(out / "DIAGNOSE.json")),
    ]  # fmt: skip
    if not diagnose:
        steps.pop()
    assert all(s.ok for s in steps)
    return build_report(study_info(Project(project), AP), out, steps)


def test_claims_no_step_diagnosed_are_said_without_turning_the_status_red(ap, tmp_path):
    report = _report_of(ap, tmp_path / "undiagnosed", diagnose=False)
    from prereg.compiler.load import load_yaml

    spec = load_yaml(EXAMPLE / "spec" / "studies" / f"{AP}.yaml").data
    assert len(spec["claims"]) == 4
    assert report.ok is True
    assert report.status == "every step ran; gates held; 4 sizing claims not diagnosed"


def test_a_failing_claim_turns_the_status_red(ap, tmp_path):
    held = _report_of(ap, tmp_path / "held")
    assert held.ok is True and held.status.startswith("every step ran")
    # the same study claiming a 150-row cell's half-width is at most 0.05 (it is 0.0687)
    text = (EXAMPLE / "spec" / "studies" / f"{AP}.yaml").read_text(encoding="utf-8")
    strict = text.replace("    op: le\n    value: 0.07\n", "    op: le\n    value: 0.05\n", 1)
    assert strict != text
    project = _compile(tmp_path / "strict", strict)
    failed = _report_of(project, tmp_path / "failed")
    assert failed.ok is False
    assert failed.status == "needs attention: sizing claim FAILS: cell-half-width"


def test_d17_report_names_its_failing_claims(tmp_path):
    """d17 as registered: three claims fail (exact figures, README "Diagnosing the rules"):
    the key contrast's power 0.785 < 0.80, H1's power at 0.13, the replication rule's."""
    out = tmp_path / "DIAGNOSE.json"
    args = ["diagnose", "--simulations", "50", "--seed", "1", "--out", str(out)]
    code = main(["--project", str(ROOT), "d17-multifact", *args])
    assert code == 0
    failing = [c["id"] for c in json.loads(out.read_text())["claims"] if not c["holds"]]
    assert {"key-contrast-power", "replication-power-at-040"} <= set(failing)
    step = Step("diagnose", "diagnose", args, args, 0, True)
    report = build_report(study_info(Project(ROOT), "d17-multifact"), tmp_path, [step])
    assert report.ok is False
    assert report.status == "no outputs; sizing claims FAIL: " + ", ".join(failing)


def test_the_document_matches_the_shipped_schema(varied):
    import jsonschema

    from prereg.diagnose.command import schema

    _, doc = varied
    jsonschema.Draft202012Validator(schema()).validate(doc)
    broken = json.loads(json.dumps(doc))
    broken["redesign"]["points"][0]["claims"][0]["holds"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema()).validate(broken)


def test_a_registered_study_beyond_memory_is_refused_before_any_run():
    from prereg.compiler.expand import with_expanded_cells
    from prereg.compiler.load import load_yaml
    from prereg.diagnose import redesign

    config = with_expanded_cells(load_yaml(EXAMPLE / "spec" / "studies" / f"{AP}.yaml").data)
    # 2,560 registered rows of 1,024 B: 2,621,440 B must be at most half the memory
    redesign.refuse_registered_beyond_memory(config, memory=2 * 2_621_440)
    with pytest.raises(UserError, match="the study registers 2,560 rows"):
        redesign.refuse_registered_beyond_memory(config, memory=2 * 2_621_440 - 2)
