"""The calibration input reader: every refusal, all problems collected, the accepted index."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from s3_study import CONFIG

from prereg.engines.clusterpower.calibration_input import parse_calibration, read_calibration
from prereg.engines.clusterpower.config import plan_config
from prereg.errors import UserError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "s3"
SPEC = plan_config(CONFIG).input
SAMPLE = FIX / "calibration-sample.jsonl"


def row(repo="django", task="django__django-1", label="official-pass", value=0.041, **over):
    obj = {
        "stage": "calibration",
        "repository_id": repo,
        "task_id": task,
        "class_label": label,
        "delta_logscore": value,
    }
    obj.update(over)
    return json.dumps(obj)


GOOD = [
    row(),
    row(label="official-fail", value=-0.018),
    row(repo="sympy", task="sympy__sympy-2", value=0.3),
]


def refuse(lines: list[str] | bytes) -> UserError:
    data = lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode()
    with pytest.raises(UserError) as e:
        parse_calibration(data, "cal.jsonl", SPEC)
    assert e.value.exit_code == 2
    assert e.value.message.startswith("cal.jsonl: calibration input refused")
    return e.value


def test_the_sample_is_accepted_and_indexed():
    cal = read_calibration(SAMPLE, SPEC)
    recs = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    repos = sorted({r["repository_id"] for r in recs})
    assert cal.repositories == tuple(repos) and len(repos) == 12
    assert len(cal.task_ids) == len({r["task_id"] for r in recs}) == 150
    assert cal.records_pass + cal.records_fail == len(recs)
    sizes = [len({r["task_id"] for r in recs if r["repository_id"] == rp}) for rp in repos]
    assert cal.profile_size.tolist() == sizes and len(set(sizes)) > 5  # unequal sizes
    assert cal.profile_start.tolist() == np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
    for i, rp in enumerate(repos):
        s, m = cal.profile_start[i], cal.profile_size[i]
        names = list(cal.task_ids[s : s + m])
        assert names == sorted(names)
        assert all(t.startswith(rp + "__") for t in names)
    by_key = {(r["task_id"], r["class_label"]): r["delta_logscore"] for r in recs}
    for t, p, f in zip(cal.task_ids, cal.pass_value, cal.fail_value, strict=True):
        assert (
            (p == by_key[(t, "official-pass")]) if (t, "official-pass") in by_key else np.isnan(p)
        )
        assert (
            (f == by_key[(t, "official-fail")]) if (t, "official-fail") in by_key else np.isnan(f)
        )
    assert 0 < cal.tasks_with_both < 150
    data = SAMPLE.read_bytes()
    assert cal.size == len(data)
    import hashlib

    assert cal.sha256 == hashlib.sha256(data).hexdigest()


def test_line_order_and_final_newline_do_not_matter():
    lines = SAMPLE.read_bytes().decode().splitlines()
    a = parse_calibration(("\n".join(lines) + "\n").encode(), "a", SPEC)
    random.Random(4).shuffle(lines)
    b = parse_calibration("\n".join(lines).encode(), "b", SPEC)  # no final LF
    assert a.repositories == b.repositories and a.task_ids == b.task_ids
    np.testing.assert_array_equal(a.pass_value, b.pass_value)
    np.testing.assert_array_equal(a.fail_value, b.fail_value)


def test_ids_are_compared_exactly():
    cal = parse_calibration(
        (
            "\n".join([row(task="T"), row(task="t"), row(task=" t"), row(repo="Django", task="x")])
            + "\n"
        ).encode(),
        "c",
        SPEC,
    )
    assert cal.repositories == ("Django", "django")
    assert cal.task_ids == ("x", " t", "T", "t")  # code-point order inside a repository


def test_integer_statistics_are_numbers():
    cal = parse_calibration(
        (row(value=0) + "\n" + row(task="b", value=-3) + "\n").encode(), "c", SPEC
    )
    assert sorted(cal.pass_value.tolist()) == [-3.0, 0.0]


@pytest.mark.parametrize(
    ("line", "field", "needle"),
    [
        ("", "-", "blank line"),
        ("   \t", "-", "blank line"),
        ("[1, 2]", "-", "not a JSON object (found an array)"),
        ('"text"', "-", "not a JSON object (found a string)"),
        ("{not json", "-", "not valid JSON"),
        (row()[:-1], "-", "not valid JSON"),
        (row() + ' {"a": 1}', "-", "not valid JSON"),
        (
            row()[:-1] + ', "delta_logscore": 1}',
            "delta_logscore",
            "duplicate key inside the object",
        ),
        (row()[:-1] + ', "stage": "calibration"}', "stage", "duplicate key"),
        (
            json.dumps(
                {
                    "stage": "calibration",
                    "repository_id": "a",
                    "task_id": "b",
                    "class_label": "official-pass",
                }
            ),
            "delta_logscore",
            "missing field",
        ),
        (row(extra=1), "extra", "unexpected field"),
        (row(stage="confirmatory"), "stage", "confirmatory row refused"),
        (row(stage="Calibration"), "stage", "must be 'calibration' (found 'Calibration')"),
        (row(stage=None), "stage", "must be 'calibration' (found null)"),
        (row(repo=""), "repository_id", "non-empty string (found an empty string)"),
        (row(repo=3), "repository_id", "non-empty string (found a number)"),
        (row(task=["x"]), "task_id", "non-empty string (found an array)"),
        (row(label="official_pass"), "class_label", "must be 'official-pass' or 'official-fail'"),
        (row(label=None), "class_label", "(found null)"),
        (row(value=True), "delta_logscore", "finite number (found a boolean)"),
        (row(value="0.1"), "delta_logscore", "finite number (found a string)"),
        (row(value=None), "delta_logscore", "finite number (found null)"),
        (row(value=0.5).replace("0.5", "NaN"), "delta_logscore", "the literal NaN"),
        (row(value=0.5).replace("0.5", "Infinity"), "delta_logscore", "the literal Infinity"),
        (row(value=0.5).replace("0.5", "-Infinity"), "delta_logscore", "the literal -Infinity"),
        (row(value=0.5).replace("0.5", "1e999"), "delta_logscore", "1e999 overflows"),
        (row(value=0.5).replace("0.5", "-1.5e400"), "delta_logscore", "overflows"),
        (row(value=0.5).replace("0.5", "1" + "0" * 350), "delta_logscore", "overflows"),
        (row(value=0.5).replace("0.5", "9" * 5000), "delta_logscore", "overflows"),
    ],
)
def test_each_line_refusal(line, field, needle):
    err = refuse([GOOD[0], line, GOOD[2]])
    hits = [p for p in err.problems if needle in p]
    assert hits, err.problems
    assert hits[0].startswith(f"line 2, field {field}: ")


def test_byte_level_refusals():
    good = ("\n".join(GOOD) + "\n").encode()
    err = refuse(b"\xef\xbb\xbf" + good)
    assert err.problems == [
        "line 1, field -: the file starts with a byte-order mark (U+FEFF); save it as UTF-8"
        " without BOM"
    ]
    err = refuse(good + b'{"stage": "calibr\xff"}\n')
    assert err.problems[0].startswith("line 4, field -: not valid UTF-8")
    # a UTF-16 file is one problem, named, not one per line (round 7)
    err = refuse(good.decode().encode("utf-16"))
    assert err.problems == [
        "line -, field -: not UTF-8: UTF-16 text (it starts with UTF-16's byte-order mark);"
        " save it as UTF-8"
    ]
    err = refuse(good + b'{"stage": "calibration\x00"}\n')
    assert err.problems[0].startswith(
        "line 4, field -: not valid JSON (a NUL byte (U+0000) at column 23, inside a string"
    )
    err = refuse(b"")
    assert err.problems == ["line -, field -: empty file: no calibration records"]
    err = refuse(b"\n")
    assert err.problems == ["line 1, field -: blank line (one JSON object per line required)"]
    err = refuse(good + b"\n")  # a blank last line (two final LFs)
    assert err.problems == ["line 4, field -: blank line (one JSON object per line required)"]


def test_cross_record_refusals():
    err = refuse(GOOD + [row(value=9.0)])
    assert err.problems == [
        "line 4, field -: second record for (repository_id 'django', task_id 'django__django-1', "
        "class_label 'official-pass'); first at line 1"
    ]
    err = refuse(GOOD + [row(repo="flask", label="official-fail")])
    assert err.problems == [
        "line 4, field task_id: task 'django__django-1' is under repository_id 'flask' here but "
        "under 'django' at line 1 (a task belongs to one repository)"
    ]
    # a confirmatory row is named as such and takes no part in the duplicate check
    err = refuse(GOOD + [row(stage="confirmatory")])
    assert len(err.problems) == 1 and "confirmatory row refused" in err.problems[0]


def test_all_problems_are_collected_and_capped():
    lines = [row(task=f"t{i}", value=True) for i in range(57)] + [row(stage="x", task="u")]
    err = refuse(lines)
    assert err.message == "cal.jsonl: calibration input refused (58 problems)"
    assert len(err.problems) == 51 and err.problems[-1] == "… and 8 more"
    assert err.problems[0].startswith("line 1, field delta_logscore")
    assert err.problems[49].startswith("line 50, ")
    one = refuse([GOOD[0], row(task="x", value=True)])
    assert one.message == "cal.jsonl: calibration input refused (1 problem)"
    # several problems on one line are all reported
    many = refuse(
        [
            json.dumps(
                {
                    "stage": "confirmatory",
                    "repository_id": "",
                    "task_id": 1,
                    "class_label": "x",
                    "delta_logscore": False,
                    "z": 0,
                }
            )
        ]
    )
    assert [p.split(":")[0] for p in many.problems] == [
        "line 1, field z",
        "line 1, field stage",
        "line 1, field repository_id",
        "line 1, field task_id",
        "line 1, field class_label",
        "line 1, field delta_logscore",
    ]


def test_unreadable_paths(tmp_path):
    with pytest.raises(UserError, match="cannot read calibration input"):
        read_calibration(tmp_path / "absent.jsonl", SPEC)
    with pytest.raises(UserError, match="is a folder"):
        read_calibration(tmp_path, SPEC)


def test_refusal_names_the_file(tmp_path):
    p = tmp_path / "cal.jsonl"
    p.write_bytes(b"[]\n")
    with pytest.raises(UserError) as e:
        read_calibration(p, SPEC)
    assert e.value.message.startswith(f"{p}: calibration input refused")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_are_accepted_or_refused_cleanly(data):
    try:
        cal = parse_calibration(data, "fuzz", SPEC)
    except UserError as e:
        assert e.problems and all(p.startswith(("line ", "… and ")) for p in e.problems)
    else:
        assert len(cal.task_ids) >= 1


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.integers(0, 5),
            st.sampled_from(["official-pass", "official-fail"]),
            st.floats(allow_nan=False, allow_infinity=False, width=64),
        ),
        min_size=1,
        max_size=20,
        unique_by=lambda t: (t[1], t[2]),
    )
)
def test_valid_records_round_trip(recs):
    # a task id belongs to one repository: derive the repository from the task
    lines = [row(repo="abc"[t % 3], task=f"task-{t}", label=lab, value=v) for _, t, lab, v in recs]
    cal = parse_calibration(("\n".join(lines)).encode(), "ok", SPEC)
    got = {}
    for t, p, f in zip(cal.task_ids, cal.pass_value, cal.fail_value, strict=True):
        if not np.isnan(p):
            got[(t, "official-pass")] = p
        if not np.isnan(f):
            got[(t, "official-fail")] = f
    assert got == {(f"task-{t}", lab): v for _, t, lab, v in recs}
