"""A CSV export as it comes: R writes a missing value as NA, and a field's `null_values` says
so (docs/vocabulary.md, Files). Written from the docs by a newcomer's weighted-kappa study
(tests/fixtures/newcomer/wkappa.yaml): two raters, a 4-point scale, the CSV's columns in an
order of their own and three labels NA. The quadratic-weighted kappa is checked against
scikit-learn's cohen_kappa_score and statsmodels' cohens_kappa (the SE, the null SE's z, the
interval), and the table is chosen so that kappa is exactly 3/5 (by hand in fractions below),
which meets `ge 0.6` and fails `gt 0.6`."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from prereg.errors import UserError
from prereg.tabular import _csv_parts
from tests.conftest import FIXTURES

SPEC = FIXTURES / "newcomer" / "wkappa.yaml"
# ann's label (row) against bob's (column), categories 1..4: 20 items both labelled
TABLE = [[2, 1, 0, 0], [2, 0, 1, 2], [0, 1, 1, 5], [0, 0, 2, 3]]


def _pairs() -> list[tuple[object, object]]:
    out = [(i + 1, j + 1) for i in range(4) for j in range(4) for _ in range(TABLE[i][j])]
    return out + [(2, "NA"), ("NA", 3), ("NA", "NA")]  # three items not labelled by both


def _csv(path: Path) -> Path:
    lines = ["label,rater,item"]
    for n, (a, b) in enumerate(_pairs()):
        lines += [f"{a},ann,it{n:02d}", f"{b},bob,it{n:02d}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _project(root: Path, text: str) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "wkappa.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _kappa_by_hand() -> Fraction:
    n = sum(map(sum, TABLE))
    w = [[1 - Fraction((i - j) ** 2, 9) for j in range(4)] for i in range(4)]
    rows = [sum(r) for r in TABLE]
    cols = [sum(TABLE[i][j] for i in range(4)) for j in range(4)]
    po = sum(w[i][j] * TABLE[i][j] for i in range(4) for j in range(4)) / n
    pe = sum(w[i][j] * rows[i] * cols[j] for i in range(4) for j in range(4)) / n**2
    return (po - pe) / (1 - pe)


@pytest.mark.parametrize("op, verdict", [("ge", "supported"), ("gt", "not-supported")])
def test_weighted_kappa_from_an_r_export(tmp_path, op, verdict):
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import cohens_kappa

    assert _kappa_by_hand() == Fraction(3, 5)
    text = SPEC.read_text().replace("op: ge, value: 0.6", f"op: {op}, value: 0.6")
    root = _project(tmp_path, text)
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(_csv(tmp_path / "ratings.csv")), "--out", str(out)]
    assert main(["--project", str(root), "wkappa", "score", *args]) == 0
    doc = json.loads(out.read_text())
    (row,) = doc["analyses"]
    assert row["exact"]["estimate"] == "3/5"
    assert row["counts"]["n"] == 20 and row["counts"]["incompleteUnits"] == 3
    assert row["counts"]["table"] == TABLE
    both = [(a, b) for a, b in _pairs() if a != "NA" and b != "NA"]
    a, b = zip(*both, strict=True)
    want = cohen_kappa_score(a, b, labels=[1, 2, 3, 4], weights="quadratic")
    assert row["estimate"] == pytest.approx(want, rel=1e-12)
    sm = cohens_kappa(np.array(TABLE, dtype=float), wt="quadratic")
    assert row["se"] == pytest.approx(sm.std_kappa, rel=1e-10)
    assert row["statistic"] == pytest.approx(sm.kappa / sm.std_kappa0, rel=1e-10)
    assert row["lower"] == pytest.approx(sm.kappa_low, rel=1e-10)
    assert row["upper"] == pytest.approx(sm.kappa_upp, rel=1e-10)
    assert row["p"] == pytest.approx(sm.pvalue_one_sided, rel=1e-8)
    assert doc["verdicts"] == {"agree": verdict}
    # the three NA labels are null: rows observed (the attempt counts) with no label
    cells = {c["cell"]: c for c in doc["cells"]}
    assert cells["ann"]["observed"] == 23
    for rater in ("ann", "bob"):
        labelled = cells[rater]["metrics"]["labelled"]
        assert (labelled["k"], labelled["n"]) == (21, 23)


def test_without_null_values_the_na_cells_are_refused_at_their_lines(tmp_path, capsys):
    text = SPEC.read_text().replace(", null_values: [NA]", "")
    root = _project(tmp_path, text)
    obs = _csv(tmp_path / "ratings.csv")
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(obs), "--out", str(out)]
    assert main(["--project", str(root), "wkappa", "score", *args]) == 2
    err = capsys.readouterr().err
    assert f"{obs}: 4 cell(s) not of their field's type (an empty cell is null; a field's" in err
    assert "null_values names cells such as NA that stand for null)" in err
    assert f"{obs}:43: field label: 'NA' is not a whole number" in err
    assert not out.exists()


FIELDS = [
    {"name": "n", "type": "integer", "nullable": True, "null_values": ["NA", "-99"]},
    {"name": "x", "type": "number", "required": False, "null_values": ["NA"]},
    {"name": "ok", "type": "boolean", "nullable": True, "null_values": ["NA", "."]},
    {"name": "s", "type": "string", "nullable": True, "null_values": ["n/a"]},
]


def _table(path: Path) -> dict:
    ((_where, table),) = list(_csv_parts(path, FIELDS))
    return table.to_pydict()


def test_each_type_reads_its_null_values_as_null(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("s,ok,x,n\nn/a,true,1.5,3\nNA,NA,NA,NA\nb,.,,-99\nc,false,-2e1,-98\n")
    assert _table(path) == {
        "s": [None, "NA", "b", "c"],  # NA is not one of s's null_values: a string
        "ok": [True, None, None, False],
        "x": [1.5, None, None, -20.0],
        "n": [3, None, None, -98],
    }


@pytest.mark.parametrize(
    "line, words",
    [
        ("a,True,1,1", "t.csv:2: field ok: 'True' is not true or false"),
        ("a,true,x,1", "t.csv:2: field x: 'x' is not a number"),
        ("a,true,1,N/A", "t.csv:2: field n: 'N/A' is not a whole number"),
    ],
)
def test_other_cells_of_those_fields_are_refused_at_their_line(tmp_path, line, words):
    path = tmp_path / "t.csv"
    path.write_text(f"s,ok,x,n\n{line}\n")
    with pytest.raises(UserError) as exc:
        _table(path)
    message = str(exc.value) + "\n" + "\n".join(getattr(exc.value, "problems", []) or [])
    assert words in message
    assert "in n, also 'NA', '-99'" in message


@pytest.mark.parametrize(
    "field, words",
    [
        (
            "{name: label, type: integer, minimum: 1, maximum: 4, null_values: [NA]}",
            "at /record_contracts/0/fields/2/null_values: field 'label' is neither nullable nor"
            " optional, so a cell written 'NA' would be refused as the field missing",
        ),
        (
            "{name: label, type: integer, nullable: true, null_values: [-99]}",
            "at /record_contracts/0/fields/2/null_values/0: expected string, got -99 (a cell is"
            ' text: write it in quotes as the file writes it, "-99")',
        ),
        (
            "{name: label, type: string, nullable: true, allowed: [a, NA], null_values: [NA]}",
            "['NA'] are both allowed values and null_values of field 'label'",
        ),
    ],
)
def test_compile_refuses_null_values_that_cannot_mean_null(tmp_path, capsys, field, words):
    old = "{name: label, type: integer, nullable: true, minimum: 1, maximum: 4, null_values: [NA]}"
    text = SPEC.read_text().replace(old, field)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "wkappa.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) != 0
    assert words in capsys.readouterr().err


LABELS = {1: "low", 2: "mid", 3: "high", 4: "top", "NA": "NA"}
TEXT_FIELD = (
    "{name: label, type: string, nullable: true, allowed: [low, mid, high, top], null_values: [NA]}"
)
INT_FIELD = (
    "{name: label, type: integer, nullable: true, minimum: 1, maximum: 4, null_values: [NA]}"
)


def test_text_labels_are_refused_at_compile_naming_the_way_to_codes(tmp_path, capsys):
    """The export writes the labels as words: an agreement method reads integer codes, so
    compile (not score) refuses both the text rating and text categories, and says how to map
    the words to codes."""
    text = SPEC.read_text().replace(INT_FIELD, TEXT_FIELD)
    text = text.replace("categories: [1, 2, 3, 4]", "categories: [low, mid, high, top]")
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "wkappa.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert (
        "at /hypotheses/0/analyses/0/rating: analysis 'wk': method cohens-kappa reads integer"
        " category codes (or numbers), and rating 'label' is a string field of 'rating', not a"
        " number; register a derived field that gives each label its code"
    ) in err
    assert (
        "at /hypotheses/0/analyses/0/options/categories: analysis 'wk': method cohens-kappa"
        " refuses option categories: categories[0] must be an integer code, got 'low'"
    ) in err
    assert not (tmp_path / "generated" / "wkappa").exists()


def test_text_labels_through_a_derived_code_give_the_same_kappa(tmp_path):
    """The refusal's advice taken: a derived field maps low..top to 1..4, the rating reads it,
    and the kappa is the integer export's, exactly 3/5."""
    cases = "".join(
        f"      - {{when: [{{field: label, op: eq, value: {w}}}], value: {c}}}\n"
        for c, w in ((1, "low"), (2, "mid"), (3, "high"), (4, "top"))
    )
    text = SPEC.read_text().replace(INT_FIELD, TEXT_FIELD)
    text = text.replace(
        "metrics:\n", f"derived_fields:\n  - id: code\n    cases:\n{cases}metrics:\n"
    )
    text = text.replace("rating: label", "rating: code")
    root = _project(tmp_path, text)
    path = tmp_path / "ratings.csv"
    lines = ["label,rater,item"]
    for n, (a, b) in enumerate(_pairs()):
        lines += [f"{LABELS[a]},ann,it{n:02d}", f"{LABELS[b]},bob,it{n:02d}"]
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(path), "--out", str(out)]
    assert main(["--project", str(root), "wkappa", "score", *args]) == 0
    (row,) = json.loads(out.read_text())["analyses"]
    assert row["exact"]["estimate"] == "3/5" and row["counts"]["table"] == TABLE


def test_an_r_export_with_quotes_crlf_and_row_names(tmp_path, capsys):
    """R's write.csv quotes the text, writes NA bare, ends lines with CRLF on Windows and adds
    the row numbers as an unnamed first column: quoted cells and CRLF are read as they come;
    the row numbers are refused, and the refusal says what that column is."""
    root = _project(tmp_path, SPEC.read_text())
    rows = []
    for n, (a, b) in enumerate(_pairs()):
        rows += [(a, "ann", f"it{n:02d}"), (b, "bob", f"it{n:02d}")]
    quoted = tmp_path / "quoted.csv"
    body = [f'{a},"{r}","{i}"' for a, r, i in rows]
    quoted.write_bytes(("\r\n".join(['"label","rater","item"', *body]) + "\r\n").encode())
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(quoted), "--out", str(out)]
    assert main(["--project", str(root), "wkappa", "score", *args]) == 0
    assert json.loads(out.read_text())["analyses"][0]["exact"]["estimate"] == "3/5"
    named = tmp_path / "rownames.csv"
    body = [f'"{n + 1}",{a},"{r}","{i}"' for n, (a, r, i) in enumerate(rows)]
    named.write_text("\n".join(['"","label","rater","item"', *body]) + "\n")
    args = ["--observations", str(named), "--out", str(tmp_path / "S2.json")]
    assert main(["--project", str(root), "wkappa", "score", *args]) == 2
    assert (
        "column(s) '' are not fields of the record contract (rating.schema.json); a column"
        " without a name is often the row numbers an export adds (R's write.csv without"
        " row.names = FALSE, pandas' to_csv without index=False): leave them out"
    ) in capsys.readouterr().err


@pytest.mark.parametrize("fields", [FIELDS, [{**f, "null_values": None} for f in FIELDS]])
def test_a_plus_signed_whole_number_is_named_at_its_line(tmp_path, fields):
    """pyarrow reads no '+3' as an integer; the refusal names the cell (it used to fall back
    to pyarrow's own words, as no cell looked wrong to the reader's pattern)."""
    path = tmp_path / "t.csv"
    path.write_text("s,ok,x,n\na,true,+1.5,+3\n")
    with pytest.raises(UserError) as exc:
        list(_csv_parts(path, fields))
    problems = "\n".join(getattr(exc.value, "problems", []) or [])
    assert "t.csv:2: field n: '+3' is not a whole number (digits, a leading - for a" in problems
    assert "field x" not in problems  # '+1.5' is a number pyarrow reads
