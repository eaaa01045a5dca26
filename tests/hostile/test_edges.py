"""Values at the edges: integers JSON does not carry exactly, far dates, many decimals.

Each was a traceback (rfc8785's IntegerDomainError, OverflowError, decimal.InvalidOperation) or
an output holding a value no digest can be taken over; each is now refused where it is given
(the option, or the file and its JSON path) with exit 2 and nothing written, or, for the
number of decimals, simply done.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.errors import UserError
from prereg.records import read_json_file
from prereg.stats.rounding import round_half_up_shortest
from tests.conftest import ROOT

D17 = ["--project", str(ROOT), "d17-multifact"]
JEV = ROOT / "examples" / "jev"
HUGE = "9" * 20  # beyond 2^53 - 1 (and 2^64)
RULE = "is outside ±(2^53 − 1), which JSON does not carry exactly"


def _run(args, capsys) -> tuple[int, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse refuses an option value
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "value, message",
    [
        ("18446744073709551616", f"integer 18446744073709551616 {RULE}"),
        ("1" * 400, f"integer {'1' * 24}… {RULE}"),
        (" 5", "invalid int value: ' 5'"),
        ("٣", "invalid int value: '٣'"),
        ("1_000", "invalid int value: '1_000'"),
    ],
)
def test_an_integer_option_is_ascii_digits_within_the_json_range(tmp_path, capsys, value, message):
    out = tmp_path / "plan.json"
    code, err = _run(
        [
            "--project",
            ROOT,
            "s3-verifier-freeze",
            "power-plan",
            ROOT / "examples" / "s3" / "calibration-sample.jsonl",
            "--eligible-task-count",
            "500",
            "--eligible-repository-count",
            value,
            "--eligible-pass-items",
            "210",
            "--eligible-fail-items",
            "430",
            "--out",
            out,
        ],
        capsys,
    )
    assert code == 2 and "argument --eligible-repository-count" in err and message in err, err
    assert "Traceback" not in err and not out.exists()


def test_an_integer_list_option_holds_json_integers(tmp_path, capsys):
    out = tmp_path / "diagnostic.json"
    args = ["--project", ROOT, "jev-multicorrect", "diagnostic", "--out", out, "--seeds"]
    code, err = _run([*args, f"42,{2**64}"], capsys)
    assert code == 2 and f"argument --seeds: integer {2**64} {RULE}" in err, err
    for bad in ("42,x", "42,,43", "42,", ""):
        code, err = _run([*args, bad], capsys)
        assert code == 2 and f"not a comma-separated list of integers: {bad!r}" in err, err
    assert not out.exists()


def test_a_json_document_with_a_huge_integer_is_refused_at_its_path(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(f'{{"a": [1, {{"b": {HUGE}}}], "c": -{HUGE}}}\n')
    with pytest.raises(UserError) as e:
        read_json_file(path)
    assert str(e.value) == f"{path}: at /a/1/b: integer {HUGE} {RULE}"
    path.write_text(f'{{"a": {2**53 - 1}, "b": -{2**53 - 1}}}\n')
    assert read_json_file(path) == {"a": 2**53 - 1, "b": -(2**53 - 1)}


def test_rounding_to_more_decimals_than_the_default_precision():
    assert round_half_up_shortest(0.1234, 100) == 0.1234
    assert round_half_up_shortest(1.2345e-5, 30) == 1.2345e-5
    assert round_half_up_shortest(0.175, 2) == 0.18
    assert round_half_up_shortest(5e-324, 400) == 5e-324


def test_jev_score_rounds_to_100_decimals(tmp_path, capsys):
    out = tmp_path / "REPORT.json"
    args = ["--project", ROOT, "jev-multicorrect", "score", "--lists", JEV / "lists.jsonl"]
    args += ["--labels", JEV / "labels.jsonl", "--predictions", JEV / "predictions.jsonl"]
    args += ["--binary-outputs", JEV / "binary.jsonl", "--out", out, "--rounding-decimals"]
    code, err = _run([*args, "100"], capsys)
    assert code == 0, err
    assert "Traceback" not in err and out.exists()


# -- a d17 prepared folder --------------------------------------------------------------------


@pytest.fixture(scope="module")
def d17(tmp_path_factory) -> Path:
    """A prepared public-demo folder, observations of it and a calibrator fitted on them."""
    root = tmp_path_factory.mktemp("edges-d17")
    assert main([*D17, "prepare", "d17mf-public-demo", str(root / "prepared")]) == 0
    obs = root / "obs.jsonl"
    simulate = ["simulate", root / "prepared", "--scenario", "accurate", "--seed", "1"]
    assert main([*D17, *map(str, simulate), "--out", str(obs)]) == 0
    fit = ["calibrator-fit", obs, root / "prepared" / "gold.json"]
    fit += ["--effective-at", "2026-10-02T10:02:34.263Z", "--out", root / "calibrator.json"]
    assert main([*D17, *map(str, fit)]) == 0
    return root


def _score(d17: Path, folder: Path, calibrator: Path, out: Path, start: str) -> list:
    digest = json.loads((d17 / "calibrator.json").read_text())["digest"]
    return [
        *D17,
        "score",
        folder,
        d17 / "obs.jsonl",
        "--calibrator",
        calibrator,
        "--calibrator-digest",
        digest,
        "--session-start",
        start,
        "--evaluated-at",
        "2026-10-16T12:00:00Z",
        "--out",
        out,
    ]


def _with_huge(path: Path, pointer: tuple) -> None:
    doc = json.loads(path.read_text())
    node = doc
    for key in pointer[:-1]:
        node = node[key]
    node[pointer[-1]] = "@huge@"
    path.write_text(json.dumps(doc).replace('"@huge@"', HUGE))


@pytest.mark.parametrize(
    "name, pointer",
    [("audit.json", ("controlMax",)), ("preregistration.json", ("rows",))],
)
def test_d17_score_refuses_a_prepared_file_with_a_huge_integer(
    d17, tmp_path, capsys, name, pointer
):
    folder = tmp_path / "prepared"
    shutil.copytree(d17 / "prepared", folder)
    _with_huge(folder / name, pointer)
    out = tmp_path / "SCORE.json"
    code, err = _run(
        _score(d17, folder, d17 / "calibrator.json", out, "2026-10-15T09:00:00Z"), capsys
    )
    where = "/" + "/".join(map(str, pointer))
    assert code == 2 and f"{folder / name}: at {where}: integer {HUGE} {RULE}" in err, err
    assert "Traceback" not in err and not out.exists() and not out.with_suffix(".md").exists()


@pytest.mark.parametrize("key", ["n", "lower"])
def test_d17_score_refuses_a_calibrator_with_a_huge_integer(d17, tmp_path, capsys, key):
    calibrator = tmp_path / "calibrator.json"
    shutil.copy(d17 / "calibrator.json", calibrator)
    _with_huge(calibrator, ("blocks", 0, key))
    out = tmp_path / "SCORE.json"
    code, err = _run(_score(d17, d17 / "prepared", calibrator, out, "2026-10-15T09:00:00Z"), capsys)
    assert code == 2 and f"{calibrator}: at /blocks/0/{key}: integer {HUGE} {RULE}" in err, err
    assert "Traceback" not in err and not out.exists()


def test_d17_score_refuses_a_session_start_too_late_to_add_a_session_to(d17, tmp_path, capsys):
    out = tmp_path / "SCORE.json"
    start = "9999-12-31T23:59:59Z"
    code, err = _run(_score(d17, d17 / "prepared", d17 / "calibrator.json", out, start), capsys)
    assert code == 2 and f"--session-start: '{start}' is outside the years 0002 to 9998" in err
    assert "Traceback" not in err and not out.exists()


def test_d17_calibrator_fit_refuses_an_effective_date_it_cannot_add_the_validity_to(
    d17, tmp_path, capsys
):
    out = tmp_path / "calibrator.json"
    fit = ["calibrator-fit", d17 / "obs.jsonl", d17 / "prepared" / "gold.json"]
    code, err = _run([*D17, *fit, "--effective-at", "9999-12-31T23:59:59Z", "--out", out], capsys)
    assert code == 2 and "--effective-at: '9999-12-31T23:59:59Z' is outside the years" in err
    assert not out.exists()


def test_a_hand_off_file_with_a_huge_integer_is_refused_at_its_path(tmp_path):
    from prereg.engines.reachability.handoff import _object

    path = tmp_path / "APPROVAL.json"
    data = f'{{"floorsUsd": {{"study": {HUGE}}}}}\n'.encode()
    with pytest.raises(UserError) as e:
        _object(path, data)
    assert str(e.value) == f"{path}: at /floorsUsd/study: integer {HUGE} {RULE}"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 9007199254740991, "b": -9007199254740991}',
        '{"a": [1, {"b": 9007199254740992}]}',
        '{"a": -99999999999999999999}',
        '{"a": "12345678901234567890"}',
        '{"a": 1.0000000000000002, "b": 12345678901234567e3}',  # 17 digits: a double
        '{"a": 123456789012345}',
    ],
)
def test_the_text_precheck_agrees_with_the_walk(text):
    from prereg.records import loads_strict, unsafe_integer

    value = loads_strict(text)
    assert unsafe_integer(value, text) == unsafe_integer(value)
