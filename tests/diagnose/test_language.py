"""Compile-time checks of the scenario and claim words: every problem is refused with its
pointer and rule before anything is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from prereg.cli import main
from tests.conftest import ROOT
from tests.diagnose.helpers import EXAMPLE

SPEC = EXAMPLE / "spec" / "studies" / "answer-position.yaml"


def compile_with(tmp_path: Path, edit) -> tuple[int, str]:
    spec = yaml.safe_load(SPEC.read_text())
    edit(spec)
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "answer-position.yaml").write_text(yaml.safe_dump(spec))
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    return main(["--project", str(root), "compile"]), str(root)


def scenario(spec, sid):
    return next(s for s in spec["scenarios"] if s["id"] == sid)


def claim(spec, cid):
    return next(c for c in spec["claims"] if c["id"] == cid)


CASES = {
    "both outcome and metric": (
        lambda s: scenario(s, "no-bias").update(metric="accuracy"),
        "/scenarios/1: scenario 'no-bias' takes exactly one of outcome and metric",
    ),
    "a moving rate without effects": (
        lambda s: scenario(s, "no-bias")["rates"][0].update(effect=1),
        "scenario 'no-bias': a rate moves with the effect size, so the scenario needs effects",
    ),
    "a rate beyond 1 at an effect": (
        lambda s: scenario(s, "position-effect").update(effects=[0, 0.6]),
        "scenario 'position-effect': at effect 0.6 this rate is 1.05, not a probability",
    ),
    "a cell without a rate": (
        lambda s: scenario(s, "no-bias")["rates"][0].update(
            where=[{"factor": "model", "levels": ["model-a"]}]
        ),
        "scenario 'no-bias' gives no rate for the rows of cell",
    ),
    "a metric scenario in a factorial study": (
        lambda s: (
            scenario(s, "no-bias").pop("outcome"),
            scenario(s, "no-bias").update(metric="accuracy"),
        ),
        "the factorial engine writes observations, so a scenario draws an outcome field",
    ),
    "a claim of two kinds": (
        lambda s: claim(s, "h1-power").update(
            half_width={"rows": 5, "interval": "wilson", "level": 0.95, "p": 0.5}
        ),
        "claim 'h1-power' takes exactly one of half_width, power, detectable, verdict (found 2)",
    ),
    "a power claim on an untested contrast": (
        lambda s: claim(s, "a-vs-d-power")["power"].update(contrast="nope"),
        "claim 'a-vs-d-power' names unknown contrast 'nope'",
    ),
    "a family without its effect": (
        lambda s: claim(s, "h1-power")["verdict"].pop("effect"),
        "scenario 'position-effect' is a family; give its effect",
    ),
    "a verdict the hypothesis never gives": (
        lambda s: claim(s, "h1-power")["verdict"].update(verdict="maybe"),
        "hypothesis 'h1' gives no verdict 'maybe'",
    ),
    # the schema's bounds are inclusive: level 1 (or 0) compiled and diagnose failed with a
    # ValueError traceback from the Wilson interval
    "a half-width at level 1": (
        lambda s: claim(s, "cell-half-width")["half_width"].update(level=1),
        "/claims/0/half_width/level: claim 'cell-half-width': the level of an interval is"
        " strictly between 0 and 1 (got 1)",
    ),
    "a half-width at level 0": (
        lambda s: claim(s, "cell-half-width")["half_width"].update(level=0),
        "the level of an interval is strictly between 0 and 1 (got 0)",
    ),
    # 150 x 0.006 = 0.9 rounds down to 0 in every cell (the largest has 150 rows): simulate
    # wrote an empty file, which score refuses
    "a coverage that observes no row": (
        lambda s: scenario(s, "low-coverage").update(coverage=0.006),
        "/scenarios/2/coverage: scenario 'low-coverage': coverage 0.006 observes no row of any"
        " cell (each cell's rows times 0.006, rounded down, is 0; the largest cell has 150)",
    ),
    "a Clopper-Pearson half-width": (
        lambda s: claim(s, "cell-half-width")["half_width"].update(interval="clopper-pearson"),
        "the half-width of a clopper-pearson interval has no closed form here",
    ),
    "a repeated positional": (
        # an override of the engine's items command
        lambda s: s.update(
            commands=[
                {
                    "id": "items",
                    "arguments": [
                        {
                            "name": "out",
                            "kind": "positional",
                            "type": "path",
                            "repeated": True,
                            "help": "the manifest",
                        }
                    ],
                }
            ]
        ),
        "only an option may be repeated",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused(tmp_path, capsys, name):
    edit, needle = CASES[name]
    rc, root = compile_with(tmp_path, edit)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert needle in err, err
    assert not (Path(root) / "generated" / "answer_position").exists()


def test_the_example_compiles(tmp_path):
    rc, _ = compile_with(tmp_path, lambda s: None)
    assert rc == 0


def test_a_coverage_observing_one_row_of_the_largest_cell_compiles(tmp_path):
    # 150 x (1/150) = 1 row of each test cell (the tuning cells' 10 rows keep none)
    rc, _ = compile_with(tmp_path, lambda s: scenario(s, "low-coverage").update(coverage=1 / 150))
    assert rc == 0
