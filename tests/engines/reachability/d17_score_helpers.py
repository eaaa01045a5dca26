"""Hand-built d17 scoring fixtures: a synthetic row table over the study's registered cells.

Rows get the failure positions the d17 generator gives them (written out here by hand, from the
study page: one-hop links alternate first/last, three-hop links cycle first, interior,
interior, last; relay-off cycles its relays; absence is always interior; the faithful
missing-contrastive cell always breaks the last link).  A respondent is a boolean "correct"
per row; P(yes) is 0.9 for a yes answer and 0.1 for a no answer.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from prereg.compiler.project import Project
from prereg.engines.reachability import scoring
from prereg.rules import selection_matches
from prereg.study import study_context

ROOT = Path(__file__).resolve().parents[3]
STUDY = "d17-multifact"
NONE, FIRST, INTERIOR, LAST = range(4)
# Two blocks: below 0.5 → 1/6, from 0.5 → 5/6 (so calibrated answers follow raw ones).
BLOCKS = ({"lower": 0.0, "yes": 0, "n": 4}, {"lower": 0.5, "yes": 4, "n": 4})


@functools.cache
def study(root: Path = ROOT):
    """(generated module, context, rules module) of the compiled study under ``root``."""
    module, ctx = study_context(Project(root), STUDY)
    from prereg.engines.reachability.score_commands import rules_module

    return module, ctx, rules_module(module)


def positions(levels: dict, rows: int) -> list[int]:
    outcome, hops, layout = levels["outcome"], levels["hops"], levels["layout"]
    if outcome == "yes":
        return [NONE] * rows
    if layout == "d17-faithful":
        return [LAST] * rows
    if outcome == "missing-absence":
        return [INTERIOR] * rows
    if outcome == "relay-off":
        cycle = [FIRST] if hops == "1" else [FIRST, INTERIOR, LAST]
    else:
        cycle = [FIRST, LAST] if hops == "1" else [FIRST, INTERIOR, INTERIOR, LAST]
    return [cycle[i % len(cycle)] for i in range(rows)]


def table(config) -> scoring.RowTable:
    spec = scoring.scoring_spec(config)
    cells = tuple(config["cells"])
    cell, pos, gold = [], [], []
    for ci, c in enumerate(cells):
        n = int(c["rows"])
        cell += [ci] * n
        pos += positions(c["levels"], n)
        gold += [c["levels"]["outcome"] == "yes"] * n
    ids = tuple(f"{i:064x}" for i in range(len(cell)))
    return scoring.RowTable(
        ids=ids,
        index={r: i for i, r in enumerate(ids)},
        requests=((spec.request,),) * len(ids),
        cell=np.array(cell, dtype=np.int64),
        position=np.array(pos, dtype=np.int64),
        gold_yes=np.array(gold, dtype=bool),
        cells=cells,
        factors=tuple(f["id"] for f in config["factors"]),
    )


class Respondent:
    """Which rows are answered correctly; everything starts at a baseline accuracy."""

    LABELS = ("none", "first", "interior", "last")

    def __init__(self, t: scoring.RowTable, baseline: float = 0.9):
        self.t = t
        self.correct = np.zeros(len(t.ids), dtype=bool)
        self.observed = np.ones(len(t.ids), dtype=bool)
        for ci in range(len(t.cells)):
            idx = np.flatnonzero(t.cell == ci)
            self.correct[idx[: int(round(baseline * idx.size))]] = True

    def cells(self, position=None, **where):
        """Per matching cell, its row indexes (only those at ``position``, when given)."""
        sel = {a: _tuple(v) for a, v in where.items()}
        for ci, c in enumerate(self.t.cells):
            if not selection_matches(sel, scoring.cell_attributes(c)):
                continue
            idx = np.flatnonzero(self.t.cell == ci)
            if position is not None:
                keep = [self.LABELS.index(p) for p in _tuple(position)]
                idx = idx[np.isin(self.t.position[idx], keep)]
            yield idx

    def set_correct(self, k: int, position=None, **where) -> None:
        """Exactly the first ``k`` matching rows of each matching cell answered correctly."""
        for idx in self.cells(position, **where):
            self.correct[idx] = False
            self.correct[idx[:k]] = True

    def unobserve(self, n: int, **where) -> None:
        """The first ``n`` rows of each matching cell unobserved."""
        for idx in self.cells(None, **where):
            self.observed[idx[:n]] = False

    def p_yes(self) -> np.ndarray:
        says_yes = self.t.gold_yes == self.correct
        p = np.where(says_yes, 0.9, 0.1)
        return np.where(self.observed, p, np.nan)


def _tuple(v) -> tuple:
    return tuple(str(x) for x in v) if isinstance(v, (list, tuple)) else (str(v),)


def run(resp: Respondent, rules=None, config=None):
    _, ctx, default_rules = study()
    config = config or ctx.config
    return scoring.score(config, rules or default_rules, resp.t, resp.p_yes(), list(BLOCKS))
