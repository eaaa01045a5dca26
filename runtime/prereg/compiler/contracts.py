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


def field_path(field: dict) -> tuple[str, ...]:
    """The keys from a record down to the field's value: its ``path``, else its name."""
    return tuple(field.get("path") or (field["name"],))


def _counted_required(field: dict) -> bool:
    # a field given per file may be left out of a record (its file's value is given)
    return bool(field.get("required", True)) and not field.get("per_file")


def contract_schema(study_id: str, version: str, contract: dict) -> dict[str, Any]:
    """The contract's JSON Schema: one property per field, a field with a ``path`` nested in
    an object per key before its last (each such object required when a required field lies
    beneath it, closed unless other_fields says ignore); ``x-prereg-paths`` names the path of
    each field that has one, for the readers, which give the study each field by its name."""
    fields = contract["fields"]
    ignore = contract.get("other_fields") == "ignore"
    root: dict[str, Any] = {"properties": {}, "required": []}
    for f in fields:
        path = field_path(f)
        node = root
        for key in path[:-1]:
            sub = node["properties"].get(key)
            if sub is None:
                sub = node["properties"][key] = {
                    "type": "object",
                    "properties": {},
                    "required": [],
                    "additionalProperties": ignore,
                }
            if _counted_required(f) and key not in node["required"]:
                node["required"].append(key)
            node = sub
        node["properties"][path[-1]] = field_schema(f)
        if _counted_required(f):
            node["required"].append(path[-1])
    schema: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": f"prereg:{study_id}/{contract['id']}",
        "title": contract.get("title") or contract["id"],
        "type": "object",
        "properties": root["properties"],
        "required": root["required"],
        "additionalProperties": ignore,
        "x-prereg-format": contract["format"],
        "x-prereg-study-version": version,
    }
    paths = {f["name"]: list(f["path"]) for f in fields if f.get("path")}
    if paths:
        schema["x-prereg-paths"] = paths
    if contract.get("description"):
        schema["description"] = contract["description"]
    return schema
