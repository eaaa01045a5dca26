"""config_from_spec: the compiled spec config mapped onto the engine's shape, checked against the
spec file read with PyYAML (not through the compiler)."""

from __future__ import annotations

import pytest
from d17_helpers import ROOT, STUDY, spec_config

from prereg.engines.reachability.config import config_from_spec, load_config, study_config
from prereg.errors import UserError
from tests.conftest import d17_written_cells, safe_yaml

SPEC = safe_yaml((ROOT / "spec" / "studies" / f"{STUDY}.yaml").read_text(encoding="utf-8"))
CELLS = d17_written_cells()  # the registered cells, written out (the spec crosses them)


def _codes(factor: str) -> dict[str, str]:
    f = next(f for f in SPEC["factors"] if f["id"] == factor)
    return {str(lv["id"]): str(lv["code"]) for lv in f["levels"]}


def test_pools_take_their_letter_from_the_factor_level_and_words_from_the_roles():
    cfg = config_from_spec(spec_config())
    codes = _codes("pool")
    assert [p["id"] for p in cfg["pools"]] == [p["id"] for p in SPEC["pools"]]
    for mine, p in zip(cfg["pools"], SPEC["pools"], strict=True):
        words = {w["role"]: w["text"] for w in p["words"]}
        assert mine["letter"] == codes[p["id"]]
        assert mine["framing"] == words["framing"]
        assert "d17Split" not in mine  # a role the engine does not read stays a plain note
        assert mine["words"]["d17Split"] == words["d17-split"]
        assert mine["words"]["nonConnective"] == words["non-connective"]
        assert mine["words"]["contrastive"] == words["contrastive"]
        assert set(mine["words"]) == {
            "link", "base", "contrastive", "nonConnective", "enabled", "disabled", "d17Split"
        }  # fmt: skip


def test_cells_short_codes_and_budget_come_from_the_spec_sections():
    cfg = config_from_spec(spec_config())
    assert len(cfg["cells"]) == len(CELLS) == 78
    outcome, layout = _codes("outcome"), _codes("layout")
    split_code = {s["id"]: s["code"] for s in SPEC["splits"]}
    for mine, c in zip(cfg["cells"], CELLS, strict=True):
        lv = {x["factor"]: str(x["level"]) for x in c["levels"]}
        assert mine["rows"] == c["rows"] and mine["split"] == c["split"]
        assert mine["splitShort"] == split_code[c["split"]]
        assert mine["hops"] == int(lv["hops"])
        assert mine["outcomeShort"] == outcome[lv["outcome"]]
        assert mine["layoutShort"] == layout[lv["layout"]]
        # the spec's cell id is the split code, a dash and the engine's cell key
        assert (
            c["id"]
            == f"{mine['splitShort']}-{mine['pool']}_h{mine['hops']}_{mine['outcome']}_{mine['layout']}"
        )
    budget = {b["id"]: b["value"] for b in SPEC["budget"]}
    assert cfg["budget"]["study"] == {
        "calls": budget["calls"], "tokens": budget["tokens"], "usd": budget["usd"]
    }  # fmt: skip
    assert cfg["budget"]["floorsUsd"]["study"] == budget["floor-study-usd"]
    assert cfg["seedPolicy"]["publicSeeds"] == SPEC["seed_policy"]["public_seeds"]
    load_config(cfg)  # and the engine accepts it


def test_missing_sources_are_listed_together():
    cfg = spec_config()
    del cfg["constants"]["factor-roles"]
    del cfg["constants"]["seed-syntax"]
    cfg["budget"].pop("shared-cap-usd")
    with pytest.raises(UserError) as exc:
        config_from_spec(cfg)
    text = "\n".join(exc.value.lines())
    assert "spec constants: constant 'factor-roles' is missing" in text
    assert "spec constants: constant 'seed-syntax' is missing" in text
    assert "spec budget: item 'shared-cap-usd' is missing" in text


def test_an_unknown_outcome_in_the_outcomes_constant_is_refused():
    cfg = spec_config()
    cfg["constants"]["outcomes"][1]["word"] = "relay-of"
    with pytest.raises(UserError) as exc:
        config_from_spec(cfg)
    assert (
        "spec constant 'outcomes'[1]: 'relay-of' is not a level of factor 'outcome'"
        in "\n".join(exc.value.lines())
    )


def test_study_config_is_cached_per_config_object():
    a = spec_config()
    assert study_config(a) is study_config(a)
    b = spec_config()
    b["constants"]["audit"]["limit"] = 0.5
    assert study_config(b).audit["limit"] == 0.5
    assert study_config(a).audit["limit"] == SPEC_LIMIT


SPEC_LIMIT = next(c["value"]["limit"] for c in SPEC["constants"] if c["id"] == "audit")
