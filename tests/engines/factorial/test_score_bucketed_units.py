"""Rows reduced in buckets (:mod:`prereg.bucketed`) when a manifest's rows are expanded by the
attempt policy, several fields name a row and units group the rows (the raters example: each
item of the manifest made one row per rater, a row named by item and rater, an item analysed
when its three raters labelled it): SCORE.json and SCORE.md byte for byte as one process
writes them, for any number of workers, partitions and buckets, and wrong data refused in one
process's words."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prereg import bucketed
from prereg.cli import main
from tests.decide.test_units import RATERS, rater_data
from tests.engines.factorial.test_score_bucketed import Spy

STUDY = "raters-units"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("raters")
    (root / "spec" / "studies").mkdir(parents=True)
    shutil.copy(RATERS, root / "spec" / "studies" / RATERS.name)
    assert main(["--project", str(root), "compile"]) == 0
    return root


EXPAND = "  expand:\n    - {field: rater, values: [ann, bob, cat]}\n"
DOMAIN = "      - {name: domain, factor: domain, type: string, allowed: [code, prose]}\n"
RATER = "      - {name: rater, type: string, allowed: [ann, bob, cat]}\n"


@pytest.fixture(scope="module")
def listed(tmp_path_factory) -> Path:
    """The raters study with no expansion: its manifest lists each item x rater row itself."""
    text = RATERS.read_text()
    assert EXPAND in text and text.count(DOMAIN) == 1
    root = tmp_path_factory.mktemp("listed")
    (root / "spec" / "studies").mkdir(parents=True)
    text = text.replace(EXPAND, "").replace(DOMAIN, DOMAIN + RATER)
    (root / "spec" / "studies" / RATERS.name).write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _write(folder: Path, items: list[dict], labels: list[dict], fmt: str) -> tuple[Path, Path]:
    paths = []
    for name, rows in (("items", items), ("labels", labels)):
        if fmt == "parquet":
            path = folder / f"{name}.parquet"
            pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=7)
        else:
            path = folder / f"{name}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths.append(path)
    return paths[0], paths[1]


def _score(project: Path, items: Path, labels: Path, out: Path, *extra: str) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    return main(
        ["--project", str(project), STUDY, "score", "--items", str(items), "--observations",
         str(labels), "--out", str(out), "--quiet", *extra]
    )  # fmt: skip


@pytest.mark.parametrize(
    "seed, fmt, expand", [(3, "jsonl", True), (4, "jsonl", True), (5, "parquet", True),
                          (6, "jsonl", False), (7, "parquet", False)]
)  # fmt: skip
def test_expanded_rows_of_two_fields_and_units_in_buckets_write_one_process_bytes(
    project, listed, tmp_path, capsys, monkeypatch, seed, fmt, expand
):
    """With the expansion, and with a manifest listing each item x rater row (rows named by
    two fields, units, no expansion)."""
    items, labels = rater_data(seed)
    if not expand:  # rows in item order, raters in turn, as the expansion makes them
        items = [{**it, "rater": r} for it in items for r in ("ann", "bob", "cat")]
        project = listed
    items, labels = _write(tmp_path, items, labels, fmt)
    one = tmp_path / "one" / "SCORE.json"
    assert _score(project, items, labels, one) == 0
    want = one.read_bytes(), one.with_suffix(".md").read_bytes()
    doc = json.loads(want[0])
    assert doc["rows"]["registered"] == 90 and doc["units"][0]["excluded"] > 0
    spy = Spy(monkeypatch)
    runs = [("--workers", "2"), ("--partition-bytes", "200"), ("--partition-bytes", "1K")]
    for k, (extra, bucket_bytes) in enumerate(zip(runs, (1 << 20, 512, 4096), strict=True)):
        monkeypatch.setattr(bucketed, "BUCKET_BYTES", bucket_bytes)
        out = tmp_path / str(k) / "SCORE.json"
        assert _score(project, items, labels, out, *extra) == 0, capsys.readouterr().err
        assert spy.reduced == k + 1  # reduced in buckets, not in one process
        assert (out.read_bytes(), out.with_suffix(".md").read_bytes()) == want
    capsys.readouterr()


@pytest.mark.parametrize(
    "break_it, words",
    [
        ("unknown-rater", "dan"),  # a label of a rater the expansion does not register
        ("twice", "labels.jsonl:"),  # one item and rater labelled twice
        ("manifest-repeat", "repeats line"),  # an item listed twice, far apart
    ],
)
def test_wrong_expanded_data_is_refused_in_one_process_words(
    project, tmp_path, capsys, monkeypatch, break_it, words
):
    monkeypatch.setattr(bucketed, "BUCKET_BYTES", 512)
    items, labels = rater_data(3)
    if break_it == "unknown-rater":
        labels.insert(40, {"itemId": "q7", "rater": "dan", "grade": 1})
    elif break_it == "twice":
        labels.insert(50, dict(labels[10]))
    else:
        items[-1] = dict(items[2])
    items_path, labels_path = _write(tmp_path, items, labels, "jsonl")
    got = []
    for name, extra in (("one", ()), ("w2", ("--workers", "2", "--partition-bytes", "300"))):
        out = tmp_path / name / "SCORE.json"
        code = _score(project, items_path, labels_path, out, *extra)
        got.append((code, capsys.readouterr().err, sorted(p.name for p in out.parent.iterdir())))
    assert got[0] == got[1]
    code, err, files = got[0]
    assert code == 2 and files == [] and words in err and "Traceback" not in err
