"""The methods page (docs/methods.md), rendered from the methods' own registrations.

The page lists every method a spec can name: the interval and test methods of estimates and
contrasts (:mod:`prereg.stats.methods`) and the catalogue (:mod:`prereg.stats.catalogue`), with
each method's options, formula, reference, the independent implementation its tests compare
with, and how a threshold on its figures is decided exactly. Like docs/language.md it is
written by ``prereg compile --language`` and checked by ``prereg check --language``.
"""

from __future__ import annotations

import difflib
import inspect
from pathlib import Path

from prereg.compiler.project import Project

DOCS = Path("docs/methods.md")
TEMPLATE = "methods.md.j2"
REGENERATE = "run prereg compile --language"


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
    text = env.get_template(TEMPLATE).render(
        registry=registry,
        families=families,
        count=len(entries),
        shapes=list(catalogue.SHAPES.items()),
    )
    return text.encode("utf-8")


def problems(project: Project) -> list[str]:
    """What is wrong with the committed docs/methods.md (empty when it is current)."""
    if not project.language_source.exists():
        return []
    want = render(project)
    path = project.root / DOCS
    try:
        have = path.read_bytes()
    except FileNotFoundError:
        return [f"missing: {DOCS.as_posix()} (the methods render it; {REGENERATE})\n"]
    if have == want:
        return []
    diff = "".join(
        difflib.unified_diff(
            have.decode("utf-8", "replace").splitlines(keepends=True),
            want.decode("utf-8", "replace").splitlines(keepends=True),
            fromfile=f"{DOCS.as_posix()} (committed)",
            tofile=f"{DOCS.as_posix()} (rendered)",
        )
    )
    return [f"stale or edited: {DOCS.as_posix()} ({REGENERATE})\n{diff}"]


def write(project: Project) -> bool:
    """Write docs/methods.md when it differs from what the methods render (True if written)."""
    from prereg.compiler import build

    if not project.language_source.exists():
        return False
    data = render(project)
    path = project.root / DOCS
    if path.is_file() and path.read_bytes() == data:
        return False
    build.write_generated(project, {DOCS.as_posix(): data}, prune=False)
    return True
