"""Property tests of the strict readers: whatever the bytes, a reader returns what it
promises or refuses with a UserError naming the file; duplicate keys, NaN, Infinity and
numbers that overflow a double are always refused; a study's score refuses hostile
observations without a traceback and writes nothing."""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prereg.errors import UserError
from prereg.records import StrictJSONError, loads_strict, read_json_file, read_records
from tests.conftest import ROOT

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(st.text(max_size=200))
def test_loads_strict_raises_only_value_errors(text):
    try:
        loads_strict(text)
    except ValueError:
        pass


@SETTINGS
@given(JSON)
def test_loads_strict_reads_what_json_writes(value):
    assert loads_strict(json.dumps(value)) == json.loads(json.dumps(value))


@SETTINGS
@given(st.dictionaries(st.text(min_size=1, max_size=5), JSON, min_size=1, max_size=4), st.data())
def test_a_duplicate_key_is_always_refused(obj, data):
    key = data.draw(st.sampled_from(sorted(obj)))
    text = json.dumps(obj)[:-1] + f", {json.dumps(key)}: 1}}"
    with pytest.raises(StrictJSONError, match="duplicate key"):
        loads_strict(text)


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e400", "-1e999"])
@pytest.mark.parametrize("shape", ['{{"x": {}}}', "[{}]", "{}"])
def test_non_finite_numbers_are_always_refused(bad, shape):
    with pytest.raises(ValueError):
        loads_strict(shape.format(bad))


def test_deep_nesting_is_refused_not_a_recursion_error():
    with pytest.raises(StrictJSONError, match="too deep"):
        loads_strict("[" * 100_000 + "]" * 100_000)


@SETTINGS
@given(st.binary(max_size=300))
def test_read_json_file_returns_an_object_or_refuses(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("j") / "doc.json"
    path.write_bytes(raw)
    try:
        out = read_json_file(path)
    except UserError as exc:
        assert str(path) in str(exc)
    else:
        assert isinstance(out, dict)


@pytest.fixture(scope="module")
def schema_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("schema") / "obs.schema.json"
    path.write_text(
        json.dumps(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "required": ["rowId"],
                "properties": {"rowId": {"type": "string"}, "x": {"type": "number"}},
            }
        )
    )
    return path


@SETTINGS
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=6))
def test_read_records_returns_records_or_refuses_with_lines(tmp_path_factory, schema_path, lines):
    path = tmp_path_factory.mktemp("l") / "obs.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    try:
        rows = read_records(path, schema_path, "jsonl")
    except UserError as exc:
        assert str(path) in str(exc)
    else:
        assert all(isinstance(r, dict) and isinstance(r["rowId"], str) for r in rows)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    from prereg.cli import main

    root = tmp_path_factory.mktemp("hostile-score")
    shutil.copytree(ROOT / "examples" / "latency-cost" / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    assert (
        main(["--project", str(root), "latency-cost", "items", "--out", str(root / "items.jsonl")])
        == 0
    )
    return root


RECORD = st.fixed_dictionaries(
    {
        "rowId": st.sampled_from(["tst-base-qa-001", "tst-cache-code-120", "nope", ""]),
        "attempt": st.integers(-2, 3),
        "status": st.sampled_from(["ok", "error", "maybe"]),
        "correct": st.none() | st.booleans() | st.integers(0, 1),
        "latency_ms": st.none() | st.floats(-10, 1e6, allow_nan=False) | st.text(max_size=3),
        "tokens": st.none() | st.integers(-5, 10**6),
    }
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(RECORD, max_size=5), st.integers(0, 10**9))
def test_score_refuses_hostile_observations_and_writes_nothing(project, capsys, records, n):
    from prereg.cli import main

    obs = project / f"obs-{n}.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = project / f"SCORE-{n}.json"
    if out.exists():
        return
    code = main(
        [
            "--project",
            str(project),
            "latency-cost",
            "score",
            "--items",
            str(project / "items.jsonl"),
            "--observations",
            str(obs),
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code != 0:
        assert code == 2 and not out.exists() and not out.with_suffix(".md").exists()
        assert str(obs) in err or "error:" in err
    else:
        assert json.loads(out.read_text())["gated"] is True  # at most 5 of 480 rows observed


def test_a_geometric_mean_of_no_observed_value_is_null_not_a_crash(project, capsys):
    """One observation whose latency is 0 ms (left out of the log scale): the geometric-mean
    estimates have n = 0; their log-scale SE is null (it divided by √0, a ZeroDivisionError
    traceback, found by the property test above)."""
    from prereg.cli import main

    obs = project / "zero-latency.jsonl"
    record = {"rowId": "tst-base-qa-001", "attempt": 1, "status": "ok", "correct": None}
    obs.write_text(json.dumps({**record, "latency_ms": 0.0, "tokens": 0}) + "\n")
    out = project / "SCORE-zero.json"
    args = ["--project", str(project), "latency-cost", "score", "--items"]
    code = main(
        [*args, str(project / "items.jsonl"), "--observations", str(obs), "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    doc = json.loads(out.read_text())
    logs = [e for e in doc["estimates"] if "seLog" in e]
    assert logs and all(e["n"] == 0 and e["seLog"] is None for e in logs if e["n"] == 0)
    assert any(e["n"] == 0 for e in logs)
