"""Verifier verdicts as a Parquet export (tests/fixtures/newcomer/verif.yaml, written from the
docs by a newcomer): a nullable boolean `accepted` and a boolean `timed_out`, in row groups of
30; a gate that at most 10% of each verifier's verdicts are missing. 5 of 50 missing is 0.1
exactly, which holds `le 0.1`; 6 of 50 fails it and every verdict is `insufficient`. The
acceptance among the verdicts given is 27/45 = 0.6 exactly, which meets `ge 0.6`; its interval
is statsmodels' Wilson interval. A null in a column whose field is not nullable is refused
naming the row group, the row and why the field is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prereg.cli import main
from tests.conftest import FIXTURES

SCHEMA = pa.schema(
    [
        ("task", pa.string()),
        ("verifier", pa.string()),
        ("accepted", pa.bool_()),
        ("timed_out", pa.bool_()),
    ]
)


def _rows(missing: dict[str, int]) -> list[dict]:
    rows = []
    for v in ("v1", "v2"):
        for i in range(50):
            acc = None if i < missing[v] else (i % 5 < 3)  # 3 of every 5 given are accepted
            rows.append({"task": f"t{i:02d}", "verifier": v, "accepted": acc, "timed_out": False})
    return rows


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("verif")
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "verif.yaml").write_text(
        (FIXTURES / "newcomer" / "verif.yaml").read_text()
    )
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _score(root: Path, name: str, rows: list[dict]) -> tuple[int, Path]:
    path = root / f"{name}.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path, row_group_size=30)
    out = root / f"{name}.SCORE.json"
    code = main(
        ["--project", str(root), "verif", "score", "--observations", str(path), "--out", str(out)]
    )
    return code, out


@pytest.mark.parametrize(
    "v2_missing, held, verdict", [(5, True, "supported"), (6, False, "insufficient")]
)
def test_the_missing_rate_gate_on_its_threshold(root, v2_missing, held, verdict):
    from statsmodels.stats.proportion import proportion_confint

    code, out = _score(root, f"m{v2_missing}", _rows({"v1": 5, "v2": v2_missing}))
    assert code == 0
    doc = json.loads(out.read_text())
    cells = {c["cell"]: c["metrics"] for c in doc["cells"]}
    assert (cells["v1"]["missing"]["k"], cells["v1"]["missing"]["n"]) == (5, 50)
    assert (cells["v2"]["missing"]["k"], cells["v2"]["missing"]["n"]) == (v2_missing, 50)
    (gate,) = doc["gates"]
    assert gate["passed"] is held
    assert gate["failures"] == ([] if held else [{"cell": "v2", "figure": 0.12}])
    (acc,) = doc["estimates"]
    # v1: 45 verdicts given, i = 5..49, accepted when i % 5 < 3: 27 of them
    assert (acc["k"], acc["n"]) == (27, 45)
    low, high = proportion_confint(27, 45, alpha=0.05, method="wilson")
    assert acc["lower"] == pytest.approx(low, rel=1e-12)
    assert acc["upper"] == pytest.approx(high, rel=1e-12)
    assert doc["verdicts"] == {"v1-accepts": verdict}


def test_a_null_in_a_column_that_is_not_nullable_says_so(root, capsys):
    rows = _rows({"v1": 5, "v2": 5})
    rows[33]["timed_out"] = None  # row group 1 (rows 30..59), its 4th row
    code, out = _score(root, "bad", rows)
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert (
        "bad.parquet: row group 1, row 4: at /: missing field 'timed_out' (its cell is null,"
        " and the field is not nullable)"
    ) in err
