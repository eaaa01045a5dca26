"""The engine follows the configuration: a changed verb and changed cell sizes need no code edit."""

from __future__ import annotations

import pytest
from d17_helpers import DEMO, config, demo

from prereg.engines.reachability.audit import ShortcutAudit
from prereg.engines.reachability.config import load_config
from prereg.engines.reachability.generate import Generator
from prereg.engines.reachability.pipeline import check_oracle
from prereg.errors import UserError

KEY_OUTCOMES = {"missing-contrastive", "missing-negation", "missing-unrelated", "missing-absence"}


@pytest.fixture(scope="module")
def changed():
    cfg = config()
    pool_c = next(p for p in cfg["pools"] if p["id"] == "pool-c")
    assert pool_c["words"]["contrastive"] == "halts"
    pool_c["words"]["contrastive"] = "stops"
    n = 0
    for cell in cfg["cells"]:
        if (
            cell["split"] == "test"
            and cell["layout"] == "equalized"
            and cell["outcome"] in KEY_OUTCOMES
        ):
            assert cell["rows"] == 220
            cell["rows"] = 200
            n += 1
    assert n == 21
    ec = load_config(cfg)
    return ec, Generator(ec).corpus(DEMO)


def test_cell_sizes_follow_the_config(changed):
    ec, corpus = changed
    assert len(corpus.rows) == 5778 - 21 * 20
    sizes: dict[str, int] = {}
    for r in corpus.rows:
        sizes[f"{r.cell.split.word}:{r.cell.key}"] = (
            sizes.get(f"{r.cell.split.word}:{r.cell.key}", 0) + 1
        )
    for c in ec.cells:
        want = (
            200
            if c.split.word == "test"
            and c.layout.word == "equalized"
            and c.outcome.word in KEY_OUTCOMES
            else c.rows
        )
        assert sizes[f"{c.split.word}:{c.key}"] == want


def test_the_new_verb_replaces_the_old_one_everywhere_in_pool_c(changed):
    _, corpus = changed
    saw = 0
    for r in corpus.rows:
        lines = r.payload.split("\n")
        if r.cell.pool.id != "pool-c":
            continue
        assert not any(" halts " in ln for ln in lines)
        if r.cell.outcome.word == "missing-contrastive":
            a, b = r.world["chain"][r.world["failurePosition"] : r.world["failurePosition"] + 2]
            assert f"{a} stops {b}." in lines
            saw += 1
    assert saw == 2 * 3 + 200 + 200 + 30  # dev rows (3 cells), test h1, h3, faithful


def test_the_oracle_still_agrees_and_the_audit_sees_the_new_verb(changed):
    ec, corpus = changed
    check_oracle(ec, corpus.rows)
    audit = ShortcutAudit(ec)
    j = audit.fx.keys.index("contrastiveCount")
    for r in corpus.rows:
        if r.cell.pool.id == "pool-c" and r.cell.layout.word == "equalized":
            vals, _ = audit.fx.scalar_values(r)
            row = audit.fx.matrix([vals])[0]
            assert row[j] == r.world["targets"]["contrastive"]


def test_rows_keyed_by_cell_and_index_do_not_move(changed):
    # draws depend on (split, family, index in cell), not on the row's global position
    _, corpus = changed
    before = {(r.cell.split.word, r.cell.key, r.i): r.payload for r in demo().corpus.rows}
    same = 0
    for r in corpus.rows:
        if r.cell.pool.id != "pool-c":
            assert before[(r.cell.split.word, r.cell.key, r.i)] == r.payload
            same += 1
    assert same > 3000


def test_a_broken_config_is_refused_with_paths():
    cfg = config()
    cfg["pools"][0]["words"]["link"] = "two words"
    cfg["cells"][3]["outcomeShort"] = "zz"
    cfg["hashing"]["rowDrawMessage"] = "no counter here {split}"
    del cfg["audit"]["folds"]
    with pytest.raises(UserError) as exc:
        load_config(cfg)
    text = "\n".join(exc.value.lines())
    assert "config.pools[0].words.link: must be one non-empty word" in text
    assert "config.cells[3].outcomeShort: 'zz' disagrees with the definition ('mn')" in text
    assert (
        "config.hashing.rowDrawMessage: template must contain ['counter', 'familyId', 'index']"
        in text
    )
    assert "config.audit.folds: required key is missing" in text
