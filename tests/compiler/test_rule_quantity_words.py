"""PREREG.md (and the export) word every quantity a rule may compare. A rule on an analysis'
statistic, standard error or degrees of freedom used to render with no word at all
("`welch`:  > 2"), so the registered rule could not be read from the preregistration."""

from __future__ import annotations

import shutil

from prereg.cli import main
from tests.conftest import FIXTURES, ROOT


def test_rules_on_statistic_se_and_df_are_worded(tmp_path):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    shutil.copy(FIXTURES / "analyses" / "many-shapes.yaml", tmp_path / "spec" / "studies")
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    assert main(["--project", str(tmp_path), "compile"]) == 0
    text = (tmp_path / "generated" / "many_shapes" / "PREREG.md").read_text()
    # the fixture's rule: statistic > 2, se < 1, df > 10 of the analysis `welch`
    assert "- `welch`: statistic > 2" in text
    assert "- `welch`: standard error < 1" in text
    assert "- `welch`: degrees of freedom > 10" in text
    assert "`welch`:  " not in text  # no quantity left without its word
