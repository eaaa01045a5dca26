"""Every JSON and JSONL file `make demo` writes validates against the JSON Schema prereg ships
for it (prereg.outputs, or the study's generated record contract), follows the one version-id
scheme, and no schema is so loose that an unknown key slips through."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from prereg import outputs
from prereg.engines import registry
from tests.mutate import mutations

ROOT = Path(__file__).resolve().parents[2]
PLAN = json.loads((ROOT / "examples" / "demo.json").read_text(encoding="utf-8"))
ENGINES = {
    "d17-multifact": "reachability-probe",
    "s3-verifier-freeze": "cluster-power-freeze",
    "jev-multicorrect": "multicorrect-scoring",
    "answer-position": "factorial",
}
# the d17 collection hand-off's files under handoff/ (the operator's inputs among them) and
# the runs' frozen.json and integrity.json
HANDOFF = {
    "APPROVAL.json": "approval",
    "BUNDLE.json": "bundle",
    "CONTEXT.json": "calibration-context",
    "DEV_REVIEW.json": "dev-review",
    "DEV_REVIEW_MATERIAL.json": "dev-review-material",
    "SCORE.json": "lineage-score",
    "SCORE_CONFIG.json": "score-config",
    "frozen.json": "run-frozen",
    "integrity.json": "run-integrity",
}
# keys another standard fixes (in-toto Statement v1)
STANDARD_KEYS = {"_type"}
SHIPPED = sorted(p.name for p in (ROOT / "runtime/prereg/outputs/schemas").glob("*.schema.json"))


def _generated(study_dir: Path, package: str, name: str) -> dict:
    """A record contract's schema as compiled into generated/ (the repository's, or the
    example project's compiled copy inside the demo output)."""
    for base in (
        ROOT / "generated",
        study_dir.parent / "projects" / "answer-position" / "generated",
    ):
        path = base / package / "schemas" / f"{name}.schema.json"
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
    raise AssertionError(f"no generated schema {package}/{name}")


def schema_of(out: Path, path: Path) -> dict | None:
    """The schema a demo output must hold to; None for a file that is not an output."""
    rel = path.relative_to(out)
    study, name = rel.parts[0], path.name
    engine = ENGINES[study]
    if study == "d17-multifact" and rel.parts[1] == "handoff" and name in HANDOFF:
        return outputs.schema_for(engine, HANDOFF[name])
    if name == "SCORE.json":
        return outputs.schema_for(engine, "score")
    if name == "DIAGNOSE.json":
        return outputs.schema_for(engine, "diagnose")
    if study == "d17-multifact":
        prepared = {
            "gold.json": "gold",
            "audit.json": "audit",
            "analysis.json": "analysis",
            "preregistration.json": "preregistration",
            "corpus.jsonl": "corpus-row",
        }
        if "prepared" in rel.parts[1:-1]:
            return outputs.schema_for(engine, prepared[name])
        # the top-level observations and those of each hand-off run: the study's contract
        contract = {"observations.jsonl": "observation", "calibrator.json": "calibrator"}[name]
        return _generated(out / study, "d17_multifact", contract)
    if study == "jev-multicorrect":
        return outputs.schema_for(
            engine, {"REPORT.json": "report", "diagnostic.json": "diagnostic"}[name]
        )
    if study == "s3-verifier-freeze":
        if name == "freeze-manifest.json":
            return outputs.schema_for(engine, "freeze-manifest")
        if name == "freeze-manifest.intoto.json":
            return outputs.schema_for(engine, "freeze-statement")
        if name == "power_plan.json":
            return outputs.schema_for(engine, "power-plan")
        # the other files under frozen/ are the bundled inputs `assemble` copied
        copied = ROOT / "examples" / "s3" / rel.relative_to(Path(study, "frozen"))
        assert copied.read_bytes() == path.read_bytes(), f"{rel}: not a copy of a bundled input"
        return None
    if study == "answer-position":
        contract = {"items.jsonl": "item", "observations.jsonl": "observation"}[name]
        return _generated(out / study, "answer_position", contract)
    raise AssertionError(f"{rel}: no schema is known for this output")


def documents(path: Path) -> list:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines()]
    return [json.loads(text)]


def demo_outputs(out: Path) -> list[Path]:
    return sorted(
        p
        for p in out.rglob("*")
        if p.suffix in (".json", ".jsonl") and p.relative_to(out).parts[0] != "projects"
    )


def test_every_demo_output_validates_against_its_schema(runs):
    out = runs[0]
    checked = 0
    for path in demo_outputs(out):
        schema = schema_of(out, path)
        if schema is None:
            continue
        docs = documents(path)
        assert docs, path
        validator = outputs.validator(schema)
        for i, doc in enumerate(docs):
            errors = [f"{e.json_path}: {e.message[:200]}" for e in validator.iter_errors(doc)]
            assert errors == [], f"{path.relative_to(out)} (document {i + 1}): {errors[:3]}"
        # a schema that let an unknown key through would check nothing of the shape
        first = copy.deepcopy(docs[0])
        first["anUnknownKey"] = 1
        assert not validator.is_valid(first), f"{path.relative_to(out)}: unknown key accepted"
        checked += 1
    # every study's outputs were seen, and each shipped schema of a demo output was used
    assert checked >= 16


def test_the_compiled_predicate_agrees_with_jsonschema_on_every_demo_document(runs):
    """``outputs.problems`` says "no problems" from a schema's compiled predicate without
    jsonschema: on every demo document and a few hundred mutations of each kind, whatever the
    predicate accepts jsonschema accepts, and whatever jsonschema accepts the predicate
    accepts (so a refusal is never left to a slow path for a valid document). A document the
    predicate refuses is worded by jsonschema's walk of the whole document (about twice
    ``is_valid``'s cost, which stops at the first problem): the first few refused mutations of
    each file show that ``outputs.problems`` words them, the rest are held to ``is_valid``."""
    import random

    from prereg.outputs import _accepts

    out = runs[0]
    rng = random.Random(16)
    compiled = 0
    for path in demo_outputs(out):
        schema = schema_of(out, path)
        if schema is None or (accepts := _accepts(schema)) is None:
            continue
        compiled += 1
        validator = outputs.validator(schema)
        docs = documents(path)[:3]

        # 150 mutations of each document, fewer of a large one (d17's DIAGNOSE.json, 0.5 MB,
        # is 0.5 s a mutation through jsonschema; its schema is every DIAGNOSE.json's, the
        # smaller ones mutated more): at least 10, about 20 kB of document each
        def count(d) -> int:
            return max(10, min(150, 150 * 20_000 // max(1, len(json.dumps(d)))))

        worded = 0
        for doc in [*docs, *(m for d in docs for m in mutations(d, rng, count(d)))]:
            accepted = accepts(doc)
            assert accepted == validator.is_valid(doc), (path.relative_to(out), doc)
            if accepted:
                assert outputs.problems(doc, schema) == []
            elif worded < 3:
                assert outputs.problems(doc, schema), path.relative_to(out)
                worded += 1
        assert worded == 3, path.relative_to(out)  # every file had refused mutations to word
    assert compiled >= 10


def test_every_study_step_output_is_covered(runs):
    """Each `--out` a demo step names is one of the files validated above (and a step the plan
    expects to be refused wrote nothing there)."""
    out = runs[0]
    validated = {p for p in demo_outputs(out) if schema_of(out, p) is not None}
    for step in PLAN["steps"]:
        args = step["args"]
        if "--out" in args:
            target = args[args.index("--out") + 1].replace("{out}", str(out / step["study"]))
            if 0 not in step.get("expect_exit", [0]):
                assert not Path(target).exists(), f"{target}: written by a refused step"
            elif target.endswith((".json", ".jsonl")):
                assert Path(target) in validated, target


def test_version_fields_follow_one_scheme(runs):
    out = runs[0]
    seen = set()
    for path in demo_outputs(out):
        for doc in documents(path)[:1]:
            if isinstance(doc, dict) and "schemaVersion" in doc:
                assert outputs.VERSION_PATTERN.match(doc["schemaVersion"]), path
                seen.add(doc["schemaVersion"])
            assert not (isinstance(doc, dict) and "schema" in doc), f"{path}: old version field"
    assert len(seen) >= 8


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_schemas_are_valid_and_name_keys_in_camel_case(name):
    schema = outputs.schema(name.removesuffix(".schema.json"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert outputs.VERSION_PATTERN.match(schema["$id"]), schema["$id"]

    def walk(node):
        if isinstance(node, dict):
            props = node.get("properties")
            for key in props if isinstance(props, dict) else {}:
                if key in STANDARD_KEYS:
                    continue
                assert key == outputs.camel(key) and key[:1].islower(), f"{name}: key {key!r}"
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)


def test_every_engine_output_names_a_shipped_schema():
    kinds = set(registry.kinds())
    for (engine, _), name in outputs.OUTPUTS.items():
        assert engine == "any" or engine in kinds
        assert outputs.schema(name)["$id"]
    assert set(ENGINES.values()) <= kinds


def test_camel_keys_keeps_what_it_is_told_to():
    doc = {"self_sha256": 1, "frozen": {"block_size": 2}, "rungs": [{"mc_se": 3}]}
    assert outputs.camel_keys(doc, keep=frozenset({"frozen"})) == {
        "selfSha256": 1,
        "frozen": {"block_size": 2},
        "rungs": [{"mcSe": 3}],
    }


def test_the_freeze_statement_is_an_in_toto_statement_of_the_manifest(runs):
    from google.protobuf import json_format
    from in_toto_attestation.v1 import statement, statement_pb2

    folder = runs[0] / "s3-verifier-freeze"
    manifest = json.loads((folder / "freeze-manifest.json").read_text(encoding="utf-8"))
    text = (folder / "freeze-manifest.intoto.json").read_text(encoding="utf-8")
    parsed = statement.Statement.copy_from_pb(json_format.Parse(text, statement_pb2.Statement()))
    parsed.validate()  # the library's own checks: type, subjects with digests, predicate
    subjects = {s.name: dict(s.digest) for s in parsed.pb.subject}
    assert subjects == {a["path"]: {"sha256": a["sha256"]} for a in manifest["artifacts"]}
    assert parsed.pb.predicate_type == "urn:prereg:" + manifest["schemaVersion"]
    assert json_format.MessageToDict(parsed.pb.predicate) == manifest
    # the library refuses a statement without subjects
    doc = json.loads(text)
    doc["subject"] = []
    empty = statement.Statement.copy_from_pb(
        json_format.Parse(json.dumps(doc), statement_pb2.Statement())
    )
    with pytest.raises(ValueError, match="subject"):
        empty.validate()


@pytest.mark.parametrize("study", ["answer-position", "d17-multifact"])
def test_tables_of_a_score(runs, tmp_path, study):
    import csv

    import pyarrow.parquet as pq

    from tests.conftest import run_main

    score = runs[0] / study / "SCORE.json"
    doc = json.loads(score.read_text(encoding="utf-8"))
    (tmp_path / "csv").mkdir()
    (tmp_path / "pq").mkdir()
    p = run_main("tables", score, "--csv", tmp_path / "csv", "--parquet", tmp_path / "pq", "--json")
    assert p.returncode == 0, p.stderr
    written = json.loads(p.stdout)["outputs"]
    # cells, estimates, contrasts; AUROC and analyses where the score has them
    assert len(written) == 2 * (3 + ("auroc" in doc) + ("analyses" in doc))
    for name in [w for w in written if w.endswith(".csv")]:  # every CSV reads back, header first
        try:
            import pandas as pd
        except ImportError:
            with open(name, newline="", encoding="utf-8") as f:
                assert len(list(csv.reader(f))) == 1 + len(doc[Path(name).stem]), name
        else:
            assert len(pd.read_csv(name)) == len(doc[Path(name).stem]), name
    with open(tmp_path / "csv" / "cells.csv", newline="", encoding="utf-8") as f:
        cells = list(csv.DictReader(f))
    assert [c["cell"] for c in cells] == [c["cell"] for c in doc["cells"]]
    metric, fig = next((m, f) for m, f in doc["cells"][0]["metrics"].items() if isinstance(f, dict))
    assert float(cells[0][f"metrics.{metric}.estimate"]) == fig["estimate"]
    with open(tmp_path / "csv" / "contrasts.csv", newline="", encoding="utf-8") as f:
        contrasts = list(csv.DictReader(f))
    assert [int(c["a.k"]) for c in contrasts] == [c["a"]["k"] for c in doc["contrasts"]]
    table = pq.read_table(tmp_path / "pq" / "contrasts.parquet")
    assert table.column("id").to_pylist() == [c["id"] for c in doc["contrasts"]]
    assert table.column("adjustedP").to_pylist() == [c["adjustedP"] for c in doc["contrasts"]]
    # never overwritten, all or none
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "contrasts.csv").write_text("mine")
    again = run_main("tables", score, "--csv", tmp_path / "again")
    assert again.returncode == 2 and "exists" in again.stderr
    assert sorted(x.name for x in (tmp_path / "again").iterdir()) == ["contrasts.csv"]


def test_tables_refuse_what_is_not_a_score(tmp_path):
    from tests.conftest import run_main

    bad = tmp_path / "x.json"
    bad.write_text('{"cells": 3}', encoding="utf-8")
    p = run_main("tables", bad, "--csv", tmp_path)
    assert p.returncode == 2 and "not a score document" in p.stderr and "Traceback" not in p.stderr


def test_tables_create_a_missing_folder_and_remove_it_on_a_refusal(runs, tmp_path):
    from tests.conftest import run_main

    score = runs[0] / "answer-position" / "SCORE.json"
    p = run_main("tables", score, "--csv", tmp_path / "new")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "new" / "cells.csv").is_file()
    # a missing parent is made too; a file where the folder should be is refused by name
    p = run_main("tables", score, "--csv", tmp_path / "no" / "such")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "no" / "such" / "cells.csv").is_file()
    (tmp_path / "file").write_text("x")
    p = run_main("tables", score, "--csv", tmp_path / "file")
    assert p.returncode == 2 and "exists and is not a folder" in p.stderr
    # the csv folder is made, then the parquet one clashes: the made folder goes again
    (tmp_path / "pq").mkdir()
    (tmp_path / "pq" / "cells.parquet").write_text("mine")
    p = run_main(
        "tables", score, "--csv", tmp_path / "made" / "deeper", "--parquet", tmp_path / "pq"
    )
    assert p.returncode == 2 and "exists" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "made").exists()
    assert [x.name for x in (tmp_path / "pq").iterdir()] == ["cells.parquet"]


def test_the_demo_hand_off_is_labelled_development(runs):
    """The demo's stand-in private seed is written in examples/demo.json (committed): its review
    material, bundle and score carry the development label; the public demo seed's bundle is
    still refused (a public seed never gets even a development bundle)."""
    handoff = runs[0] / "d17-multifact" / "handoff"
    label = (
        "the seed is written in the plan examples/demo.json, so its gold is public: development"
        " material for a demonstration, not a real freeze"
    )
    material = json.loads((handoff / "DEV_REVIEW_MATERIAL.json").read_text(encoding="utf-8"))
    bundle = json.loads((handoff / "BUNDLE.json").read_text(encoding="utf-8"))
    score = json.loads((handoff / "SCORE.json").read_text(encoding="utf-8"))
    assert material["development"] == bundle["development"] == label
    assert score["development"] == {"form": "development-seed", "reason": label}
    assert f"\n\n**Development score**: {label}.\n" in (handoff / "SCORE.md").read_text("utf-8")
    assert not (handoff / "public-demo" / "BUNDLE.json").exists()
