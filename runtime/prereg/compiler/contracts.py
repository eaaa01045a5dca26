"""Record contracts compiled to JSON Schemas (draft 2020-12)."""

from __future__ import annotations

from typing import Any

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def field_schema(field: dict) -> dict[str, Any]:
    ftype = field["type"]
    schema: dict[str, Any] = {"type": [ftype, "null"] if field.get("nullable") else ftype}
    if field.get("description"):
        schema["description"] = field["description"]
    if field.get("pattern") is not None:
        schema["pattern"] = field["pattern"]
    if field.get("allowed"):
        schema["enum"] = list(field["allowed"]) + ([None] if field.get("nullable") else [])
    if field.get("minimum") is not None:
        schema["minimum"] = field["minimum"]
    if field.get("maximum") is not None:
        schema["maximum"] = field["maximum"]
    if field.get("min_length") is not None:
        schema["minLength"] = field["min_length"]
    if ftype == "array":
        if field.get("items"):
            schema["items"] = {"type": field["items"]}
        if field.get("min_items") is not None:
            schema["minItems"] = field["min_items"]
        if field.get("max_items") is not None:
            schema["maxItems"] = field["max_items"]
    return schema


def contract_schema(study_id: str, version: str, contract: dict) -> dict[str, Any]:
    fields = contract["fields"]
    schema: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": f"prereg:{study_id}/{contract['id']}",
        "title": contract.get("title") or contract["id"],
        "type": "object",
        "properties": {f["name"]: field_schema(f) for f in fields},
        # a field given per file may be left out of a record (its file's value is given)
        "required": [
            f["name"] for f in fields if f.get("required", True) and not f.get("per_file")
        ],
        "additionalProperties": contract.get("other_fields") == "ignore",
        "x-prereg-format": contract["format"],
        "x-prereg-study-version": version,
    }
    if contract.get("description"):
        schema["description"] = contract["description"]
    return schema
