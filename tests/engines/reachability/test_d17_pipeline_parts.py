"""Parts of the preparation computed apart (in workers, or while they run) against the
computations they stand for."""

from __future__ import annotations

import json

from d17_helpers import config, engine_config

from prereg.engines.reachability.canon import canonical_members, join_members
from prereg.engines.reachability.config import load_config
from prereg.engines.reachability.dispatch import dispatch_order
from prereg.engines.reachability.generate import Generator, gold_object
from prereg.engines.reachability.pipeline import (
    _world_json,
    dispatch_positions,
    gold_members_of,
)


def test_gold_members_from_the_rows_world_texts_equal_the_gold_objects():
    ec = engine_config()
    gen = Generator(ec)
    for seed in ("d17mf-public-demo", "d17mf-sweep-3", "x-9"):
        rows = gen.corpus(seed, records=False).rows
        want = canonical_members(gold_object(ec, rows))
        assert gold_members_of(ec, rows) == want  # world texts computed here
        for r in rows:
            r.world_json = _world_json(r.world)
        got = gold_members_of(ec, rows)
        assert got == want and join_members(got) == join_members(want)
        # the rows in another order, and odd worlds (escapes, non-ASCII, nesting)
        odd = rows[::-97]
        for k, r in enumerate(odd):
            r.world = {"z": [k, None, True], "a": {'é\n"': "\x00\u2028", "b": -k}, "m": ""}
            r.world_json = _world_json(r.world) if k % 2 else ""
        assert gold_members_of(ec, odd) == canonical_members(gold_object(ec, odd))
        assert json.loads(join_members(gold_members_of(ec, odd)))["worlds"] == {
            r.id: r.world for r in odd
        }


def test_dispatch_positions_equal_the_dispatch_order():
    ec = engine_config()
    gen = Generator(ec)
    for seed in ("d17mf-public-demo", "d17mf-sweep-11"):
        corpus = gen.corpus(seed, records=False)
        want = [r.index for r in dispatch_order(ec, corpus)]
        assert dispatch_positions(ec, corpus.seed_digest) == want
        assert sorted(want) == list(range(len(corpus.rows)))
    # every split permuted (none first), and the splits the other way round
    for first, permuted in (([], None), (None, [])):
        cfg = config()
        splits = cfg["dispatch"]["firstSplits"] + cfg["dispatch"]["permutedSplits"]
        cfg["dispatch"]["firstSplits"] = splits if first is None else first
        cfg["dispatch"]["permutedSplits"] = splits if permuted is None else permuted
        ec2 = load_config(cfg)
        corpus = Generator(ec2).corpus("d17mf-sweep-2", records=False)
        want = [r.index for r in dispatch_order(ec2, corpus)]
        assert dispatch_positions(ec2, corpus.seed_digest) == want
