"""Hostile inputs, round 7: each refusal names its file and line (or row) and its rule, exits 2,
and leaves the folder as it was; what is accepted is scored as it was.

- a JSONL or JSON-array integer of more than 4,300 digits (more than Python converts) is
  refused at its field in the words of any integer out of range (the line was refused in the
  older "±(2^53 − 1)" words, without its field);
- an integer in a number field is a number as written, as in CSV: one a double does not hold
  as written (100000000000000000001) is refused at its field, one beyond the largest double
  too (a 400-digit integer in a number field without a maximum was a traceback);
- a jsonschema message whose value is long keeps its rule (a long value cut the message
  before ``is greater than the maximum of 10``);
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, run_main, study_project
from tests.hostile.test_inputs_round6 import RANGE, ROWS, _score

FIELD = "      - {name: score, type: number, nullable: true, minimum: 0, maximum: 10}\n"
EXTRA = (
    "      - {name: n, type: integer, nullable: true}\n"
    "      - {name: x, type: number, nullable: true}\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The mean_threshold study with a nullable integer field ``n`` and a nullable number
    field ``x`` without bounds, compiled."""
    text = (FIXTURES / "mean_threshold" / "grader-mean.yaml").read_text(encoding="utf-8")
    assert text.count(FIELD) == 1
    text = text.replace(FIELD, FIELD + EXTRA)
    root = study_project(tmp_path_factory.mktemp("h7") / "p", "grader-mean", text)
    assert run_main("--project", root, "compile").returncode == 0
    return root


def _rows(**first) -> list[dict]:
    return [{**r, "n": 1, "x": 0.5, **(first if i == 0 else {})} for i, r in enumerate(ROWS)]


def _jsonl(rows, raw: dict | None = None) -> bytes:
    """JSONL of ``rows``, the first row's fields in ``raw`` written as the given JSON text."""
    lines = [json.dumps(r) for r in rows]
    for k, text in (raw or {}).items():
        lines[0] = lines[0].replace(f'"{k}": {json.dumps(rows[0][k])}', f'"{k}": {text}', 1)
    return "".join(line + "\n" for line in lines).encode()


def _json_array(rows, raw: dict | None = None) -> bytes:
    text = _jsonl(rows, raw).decode().rstrip("\n").replace("\n", ",\n")
    return f"[{text}]\n".encode()


def _csv7(rows) -> str:
    cell = lambda v: "" if v is None else str(v)  # noqa: E731
    keys = ("task", "model", "score", "n", "x")
    lines = [",".join(cell(r[k]) for k in keys) for r in rows]
    return ",".join(keys) + "\n" + "".join(f"{line}\n" for line in lines)


HUGE = "7" * 5000  # more digits than Python turns into an int


@pytest.mark.parametrize(
    "name, write, where",
    [("h.jsonl", _jsonl, "h.jsonl:1: at /n:"), ("h.json", _json_array, "h.json:1: at /n:")],
)
@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_of_more_than_4300_digits_is_refused_at_its_field(project, name, write, where, sign):  # fmt: skip
    code, err, _ = _score(project, name, write(_rows(), {"n": sign + HUGE}))
    assert code == 2
    shown = (sign + HUGE)[:24] + "…"
    assert f"{where} integer {shown} is outside the range of a 64-bit integer {RANGE}" in err
    assert "2^53" not in err


@pytest.mark.parametrize(
    "written, said",
    [
        ("1" + "0" * 400, "number 100000000000000000000000000000… overflows a double"),
        (HUGE, f"number {HUGE[:30]}… overflows a double"),
        (
            "100000000000000000001",
            "number 100000000000000000001 has 21 significant digits, more than a double holds:"
            " it would be read as 1e+20, not as written",
        ),
        (
            str(2**60),
            f"number {2**60} has 19 significant digits, more than a double holds: it would be"
            " read as 1.152921504606847e+18, not as written",
        ),
    ],
)
@pytest.mark.parametrize("name, write", [("x.jsonl", _jsonl), ("x.json", _json_array)])
def test_an_integer_a_double_does_not_hold_is_refused_in_a_number_field(project, name, write, written, said):  # fmt: skip
    code, err, _ = _score(project, name, write(_rows(), {"x": written}))
    assert code == 2, err
    assert f"{name}:1: at /x: {said}" in err
    assert "Traceback" not in err


def test_an_integer_a_double_does_not_hold_is_refused_in_csv_alike(project):
    code, err, _ = _score(project, "x.csv", _csv7(_rows(x=100000000000000000001)).encode())
    assert code == 2
    assert (
        "x.csv:2: field x: number 100000000000000000001 has 21 significant digits, more than a"
        " double holds: it would be read as 1e+20, not as written"
    ) in err


@pytest.mark.parametrize("value", [2**53, 10**20, 12345678901234567, 10**300, -(10**300)])
def test_an_integer_a_double_holds_is_read_in_a_number_field(project, value):
    code, err, folder = _score(project, "ok.jsonl", _jsonl(_rows(x=value)))
    assert code == 0, err
    assert (folder / "S.json").is_file()


def test_a_long_value_keeps_the_rule_it_breaks(project):
    code, err, _ = _score(project, "m.jsonl", _jsonl(_rows(score=10**300)))
    assert code == 2
    assert "m.jsonl:1: at /score: " in err and "… is greater than the maximum of 10" in err
    code, err, _ = _score(project, "s.jsonl", _jsonl(_rows(model="y" * 300)))
    assert code == 2
    assert "s.jsonl:1: at /model: " in err and '… is not one of ["old", "new"]' in err


# -- a raw NUL byte: no text file holds one ---------------------------------------------------

NUL_RULE = "a text file holds none (is the file damaged, or not text?)"


@pytest.mark.parametrize("extra", [(), ("--partition-bytes", "1K")])
@pytest.mark.parametrize(
    "old, new, line, column",
    [
        ("\nt2,new", "\nt\x002,new", 4, 2),
        ("\nt3,new", "\nt3,n\u00e9w\x00", 6, 7),
        ("task,", "ta\x00sk,", 1, 3),
    ],
)
def test_a_nul_byte_in_a_csv_file_is_refused_at_its_line_and_column(project, old, new, line, column, extra):  # fmt: skip
    text = _csv7(_rows())
    assert text.count(old) == 1
    code, err, _ = _score(project, "nul.csv", text.replace(old, new).encode(), *extra)
    assert code == 2
    assert f"nul.csv:{line}: a NUL byte (U+0000) at column {column}: {NUL_RULE}" in err


def test_a_nul_byte_in_a_json_array_is_refused_at_its_line_and_column(project):
    data = _json_array(_rows()).replace(b'"t2"', b'"t\x002"', 1)
    code, err, _ = _score(project, "nul.json", data)
    assert code == 2
    assert (
        "nul.json:3: not valid JSON: a NUL byte (U+0000) at column 12, inside a string: JSON"
        " writes it escaped (\\u0000)"
    ) in err


def _passk(root, listed: bytes):
    import shutil

    studies = root / "spec" / "studies"
    studies.mkdir(parents=True)
    shutil.copy(FIXTURES / "newcomer" / "passk.yaml", studies / "passk.yaml")
    (studies / "disputed.txt").write_bytes(listed)
    return run_main("--project", root, "compile")


@pytest.mark.parametrize(
    "listed, said",
    [
        (b"HumanEval/1\nHumanEval/\x002\n", "line 2: a NUL byte (U+0000) at column 11"),
        ("HumanEval/1\u2028HumanEval/2\n".encode(), "line 1: character U+2028 at column 12"),
        (b"HumanEval/1\x0cHumanEval/2\n", "line 1: character U+000C at column 12"),
        (b"HumanEval/1\rHumanEval/2\n", "line 1: character U+000D at column 12"),
        (
            "HumanEval/1\n".encode("utf-16"),
            "line 1: not UTF-8: UTF-16 text (it starts with UTF-16's byte-order mark); save it as"
            " UTF-8",
        ),
    ],
)
def test_a_value_list_holding_a_nul_or_a_line_break_other_than_lf_is_refused(tmp_path, listed, said):  # fmt: skip
    got = _passk(tmp_path, listed)
    assert got.returncode == 2
    assert (
        f"spec/studies/passk.yaml:30: at /attempts/where/0/values_file: value list"
        f" 'disputed.txt': {said}"
    ) in got.stderr
    assert not (tmp_path / "generated").exists()


def test_a_value_list_with_crlf_line_endings_reads_its_values(tmp_path):
    got = _passk(tmp_path, b"HumanEval/1\r\n  HumanEval/2 \r\n# note\r\n")
    assert got.returncode == 0, got.stderr
    constants = (tmp_path / "generated" / "passk" / "constants.py").read_text()
    assert '"values": ("HumanEval/1", "HumanEval/2"),' in constants


def test_diff_of_two_spec_files_reads_their_value_lists(tmp_path):
    """``diff OLD NEW`` read neither file's value list (``diff --against`` did): two specs
    naming disputed.txt beside each, the lists differing, were 'no semantic changes'."""
    import shutil

    for side, extra in (("a", b""), ("b", b"HumanEval/9\n")):
        (tmp_path / side).mkdir()
        shutil.copy(FIXTURES / "newcomer" / "passk.yaml", tmp_path / side / "passk.yaml")
        listed = (FIXTURES / "newcomer" / "passk-disputed.txt").read_bytes() + extra
        (tmp_path / side / "disputed.txt").write_bytes(listed)
    got = run_main("diff", "a/passk.yaml", "b/passk.yaml", cwd=tmp_path)
    assert got.returncode == 1, got.stderr
    assert "registered  /attempts/where/0/values  [registered_changed]" in got.stdout
    assert '(added "HumanEval/9"). Not declared by an amendment.' in got.stdout
    shutil.copy(tmp_path / "a" / "disputed.txt", tmp_path / "b" / "disputed.txt")
    got = run_main("diff", "a/passk.yaml", "b/passk.yaml", cwd=tmp_path)
    assert got.returncode == 0 and "no semantic changes" in got.stdout, got.stdout


# -- the engines' own readers on the same rules -------------------------------------------------


def _jev_refusal(tmp_path, name: str, edit) -> list[str]:
    """The problems jev's score reader lists with its example input ``name`` edited."""
    import shutil

    from prereg.compiler.project import Project
    from prereg.engines.multicorrect import engine_config
    from prereg.engines.multicorrect.reader import read_packed_inputs
    from prereg.errors import UserError
    from prereg.study import study_context
    from tests.conftest import ROOT

    d = tmp_path / "in"
    shutil.copytree(ROOT / "examples" / "jev", d, ignore=shutil.ignore_patterns("*.py"))
    path = d / f"{name}.jsonl"
    path.write_bytes(edit(path.read_bytes()))
    config = engine_config(study_context(Project(ROOT), "jev-multicorrect")[1].config)
    names = ("lists", "labels", "predictions", "binary")
    with pytest.raises(UserError) as got:
        read_packed_inputs(config, *(str(d / f"{n}.jsonl") for n in names))
    return got.value.problems


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, mtime=0)


@pytest.mark.parametrize(
    "edit, said",
    [
        (
            lambda b: b.decode().encode("utf-16"),
            "not UTF-8: UTF-16 text (it starts with UTF-16's byte-order mark); save it as UTF-8",
        ),
        (_gzip, "not UTF-8: a gzip-compressed file; decompress it (gunzip) first"),
    ],
)
def test_jev_names_a_utf16_or_compressed_file_once(tmp_path, edit, said):
    """One problem of the file, where each of its 320 lines was one ('not valid UTF-8')."""
    problems = _jev_refusal(tmp_path, "labels", edit)
    assert problems == [f"{tmp_path / 'in' / 'labels.jsonl'}: {said}"]


def test_jev_refuses_a_huge_integer_at_its_field_in_the_64_bit_words(tmp_path):
    first = b'"candidate_index": '
    problems = _jev_refusal(tmp_path, "binary", lambda b: b.replace(first + b"0", first + HUGE.encode(), 1))  # fmt: skip
    assert problems[0] == (
        f"{tmp_path / 'in' / 'binary.jsonl'}:1: at /candidate_index: integer {HUGE[:24]}…"
        f" is outside the range of a 64-bit integer {RANGE}"
    )


def test_jev_names_a_nul_byte_and_its_column(tmp_path):
    problems = _jev_refusal(tmp_path, "labels", lambda b: b.replace(b"val-0001", b"val-\x000001", 1))  # fmt: skip
    assert problems[0] == (
        f"{tmp_path / 'in' / 'labels.jsonl'}:2: invalid JSON: a NUL byte (U+0000) at column 21,"
        " inside a string: JSON writes it escaped (\\u0000)"
    )


# -- CSV files joined, or cut by hand ----------------------------------------------------------


def _joined(text: str, middle: str) -> str:
    """``text`` (a header and nine records) with ``middle`` written before its sixth line."""
    lines = text.splitlines(True)
    return "".join(lines[:5]) + middle + "".join(lines[5:])


@pytest.mark.parametrize("extra", [(), ("--partition-bytes", "40", "--workers", "2")])
@pytest.mark.parametrize(
    "edit, said",
    [
        # a second export appended (with its BOM and header): its cells were a record's
        (
            lambda t: _joined(t, "\ufeff" + t.splitlines(True)[0]),
            "j.csv:6: a byte-order mark (U+FEFF) at column 1, inside the file (only a leading"
            " one is skipped): were two files joined? remove it",
        ),
        # a BOM alone before a record: 't3' read as '\ufefft3', another unit, another verdict
        (
            lambda t: _joined(t, "\ufeff"),
            "j.csv:6: a byte-order mark (U+FEFF) at column 1, inside the file",
        ),
        (
            lambda t: _joined(t, t.splitlines(True)[0]),
            "j.csv:6: the header line again (a CSV file has one header, on its first line: were"
            " two files joined? remove this line)",
        ),
        (
            lambda t: _joined(t, t.splitlines(True)[0]).replace("\n", "\r\n"),
            "j.csv:6: the header line again",
        ),
        # lines ended by CR alone: an empty one was skipped by pyarrow, as LF ones were
        (
            lambda t: _joined(t, "\n").replace("\n", "\r"),
            "j.csv:6: blank line (a CSV file has none",
        ),
    ],
)
def test_a_csv_file_joined_from_two_or_with_a_blank_cr_line_is_refused_at_its_line(project, edit, said, extra):  # fmt: skip
    code, err, _ = _score(project, "j.csv", edit(_csv7(_rows())).encode(), *extra)
    assert code == 2
    assert said in err, err


def test_a_csv_cell_holding_the_header_text_is_read(project):
    text = _csv7(_rows(task="task,model,score,n,x"))
    assert '"task,model,score,n,x"' not in text
    text = text.replace("\ntask,model,score,n,x,", '\n"task,model,score,n,x",', 1)
    code, err, folder = _score(project, "q.csv", text.encode())
    assert code == 0, err


def test_a_csv_file_with_cr_line_endings_is_read_as_with_lf(project):
    text = _csv7(_rows())
    code, err, lf = _score(project, "lf.csv", text.encode())
    assert code == 0, err
    code, err, cr = _score(project, "cr.csv", text.replace("\n", "\r").encode())
    assert code == 0, err
    read = [json.loads((f / "S.json").read_text()) for f in (lf, cr)]
    for doc in read:
        doc.pop("inputs")  # the file's name and digest
    assert read[0] == read[1]


@pytest.mark.parametrize("spell", ["./{name}", "sub/../{name}", "link.jsonl"])
def test_one_file_given_twice_under_two_spellings_is_refused(project, spell):
    """``a.jsonl`` and ``./a.jsonl`` (or a link to it) were read as two files: every record a
    duplicate of itself, refused at each line, or, under a policy that keeps the first or
    last, the same file counted once with nothing said."""
    code, err, folder = _score(project, "a.jsonl", _jsonl(_rows()[:4]))
    assert code == 0, err
    (folder / "sub").mkdir()
    (folder / "link.jsonl").symlink_to("a.jsonl")
    other = spell.format(name="a.jsonl")
    got = run_main(
        "--project", project, "grader-mean", "score", "--observations", "a.jsonl",
        "--observations", other, "--out", "T.json", cwd=folder,
    )  # fmt: skip
    assert got.returncode == 2
    assert (
        f"error: --observations {other}: given twice (the file a.jsonl is); each file is read once"
    ) in got.stderr
    assert not (folder / "T.json").exists()


@pytest.mark.parametrize(
    "rows, cell, total",
    [
        ("9007199254740991", "old", 9007199254740991),
        ("500000001", "new", 1000000002),
        ("500000000", None, 0),
    ],
)
def test_a_study_registering_more_rows_than_score_lists_is_refused_by_compile(tmp_path, rows, cell, total):  # fmt: skip
    """rows: 9007199254740991 (within what JSON carries) compiled, and score then ran without
    end listing the registered rows; two cells of 500,000,000 rows are the most."""
    from tests.conftest import compile_edited

    source = FIXTURES / "mean_threshold" / "grader-mean.yaml"
    got, err, line_of = compile_edited(tmp_path, "grader-mean", [("rows: 5,", f"rows: {rows},")], source)  # fmt: skip
    assert got == (2 if cell else 0), err
    if cell:
        assert (
            f"spec/studies/grader-mean.yaml:{line_of('/crossings/0')}: at /crossings/0: with cell"
            f" {cell!r} ({int(rows):,} rows) the study registers {total:,} rows; a study"
            " registers at most 1,000,000,000 (score lists each row)"
        ) in err


# -- text that looks like other text -----------------------------------------------------------

LANG = '      - {name: lang, type: string, allowed: ["caf\\u00e9", "x"]}\n'


@pytest.fixture(scope="module")
def lang_project(tmp_path_factory):
    """The mean_threshold study with a field ``lang`` allowing ``café`` (NFC) and ``x``."""
    text = (FIXTURES / "mean_threshold" / "grader-mean.yaml").read_text(encoding="utf-8")
    text = text.replace(FIELD, FIELD + LANG)
    root = study_project(tmp_path_factory.mktemp("h7") / "p", "grader-mean", text)
    assert run_main("--project", root, "compile").returncode == 0
    return root


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_a_value_in_another_normalisation_form_or_with_invisible_characters_is_named(lang_project, suffix):  # fmt: skip
    rows = [{**r, "lang": "x"} for r in ROWS]
    rows[0]["lang"] = "cafe\u0301"  # NFD: looks like the allowed café
    rows[1]["lang"] = "x\u202eabc"  # a right-to-left override: the rest of the line reversed
    rows[2]["lang"] = "x\u200d"  # a zero-width joiner: looks like x
    if suffix == "jsonl":
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    else:
        keys = ("task", "model", "score", "lang")
        cell = lambda v: "" if v is None else str(v)  # noqa: E731
        data = ",".join(keys) + "\n" + "".join(",".join(cell(r[k]) for k in keys) + "\n" for r in rows)  # fmt: skip
    code, err, _ = _score(lang_project, f"v.{suffix}", data.encode())
    assert code == 2
    first = 1 if suffix == "jsonl" else 2
    assert (
        f'v.{suffix}:{first}: at /lang: "cafe\u0301" is not one of ["caf\u00e9", "x"] (it is "caf\u00e9" in'
        " another Unicode normalisation form: the value is NFD, the contract's NFC; write it as"
        " the contract does)"
    ) in err
    assert f'v.{suffix}:{first + 1}: at /lang: "x\\u202eabc" is not one of' in err
    assert f'v.{suffix}:{first + 2}: at /lang: "x\\u200d" is not one of' in err
    assert "\u202e" not in err and "\u200d" not in err


def test_allowed_values_equal_but_for_their_normalisation_form_are_refused(tmp_path):
    from tests.conftest import compile_edited

    source = FIXTURES / "mean_threshold" / "grader-mean.yaml"
    twins = LANG.replace('"x"', '"cafe\\u0301"')
    code, err, line_of = compile_edited(tmp_path, "grader-mean", [(FIELD, FIELD + twins)], source)
    assert code == 2
    at = "/record_contracts/0/fields/3/allowed/1"
    assert (
        f"grader-mean.yaml:{line_of(at)}: at {at}: allowed values 'caf\\xe9' and 'cafe\\u0301'"
        " are the same text in two Unicode normalisation forms: they look the same; keep one"
    ) in err


def test_a_spec_value_holding_a_right_to_left_override_is_shown_escaped(tmp_path):
    from tests.conftest import compile_edited

    source = FIXTURES / "mean_threshold" / "grader-mean.yaml"
    code, err, _ = compile_edited(tmp_path, "grader-mean", [("{id: new}", '{id: "ne\\u202ew"}')], source)  # fmt: skip
    assert code == 2
    assert 'at /factors/0/levels/1/id: "ne\\u202ew" does not match the pattern' in err
    assert "\u202e" not in err


@pytest.mark.parametrize("name", ["gone.csv", "gone.parquet", "gone.jsonl"])
def test_a_missing_observations_file_is_said_missing_in_every_format(project, name):
    """A CSV or Parquet file that does not exist was 'not a regular file'."""
    got = run_main(
        "--project", project, "grader-mean", "score", "--observations", name, "--out", "S.json",
        cwd=project,
    )  # fmt: skip
    assert got.returncode == 2
    assert got.stderr == f"error: {name}: cannot read: No such file or directory\n"
    assert not (project / "S.json").exists()


@pytest.mark.parametrize("out", ["S.md", "sub/../S.md"])
def test_an_output_named_as_its_own_report_is_refused_as_such(project, out):
    """``--out S.md`` (SCORE.md is written beside the output as S.md) said 'S.md: output file
    already exists' of a file that did not exist."""
    (project / "runs").mkdir(exist_ok=True)
    (project / "runs" / "sub").mkdir(exist_ok=True)
    data = _jsonl(_rows())
    (project / "runs" / "o.jsonl").write_bytes(data)
    got = run_main(
        "--project", project, "grader-mean", "score", "--observations", "o.jsonl",
        "--out", out, cwd=project / "runs",
    )  # fmt: skip
    assert got.returncode == 2
    assert "the output and its Markdown report (written beside it as NAME.md) would be this one file" in got.stderr  # fmt: skip
    assert "already exists" not in got.stderr
    assert sorted(p.name for p in (project / "runs").iterdir() if p.is_file()) == ["o.jsonl"]


REGISTRATION = """registration:
  source_title: pass@k of two code models
  authors: []
  registration_date: "2026-12-04"
  identifier: none
  data_status: no data collected
  research_question: q
  rationale: r
  sampling_plan: s
  stopping_rule: s
  exclusions: the problems of disputed.txt
  missing_data: m
  confirmatory: c
  exploratory: e
  blinding: b
  deviations: d
"""


def test_a_sealed_study_with_a_value_list_is_amended_by_declaring_its_values_file(tmp_path):
    """seal of a study with a value list, end to end: the seal pins the values; a changed list
    is a registered change that check reports, and an amendment declaring the condition's
    values_file (the key the spec writes) declares it (it had to name values and
    values_sha256, which the spec does not write)."""
    import shutil

    studies = tmp_path / "spec" / "studies"
    studies.mkdir(parents=True)
    text = (FIXTURES / "newcomer" / "passk.yaml").read_text(encoding="utf-8")
    pass5 = "  - id: pass5\n    title: pass@5 of each model, with its interval\n"
    assert text.count(pass5) == 1
    text = text.replace(pass5, pass5 + "    reported_only: true\n") + REGISTRATION
    (studies / "passk.yaml").write_text(text, encoding="utf-8")
    shutil.copy(FIXTURES / "newcomer" / "passk-disputed.txt", studies / "disputed.txt")
    assert run_main("--project", tmp_path, "compile").returncode == 0
    got = run_main("--project", tmp_path, "seal", "passk")
    assert got.returncode == 0, got.stderr
    sealed = json.loads((studies / "passk.seal.json").read_text())
    assert "HumanEval/77" in json.dumps(sealed)
    assert run_main("--project", tmp_path, "check").returncode == 0
    with (studies / "disputed.txt").open("a") as f:
        f.write("HumanEval/9\n")
    got = run_main("--project", tmp_path, "compile")  # compile refuses first, as check does
    assert got.returncode == 2
    assert "at /attempts/where/0/values: registered content changed since the seal" in got.stderr
    got = run_main("--project", tmp_path, "check")
    assert got.returncode == 1
    said = got.stdout + got.stderr
    assert "at /attempts/where/0/values: registered content changed since the seal" in said
    assert "Declare /attempts/where/0/values_file (its value list) in a new amendment's" in said
    spec = studies / "passk.yaml"
    text = spec.read_text(encoding="utf-8").replace('version: "0.1"', 'version: "0.2"', 1)
    spec.write_text(
        text + 'amendments:\n  - version: "0.2"\n    date: "2026-12-04"\n'
        "    rationale: one more disputed problem\n"
        '    paths: ["/attempts/where/0/values_file"]\n',
        encoding="utf-8",
    )
    assert run_main("--project", tmp_path, "compile").returncode == 0
    got = run_main("--project", tmp_path, "check")
    assert got.returncode == 0, got.stdout + got.stderr


@pytest.mark.parametrize("extra", [(), ("--workers", "2", "--partition-bytes", "100")])
@pytest.mark.parametrize("arrow_type", ["int64", "uint64"])
def test_a_parquet_integer_a_double_does_not_hold_is_refused_in_a_number_field(project, tmp_path, arrow_type, extra):  # fmt: skip
    """An int64 column's 2^60 + 1 in a number field was read as 1.152921504606847e18 (a
    uint64 column's value was refused): refused at its row as in JSONL and CSV."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows()
    table = pa.table(
        {
            **{k: [r[k] for r in rows] for k in ("task", "model", "score", "n")},
            "x": pa.array([2**60 + 1] + [1] * (len(rows) - 1), getattr(pa, arrow_type)()),
        }
    )
    pq.write_table(table, tmp_path / "x.parquet")
    code, err, _ = _score(project, "x.parquet", (tmp_path / "x.parquet").read_bytes(), *extra)
    assert code == 2
    assert (
        f"x.parquet: row group 0, row 1: at /x: number {2**60 + 1} has 19 significant digits,"
        " more than a double holds: it would be read as 1.152921504606847e+18, not as written"
    ) in err


@pytest.mark.parametrize("suffix", ["jsonl", "json"])
def test_a_huge_integer_inside_a_free_object_field_is_refused_at_its_path(tmp_path, suffix):
    """An object field's content is free, so the contract check passed an integer of more
    digits than any later step converts: it is refused at its path."""
    from prereg.errors import UserError
    from prereg.tabular import read_contract_records

    schema = tmp_path / "r.schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {"id": {"type": "string"}, "meta": {"type": "object"}},
                "required": ["id"],
                "additionalProperties": False,
            }
        )
    )
    lines = ['{"id": "a"}', '{"id": "b", "meta": {"k": [1, ' + HUGE + "]}}"]
    text = "".join(x + "\n" for x in lines) if suffix == "jsonl" else "[" + ",\n".join(lines) + "]"
    path = tmp_path / f"r.{suffix}"
    path.write_text(text)
    fields = [{"name": "id", "type": "string"}, {"name": "meta", "type": "object"}]
    with pytest.raises(UserError) as got:
        read_contract_records(path, schema, fields)
    assert got.value.problems == [
        f"{path}:2: at /meta/k/1: integer {HUGE[:24]}… is outside the range of a 64-bit integer"
        f" {RANGE}"
    ]


@pytest.mark.parametrize("block", [1, 2, 3, 5, 1 << 24])
@pytest.mark.parametrize(
    "data, line",
    [
        (b"a,b\n1,2\na,b\n", 3),
        (b"a,b\n1,2\na,b", 3),  # the file's last line, without its LF
        (b"a,b\r\n1,2\r\na,b\r\n", 3),
        (b"a,b\ra,b\r", 2),  # lines ended by CR alone
        (b"\xef\xbb\xbfa,b\n1,2\na,b\n", 3),  # after a leading BOM
        (b"a,b\n1,2\na,b,c\n", None),  # a longer line starting as the header
        (b'a,b\n"x\na,b\ny",2\n', None),  # inside a quoted cell: text
        (b"a,b\n1,2\n", None),
    ],
)
def test_the_header_line_again_is_found_wherever_the_blocks_cut(tmp_path, monkeypatch, block, data, line):  # fmt: skip
    from prereg import tabular

    monkeypatch.setattr(tabular, "CSV_BLOCK", block)
    path = tmp_path / "x.csv"
    path.write_bytes(data)
    assert tabular._header_again(path) == line


def test_jev_shows_a_long_probability_cut(tmp_path):
    """A 400-digit probability was echoed whole in its one-line message."""
    first = b'"probability": 0.7025'
    long = b'"probability": 1' + b"0" * 400
    problems = _jev_refusal(tmp_path, "binary", lambda b: b.replace(first, long, 1))
    assert problems[0] == (
        f"{tmp_path / 'in' / 'binary.jsonl'}:1: probability: {'1' + '0' * 29}… is not a finite"
        " number in [0, 1]"
    )
