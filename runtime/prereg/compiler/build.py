"""Compile specs into generated files, and check generated/ against a fresh compile.

parse (load.py) -> validate against the language (validate.py) -> semantic checks
(semantic.py) -> the engine's configuration schema and checks (engines.py) -> render templates
(render.py) -> ruff format (fmt.py).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prereg import custom, splits
from prereg.compiler import contracts, semantic
from prereg.compiler.engines import effective_commands, engine_problems
from prereg.compiler.expand import all_cells
from prereg.compiler.fmt import format_python
from prereg.compiler.load import Loaded, load_yaml
from prereg.compiler.project import Project, package_name
from prereg.compiler.render import render
from prereg.compiler.validate import validate
from prereg.decide.shapes import FIELD_INPUTS
from prereg.digest import digest
from prereg.engines import registry
from prereg.errors import UserError

HEADER_MARK = "DO NOT EDIT"


@dataclass
class Study:
    """A spec that passed validation and the semantic checks."""

    loaded: Loaded
    spec_rel: str
    digest: str
    #: the effective commands: the engine's standard ones merged with the spec's
    commands: list[dict] = field(default_factory=list)

    @property
    def data(self) -> dict:
        return self.loaded.data

    @property
    def id(self) -> str:
        return self.data["id"]


@dataclass
class Output:
    files: dict[str, bytes] = field(default_factory=dict)


def load_study(project: Project, path: Path) -> Study:
    """Parse, validate and check one spec; raises UserError listing every problem."""
    loaded = load_yaml(path, display=Path(project.rel(path)))
    problems = spec_problems(project, loaded, path.parent, path.stem)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        raise UserError(f"{loaded.path}: {len(problems)} {noun}", problems=problems)
    engine = registry.require(loaded.data["engine"])
    commands = effective_commands(engine, loaded.data).commands
    return Study(
        loaded=loaded, spec_rel=project.rel(path), digest=digest(loaded.data), commands=commands
    )


def spec_problems(
    project: Project, loaded: Loaded, spec_dir: Path, expected_id: str | None
) -> list[str]:
    """Every problem compile finds in a parsed spec (``loaded``, from a file in ``spec_dir``):
    the language, the statistics' files, the semantic checks, the engine's; each stage runs
    when the ones before it found none. A statistic's file is looked for beside the spec and
    in ``project``; ``expected_id`` is the id the file's name asks for (None: any).
    ``loaded.data`` gets each statistic's digest (:func:`prereg.custom.pinned`)."""
    if not isinstance(loaded.data, dict):
        raise UserError(f"{loaded.path}:1: a spec must be a mapping (a Study)")
    schema = project.schema_path
    if not schema.exists():
        raise UserError(
            f"{project.rel(schema)}: the language schema is missing; run `prereg compile --language`"
        )
    problems = validate(loaded, schema)
    if not problems and custom.needs_pinning(loaded.data):
        from prereg import valuelists

        # each value list and each statistic's file digest is registered content
        _, listed = valuelists.pin(loaded.data, project.root, spec_dir)
        loaded.data = custom.pinned(loaded.data, project.root, spec_dir)
        problems = [f"{loaded.where(at)}: at {at}: {message}" for at, message in listed]
        if loaded.data.get("statistics"):
            problems += custom_problems(loaded, project.root)
    if not problems:
        problems = semantic.run_checks(loaded, expected_id=expected_id)
    if not problems:
        problems = engine_problems(loaded)
    return problems


def custom_problems(loaded: Loaded, root: Path) -> list[str]:
    """Problems of the spec's statistics: an id the catalogue already has or given twice, a
    file refused or missing, a function whose signature is not the declared one (read from
    the file's syntax tree: nothing of the file runs at compile time)."""
    from prereg.stats.catalogue import SHAPES, entries

    catalogue = entries()
    problems = []
    seen: set[str] = set()
    for i, s in enumerate(loaded.data.get("statistics") or []):
        ptr = f"/statistics/{i}"

        sid = str(s.get("id"))

        def report(at: str, message: str, sid: str = sid) -> None:
            problems.append(f"{loaded.where(at)}: at {at}: statistic {sid!r}: {message}")

        if sid in catalogue:
            report(
                f"{ptr}/id", f"{sid} is a method of the catalogue; give the statistic its own id"
            )
        if sid in seen:
            report(f"{ptr}/id", "is registered twice")
        seen.add(sid)
        shape = str(s.get("shape"))
        if shape not in SHAPES:
            report(f"{ptr}/shape", f"{shape!r} is not a shape (the shapes: {', '.join(SHAPES)})")
        options = [str(o) for o in s.get("options") or []]
        if len(set(options)) != len(options):
            report(f"{ptr}/options", "names an option twice")
        why = custom.path_problem(str(s.get("file")))
        if why is not None:
            report(f"{ptr}/file", f"file {s.get('file')!r} {why}")
            continue
        if s.get("path") is None:
            report(
                f"{ptr}/file",
                f"file {s.get('file')!r} is neither beside the spec nor under the project's"
                f" {custom.FOLDER}/ folder (inside the project)",
            )
            continue
        if shape in SHAPES:
            for p in custom.signature_problems(
                Path(root) / s["path"], str(s.get("function")), shape, options
            ):
                report(f"{ptr}/function", f"{s['path']}: {p}")
    return problems


#: What an engine sees of a record contract's field (its prose, ``description``, is left out).
_CONTRACT_FIELD_KEYS = (
    "name",
    "path",
    "role",
    "factor",
    "type",
    "required",
    "nullable",
    "allowed",
    "minimum",
    "maximum",
    "min_items",
    "max_items",
    "min_length",
    "items",
    "pattern",
    "null_values",
    "true_values",
    "false_values",
    "per_file",
)


def _targets_of(hyp: dict) -> list[str]:
    """Every comparison target of a hypothesis's rule and verdicts, as written."""
    out: list[str] = []

    def walk(cond: Any) -> None:
        if isinstance(cond, dict):
            if isinstance(cond.get("compare"), dict):
                out.append(str(cond["compare"].get("target")))
            for v in cond.values():
                walk(v)
        elif isinstance(cond, list):
            for v in cond:
                walk(v)

    walk(hyp.get("rule"))
    walk([v.get("when") for v in hyp.get("verdicts") or []])
    return out


def _names_figure(target: str, figures: set[str]) -> bool:
    """Whether a target (placeholders standing for any text) names a study figure."""
    rx = re.compile("^" + ".+".join(map(re.escape, re.split(r"\{[^}]*\}", target))) + "$")
    return any(rx.match(f) for f in figures)


def figure_targets(spec: dict) -> set[str]:
    """The comparison targets, as written, that name study figures (PREREG.md words them)."""
    figures = {str(f["id"]) for f in spec.get("figures") or []}
    return {
        t
        for h in spec.get("hypotheses") or []
        for t in _targets_of(h)
        if figures and _names_figure(t, figures)
    }


def _reads_figures(hyp: dict, figures: set[str]) -> bool:
    """Whether a hypothesis's rule or verdicts compare a study figure."""
    return any(_names_figure(t, figures) for t in _targets_of(hyp))


def _decisions(spec: dict) -> dict[str, Any]:
    """The study figures and the hypotheses whose rules read them, for an engine that decides
    with the shared evaluator from its configuration (prereg.rules.decision_of); nothing for
    a spec without figures."""
    figures = [str(f["id"]) for f in spec.get("figures") or []]
    if not figures:
        return {}
    keys = ("id", "rule", "verdicts", "reported_only")
    return {
        "figures": figures,
        "decisions": [
            {k: h[k] for k in keys if h.get(k) is not None}
            for h in spec.get("hypotheses") or []
            if _reads_figures(h, set(figures))
        ],
    }


def spec_config(spec: dict) -> dict[str, Any]:
    """The registered content of a spec as plain data, the input of an engine's adapter."""
    return {
        "study_id": spec["id"],
        "version": spec["version"],
        "constants": {c["id"]: c["value"] for c in spec.get("constants") or []},
        # a study without splits has one population: the implicit split (prereg.splits)
        "splits": [{"id": s["id"], "code": s["code"]} for s in spec.get("splits") or []]
        or [{"id": splits.IMPLICIT, "code": splits.IMPLICIT}],
        "factors": [
            {
                "id": f["id"],
                "levels": [{"id": str(lv["id"]), "code": lv.get("code")} for lv in f["levels"]],
            }
            for f in spec.get("factors") or []
        ],
        "pools": [
            {
                "id": p["id"],
                "level": p.get("level"),
                "words": {w["role"]: w["text"] for w in p["words"]},
            }
            for p in spec.get("pools") or []
        ],
        "cells": [
            {
                "id": c["id"],
                "split": splits.of(c),
                "rows": c["rows"],
                "levels": {r["factor"]: str(r["level"]) for r in c["levels"]},
            }
            for c in all_cells(spec)
        ],
        "seed_policy": {
            k: v for k, v in (spec.get("seed_policy") or {}).items() if k != "description"
        },
        "budget": {b["id"]: b["value"] for b in spec.get("budget") or []},
        "freeze_roles": [
            {k: v for k, v in r.items() if k != "description"}
            for r in spec.get("freeze_roles") or []
        ],
        "metrics": [
            {"id": m["id"], **{k: m[k] for k in ("role", "compute") if m.get(k) is not None}}
            for m in spec.get("metrics") or []
        ],
        "derived_fields": [
            {k: v for k, v in d.items() if k != "description"}
            for d in spec.get("derived_fields") or []
        ],
        "attempts": spec.get("attempts"),
        **(
            {
                "row_counts": "manifest",
                "totals": [
                    {"scope": t["scope"], "rows": t["rows"]} for t in spec.get("totals") or []
                ],
            }
            if spec.get("row_counts") == "manifest"
            else {}
        ),
        **(
            {
                "units": [
                    {
                        **{k: v for k, v in u.items() if k not in ("title", "figures", "include")},
                        "figures": [
                            {k: v for k, v in f.items() if k != "description"}
                            for f in u.get("figures") or []
                        ],
                        "include": list(u.get("include") or []),
                    }
                    for u in spec["units"]
                ]
            }
            if spec.get("units")
            else {}
        ),
        "scenarios": [
            {k: v for k, v in s.items() if k != "description"} for s in spec.get("scenarios") or []
        ],
        "claims": [
            {k: v for k, v in c.items() if k != "statement"} for c in spec.get("claims") or []
        ],
        "record_contracts": [
            {
                **{k: c[k] for k in ("id", "format", "role", "other_fields") if k in c},
                "fields": [{k: f[k] for k in _CONTRACT_FIELD_KEYS if k in f} for f in c["fields"]],
            }
            for c in spec.get("record_contracts") or []
        ],
        **_decisions(spec),
    }


def engine_config(spec: dict) -> dict[str, Any]:
    """What the engine receives as ``ctx.config``: the registered content as plain data.

    Engines map this generic shape onto their own parameters at run time; the compiler reads
    only an engine's plug-in description, its configuration schema and its checks.
    """
    return spec_config(spec)


def _selection(side: dict, binding: dict[str, str]) -> dict[str, list[str]]:
    return {
        f["factor"]: [semantic.fill(str(v), binding) for v in f["levels"]] for f in side["where"]
    }


def _expanded(spec: dict, kind: str) -> list[dict]:
    """Every estimate or contrast of every hypothesis with its placeholders filled (a ratio
    contrast, of a geometric mean, states its margin: 1 unless registered)."""
    out = []
    kinds = {m.get("id"): (m.get("compute") or {}).get("kind") for m in spec.get("metrics") or []}
    for hyp in spec.get("hypotheses") or []:
        for c in hyp.get(kind) or []:
            for binding in semantic._expansions(c):
                item = {
                    "id": semantic.fill(c["id"], binding),
                    "hypothesis": hyp["id"],
                    "metric": c["metric"],
                    "interval": c["interval"],
                    "level": c["level"],
                    "bootstrap": (
                        (int(c["bootstrap"]["resamples"]), int(c["bootstrap"]["seed"]))
                        if c.get("bootstrap")
                        else None
                    ),
                }
                if kind == "contrasts":
                    item.update(
                        a=_selection(c["a"], binding),
                        b=_selection(c["b"], binding),
                        test=c["test"],
                        family=c.get("family"),
                        alternative=c.get("alternative"),
                        margin=c.get("margin"),
                        pair_by=c.get("pair_by"),
                        pair_rows=c.get("pair_rows"),
                    )
                    if kinds.get(c["metric"]) == "geometric_mean" and c.get("margin") is None:
                        item["margin"] = 1.0
                else:
                    item["of"] = _selection(c["of"], binding)
                out.append(item)
    return out


#: an analysis's words that name one field, a metric or a family, in the order the generated
#: rules and PREREG.md list them (the field words are decide.shapes.FIELD_INPUTS)
#: how PREREG.md says a paired design of ``pair_rows: mean``
PAIR_ROWS_MEAN_WORDS = (
    "pair_rows: mean (each side of a pair is the mean of its counted rows, averaged before"
    " the pairs are compared)"
)

_ANALYSIS_FIELDS = ("pair_by", "pair_rows", "b_metric", "strata", *FIELD_INPUTS[1:], "family")


def _expanded_analyses(spec: dict) -> list[dict]:
    """Every registered analysis after expansion, as prereg.rules.Analysis takes it."""
    from prereg.stats.catalogue import entries

    out = []
    own = custom.by_id(spec)
    methods = entries() if any(h.get("analyses") for h in spec.get("hypotheses") or []) else {}
    for hyp in spec.get("hypotheses") or []:
        for an in hyp.get("analyses") or []:
            for binding in semantic._expansions(an):
                entry = methods.get(str(an["method"]))
                options = semantic.fill_options(dict(an.get("options") or {}), binding)
                if entry is not None:  # a group named by its id goes to the method by position
                    options, _ = semantic.named_groups(an, options, entry.group_options, binding)
                item: dict[str, Any] = {
                    "id": semantic.fill(an["id"], binding),
                    "hypothesis": hyp["id"],
                    "method": an["method"],
                    "metric": an.get("metric"),
                    "options": options,
                }
                for side in ("of", "a", "b"):
                    if an.get(side) is not None:
                        item[side] = _selection(an[side], binding)
                if an.get("groups") is not None:
                    item["groups"] = tuple(_selection(g, binding) for g in an["groups"])
                for name in _ANALYSIS_FIELDS:
                    if an.get(name) is not None:
                        item[name] = str(an[name])
                if an.get("of_analyses") is not None:
                    item["of_analyses"] = tuple(
                        semantic.fill(str(x), binding) for x in an["of_analyses"]
                    )
                stat = own.get(str(an["method"]))
                if stat is not None:
                    # the study's own function, pinned by its file's digest
                    item["statistic"] = {
                        "id": str(stat["id"]),
                        "path": stat["path"],
                        "function": str(stat["function"]),
                        "shape": str(stat["shape"]),
                        "sha256": stat["sha256"],
                    }
                out.append(item)
    return out


def _selection_words(side: dict) -> str:
    return " ".join(
        f"{f['factor']}∈{'/'.join(str(v) for v in f['levels'])}" for f in side.get("where") or []
    )


def _analysis_templates(spec: dict) -> list[dict]:
    """Every registered analysis for PREREG.md, one row per analysis it expands to: its id,
    inputs and options with that expansion's values filled in (an option written ``k: "{k}"``
    shows as ``k 5``, not as its placeholder), and the values that gave it."""
    out = []
    for hyp in spec.get("hypotheses") or []:
        for an in hyp.get("analyses") or []:
            bindings = semantic._expansions(an)
            dimensions = [_dimension(ex) for ex in an.get("expand") or []]
            for binding in bindings:
                inputs = []
                for side in ("of", "a", "b"):
                    if an.get(side) is not None:
                        inputs.append(f"{side}: {_selection_words(_filled(an[side], binding))}")
                if an.get("groups") is not None:
                    named = semantic.group_ids(an, binding)
                    groups = "; ".join(
                        (f"{gid}: " if gid is not None else "")
                        + _selection_words(_filled(g, binding))
                        for g, gid in zip(an["groups"], named, strict=True)
                    )
                    inputs.append(f"groups (in order): {groups}")
                for name in (*_ANALYSIS_FIELDS[:-1], "of_analyses"):
                    if name == "pair_rows":
                        if an.get(name) == "mean":
                            inputs.append(PAIR_ROWS_MEAN_WORDS)
                        continue
                    if an.get(name) is not None:
                        value = an[name]
                        if isinstance(value, list):
                            value = ", ".join(semantic.fill(str(v), binding) for v in value)
                        inputs.append(f"{name}: {value}")
                options = semantic.fill_options(dict(an.get("options") or {}), binding)
                out.append(
                    {
                        "id": semantic.fill(an["id"], binding),
                        "hypothesis": hyp["id"],
                        "method": an["method"],
                        "metric": an.get("metric"),
                        "family": an.get("family"),
                        "inputs": "; ".join(inputs),
                        "options": ", ".join(
                            f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in options.items()
                        )
                        or "none",
                        "count": len(bindings),
                        "dimensions": dimensions,
                        "binding": ", ".join(f"{k} = {v}" for k, v in binding.items()),
                    }
                )
    return out


def _filled(side: dict, binding: dict[str, str]) -> dict:
    """A selection (``{where: [{factor, levels}]}``) with one expansion's values filled in."""
    return {
        **side,
        "where": [
            {**f, "levels": [semantic.fill(str(v), binding) for v in f["levels"]]}
            for f in side.get("where") or []
        ],
    }


def _dimension(ex: dict) -> str:
    """One expansion dimension in words (``hops ∈ {1, 3}``, ``(x, y) over pairs of {…}``)."""
    if ex.get("pairs_of") is not None:
        names = ", ".join(str(n) for n in ex.get("names") or [])
        return f"({names}) over pairs of {{{', '.join(str(v) for v in ex['pairs_of'])}}}"
    return f"{ex.get('name')} ∈ {{{', '.join(str(v) for v in ex.get('values') or [])}}}"


def _templates(spec: dict, kind: str) -> list[dict]:
    """Every registered estimate or contrast as written (placeholders kept), with the number
    of items it expands to and its expansion dimensions in words, for PREREG.md."""
    out = []
    for hyp in spec.get("hypotheses") or []:
        for c in hyp.get(kind) or []:
            sides = ("a", "b") if kind == "contrasts" else ("of",)
            item = {k: v for k, v in c.items() if k not in sides}
            item.update({side: _selection(c[side], {}) for side in sides})
            item["hypothesis"] = hyp["id"]
            item["count"] = len(semantic._expansions(c))
            item["dimensions"] = [_dimension(ex) for ex in c.get("expand") or []]
            out.append(item)
    return out


_NODE_NAMES = {
    "compare": "Compare",
    "all_of": "AllOf",
    "any_of": "AnyOf",
    "at_least": "AtLeast",
    "for_each": "ForEach",
    "not": "Not",
    "verdict": "VerdictIs",
    "gate": "GateIs",
}


def _rule_imports(spec: dict) -> list[str]:
    """The prereg.rules names a study's rules.py uses (generated code imports nothing unused)."""
    names: set[str] = set()

    def walk(cond: dict | None) -> None:
        if not cond:
            return
        for key, name in _NODE_NAMES.items():
            body = cond.get(key)
            if body is None:
                continue
            names.add(name)
            if key in ("all_of", "any_of"):
                for sub in body:
                    walk(sub)
            elif key == "at_least":
                for sub in body.get("of") or []:
                    walk(sub)
            elif key == "for_each":
                walk(body.get("condition"))
            elif key == "not":
                walk(body)

    hypotheses = spec.get("hypotheses") or []
    if spec.get("families"):
        names.add("Family")
    if spec.get("gates"):
        names.add("Gate")
    for hyp in hypotheses:
        if hyp.get("contrasts"):
            names.add("Contrast")
        if hyp.get("estimates"):
            names.add("Estimate")
        if hyp.get("analyses"):
            names.add("Analysis")
        walk(hyp.get("rule"))
        for verdict in hyp.get("verdicts") or []:
            names.add("Verdict")
            walk(verdict.get("when"))
    for rule in (spec.get("decision") or {}).get("rules") or []:
        walk(rule.get("when"))
    if hypotheses:
        names.add("decide")
    return sorted(names, key=lambda n: (n[0].islower(), n))


def render_study(study: Study) -> dict[str, str]:
    """Every generated file of one study, as text, keyed by path relative to the project."""
    return render_studies([study])


def render_studies(studies: list[Study]) -> dict[str, str]:
    """Every generated file of the studies, as text, keyed by path relative to the project;
    the Python of all of them formatted by one ruff process."""
    rendered = [_render_unformatted(s) for s in studies]
    formatted = format_python({rel: text for python, _ in rendered for rel, text in python.items()})
    files: dict[str, str] = {}
    for python, other in rendered:
        files.update({rel: formatted[rel] for rel in python})
        files.update(other)
    return files


def render_prereg_md(study: Study) -> str:
    """The study's PREREG.md, as compile writes it (``prereg export`` lays it out again)."""
    return render("PREREG.md.j2", **_context(study))


def _context(study: Study) -> dict[str, Any]:
    spec = study.data
    pkg = package_name(study.id)
    return {
        "study": spec,
        "commands": study.commands,
        "spec_rel": study.spec_rel,
        "digest": study.digest,
        "pkg": pkg,
        "config": engine_config(spec),
        "figure_targets": figure_targets(spec),
        "cells": all_cells(spec),
        "contrasts": _expanded(spec, "contrasts"),
        "estimates": _expanded(spec, "estimates"),
        "analyses": _expanded_analyses(spec),
        "analysis_templates": _analysis_templates(spec),
        "contrast_templates": _templates(spec, "contrasts"),
        "estimate_templates": _templates(spec, "estimates"),
        "engine_module": registry.require(spec["engine"]).module,
        "rule_imports": _rule_imports(spec),
    }


def _render_unformatted(study: Study) -> tuple[dict[str, str], dict[str, str]]:
    """(the study's Python files before formatting, its other files)."""
    spec = study.data
    pkg = package_name(study.id)
    context = _context(study)
    python = {
        f"generated/{pkg}/__init__.py": render("study_init.py.j2", **context),
        f"generated/{pkg}/constants.py": render("constants.py.j2", **context),
        f"generated/{pkg}/records.py": render("records.py.j2", **context),
        f"generated/{pkg}/rules.py": render("rules.py.j2", **context),
    }
    files: dict[str, str] = {}
    for contract in spec.get("record_contracts") or []:
        schema = contracts.contract_schema(study.id, spec["version"], contract)
        schema = {
            "$comment": f"Generated by prereg from {study.spec_rel} ({study.digest}). {HEADER_MARK}.",
            **schema,
        }
        files[f"generated/{pkg}/schemas/{contract['id']}.schema.json"] = (
            json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        )
    files[f"generated/{pkg}/PREREG.md"] = render("PREREG.md.j2", **context)
    return python, files


def load_all(project: Project, only: list[str] | None = None) -> list[Study]:
    paths = project.spec_files()
    if only:
        known = {p.stem: p for p in paths}
        missing = [s for s in only if s not in known]
        if missing:
            raise UserError(
                f"no spec for study {missing[0]!r} under {project.rel(project.studies_dir)}/"
            )
        paths = [known[s] for s in only]
    misnamed = sorted(
        p
        for p in project.studies_dir.glob("*")
        if p.suffix.lower() in (".yml", ".yaml") and p.suffix != ".yaml" and not p.is_dir()
    )
    if misnamed:  # never compiled nor checked: refused rather than silently left out
        raise UserError(
            f"{project.rel(misnamed[0])}: a spec is named <study-id>.yaml; rename it"
            f" {misnamed[0].stem}.yaml (or move it out of {project.rel(project.studies_dir)}/)"
        )
    folders = sorted(
        p
        for p in project.studies_dir.glob("*")
        if p.suffix.lower() in (".yml", ".yaml") and p.is_dir()
    )
    if folders:  # a spec written into a folder of its name, or a copy gone astray: never skipped
        raise UserError(
            f"{project.rel(folders[0])}/: a folder named like a spec; a spec is a YAML file"
            f" {project.rel(project.studies_dir)}/<study-id>.yaml: move the folder out of"
            f" {project.rel(project.studies_dir)}/ or rename it"
        )
    if not paths:
        raise UserError(f"{project.rel(project.studies_dir)}/: no *.yaml specs to compile")
    registry.registry()  # a broken engine plug-in is one problem, not one per spec
    studies, problems = [], []
    for path in paths:
        try:
            studies.append(load_study(project, path))
        except UserError as exc:
            problems.extend(exc.lines())
    by_package: dict[str, Study] = {}
    for study in studies:
        other = by_package.setdefault(package_name(study.id), study)
        if other is not study:
            problems.append(
                f"{study.spec_rel}:1: at /id: study id {study.id!r} and {other.id!r}"
                f" ({other.spec_rel}) compile to the same package generated/{package_name(study.id)}/"
            )
    if problems:
        raise UserError("the specs have problems; nothing was written", problems=problems)
    return studies


def compile_project(project: Project, only: list[str] | None = None) -> dict[str, bytes]:
    return {
        rel: text.encode("utf-8") for rel, text in render_studies(load_all(project, only)).items()
    }


def _generated_study_files(project: Project) -> dict[str, bytes]:
    """Files currently under generated/<pkg>/ (the study packages), keyed by relative path."""
    out: dict[str, bytes] = {}
    gen = project.generated_dir
    if not gen.is_dir():
        return out
    for path in sorted(gen.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.parent != gen:
            out[path.relative_to(project.root).as_posix()] = path.read_bytes()
    return out


def _forget_bytecode(path: Path) -> None:
    """Remove the cached bytecode of a generated module that was rewritten or removed. Python
    trusts a .pyc whose recorded source size and modification second match, so a module
    rewritten with the same size within the second after it was imported would otherwise run
    its old code (a study compiled, run, edited and compiled again at once)."""
    if path.suffix != ".py":
        return
    cache = path.parent / "__pycache__"
    if cache.is_dir():
        for pyc in cache.glob(f"{path.stem}.*.pyc"):
            with contextlib.suppress(FileNotFoundError):
                pyc.unlink()


def write_generated(project: Project, files: dict[str, bytes], prune: bool = True) -> list[str]:
    """Write changed files atomically; remove study files no spec produces. Returns changed paths."""
    changed = []
    current = _generated_study_files(project)
    for rel, data in sorted(files.items()):
        if current.get(rel) == data:
            continue
        target = project.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".gen-", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
        _forget_bytecode(target)
        changed.append(rel)
    if prune:
        for rel in sorted(set(current) - set(files)):
            (project.root / rel).unlink()
            _forget_bytecode(project.root / rel)
            changed.append(rel)
        gen = project.generated_dir
        dirs = [p for p in gen.rglob("*") if p.is_dir() and p.name != "__pycache__"]
        for d in sorted(dirs, reverse=True):
            if not [p for p in d.iterdir() if p.name != "__pycache__"]:
                shutil.rmtree(d)
    return changed


def diff_generated(project: Project, files: dict[str, bytes]) -> list[str]:
    """Unified diffs (one string per stale, edited, missing or unexpected file)."""
    current = _generated_study_files(project)
    out = []
    for rel in sorted(set(files) | set(current)):
        want, have = files.get(rel), current.get(rel)
        if want == have:
            continue
        if have is None:
            out.append(f"missing: {rel} (a spec produces it; run prereg compile)\n")
            continue
        if want is None:
            out.append(f"unexpected: {rel} (no spec produces it)\n")
            continue
        a = have.decode("utf-8", "replace").splitlines(keepends=True)
        b = want.decode("utf-8", "replace").splitlines(keepends=True)
        text = "".join(
            difflib.unified_diff(a, b, fromfile=f"{rel} (committed)", tofile=f"{rel} (compiled)")
        )
        out.append(f"stale or edited: {rel}\n{text}")
    return out
