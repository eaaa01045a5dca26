"""``diagnose --vary units[:LEVEL]=...``: the number of units a study registers per cell (the
first question of a clustered or multi-sample design: how many problems?), the cells' rows
moving with it in the registered ratio; and ``--vary rows`` on a study with units, whose
registered number of units moves with the rows.

The power at each number of problems is checked against an independent simulation of the
registration's words (samples-units: 12 samples a problem under each decoding, a problem's
latent normal shared by both with intraclass correlation 0.4, 3% of each cell's samples
missing at random, a problem analysed with 10 valid samples, pass@5 by the unbiased estimator
with ``math.comb``, the gate 75% of the registered problems), vectorised over studies here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from prereg.cli import main
from prereg.diagnose.redesign import parse_vary, varied_config
from prereg.errors import UserError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "units" / "spec" / "studies"
STUDY = "samples-units"


@pytest.fixture(scope="module")
def spec() -> dict:
    return yaml.safe_load((EXAMPLE / f"{STUDY}.yaml").read_text())


@pytest.fixture(scope="module")
def root(spec, tmp_path_factory) -> Path:
    spec = json.loads(json.dumps(spec))
    spec["scenarios"][0]["rates"][0]["rate"] = 0.24  # power neither 0 nor 1 at 20 problems
    root = tmp_path_factory.mktemp("units")
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{STUDY}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    assert main(["--project", str(root), "compile"]) == 0
    return root


def config_of(root: Path) -> dict:
    from prereg.compiler.project import Project
    from prereg.study import study_context

    return study_context(Project(root), STUDY)[1].config


def diagnose(root: Path, out: Path, vary: str, n: int) -> dict:
    args = ["--project", str(root), STUDY, "diagnose", "--quiet", "--simulations", str(n)]
    args += ["--seed", "11", "--out", str(out), "--vary", vary]
    assert main(args) == 0
    return json.loads(out.read_text())


def oracle_power(problems: int, reps: int, seed: int) -> float:
    """Share of simulated studies where the gate holds and nucleus' pass@5 reaches 0.55."""
    from scipy.special import ndtri

    rng = np.random.default_rng(seed)
    rows, rho = 12 * problems, 0.4
    kept = math.floor(0.97 * rows + 1e-9)
    problem = np.repeat(np.arange(problems), 12)
    w = rng.standard_normal((reps, problems))
    supported = np.ones(reps, dtype=bool)
    for rate, scored in ((0.2, False), (0.24, True)):
        z = math.sqrt(rho) * w[:, problem] + math.sqrt(1 - rho) * rng.standard_normal((reps, rows))
        passed = z < ndtri(rate)
        seen = np.argsort(rng.random((reps, rows)), axis=1)[:, :kept]
        mask = np.zeros((reps, rows), dtype=bool)
        np.put_along_axis(mask, seen, True, axis=1)
        n = np.stack([np.bincount(problem[m], minlength=problems) for m in mask])
        c = np.stack(
            [
                np.bincount(problem[m], weights=p[m], minlength=problems)
                for m, p in zip(mask, passed, strict=True)
            ]
        ).astype(int)
        ok = n >= 10
        supported &= ok.sum(axis=1) / problems >= 0.75
        if scored:
            table = {
                (a, b): 1.0 - math.comb(a - b, 5) / math.comb(a, 5)
                for a in range(10, 13)
                for b in range(a + 1)
            }
            est = np.array(
                [
                    np.mean([table[(int(a), int(b))] for a, b in zip(ni[oi], ci[oi], strict=True)])
                    if oi.any()
                    else -1.0
                    for ni, ci, oi in zip(n, c, ok, strict=True)
                ]
            )
            supported &= est >= 0.55
    return float(supported.mean())


def agree(p_diag: float, n_diag: int, p_oracle: float, n_oracle: int, z: float = 4.0) -> None:
    p = (p_diag * n_diag + p_oracle * n_oracle) / (n_diag + n_oracle)
    se = math.sqrt(max(p * (1 - p), 1e-4) * (1 / n_diag + 1 / n_oracle))
    assert abs(p_diag - p_oracle) <= z * se, (p_diag, p_oracle, se)


def test_varying_the_units_moves_the_rows_and_the_power_follows_an_independent_simulation(
    root, tmp_path
):
    doc = diagnose(root, tmp_path / "D.json", "units=8,32", 150)
    red = doc["redesign"]
    assert red["parameter"] == "units:problem" and red["values"] == [8, 32]
    assert [p["rows"] for p in red["points"]] == [2 * 12 * 8, 2 * 12 * 32]
    for p, problems in zip(red["points"], (8, 32), strict=True):
        (cond,) = p["conditions"]
        (h,) = cond["hypotheses"]
        assert h["verdict"] == "supported"
        agree(h["share"], 150, oracle_power(problems, 2000, seed=problems), 2000)


def test_rows_and_units_say_the_same_design(root, spec):
    config = config_of(root)
    by_units = varied_config(config, parse_vary("units:problem=40", config), 40)
    by_rows = varied_config(config, parse_vary("rows=480", config), 480)
    assert by_units == by_rows
    assert [c["rows"] for c in by_units["cells"]] == [480, 480]
    assert [u["registered"] for u in by_units["units"]] == [40]
    fewer = varied_config(config, parse_vary("rows=60", config), 60)
    assert [u["registered"] for u in fewer["units"]] == [5]  # 20 x 60/240
    odd = varied_config(config, parse_vary("rows=100", config), 100)
    assert [u["registered"] for u in odd["units"]] == [9]  # 20 x 100/240 = 8.33, rounded up
    assert config["units"][0]["registered"] == 20  # the registered config is left alone


@pytest.mark.parametrize(
    "text, words",
    [
        ("units:nope=3", "no unit level 'nope'"),
        ("units=0", "0 units: a cell needs at least one unit"),
        ("units=7.5", "'7.5' is not a whole number of units"),
        ("units=4,4", "4 is listed twice"),
    ],
)
def test_bad_values_are_refused(root, text, words):
    config = config_of(root)
    with pytest.raises(UserError) as exc:
        parse_vary(text, config)
    assert words in exc.value.message


def test_a_ratio_of_rows_to_units_that_is_not_whole_is_refused(root):
    config = json.loads(json.dumps(config_of(root)))
    config["units"][0]["registered"] = 7  # 240 rows for 7 problems
    with pytest.raises(UserError) as exc:
        parse_vary("units=10", config)
    assert "registers 240 rows for 7 units of problem, not a whole number" in exc.value.message
    del config["units"][0]["registered"]
    with pytest.raises(UserError) as exc:
        parse_vary("units=10", config)
    assert "0 levels register a number of units per cell" in exc.value.message
