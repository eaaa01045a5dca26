"""A missing required key is reported with what it says and, when the language lists its
values, those: a newcomer's attempts block without `counts` (tests/fixtures/newcomer/
verif.yaml has no `order`, so which attempt counts seemed moot) is told the words to choose
from."""

from __future__ import annotations

from prereg.cli import main
from tests.conftest import FIXTURES


def test_a_missing_enumerated_key_lists_its_values(tmp_path, capsys):
    text = (FIXTURES / "newcomer" / "verif.yaml").read_text()
    assert text.count("  counts: first\n") == 1
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "verif.yaml").write_text(text.replace("  counts: first\n", ""))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    assert (
        "at /attempts: missing required key: 'counts' (Which attempt of a row counts; one of:"
        " last, first, first-success, last-any, first-match)"
    ) in capsys.readouterr().err
