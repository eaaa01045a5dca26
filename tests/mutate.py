"""Random one-member mutations of a JSON document, for tests that hold a fast validator to
jsonschema."""

from __future__ import annotations

import copy
from typing import Any


def mutations(doc: Any, rng, count: int):
    """Copies of ``doc`` with one member removed, retyped or replaced (at a random depth)."""
    values = [None, True, 0, 1.0, -1, 2**70, "", "x", "sha256:" + "0" * 64, [], {}, [1], {"a": 1}]
    for _ in range(count):
        d = copy.deepcopy(doc)
        node, steps = d, rng.randrange(1, 5)
        for _ in range(steps):
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            if not keys:
                break
            k = rng.choice(keys)
            if rng.random() < 0.5 and isinstance(node[k], dict | list) and node[k]:
                node = node[k]
                continue
            if isinstance(node, dict) and rng.random() < 0.3:
                del node[k]
            else:
                node[k] = copy.deepcopy(rng.choice(values))
            break
        yield d
