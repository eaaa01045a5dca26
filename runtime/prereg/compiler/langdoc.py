"""The language reference (docs/language.md), rendered from spec/prereg.linkml.yaml.

The LinkML source is read with the project's own loader (no LinkML import), turned into a
plain model (classes with their slots, enums with their values, types) and rendered by
templates/language.md.j2. The output depends on the source alone: same source, same bytes,
no timestamp. ``prereg compile --language`` writes it and ``prereg check --language`` compares
it byte for byte.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from prereg.compiler.load import load_yaml
from prereg.compiler.project import Project
from prereg.compiler.render import TEMPLATES
from prereg.errors import UserError

DOCS = Path("docs/language.md")
#: One short example per construct, shown under its class (optional in a project).
EXAMPLES = Path("spec/language-examples.yaml")
TEMPLATE = "language.md.j2"
REGENERATE = "run `prereg compile --language`"

#: Ranges that LinkML's standard types (linkml:types) provide: shown as words, not links.
BUILTIN_TYPES = frozenset(
    {
        "string",
        "integer",
        "float",
        "double",
        "decimal",
        "boolean",
        "date",
        "datetime",
        "time",
        "uri",
        "uriorcurie",
        "curie",
        "ncname",
    }
)
#: Headings of the page itself, which an anchor of a class, enum or type may not repeat.
SECTIONS = ("contents", "classes", "enumerations", "types")
_CODE = re.compile(r"(`+)(.+?)\1", re.S)


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def md(value: Any) -> str:
    """Prose for a Markdown paragraph or table cell: backtick spans are kept as code (only
    ``|`` escaped inside them); elsewhere ``\\``, ``|``, ``*``, ``<`` and an underscore that
    starts or ends a word are escaped, so that the text reads exactly as written."""
    text = _text(value)
    out, pos = [], 0
    for m in _CODE.finditer(text):
        out.append(_escape(text[pos : m.start()]))
        out.append(m.group(0).replace("|", "\\|"))
        pos = m.end()
    out.append(_escape(text[pos:]))
    return "".join(out)


_LONE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _escape(text: str) -> str:
    for ch in ("\\", "|", "*"):
        text = text.replace(ch, "\\" + ch)
    # An underscore inside a word (tested_after) never emphasises; only a lone one is escaped.
    text = _LONE_UNDERSCORE.sub(r"\\_", text)
    return text.replace("<", "&lt;")


def code(value: Any) -> str:
    """A literal (a pattern, a name) as a code span safe in a table cell."""
    text = _text(value).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def anchor(name: str) -> str:
    """The anchor of a heading that is one word (what GitHub and most renderers make of it)."""
    return name.lower()


def _number(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def examples_by_class(examples: Any, classes: dict, where: str) -> dict[str, list[dict[str, str]]]:
    """The examples of ``examples`` (the ``examples`` list of spec/language-examples.yaml) by
    the class each is for. Refuses (UserError naming ``where`` and the example's number) an
    entry that is not ``{for: [classes], about: text, yaml: text}`` or names a class the
    language does not define."""
    if not isinstance(examples, list):
        raise UserError(f"{where}: `examples` must be a list of examples")
    out: dict[str, list[dict[str, str]]] = {}
    for number, ex in enumerate(examples, 1):
        if not isinstance(ex, dict):
            raise UserError(f"{where}: example {number} is not a mapping")
        names, about, text = ex.get("for"), ex.get("about"), ex.get("yaml")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise UserError(f"{where}: example {number} needs `for`, a list of class names")
        if not isinstance(about, str) or not isinstance(text, str) or not text.strip():
            raise UserError(f"{where}: example {number} needs `about` and `yaml` (text)")
        for name in names:
            if name not in classes:
                raise UserError(
                    f"{where}: example {number} is for {name!r}, which the language does not"
                    " define as a class"
                )
            out.setdefault(name, []).append({"about": about, "yaml": text.rstrip("\n")})
    return out


def model(
    source: dict, where: str, examples: Any = None, examples_source: str = ""
) -> dict[str, Any]:
    """The page's content: every class with its slots and examples, every enum with its
    values, the types.

    Refuses (UserError naming ``where`` and the element) a range that names nothing the
    schema defines, and two elements whose anchors would collide, so no link is ever broken;
    and an example for a class the schema does not define.
    """
    classes = source.get("classes") or {}
    shown = {} if examples is None else examples_by_class(examples, classes, examples_source)
    enums = source.get("enums") or {}
    types = source.get("types") or {}
    kinds: dict[str, str] = {}
    for kind, names in (("class", classes), ("enum", enums), ("type", types)):
        for name in names:
            key = anchor(name)
            if key in kinds or key in SECTIONS:
                raise UserError(
                    f"{where}: {kind} {name!r} has the same anchor as another heading ({key!r})"
                )
            kinds[key] = kind
    default_range = source.get("default_range") or "string"
    used_by: dict[str, list[dict[str, str]]] = {}

    def link(rng: str, owner: str, slot: str) -> dict[str, str]:
        if rng in classes or rng in enums or rng in types:
            used_by.setdefault(rng, []).append({"class": owner, "slot": slot})
            return {"name": rng, "anchor": anchor(rng)}
        if rng in BUILTIN_TYPES:
            return {"name": rng, "anchor": ""}
        raise UserError(
            f"{where}: slot {slot!r} of class {owner!r} has range {rng!r}, which the schema"
            " does not define"
        )

    out_classes = []
    for name, body in classes.items():
        body = body or {}
        slots = []
        for slot, spec in (body.get("attributes") or {}).items():
            spec = spec or {}
            constraints = []
            if spec.get("pattern") is not None:
                constraints.append(("pattern", spec["pattern"]))
            for key, word in (("minimum_value", "minimum"), ("maximum_value", "maximum")):
                if spec.get(key) is not None:
                    constraints.append((word, _number(spec[key])))
            slots.append(
                {
                    "name": slot,
                    "range": link(str(spec.get("range") or default_range), name, slot),
                    "required": bool(spec.get("required")),
                    "multivalued": bool(spec.get("multivalued")),
                    "constraints": constraints,
                    "description": spec.get("description"),
                }
            )
        out_classes.append(
            {
                "name": name,
                "anchor": anchor(name),
                "description": body.get("description"),
                "root": bool(body.get("tree_root")),
                "uri": body.get("class_uri"),
                "slots": slots,
                "examples": shown.get(name, []),
            }
        )
    out_enums = [
        {
            "name": name,
            "anchor": anchor(name),
            "description": (body or {}).get("description"),
            "choices": [
                {"name": str(v), "description": (vbody or {}).get("description")}
                for v, vbody in ((body or {}).get("permissible_values") or {}).items()
            ],
        }
        for name, body in enums.items()
    ]
    from prereg.stats.compare import FRACTION_PATTERN

    out_types = [
        {
            "name": name,
            "anchor": anchor(name),
            # a Threshold is a number or an exact fraction "p/q" (the JSON Schema says so too:
            # prereg.compiler.language widens the type LinkML renders as a number)
            "typeof": "number, or a string" if name == "Threshold" else (body or {}).get("typeof"),
            "pattern": FRACTION_PATTERN if name == "Threshold" else (body or {}).get("pattern"),
            "description": (body or {}).get("description"),
        }
        for name, body in types.items()
    ]
    for group in (out_classes, out_enums):
        for item in group:
            item["used_by"] = used_by.get(item["name"], [])
    # The root class first (where a reader starts), then the schema's order.
    out_classes.sort(key=lambda c: not c["root"])
    return {
        "title": source.get("title") or source.get("name"),
        "description": source.get("description"),
        "version": source.get("version"),
        "id": source.get("id"),
        "classes": out_classes,
        "enums": out_enums,
        "types": out_types,
    }


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters.update(md=md, code=code)
    return env


def render_docs(project: Project) -> bytes:
    """docs/language.md as the project's language source renders it."""
    src = project.language_source
    loaded = load_yaml(src, display=Path(project.rel(src)))
    if not isinstance(loaded.data, dict):
        raise UserError(f"{project.rel(src)}: the language is not a mapping")
    examples, examples_source = None, ""
    if (project.root / EXAMPLES).is_file():
        examples_source = EXAMPLES.as_posix()
        ex = load_yaml(project.root / EXAMPLES, display=EXAMPLES).data
        if not isinstance(ex, dict):
            raise UserError(f"{examples_source}: the examples are not a mapping")
        examples = ex.get("examples")
    page = model(loaded.data, project.rel(src), examples, examples_source)
    text = _environment().get_template(TEMPLATE).render(source=project.rel(src), **page)
    return text.encode("utf-8")


def docs_problems(project: Project) -> list[str]:
    """What is wrong with the committed docs/language.md (empty when it is current)."""
    if not project.language_source.exists():
        return []
    return rendered_page_problems(
        project, DOCS, render_docs(project), project.rel(project.language_source), "the language"
    )


def rendered_page_problems(
    project: Project, rel: Path, want: bytes, source: str, renderer: str
) -> list[str]:
    """What is wrong with a committed page rendered from ``source`` by ``renderer`` (missing,
    unreadable, or a unified diff against ``want``); empty when it is current."""
    path = project.root / rel
    try:
        have = path.read_bytes()
    except FileNotFoundError:
        return [f"missing: {rel.as_posix()} ({renderer} renders it; {REGENERATE})\n"]
    except OSError as exc:
        return [f"{rel.as_posix()}: cannot read: {exc.strerror} ({REGENERATE})\n"]
    if have == want:
        return []
    diff = "".join(
        difflib.unified_diff(
            have.decode("utf-8", "replace").splitlines(keepends=True),
            want.decode("utf-8", "replace").splitlines(keepends=True),
            fromfile=f"{rel.as_posix()} (committed)",
            tofile=f"{rel.as_posix()} (rendered)",
        )
    )
    return [f"stale or edited: {rel.as_posix()} does not match {source} ({REGENERATE})\n{diff}"]


def write_page(project: Project, rel: Path, data: bytes) -> bool:
    """Write a rendered page when it differs from the committed one (True if written)."""
    from prereg.compiler import build

    path = project.root / rel
    if path.is_file() and path.read_bytes() == data:
        return False
    build.write_generated(project, {rel.as_posix(): data}, prune=False)
    return True


def write_docs(project: Project) -> bool:
    """Write docs/language.md when it differs from what the language renders (True if written)."""
    if not project.language_source.exists():
        return False
    return write_page(project, DOCS, render_docs(project))
