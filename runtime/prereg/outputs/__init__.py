"""What prereg writes for other tools to read: one key convention, one version field, one
schema-id scheme, and a JSON Schema for every output file.

- **Keys.** Every key prereg itself defines is camelCase (``specDigest``, ``exactSetAccuracy``).
  Ids a spec declares (metric, cell, hypothesis, level ids) are never mixed with those keys:
  where they are keys at all, they are the keys of a map that holds nothing else (``metrics``,
  ``levels``, ``verdicts``).  Objects copied verbatim from an input (the s3 freeze input) keep
  the input's spelling, since their digests bind them.
- **Version field.** ``schemaVersion``, a string ``<name>/v<N>``: lowercase words joined by
  hyphens, a slash, ``v`` and a whole number (``prereg-factorial-score/v1``).
- **Schemas.** ``schemas/<name>.schema.json`` (package data), draft 2020-12, one per kind of
  output; :func:`validator` loads one, :data:`OUTPUTS` names the schema of each output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

VERSION_FIELD = "schemaVersion"
VERSION_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*/v[0-9]+$")

# (engine kind or "any", output) -> schema file name under schemas/
OUTPUTS: dict[tuple[str, str], str] = {
    ("factorial", "score"): "factorial-score",
    ("reachability-probe", "score"): "reachability-score",
    ("reachability-probe", "gold"): "reachability-gold",
    ("reachability-probe", "audit"): "reachability-audit",
    ("reachability-probe", "analysis"): "reachability-analysis",
    ("reachability-probe", "preregistration"): "reachability-preregistration",
    ("reachability-probe", "corpus-row"): "reachability-corpus-row",
    # the collection hand-off: what it writes, and the files the operator writes for it
    ("reachability-probe", "dev-review-material"): "reachability-dev-review-material",
    ("reachability-probe", "approval"): "reachability-approval",
    ("reachability-probe", "bundle"): "reachability-bundle",
    ("reachability-probe", "run-frozen"): "reachability-run-frozen",
    ("reachability-probe", "run-integrity"): "reachability-run-integrity",
    ("reachability-probe", "lineage-score"): "reachability-lineage-score",
    ("reachability-probe", "dev-review"): "reachability-dev-review",
    ("reachability-probe", "calibration-context"): "reachability-calibration-context",
    ("reachability-probe", "score-config"): "reachability-score-config",
    ("multicorrect-scoring", "report"): "multicorrect-report",
    ("multicorrect-scoring", "diagnostic"): "multicorrect-diagnostic",
    ("cluster-power-freeze", "power-plan"): "clusterpower-power-plan",
    ("cluster-power-freeze", "freeze-manifest"): "clusterpower-freeze-manifest",
    ("cluster-power-freeze", "freeze-statement"): "clusterpower-freeze-statement",
    ("any", "diagnose"): "diagnose",
    ("any", "decide-rows"): "decide-rows",
    ("any", "ledger-state"): "ledger-state",
}

_CAMEL = re.compile(r"_([a-z0-9])")


def camel(name: str) -> str:
    """``exact_set_accuracy`` -> ``exactSetAccuracy`` (a name without ``_`` is unchanged)."""
    return _CAMEL.sub(lambda m: m.group(1).upper(), name)


def camel_keys(value: Any, keep: frozenset[str] = frozenset()) -> Any:
    """``value`` with every object key turned camelCase, recursively; the values under a key in
    ``keep`` (a key as written before the change) are copied unchanged."""
    if isinstance(value, Mapping):
        return {camel(k): (v if k in keep else camel_keys(v, keep)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [camel_keys(v, keep) for v in value]
    return value


@cache
def schema(name: str) -> dict[str, Any]:
    """The shipped JSON Schema ``schemas/<name>.schema.json``."""
    if name == "diagnose":
        text = resources.files("prereg.diagnose").joinpath("diagnose.schema.json").read_text()
    else:
        text = resources.files(__name__).joinpath(f"schemas/{name}.schema.json").read_text()
    return json.loads(text)


def schema_for(engine: str, output: str) -> dict[str, Any]:
    name = OUTPUTS.get((engine, output)) or OUTPUTS[("any", output)]
    return schema(name)


@cache
def _registry():
    """The shipped schemas by ``$id`` (built once: every shipped schema read and wrapped)."""
    from referencing import Registry, Resource

    return Registry().with_resources(
        (s["$id"], Resource.from_contents(s))
        for s in (schema(n) for n in sorted(set(OUTPUTS.values())))
        if "$id" in s
    )


_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}


def validator(doc_schema: Mapping[str, Any]):
    """A draft 2020-12 validator of ``doc_schema`` (other shipped schemas resolve by ``$id``);
    kept per schema object, as :func:`_accepts` keeps its predicate (a validator holds no
    state between documents)."""
    hit = _VALIDATORS.get(id(doc_schema))
    if hit is not None and hit[0] is doc_schema:
        return hit[1]
    import jsonschema

    made = jsonschema.Draft202012Validator(doc_schema, registry=_registry())
    if len(_VALIDATORS) < 64:
        _VALIDATORS[id(doc_schema)] = (doc_schema, made)
    return made


_ACCEPTS: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _accepts(doc_schema: Mapping[str, Any]):
    """The compiled predicate of ``doc_schema`` as :func:`validator` validates it (draft
    2020-12, 1.0 an integer, formats not checked), or None where the predicate compiler lacks
    a keyword or the schema refers to another document; kept per schema object."""
    hit = _ACCEPTS.get(id(doc_schema))
    if hit is not None and hit[0] is doc_schema:
        return hit[1]
    from prereg.compiler.predicate import compile_schema

    accepts = compile_schema(doc_schema, draft="2020-12", integer_floats=True, formats=False)
    if len(_ACCEPTS) < 64:
        _ACCEPTS[id(doc_schema)] = (doc_schema, accepts)
    return accepts


def problems(doc: Any, doc_schema: Mapping[str, Any], limit: int = 20) -> list[str]:
    """``at <JSON pointer>: <message>`` for each way ``doc`` breaks ``doc_schema``.

    A document the schema's compiled predicate accepts has none (the predicate is sound:
    :mod:`prereg.compiler.predicate`), and jsonschema is not imported; anything else is
    validated by jsonschema, which words every problem."""
    accepts = _accepts(doc_schema)
    if accepts is not None and accepts(doc):
        return []
    out = []
    for e in sorted(validator(doc_schema).iter_errors(doc), key=lambda e: list(e.absolute_path)):
        pointer = "".join(f"/{p}" for p in e.absolute_path) or "/"
        said = e.message if len(e.message) <= 200 else e.message[:199] + "…"  # not a huge value
        out.append(f"at {pointer}: {said}")
        if len(out) >= limit:
            break
    return out
