"""simulate draws and writes its rows in batches (engines/factorial/simulation.py): a row's
records depend on the scenario, the seed and the row alone, whatever the batch size and
whatever other rows are drawn; the batch encoder writes the canonical encoder's bytes; the
outcome, failed-attempt and coverage draws follow the scenario (binomial SEs worked out in the
tests); the numbers follow their distributions (scipy's Kolmogorov–Smirnov test); RFC 8785's
float texts are the rfc8785 package's own."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import rfc8785
from scipy import stats

from prereg.cli import main
from prereg.compiler.project import find_project
from prereg.decide import scenarios as registered
from prereg.decide.table import RowTable
from prereg.engines.factorial import commands
from prereg.engines.factorial.lines import float_texts
from prereg.engines.factorial.simulation import Simulation, simulated_records
from prereg.files import canonical_bytes_nl
from prereg.study import study_context
from tests.conftest import FIXTURES, ROOT

STUDIES = {
    "answer-position": ROOT / "examples" / "answer-position" / "spec" / "studies",
    "tool-agents": FIXTURES / "factorial",
    "paired": FIXTURES / "diagnose",
    "calibration": FIXTURES / "diagnose",
}
# (study, scenario): coverage and failed attempts; numbers with decimals and a whole-number
# field; a pairing with numbers; a calibration curve
CASES = [
    ("answer-position", "position-bias"),
    ("answer-position", "low-coverage"),
    ("tool-agents", "gamma-best"),
    ("paired", "correlated"),
    ("calibration", "overconfident"),
]


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    """study id -> (config, registered rows: from its items as `items` writes them)."""
    out = {}
    for sid, folder in STUDIES.items():
        root = tmp_path_factory.mktemp(sid)
        (root / "spec" / "studies").mkdir(parents=True)
        shutil.copy(folder / f"{sid}.yaml", root / "spec" / "studies")
        (root / "generated").mkdir()
        shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
        assert main(["--project", str(root), "compile"]) == 0
        module, ctx = study_context(find_project(str(root)), sid)
        items = None
        if commands._has(ctx.config, "items"):
            items = root / "items.jsonl"
            assert main(["--project", str(root), sid, "items", "--out", str(items), "--quiet"]) == 0
        table = commands._items_table(ctx.config, module, None if items is None else str(items))
        out[sid] = (ctx.config, table or commands.registered_rows(ctx.config))
    return out


def written(config, table: RowTable, scenario: str, seed: int = 7, batch: int = 1 << 16):
    sim = Simulation(config, table, registered.scenario(config, scenario), seed)
    return b"".join(sim.chunks(batch=batch))


def by_row(data: bytes) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for line in data.splitlines(keepends=True):
        out.setdefault(json.loads(line)["rowId"], []).append(line)
    return out


def sub_table(table: RowTable, rows) -> RowTable:
    rows = list(rows)
    return RowTable(
        ids=tuple(table.ids[i] for i in rows),
        cell=table.cell[rows],
        cells=table.cells,
        columns={k: [v[i] for i in rows] for k, v in table.columns.items()},
    )


@pytest.mark.parametrize("study, scenario", CASES)
def test_the_bytes_are_the_canonical_encoders_and_do_not_depend_on_the_batch(
    studies, study, scenario
):
    config, table = studies[study]
    want = b"".join(
        canonical_bytes_nl(r)
        for r in simulated_records(config, table, registered.scenario(config, scenario), 7)
    )
    assert want  # the records as dicts, encoded one by one
    for batch in (1, 13, 1000, 1 << 16):
        assert written(config, table, scenario, batch=batch) == want, batch


@pytest.mark.parametrize("study, scenario", [c for c in CASES if c[1] != "low-coverage"])
def test_a_rows_records_do_not_depend_on_the_other_rows(studies, study, scenario):
    """Every third row, in reverse order: each keeps its records (coverage is 1 here: with
    coverage below 1 a cell's observed rows are chosen among its rows, by design)."""
    config, table = studies[study]
    full = by_row(written(config, table, scenario))
    rows = list(range(len(table)))[::3][::-1]
    part = by_row(written(config, sub_table(table, rows), scenario, batch=5))
    assert set(part) == {table.ids[i] for i in rows}
    assert all(part[r] == full[r] for r in part)
    # another seed or scenario draws otherwise
    assert by_row(written(config, table, scenario, seed=8)) != full


def big_table(config, cells: dict[str, int]) -> RowTable:
    """``n`` rows of each named cell (ids unrelated to the cell)."""
    index = {c["id"]: k for k, c in enumerate(config["cells"])}
    ids, cell = [], []
    for name, n in cells.items():
        ids += [f"row-{name}-{k}" for k in range(n)]
        cell += [index[name]] * n
    return RowTable(ids=tuple(ids), cell=np.array(cell), cells=tuple(config["cells"]))


def test_outcomes_failures_and_coverage_follow_the_scenario(studies):
    """answer-position's position-bias: model A at position a 0.80, at d 0.70, else 0.75; 5%
    of first attempts fail. Over 40,000 rows a cell, each share is within 4 binomial SEs,
    sqrt(p(1 - p)/n), of its rate; the failed attempts do not move the outcome (their rows'
    share right is the cell's rate too). low-coverage observes floor(0.9 n) rows a cell."""
    config, _ = studies["answer-position"]
    n = 40_000
    rates = {"tst-a-pa-plain": 0.80, "tst-a-pd-json": 0.70, "tst-b-pb-plain": 0.75}
    table = big_table(config, dict.fromkeys(rates, n))
    recs = by_row(written(config, table, "position-bias"))
    for name, p in rates.items():
        mine = [[json.loads(x) for x in recs[f"row-{name}-{k}"]] for k in range(n)]
        right = np.array([r[-1]["correct"] for r in mine])
        failed = np.array([len(r) == 2 for r in mine])
        assert all(r[0]["correct"] is None for r in mine if len(r) == 2)
        assert abs(right.mean() - p) < 4 * math.sqrt(p * (1 - p) / n), name
        assert abs(failed.mean() - 0.05) < 4 * math.sqrt(0.05 * 0.95 / n), name
        m = int(failed.sum())
        assert abs(right[failed].mean() - p) < 4 * math.sqrt(p * (1 - p) / m), name
    kept = by_row(written(config, table, "low-coverage"))
    for name in rates:
        assert sum(r.startswith(f"row-{name}-") for r in kept) == math.floor(0.9 * n)


def test_numbers_follow_their_distributions(studies):
    """tool-agents' gamma-best: a right row's score is uniform on [0.6, 1] rounded to 3
    decimals; steps of the code tool are normal(8, 2) clipped at 1 and rounded to whole
    numbers. Kolmogorov–Smirnov against the same distributions, discretised as drawn."""
    config, _ = studies["tool-agents"]
    cells = [c["id"] for c in config["cells"] if c["levels"].get("tool") == "code"]
    table = big_table(config, dict.fromkeys(cells[:2], 6000))
    recs = [json.loads(x) for x in written(config, table, "gamma-best").splitlines()]
    counted = [r for r in recs if r["status"] == "ok"]
    scores = np.array([r["score"] for r in counted if r["passed"]])
    assert np.all(np.round(scores * 1000) == scores * 1000)  # 3 decimals
    # the uniform on [0.6, 1] after rounding to 0.001: jitter each value inside its bin back
    jitter = np.random.default_rng(1).uniform(-0.0005, 0.0005, scores.size)
    u = np.clip(scores + jitter, 0.6, 1.0)
    assert stats.kstest(u, stats.uniform(0.6, 0.4).cdf).pvalue > 1e-3
    steps = np.array([r["steps"] for r in counted])
    assert steps.dtype.kind == "i" and steps.min() >= 1
    # whole numbers: compare each value's share with the normal's mass on [k - 0.5, k + 0.5)
    ks, counts = np.unique(steps, return_counts=True)
    norm = stats.norm(8, 2)
    for k, c in zip(ks.tolist(), counts.tolist(), strict=True):
        p = norm.cdf(k + 0.5) - (norm.cdf(k - 0.5) if k > 1 else 0.0)
        assert abs(c / steps.size - p) < 4 * math.sqrt(p * (1 - p) / steps.size) + 1e-4, k


@pytest.mark.parametrize(
    "x",
    [0.0, -0.0, 1.0, -3.0, 0.1, 1 / 3, 2.5e-7, 1e-7, 9.99e-8, 1e-4, 1.5e-5, 123456.789,
     1e15, 1e16, 1.5e16, 9.999e20, 1e21, 1.7976931348623157e308, 5e-324, -2.2250738585072014e-308,
     0.8125, 4.35, 1e22],
)  # fmt: skip
def test_float_texts_are_rfc8785s(x):
    assert float_texts(np.array([x])) == [rfc8785.dumps(x).decode("ascii")]


def test_float_texts_of_random_doubles_are_rfc8785s():
    rng = np.random.default_rng(4)
    x = rng.standard_normal(3000) * 10.0 ** rng.integers(-12, 25, 3000)
    assert float_texts(x) == [rfc8785.dumps(v).decode("ascii") for v in x.tolist()]


def test_simulate_writes_nothing_when_a_row_cannot_be_drawn(studies, tmp_path):
    """A rate missing for an observed row's cell is found in a later batch: the command fails
    and leaves no file (the batches went to a temporary file)."""
    from prereg.errors import UserError
    from prereg.files import write_new

    config, table = studies["answer-position"]
    sc = dict(registered.scenario(config, "position-bias"))
    sc["rates"] = [r for r in sc["rates"] if r.get("where")]  # no rate for most cells
    out = tmp_path / "obs.jsonl"
    sim = Simulation(config, table, sc, 1)
    with pytest.raises(UserError, match="gives no rate for cell"):
        write_new(out, sim.chunks(batch=7))
    assert not out.exists() and list(tmp_path.iterdir()) == []


ODD_IDS = [
    "plain-1",
    "caf\u00e9-2",  # UTF-8 written as it is
    'a "quoted" id',  # escaped by the encoder
    "back\\slash",
    "tab\tand\nnewline",  # control characters: \t \n
    "del\x7f",
    "\U0001f600",
    "nbsp\u00a0space",  # not printable to Python: written value by value, the same bytes
    "x" * 5000,  # a long id: the batch's fixed-width texts
    "",
]


@pytest.mark.parametrize("budget", [None, 4096])
def test_odd_ids_are_written_as_the_canonical_encoder_writes_them(studies, monkeypatch, budget):
    """Ids the template cannot quote as they are, non-ASCII ids and a long one, spread over
    two cells; ``budget`` shrinks the bytes a batch may hold at a fixed width so that the
    long id's batch takes the record-by-record path."""
    from prereg.engines.factorial import simulation

    if budget is not None:
        monkeypatch.setattr(simulation, "_TEXT_BYTES", budget)
    config, _ = studies["answer-position"]
    index = {c["id"]: k for k, c in enumerate(config["cells"])}
    ids = [f"{x}-{k}" for k in range(3) for x in ODD_IDS]
    cell = [index["tst-a-pa-plain"] if k % 2 else index["tst-b-pb-plain"] for k in range(len(ids))]
    table = RowTable(ids=tuple(ids), cell=np.array(cell), cells=tuple(config["cells"]))
    sc = registered.scenario(config, "position-bias")
    want = b"".join(canonical_bytes_nl(r) for r in simulated_records(config, table, sc, 3))
    assert written(config, table, "position-bias", seed=3) == want
    assert written(config, table, "position-bias", seed=3, batch=4) == want
    assert {json.loads(x)["rowId"] for x in want.splitlines()} == set(ids)
