"""The methods page (docs/methods.md), rendered from the methods' own registrations.

The page lists every method a spec can name: the interval and test methods of estimates and
contrasts (:mod:`prereg.stats.methods`) and the catalogue (:mod:`prereg.stats.catalogue`), with
each method's options, formula, reference, the independent implementation its tests compare
with, and how a threshold on its figures is decided exactly. Like docs/language.md it is
written by ``prereg compile --language`` and checked by ``prereg check --language``.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from prereg.compiler.project import Project

DOCS = Path("docs/methods.md")
TEMPLATE = "methods.md.j2"


def _options(fn) -> str:
    names = [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    return ", ".join(f"`{n}`" for n in names) or "none"


def render(project: Project) -> bytes:
    import jinja2

    from prereg.compiler.render import TEMPLATES
    from prereg.stats import catalogue
    from prereg.stats.methods import KINDS, methods

    registry = []
    for kind in KINDS:
        rows = [
            {"name": m.name, "summary": m.summary, "options": _options(m.fn)}
            for m in methods(kind).values()
        ]
        if rows:
            registry.append((kind, rows))
    entries = catalogue.entries()
    families = []
    for family in catalogue.FAMILIES:
        rows = [e for e in entries.values() if e.family == family]
        if rows:
            families.append((family.replace("_", " "), rows))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    from prereg.decide.shapes import FILLED_OPTIONS

    text = env.get_template(TEMPLATE).render(
        filled={shape: tuple(names) for shape, names in FILLED_OPTIONS.items()},
        registry=registry,
        families=families,
        count=len(entries),
        shapes=list(catalogue.SHAPES.items()),
    )
    return text.encode("utf-8")


def problems(project: Project) -> list[str]:
    """What is wrong with the committed docs/methods.md (empty when it is current)."""
    from prereg.compiler.langdoc import rendered_page_problems

    if not project.language_source.exists():
        return []
    return rendered_page_problems(
        project, DOCS, render(project), "the methods' registrations", "the methods"
    )


def write(project: Project) -> bool:
    """Write docs/methods.md when it differs from what the methods render (True if written)."""
    from prereg.compiler.langdoc import write_page

    if not project.language_source.exists():
        return False
    return write_page(project, DOCS, render(project))
