"""The language names exactly the registered methods (one registry, no second list)."""

import json

from prereg.stats.methods import methods
from tests.conftest import ROOT


def _enum(name: str) -> set[str]:
    schema = json.loads((ROOT / "generated" / "prereg.schema.json").read_text())
    return set(schema["$defs"][name]["enum"])


def test_interval_methods_of_the_language_are_registered():
    registered = {
        m.name
        for m in methods().values()
        if m.kind in ("proportion-interval", "difference-interval", "auroc-interval")
    }
    assert _enum("IntervalMethod") == registered


def test_test_methods_of_the_language_are_registered():
    registered = {m.name for m in methods("two-proportion-test").values()}
    assert _enum("TestMethod") == registered | {"none"}
    alternatives = {a for m in methods("two-proportion-test").values() for a in m.alternatives}
    assert _enum("Alternative") == alternatives
