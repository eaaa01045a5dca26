"""The scoring inputs' field names are read from the record contracts (by role), stated once.

A field renamed in a copy of the compiled config is what the observation reader and the
calibrator artifact's writer and loader then use; the registered names are written here by hand
from the spec.
"""

from __future__ import annotations

import copy
import json
import math

import d17_score_helpers as h
import pytest

from prereg.compiler.contracts import contract_schema
from prereg.engines.reachability import scoring
from prereg.engines.reachability.calibrator import artifact_digest, fit_artifact, load_calibrator
from prereg.errors import UserError

CTX = h.study()[1]
CONFIG = CTX.config
TABLE = h.table(CONFIG)
EFFECTIVE = "2026-01-01T00:00:00Z"


def renamed(contract_role: str, renames: dict[str, str]) -> dict:
    """A copy of the study config with fields of one contract renamed (role -> new name),
    and renamed wherever the attempt policy, derived fields and metrics name them (as a spec
    must: the compiler refuses a reference to a field the contract does not have)."""
    config = copy.deepcopy(dict(CONFIG))
    config["record_contracts"] = copy.deepcopy(list(CONFIG["record_contracts"]))
    (contract,) = (c for c in config["record_contracts"] if c.get("role") == contract_role)
    names = {f["name"]: renames[f["role"]] for f in contract["fields"] if f.get("role") in renames}
    contract["fields"] = [
        {**f, "name": names.get(f["name"], f["name"])} for f in contract["fields"]
    ]

    def refs(x):
        if isinstance(x, dict):
            return {
                k: names.get(v, v) if k in ("field", "other", "order") else refs(v)
                for k, v in x.items()
            }
        if isinstance(x, (list, tuple)):
            return [refs(v) for v in x]
        return x

    for section in ("attempts", "derived_fields", "metrics"):
        config[section] = refs(copy.deepcopy(CONFIG[section]))
    if config["attempts"]:
        config["attempts"]["key"] = [names.get(k, k) for k in config["attempts"]["key"]]
    return config


def test_the_registered_names_come_from_the_contracts():
    spec = scoring.scoring_spec(CONFIG)
    assert spec.contracts == {"observation": "observation", "calibrator": "calibrator"}
    assert spec.fields == {
        "row": "rowId",
        "request": "requestId",
        "pYes": "pYes",
        "attempt": "attempt",
    }
    assert spec.calibrator_fields == {
        "id": "id",
        "effectiveAt": "effectiveAt",
        "validDays": "expiresAfterDays",
        "blocks": "blocks",
        "digest": "digest",
    }
    assert "observationFields" not in CONFIG["constants"]["scoring"]
    assert "contracts" not in CONFIG["constants"]["scoring"]


def test_a_renamed_observation_field_is_what_the_reader_expects():
    spec = scoring.scoring_spec(renamed("observation", {"pYes": "probabilityYes"}))
    assert spec.fields["pYes"] == "probabilityYes"
    rec = {"rowId": TABLE.ids[0], "requestId": spec.request, "attempt": 1}
    p = scoring.terminal_p_yes([{**rec, "probabilityYes": 0.25}], TABLE, spec, "o.jsonl")
    assert p[0] == 0.25 and math.isnan(p[1])
    with pytest.raises(KeyError):  # the registered name is no longer read
        scoring.terminal_p_yes([{**rec, "pYes": 0.25}], TABLE, spec, "o.jsonl")


def test_a_renamed_calibrator_field_is_written_digested_and_loaded(tmp_path):
    config = renamed("calibrator", {"validDays": "validForDays", "digest": "sha"})
    spec = scoring.scoring_spec(config)
    names = spec.calibrator_fields
    art = fit_artifact(
        [0.1, 0.2, 0.8, 0.9],
        [0, 0, 1, 1],
        effective_at=EFFECTIVE,
        valid_days=30,
        min_block_size=1,
        id_prefix="t",
        names=names,
    )
    assert set(art) == {"id", "effectiveAt", "validForDays", "blocks", "sha"}
    assert art["sha"] == artifact_digest(art, "sha")
    (contract,) = (c for c in config["record_contracts"] if c["role"] == "calibrator")
    schema = tmp_path / "calibrator.schema.json"
    schema.write_text(json.dumps(contract_schema("d17-multifact", "1", contract)))
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(art))
    cal = load_calibrator(path, schema, art["sha"], 30, names)
    assert cal.id == art["id"] and cal.digest == art["sha"]
    assert cal.window().startswith("2026-01-01T00:00:00") and len(cal.blocks) == len(art["blocks"])
    # the days field is checked under its contract name
    path.write_text(json.dumps({**art, "validForDays": 31}))
    with pytest.raises(UserError) as err:
        load_calibrator(path, schema, art["sha"], 30, names)
    assert any("at /validForDays: 31 days exceeds" in p for p in err.value.problems)
    # an artifact with the registered names does not fit the renamed contract
    registered = fit_artifact(
        [0.1, 0.9],
        [0, 1],
        effective_at=EFFECTIVE,
        valid_days=30,
        min_block_size=1,
        id_prefix="t",
        names=scoring.scoring_spec(CONFIG).calibrator_fields,
    )
    assert set(registered) == {"id", "effectiveAt", "expiresAfterDays", "blocks", "digest"}
    path.write_text(json.dumps(registered))
    with pytest.raises(UserError):
        load_calibrator(path, schema, registered["digest"], 30, names)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda cs: cs[0].pop("role"), "no record contract with role 'observation'"),
        (lambda cs: cs[1].update(role="observation"), "more than one record contract"),
        (lambda cs: cs[0]["fields"][3].pop("role"), "no field with role 'attempt'"),
        (lambda cs: cs[1]["fields"][0].update(role="name"), "unknown role 'name'"),
    ],
)
def test_contracts_without_the_engines_roles_are_refused(edit, message):
    config = copy.deepcopy(dict(CONFIG))
    config["record_contracts"] = copy.deepcopy(list(CONFIG["record_contracts"]))
    assert [c["role"] for c in config["record_contracts"]] == ["observation", "calibrator"]
    edit(config["record_contracts"])
    with pytest.raises(UserError, match=message):
        scoring.scoring_spec(config)
