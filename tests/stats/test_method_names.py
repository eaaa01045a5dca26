"""The language names exactly the registered methods (one registry, no second list)."""

import json

from prereg.stats.methods import methods
from tests.conftest import ROOT


def _enum(name: str) -> set[str]:
    schema = json.loads((ROOT / "generated" / "prereg.schema.json").read_text())
    return set(schema["$defs"][name]["enum"])


def test_interval_methods_of_the_language_are_registered():
    from prereg.stats.methods import INTERVAL_KINDS

    registered = {m.name for m in methods().values() if m.kind in INTERVAL_KINDS}
    assert _enum("IntervalMethod") == registered | {"none"}


def test_test_methods_of_the_language_are_registered():
    from prereg.stats.methods import TEST_KINDS

    tests = [m for m in methods().values() if m.kind in TEST_KINDS]
    assert _enum("TestMethod") == {m.name for m in tests} | {"none"}
    alternatives = {a for m in tests for a in m.alternatives}
    assert _enum("Alternative") == alternatives
