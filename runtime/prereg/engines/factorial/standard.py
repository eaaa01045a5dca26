"""The factorial engine's standard commands: what every factorial study offers without
declaring it, as ``prereg <study-id> <command>``.

A spec's ``commands:`` section adds a command or overrides/renames one of these (the merge is
:mod:`prereg.compiler.commands`'). Which commands a study gets follows from its spec:

- ``items`` when the study registers an item manifest (a contract with ``role: items``);
- ``simulate`` when a scenario draws observations (an outcome field, numbers or ratings);
- ``score`` always;
- ``diagnose`` when the study registers scenarios or sizing claims.

``--items`` is an argument of ``simulate`` and ``score`` only when the study has a manifest;
without one the observations carry each row's levels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _option(name: str, type_: str, help_: str, *, required: bool = True, **more) -> dict:
    return {
        "name": name,
        "kind": "option",
        "type": type_,
        "required": required,
        "help": help_,
        **more,
    }


_ITEMS = _option("--items", "path", "the item manifest")


def commands(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The standard commands of a factorial study with this spec, in the order
    ``prereg <study-id> --help`` lists them."""
    manifest = any(
        isinstance(c, Mapping) and c.get("role") == "items"
        for c in spec.get("record_contracts") or ()
    )
    scenarios = [s for s in spec.get("scenarios") or () if isinstance(s, Mapping)]
    items = [_ITEMS] if manifest else []
    drawn = [str(s.get("id")) for s in scenarios if s.get("metric") is None]
    every = [str(s.get("id")) for s in scenarios]
    out: list[dict[str, Any]] = []
    if manifest:
        out.append(
            {
                "id": "items",
                "handler": "items",
                "summary": "write the item manifest of every registered row",
                "arguments": [_option("--out", "path", "the manifest to create (JSONL)")],
            }
        )
    if drawn:
        out.append(
            {
                "id": "simulate",
                "handler": "simulate",
                "summary": "write synthetic observations from a registered scenario",
                "arguments": [
                    *items,
                    _option("--scenario", "string", f"a registered scenario: {', '.join(drawn)}"),
                    _option("--seed", "integer", "the simulation seed"),
                    _option("--out", "path", "the observations to create (JSONL)"),
                ],
            }
        )
    out.append(
        {
            "id": "score",
            "handler": "score",
            "summary": "score observations against the registered rules",
            "arguments": [
                *items,
                _option(
                    "--observations",
                    "path",
                    "the observations (JSONL, Parquet or CSV); repeat it for several files,"
                    " read as one log in the order given, each written VALUE=PATH when the"
                    " observation contract has a field given per file (per_file; V1,V2=PATH"
                    " for two)",
                    repeated=True,
                ),
                _option("--out", "path", "SCORE.json to create; SCORE.md is written beside it"),
                _option(
                    "--workers",
                    "integer",
                    "local worker processes reading a JSONL input's partitions and reducing"
                    " its rows in buckets (default 1); the output does not depend on it",
                    required=False,
                ),
                _option(
                    "--scheduler",
                    "string",
                    "the address of a Dask distributed scheduler whose workers read the"
                    " partitions and reduce the rows (they must see the files, and the spill"
                    " folder made beside --out, at the same paths; needs prereg[distributed])",
                    required=False,
                ),
                _option(
                    "--partition-bytes",
                    "string",
                    "the size of a partition with --workers or --scheduler (default 16M, at most 1G; K, M,"
                    " G allowed); alone, the partitions are read one after another in this"
                    " process (a bound on the memory a partition's decoding takes); the output"
                    " does not depend on it",
                    required=False,
                ),
            ],
        }
    )
    if every or spec.get("claims"):
        out.append(
            {
                "id": "diagnose",
                "handler": "diagnose",
                "summary": "the operating characteristics of the registered rules by simulation,"
                " and the sizing claims checked",
                "arguments": [
                    _option(
                        "--scenario",
                        "string",
                        "a registered scenario (repeat for several; default all"
                        + (f": {', '.join(every)})" if every else ")"),
                        required=False,
                        repeated=True,
                    ),
                    _option("--simulations", "integer", "simulated studies per scenario"),
                    _option("--seed", "integer", "the simulation seed"),
                    _option(
                        "--out",
                        "path",
                        "DIAGNOSE.json to create; DIAGNOSE.md is written beside it",
                    ),
                    _option(
                        "--workers",
                        "integer",
                        "local worker processes (default 1); the output does not depend on it",
                        required=False,
                    ),
                    _option(
                        "--scheduler",
                        "string",
                        "the address of a Dask distributed scheduler to run on (needs"
                        " prereg[distributed])",
                        required=False,
                    ),
                    _option(
                        "--power",
                        "number",
                        "the power each scenario family's detectable effect is read at"
                        " (default 0.8)",
                        required=False,
                    ),
                    _option(
                        "--vary",
                        "string",
                        "rows=V1,V2,... (every cell's rows), rows:CELL=V1,...,"
                        " units[:LEVEL]=V1,... (units registered per cell, rows with them),"
                        " alpha=A1,A2,... (every P threshold and family alpha) or"
                        " margin:ID=M1,... (one contrast's or analysis' margin; a TOST's"
                        " symmetric pair -m, m), lower:ID=... or upper:ID=... (one margin of"
                        " an equivalence analysis): the whole"
                        " diagnosis again at each value, each claim checked there (a redesign"
                        " section)",
                        required=False,
                    ),
                    {
                        "name": "--target",
                        "kind": "flag",
                        "help": "with --vary: the smallest listed value meeting every claim,"
                        " confirmed with a fresh seed",
                    },
                ],
            }
        )
    return out


def unavailable(spec: Mapping[str, Any], command: str) -> str | None:
    """Why a factorial study with this spec has no standard ``command``, in words a spec's
    author can act on; None when the engine never offers one by that name, or offers it to
    this spec (whose ``commands:`` then renamed it)."""
    if any(c["id"] == command for c in commands(spec)):
        return None
    reasons = {
        "items": "the factorial engine writes an item manifest for a study that registers one"
        " (a record contract with `role: items`), and this spec has none",
        "simulate": "the factorial engine simulates observations for a study with a scenario"
        " that draws an outcome (`scenarios:` with `outcome:`), and this spec has none",
        "diagnose": "the factorial engine diagnoses a study that registers scenarios"
        " (`scenarios:`, the respondents to simulate) or sizing claims (`claims:`), and this"
        " spec has neither",
    }
    return reasons.get(command)
