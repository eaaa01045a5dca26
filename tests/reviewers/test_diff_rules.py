"""prereg diff: one fixture pair per rule (fixtures/<rule>/{old,new}.yaml) and its message.

The expected changes below were written by hand from the fixture pairs: kind, rule, id path,
JSON pointer and the past-tense message a reviewer reads.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.compiler import diff
from prereg.compiler.load import load_yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN_SPEC = (
    Path(__file__).resolve().parents[1]
    / "golden/compile-basic/project/spec/studies/example-probe.yaml"
)
R, E = "registered", "editorial"
CELL = "tst-pool-a_h1_missing-contrastive_equalized"

EXPECTED: dict[str, list[tuple[str, str, str, str]]] = {
    "prose_changed": [
        (
            E,
            "/title",
            "/title",
            'Previously /title read "Example probe"; it now reads "Example probe, two pools".',
        ),
        (
            E,
            "/factors[pool]/title",
            "/factors/0/title",
            'Previously /factors[pool]/title read "Wording pool"; it now reads "Pool of words".',
        ),
        (
            E,
            "/factors[pool]/levels[pool-a]/label",
            "/factors/0/levels/0/label",
            'Prose /factors[pool]/levels[pool-a]/label was added: "First pool".',
        ),
    ],
    "version_changed": [
        (E, "/version", "/version", 'Previously version "1.0"; the spec is now version "1.1".')
    ],
    "status_changed": [
        (E, "/status", "/status", 'Previously status "registered"; the study is now "amended".')
    ],
    "amendment_added": [
        (
            E,
            "/amendments[1.2]",
            "/amendments/1",
            'Amendment "1.2" was declared, changing /cells/0/rows.',
        )
    ],
    "amendment_changed": [
        (
            E,
            "/amendments[1.1]/paths",
            "/amendments/0/paths",
            'Previously paths of amendment "1.1" was ["/cells/0"]; it is now ["/cells/0/rows"] '
            '(added "/cells/0/rows"; removed "/cells/0").',
        )
    ],
    "factor_added": [
        (R, "/factors[hops]", "/factors/1", 'Factor "hops" was added with levels 1, 3.')
    ],
    "factor_removed": [
        (R, "/factors[hops]", "/factors/1", 'Previously present factor "hops" was removed.')
    ],
    "level_added": [
        (
            R,
            "/factors[outcome]/levels[no]",
            "/factors/0/levels/1",
            'Level "no" was added to factor "outcome".',
        )
    ],
    "level_removed": [
        (
            R,
            "/factors[outcome]/levels[no]",
            "/factors/0/levels/1",
            'Previously present level "no" of factor "outcome" was removed.',
        )
    ],
    "factor_changed": [
        (
            R,
            "/factors[outcome]/levels[yes]/code",
            "/factors/0/levels/0/code",
            'Previously levels[yes]/code of factor "outcome" was "y"; it is now "ye".',
        )
    ],
    "cell_added": [
        (
            R,
            "/cells[b-yes]",
            "/cells/1",
            'Cell "b-yes" was added at index 1 with 10 rows (split test).',
        )
    ],
    "cell_removed": [
        (R, "/cells[b-yes]", "/cells/1", 'Previously present cell "b-yes" (10 rows) was removed.')
    ],
    "cell_rows_changed": [
        (
            R,
            f"/cells[{CELL}]/rows",
            "/cells/1/rows",
            f'Previously 220 rows, cell "{CELL}" now has 200.',
        )
    ],
    "cell_moved": [
        (
            R,
            "/cells[b-yes]",
            "/cells/2",
            'Cell "b-yes" moved from index 1 to index 2; cells are allocated in order.',
        )
    ],
    "cell_changed": [
        (
            R,
            "/cells[b-yes]/split",
            "/cells/1/split",
            'Previously split of cell "b-yes" was "test"; it is now "tuning".',
        )
    ],
    "pool_word_changed": [
        (
            R,
            "/pools[pool-a]/words[contrastive]/text",
            "/pools/0/words/1/text",
            'Previously pool "pool-a" used "bypasses" as contrastive; it now uses "deflects".',
        )
    ],
    "pool_word_added": [
        (
            R,
            "/pools[pool-a]/words[framing]",
            "/pools/0/words/2",
            'Pool "pool-a" gained role framing with "A fictional archive records this world.".',
        )
    ],
    "pool_word_removed": [
        (
            R,
            "/pools[pool-a]/words[framing]",
            "/pools/0/words/2",
            'Previously pool "pool-a" had role framing ("A fictional archive records this '
            'world."); it was removed.',
        )
    ],
    "pool_changed": [
        (
            R,
            "/pools[pool-b]/level",
            "/pools/1/level",
            'Previously level of pool "pool-b" was "pool:pool-b"; it is now "pool:pool-c".',
        )
    ],
    "family_alpha_changed": [
        (
            R,
            "/families[pool-pairs]/alpha",
            "/families/0/alpha",
            'Previously family "pool-pairs" (holm) tested at alpha 0.05; it now tests at 0.025.',
        )
    ],
    "family_adjustment_changed": [
        (
            R,
            "/families[pool-pairs]/adjustment",
            "/families/0/adjustment",
            'Previously family "pool-pairs" adjusted with holm; it now adjusts with none.',
        )
    ],
    "family_changed": [
        (
            R,
            "/families[secondary]",
            "/families/1",
            'Family "secondary" was added (none, alpha 0.1).',
        )
    ],
    "rule_threshold_changed": [
        (
            R,
            "/hypotheses[h1]/rule/all_of/1/compare/value",
            "/hypotheses/0/rule/all_of/1/compare/value",
            'Previously hypothesis "h1" required abs_estimate of h1-ab ge 0.1; the threshold is '
            "now 0.05 (at rule/all_of/1/compare/value).",
        )
    ],
    "rule_quantifier_changed": [
        (
            R,
            "/hypotheses[h2]/rule/for_each/quantifier",
            "/hypotheses/0/rule/for_each/quantifier",
            'Previously hypothesis "h2" used quantifier "all"; it now uses "any" '
            "(at rule/for_each/quantifier).",
        )
    ],
    "rule_family_changed": [
        (
            R,
            "/hypotheses[h1]/contrasts[h1-ab]/family",
            "/hypotheses/0/contrasts/0/family",
            'Previously contrast "h1-ab" of hypothesis "h1" was in family "pool-pairs"; '
            'it is now in "secondary".',
        )
    ],
    "hypothesis_changed": [
        (
            R,
            "/hypotheses[h1]/rule/all_of/0/compare/op",
            "/hypotheses/0/rule/all_of/0/compare/op",
            'Previously rule/all_of/0/compare/op of hypothesis "h1" was "lt"; it is now "le".',
        )
    ],
    "metric_changed": [
        (
            R,
            "/metrics[accuracy]/definition",
            "/metrics/0/definition",
            'Previously definition of metric "accuracy" was "Share of observed rows answered '
            'correctly (P(yes) > 0.5 means yes)."; it is now "Share of observed rows answered '
            'correctly (P(yes) >= 0.5 means yes).".',
        )
    ],
    "constant_added": [
        (
            R,
            "/constants[audit-limit]",
            "/constants/2",
            'Constant "audit-limit" was added with value 0.6.',
        )
    ],
    "constant_removed": [
        (
            R,
            "/constants[audit-limit]",
            "/constants/2",
            'Previously present constant "audit-limit" was removed.',
        )
    ],
    "constant_changed": [
        (
            R,
            "/constants[shared-cap]/unit",
            "/constants/1/unit",
            'Previously unit of constant "shared-cap" was "USD"; it is now "EUR".',
        )
    ],
    "constant_value_changed": [
        (
            R,
            "/constants[audit]/value/folds",
            "/constants/0/value/folds",
            "Previously 5, constant audit's folds is now 4.",
        ),
        (
            R,
            "/constants[audit]/value/logistic/steps",
            "/constants/0/value/logistic/steps",
            "Previously 200, constant audit's logistic/steps is now 100.",
        ),
        (
            R,
            "/constants[dispatch]/value/firstSplits",
            "/constants/1/value/firstSplits",
            'Previously ["tuning"], constant dispatch\'s firstSplits is now ["tuning", '
            '"calibration"] (added "calibration").',
        ),
        (
            R,
            "/constants[decision]/value",
            "/constants/2/value",
            'Previously "HOLD", constant decision is now "GO".',
        ),
    ],
    "constant_value_added": [
        (
            R,
            "/constants[audit]/value/decimals",
            "/constants/0/value/decimals",
            "Constant audit's decimals was added: 4.",
        ),
        (
            R,
            "/constants[dev-review]/value/perOutcome/2",
            "/constants/1/value/perOutcome/2",
            "Constant dev-review's perOutcome/2 was added: "
            '{"outcome": "missing-absence", "items": 6}.',
        ),
    ],
    "constant_value_removed": [
        (
            R,
            "/constants[audit]/value/folds",
            "/constants/0/value/folds",
            "Previously constant audit's folds was 5; it was removed.",
        )
    ],
    "constant_value_moved": [
        (
            R,
            "/constants[rules]/value[exhaustive]",
            "/constants/0/value/1",
            "Constant rules's item [exhaustive] moved from index 0 to index 1; order inside a "
            "constant's value is registered.",
        )
    ],
    "role_added": [
        (
            R,
            "/freeze_roles[prompt_bundle]",
            "/freeze_roles/2",
            'Freeze role "prompt_bundle" was added (metadata, optional).',
        )
    ],
    "role_removed": [
        (
            R,
            "/freeze_roles[prompt_bundle]",
            "/freeze_roles/2",
            'Previously present freeze role "prompt_bundle" was removed.',
        )
    ],
    "role_changed": [
        (
            R,
            "/freeze_roles[power_plan]/extensions",
            "/freeze_roles/1/extensions",
            'Previously extensions of freeze role "power_plan" was [".json"]; it is now '
            '[".json", ".jsonl"] (added ".jsonl").',
        )
    ],
    "seed_policy_changed": [
        (
            R,
            "/seed_policy/private_min_hex_run",
            "/seed_policy/private_min_hex_run",
            "Previously private_min_hex_run of the seed policy was 24; it is now 20.",
        )
    ],
    "budget_changed": [
        (
            R,
            "/budget[usd]/value",
            "/budget/1/value",
            'Previously budget item "usd" was 5 USD; it is now 6 USD.',
        )
    ],
    "record_contract_changed": [
        (
            R,
            "/record_contracts[observation]/fields[pYes]/maximum",
            "/record_contracts/0/fields/1/maximum",
            'Previously fields[pYes]/maximum of record contract "observation" was 1; '
            "it is now 0.99.",
        )
    ],
    "registration_record_changed": [
        (
            R,
            "/registration/registration_date",
            "/registration/registration_date",
            'Previously /registration/registration_date was "2026-10-01"; it is now "2026-09-01".',
        )
    ],
    "registration_prose_changed": [
        (
            E,
            "/registration/stopping_rule",
            "/registration/stopping_rule",
            'Previously /registration/stopping_rule was "One call per row."; it is now'
            ' "One call per row, until every row is dispatched.".',
        )
    ],
    "registered_changed": [
        (
            R,
            "/totals[test]/rows",
            "/totals/1/rows",
            'Previously rows of total "test" was 5700; it is now 5600.',
        )
    ],
}


def _pair(rule: str) -> tuple[dict, dict]:
    folder = FIXTURES / rule
    return load_yaml(folder / "old.yaml").data, load_yaml(folder / "new.yaml").data


def test_every_rule_has_a_fixture_pair_and_an_expectation():
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders == set(diff.rule_names())
    assert set(EXPECTED) == set(diff.rule_names())


@pytest.mark.parametrize("rule", sorted(EXPECTED))
def test_rule_fixture_pair(rule):
    old, new = _pair(rule)
    changes = diff.diff_specs(old, new)
    got = [(c.kind, c.rule, c.path, c.pointer, c.message) for c in changes]
    want = [(kind, rule, path, ptr, msg) for kind, path, ptr, msg in EXPECTED[rule]]
    assert got == want


@pytest.mark.parametrize("rule", sorted(EXPECTED))
def test_cli_exit_code_follows_the_classification(rule, capsys, fragments):
    folder = FIXTURES / rule
    code = main(["diff", str(folder / "old.yaml"), str(folder / "new.yaml")])
    out = capsys.readouterr().out
    registered = any(kind == R for kind, *_ in EXPECTED[rule])
    assert code == (1 if registered else 0)
    for _kind, path, _ptr, msg in EXPECTED[rule]:
        assert path in out and msg in out


def test_reverse_pair_reports_the_opposite_change():
    old, new = _pair("cell_added")
    (change,) = diff.diff_specs(new, old)
    assert change.rule == "cell_removed"
    old, new = _pair("factor_added")
    (change,) = diff.diff_specs(new, old)
    assert change.rule == "factor_removed"


def test_identical_specs_and_comment_only_edits_have_no_changes(tmp_path, capsys):
    text = GOLDEN_SPEC.read_text()
    edited = "# a new first comment\n" + text.replace("\n  - id: h2", "\n  # a comment\n  - id: h2")
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text(edited)
    assert main(["diff", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]) == 0
    out = capsys.readouterr().out
    assert "no semantic changes" in out
    assert "0 registered changes, 0 editorial changes" in out


def _golden() -> dict:
    return load_yaml(GOLDEN_SPEC).data


def test_reordering_unordered_lists_is_not_a_change():
    old = _golden()
    new = copy.deepcopy(old)
    for key in ("factors", "pools", "metrics", "freeze_roles", "constants", "splits"):
        new[key].reverse()
    new["pools"][0]["words"].reverse()
    new["record_contracts"][0]["fields"].reverse()
    new["factors"][0]["levels"].reverse()
    assert diff.diff_specs(old, new) == []


def test_order_inside_a_constant_value_is_registered():
    old = {"constants": [{"id": "rules", "value": [{"id": "exhaustive"}, {"id": "d17"}]}]}
    new = copy.deepcopy(old)
    new["constants"][0]["value"].reverse()
    (change,) = diff.diff_specs(old, new)
    assert (change.kind, change.rule, change.path) == (
        R,
        "constant_value_moved",
        "/constants[rules]/value[exhaustive]",
    )
    assert change.message == (
        "Constant rules's item [exhaustive] moved from index 0 to index 1; order inside a "
        "constant's value is registered."
    )


def test_a_setting_changed_inside_a_study_constant_is_reported_by_path(repo_root):
    old = load_yaml(repo_root / "spec/studies/d17-multifact.yaml").data
    new = copy.deepcopy(old)
    audit = next(c for c in new["constants"] if c["id"] == "audit")
    audit["value"]["folds"] = 4
    (change,) = diff.diff_specs(old, new)
    assert (change.kind, change.rule, change.path, change.pointer, change.message) == (
        R,
        "constant_value_changed",
        "/constants[audit]/value/folds",
        "/constants/15/value/folds",
        "Previously 5, constant audit's folds is now 4.",
    )


def test_lists_of_unkeyed_items_inside_a_constant_value_are_compared_in_order():
    old = {"constants": [{"id": "c", "value": [{"word": "a", "n": 1}, {"word": "b", "n": 2}]}]}
    new = copy.deepcopy(old)
    new["constants"][0]["value"].reverse()
    changes = diff.diff_specs(old, new)
    assert [(c.rule, c.path) for c in changes] == [
        ("constant_value_changed", "/constants[c]/value/0/word"),
        ("constant_value_changed", "/constants[c]/value/0/n"),
        ("constant_value_changed", "/constants[c]/value/1/word"),
        ("constant_value_changed", "/constants[c]/value/1/n"),
    ]
    assert changes[0].message == 'Previously "a", constant c\'s item 0/word is now "b".'


def test_keys_inside_a_constant_value_are_never_editorial():
    old = {"constants": [{"id": "c", "value": {"title": "A", "description": "x"}}]}
    new = {"constants": [{"id": "c", "value": {"title": "B", "description": "x"}}]}
    (change,) = diff.diff_specs(old, new)
    assert (change.kind, change.rule) == (R, "constant_value_changed")
    assert change.message == 'Previously "A", constant c\'s title is now "B".'
    assert diff.registered_content(old) == old


def test_numbers_compare_by_value_but_booleans_are_not_numbers():
    assert (
        diff.diff_specs(
            {"budget": [{"id": "u", "value": 5}]}, {"budget": [{"id": "u", "value": 5.0}]}
        )
        == []
    )
    (change,) = diff.diff_specs(
        {"c": [{"id": "x", "required": True}]}, {"c": [{"id": "x", "required": 1}]}
    )
    assert change.kind == R


def test_swapping_two_verdicts_is_registered():
    old = _golden()
    new = copy.deepcopy(old)
    new["hypotheses"][1]["verdicts"].reverse()
    (change,) = diff.diff_specs(old, new)
    assert change.rule == "hypothesis_changed"
    assert change.path in ("/hypotheses[h2]/verdicts[specific]", "/hypotheses[h2]/verdicts[mixed]")


def test_inserting_a_cell_moves_no_other_cell():
    old = _golden()
    new = copy.deepcopy(old)
    extra = copy.deepcopy(new["cells"][0])
    extra["id"] = "a-h1-yes-extra"
    new["cells"].insert(0, extra)
    assert [c.rule for c in diff.diff_specs(old, new)] == ["cell_added"]


def test_registered_content_drops_prose_and_record_keeping():
    spec = _golden()
    content = diff.registered_content(spec)
    text = json.dumps(content)
    for key in ("title", "description", "statement", "summary", "help", "label", "rationale"):
        assert f'"{key}"' not in text, key
    for key in ("version", "status", "amendments"):
        assert key not in content
    assert content["cells"] == spec["cells"]
    assert content["families"] == spec["families"]


def test_registered_changes_are_the_changes_of_the_registered_content():
    """Classifying a full-spec diff agrees with diffing the registered contents."""
    old = _golden()
    for rule in sorted(EXPECTED):
        a, b = _pair(rule)
        full = [(c.path, c.pointer) for c in diff.registered(diff.diff_specs(a, b))]
        pinned = diff.diff_specs(diff.registered_content(a), diff.registered_content(b))
        assert full == [(c.path, c.pointer) for c in pinned], rule
        assert all(c.kind == R for c in pinned)
    new = copy.deepcopy(old)
    new["title"] = "Another title"
    new["cells"][2]["rows"] = 21
    assert [c.path for c in diff.registered(diff.diff_specs(old, new))] == ["/cells[b-h1-yes]/rows"]


def test_covered_by_is_a_path_prefix_by_whole_segments():
    (c,) = diff.diff_specs(*_pair("cell_rows_changed"))
    assert c.covered_by("/cells/1/rows")
    assert c.covered_by("/cells/1")
    assert c.covered_by("/cells")
    assert c.covered_by(f"/cells[{CELL}]/rows")
    assert c.covered_by(f"/cells[{CELL}]")
    assert not c.covered_by("/cells/10")
    assert not c.covered_by("/cells/0/rows")
    assert not c.covered_by("/cel")
    assert not c.covered_by("")
    assert not c.covered_by("/")


def test_a_gate_threshold_is_a_rule_threshold():
    old = {
        "gates": [
            {"id": "floor", "metric": "accuracy", "op": "ge", "value": 0.8, "otherwise": "void"}
        ]
    }
    new = copy.deepcopy(old)
    new["gates"][0]["value"] = 0.75
    (change,) = diff.diff_specs(old, new)
    assert (change.kind, change.rule, change.path, change.pointer) == (
        R,
        "rule_threshold_changed",
        "/gates[floor]/value",
        "/gates/0/value",
    )
    assert (
        change.message
        == 'Previously gate "floor" required accuracy ge 0.8; the threshold is now 0.75.'
    )
    new["gates"][0]["otherwise"] = "inconclusive"
    new["gates"][0]["value"] = 0.8
    (change,) = diff.diff_specs(old, new)
    assert (change.rule, change.message) == (
        "registered_changed",
        'Previously otherwise of gate "floor" was "void"; it is now "inconclusive".',
    )


def test_a_long_prose_change_shows_where_it_differs():
    base = "Synthesize choice lists per seed and check every contract; print canonical JSON. " * 3
    old = {"commands": [{"id": "run", "description": base + "Exit 0 when all hold."}]}
    new = {"commands": [{"id": "run", "description": base + "Exit 0 when every contract holds."}]}
    (change,) = diff.diff_specs(old, new)
    assert change.message == (
        "Previously /commands[run]/description read "
        '"…nical JSON. Exit 0 when all hold."; it now reads '
        '"…nical JSON. Exit 0 when every contract holds.".'
    )


def test_a_section_added_names_its_items():
    new = {"commands": [{"id": "score", "handler": "score"}, {"id": "diagnostic", "handler": "d"}]}
    (change,) = diff.diff_specs({}, new)
    assert (change.kind, change.rule, change.path) == (R, "registered_changed", "/commands")
    assert change.message == '/commands was added: items "score", "diagnostic".'
