"""`prereg tables`: every CSV it writes is one pandas (or, without pandas, the csv module)
reads, a table without rows included, and the Parquet beside it has the same columns."""

from __future__ import annotations

import csv
import json

import pytest

from prereg.outputs import tables
from tests.conftest import run_prereg

# a score with one cell and nothing registered to estimate, contrast, analyse or rank: four tables
# have no rows at all
SCORE = {
    "cells": [
        {
            "cell": "hops-2",
            "split": "test",
            "levels": {"hops": "2"},
            "rows": 40,
            "observed": 38,
            "metrics": {
                "accuracy": {"correct": 30, "estimate": 30 / 38, "lower": 0.63, "upper": 0.89}
            },
        }
    ],
    "estimates": [],
    "contrasts": [],
    "analyses": [],
    "auroc": [],
}


def _read_csv(path):
    """(columns, rows) as a reader outside prereg sees them."""
    try:
        import pandas as pd
    except ImportError:  # the csv module reads the header and rows the same way
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        assert rows, f"{path.name} is empty: no header row"
        return rows[0], rows[1:]
    frame = pd.read_csv(path)  # raises EmptyDataError on a file without a header
    return list(frame.columns), frame.values.tolist()


def test_every_table_reads_back_with_its_header_even_without_rows(tmp_path):
    score = tmp_path / "SCORE.json"
    score.write_text(json.dumps(SCORE), encoding="utf-8")
    p = run_prereg("tables", score, "--csv", tmp_path / "csv", "--parquet", tmp_path / "pq")
    assert p.returncode == 0, p.stderr
    written = sorted(x.name for x in (tmp_path / "csv").iterdir())
    assert written == ["analyses.csv", "auroc.csv", "cells.csv", "contrasts.csv", "estimates.csv"]

    columns, rows = _read_csv(tmp_path / "csv" / "cells.csv")
    assert columns[:5] == ["cell", "split", "levels.hops", "rows", "observed"]
    assert "metrics.accuracy.estimate" in columns and len(rows) == 1
    assert rows[0][columns.index("rows")] in (40, "40")

    # the header of a table without rows: what every row of it must carry (written out here
    # from the row definitions in docs and schemas: an estimate's figure and interval, a
    # contrast's two arms and P values, an AUROC group's counts, an analysis' figures)
    expected = {
        "estimates": ["id", "hypothesis", "metric", "estimate", "lower", "upper", "interval", "level"],
        "contrasts": [
            "id", "hypothesis", "metric", "a.n", "a.estimate", "b.n", "b.estimate",
            "estimate", "lower", "upper", "interval", "level", "test", "p", "family", "adjustedP",
        ],
        "auroc": ["negative", "positives", "negatives", "estimate", "lower", "upper"],
        # an analysis' method and its figures (its options are keyed by the method: no column)
        "analyses": [
            "id", "hypothesis", "method", "metric", "estimate", "se", "statistic",
            "statisticName", "df", "lower", "upper", "p", "adjustedP",
        ],
    }  # fmt: skip
    for name, want in expected.items():
        columns, rows = _read_csv(tmp_path / "csv" / f"{name}.csv")
        assert (columns, rows) == (want, []), name
        pq = pytest.importorskip("pyarrow.parquet")
        t = pq.read_table(tmp_path / "pq" / f"{name}.parquet")
        assert (t.column_names, t.num_rows) == (want, 0), name


def test_empty_columns_are_columns_a_real_row_has():
    """The header of an empty table names columns the flattened rows of that table really
    carry: a contrast and an estimate as the decide module writes them."""
    contrast = {
        "id": "c", "hypothesis": "h", "metric": "m",
        "a": {"k": 3, "n": 10, "estimate": 0.3}, "b": {"k": 6, "n": 10, "estimate": 0.6},
        "estimate": 0.3, "lower": -0.1, "upper": 0.7, "interval": "newcombe", "level": 0.95,
        "test": "fisher", "alternative": "greater", "p": 0.18, "family": None, "adjustedP": None,
    }  # fmt: skip
    columns, _ = tables.table([contrast])
    assert set(tables.empty_columns("contrasts")) <= set(columns)
    assert set(tables.empty_columns("cells")) <= set(tables.table(SCORE["cells"])[0])
