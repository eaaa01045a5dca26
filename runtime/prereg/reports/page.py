"""A report as data, written as one self-contained HTML page and its Markdown twin.

A :class:`Report` is a title, a one-line status, and a list of blocks: :class:`Heading`,
:class:`Para`, :class:`Facts` (label → value pairs, values shown as code when asked),
:class:`Table`, :class:`Figure` (an SVG document from :func:`prereg.reports.plot.svg`) and
:class:`Registered` (a Markdown document, e.g. the study's PREREG.md).  The HTML page inlines
its CSS and every figure; the Markdown file links the figures, which :func:`write_report`
writes beside it as ``figures/<name>.svg``.  Nothing refers to the network.

The HTML pages (:func:`render_html`, and :func:`render_index` for the demo's index) are
rendered from the Jinja2 templates in ``templates/`` beside this module (package data) with
autoescaping: the shapes are in the templates, every value is escaped by Jinja2, and the only
fragments passed as markup are the Markdown renderer's HTML (:mod:`prereg.reports.markdown`)
and the inline SVG figures.  Jinja2 is imported when the first page is rendered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from prereg.files import write_files_new
from prereg.reports import markdown, plot

# The page templates ship with the package (package data), beside this module.
TEMPLATES = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    text: str
    note: bool = False


@dataclass(frozen=True)
class Facts:
    """Label → value pairs; values listed in ``code`` are shown as code."""

    items: Sequence[tuple[str, str]]
    code: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Table:
    header: Sequence[str]
    rows: Sequence[Sequence[object]]
    numeric: frozenset[int] = frozenset()  # right-aligned column indexes
    code: frozenset[int] = frozenset()  # columns shown as code
    markdown: frozenset[int] = frozenset()  # columns holding inline Markdown (links)
    caption: str | None = None  # the table's caption (default: the heading it stands under)
    folded: str | None = (
        None  # fold the table under this summary line (HTML; a heading in Markdown)
    )
    # a table of long text (HTML): on a narrow screen each row is a card, each cell a line under
    # its column's name, instead of columns squeezed to a few characters
    stack: bool = False


@dataclass(frozen=True)
class Figure:
    name: str  # file stem and id prefix: [a-z0-9-]+
    title: str
    svg: str  # a standalone SVG document
    caption: str = ""
    # the same figure drawn for a phone's column (plot.fit_width: no wider than plot.PHONE_PX
    # at 10 px text), shown instead of ``svg`` on a narrow screen (HTML only); "" for none
    narrow: str = ""


@dataclass(frozen=True)
class Registered:
    """A Markdown document rendered into the page (folded, with its own heading level)."""

    title: str
    text: str


Block = Heading | Para | Facts | Table | Figure | Registered


@dataclass
class Report:
    study_id: str
    title: str
    status: str  # one line: the verdict, decision or state
    ok: bool  # False shows the status as a failure
    blocks: list[Block] = field(default_factory=list)
    # The study's decision, shown apart from the process status and never as success or failure.
    decision: str | None = None

    def add(self, *blocks: Block) -> Report:
        self.blocks.extend(blocks)
        return self

    def figures(self) -> list[Figure]:
        return [b for b in self.blocks if isinstance(b, Figure)]


def _is_digest(v: object) -> bool:
    text = str(v)
    hexpart = text.split(":", 1)[1] if ":" in text else text
    return len(hexpart) >= 32 and all(c in "0123456789abcdef" for c in hexpart)


@lru_cache(maxsize=1)
def _environment():
    """The Jinja2 environment of the page templates (autoescaped; imported when a page is
    rendered, not with this module)."""
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    # The only fragments that reach a page unescaped: HTML made by the Markdown renderer
    # (which escapes every text and never passes raw HTML through) and inline SVG figures
    # made by matplotlib (text in them escaped by the SVG writer).
    env.filters["markdown_inline"] = lambda text: Markup(markdown.inline(str(text)))
    env.filters["markdown_block"] = lambda text, offset=0: Markup(
        markdown.render(str(text), heading_offset=offset)
    )
    env.filters["svg"] = lambda text: Markup(plot.inline(str(text)).rstrip())
    # text escaped, with a line break allowed after each separator of an id or path
    env.filters["breakable"] = lambda text: Markup(markdown.breakable(str(text)))
    env.tests["digest"] = _is_digest
    return env


def warm() -> None:
    """Import and build now what rendering a page needs (Jinja2 and its compiled templates,
    markdown-it and its parser), so that processes forked afterwards share it: the demo calls
    this before it forks a process per study, each of which renders a report."""
    env = _environment()
    for name in env.list_templates(extensions=["j2"]):
        env.get_template(name)
    markdown.render("")


def _render(template: str, **context) -> str:
    return _environment().get_template(template).render(**context)


_KINDS = {Heading: "heading", Para: "para", Facts: "facts", Table: "table", Figure: "figure",
          Registered: "registered"}  # fmt: skip


# a table of more rows than this is folded (closed) under a summary line naming it and its
# rows, so a long page reads as its sections; the rows are in the page (and printed)
FOLD_ROWS = 30


def render_html(report: Report, back: str | None = "../index.html") -> str:
    """The report as one self-contained HTML page (templates/report.html.j2): a table of
    contents (every heading of the report, each with its id), each section (``h2``) folding
    in a ``<details>`` open by default, a table longer than :data:`FOLD_ROWS` rows folded."""
    blocks = []
    ids: set[str] = {"top"}  # the title's
    toc = []
    captions: dict[str, int] = {}
    heading = report.title
    for b in report.blocks:
        extra: dict[str, str] = {}
        if isinstance(b, Heading):
            heading = b.text
            extra["id"] = markdown.unique(ids, markdown.slug(b.text))
            toc.append({"id": extra["id"], "text": b.text, "level": b.level})
        elif isinstance(b, Table):
            # a caption already on the page (a second table under one heading) gets its number
            caption = b.caption or heading
            captions[caption] = captions.get(caption, 0) + 1
            if captions[caption] > 1:
                caption = f"{caption} (table {captions[caption]})"
            extra["caption"] = caption
            extra["folded"] = b.folded or (
                f"{extra['caption']}: {len(b.rows)} rows" if len(b.rows) > FOLD_ROWS else ""
            )
        blocks.append((_KINDS[type(b)], b, extra))
    return _render(
        "report.html.j2",
        title=f"{report.title}: {report.study_id}",
        back=back,
        report=report,
        blocks=blocks,
        toc=toc,
    )


def render_index(
    title: str,
    overall: str,
    ok: bool,
    studies: Sequence[Mapping[str, object]],
    steps: Sequence[Mapping[str, object]],
    files: Sequence[str],
) -> str:
    """The demo's index page (templates/index.html.j2): ``studies`` rows have ``study``,
    ``status``, ``ok`` and, when a report was written, ``report`` and ``markdown`` (relative
    links); ``steps`` rows ``study``, ``title`` and ``result``; ``files`` relative paths."""
    return _render(
        "index.html.j2",
        title=title,
        heading=title,
        back=None,
        toc=[
            {"id": "studies", "text": "Studies", "level": 2},
            {"id": "steps", "text": "Steps", "level": 2},
            {"id": "outputs", "text": "Outputs", "level": 2},
        ],
        overall=overall,
        ok=ok,
        studies=[{"report": None, "markdown": None, **row} for row in studies],
        steps=steps,
        files=files,
    )


def _md_cell(v: object, code: bool) -> str:
    if v is None:
        return "–"
    s = str(v).replace("|", "\\|").replace("\n", " ")
    return f"`{s}`" if code else s


def render_markdown(report: Report, figure_dir: str = "figures") -> str:
    lines = [f"# {report.title}", "", f"**{report.status}**", ""]
    if report.decision:
        lines += [f"**{report.decision}**", ""]
    for b in report.blocks:
        if isinstance(b, Heading):
            lines += ["#" * b.level + " " + b.text, ""]
        elif isinstance(b, Para):
            lines += [f"_{b.text}_" if b.note else b.text, ""]
        elif isinstance(b, Facts):
            lines += [f"- {k}: {_md_cell(v, k in b.code)}" for k, v in b.items] + [""]
        elif isinstance(b, Table):
            if b.folded:
                lines += [f"**{b.folded}**", ""]
            lines.append("| " + " | ".join(b.header) + " |")
            lines.append(
                "|" + "|".join("---:" if i in b.numeric else "---" for i in range(len(b.header)))
            )
            lines[-1] += "|"
            for r in b.rows:
                lines.append(
                    "| " + " | ".join(_md_cell(v, i in b.code) for i, v in enumerate(r)) + " |"
                )
            lines.append("")
        elif isinstance(b, Figure):
            lines += [f"![{b.title}]({figure_dir}/{b.name}.svg)", ""]
            if b.caption:
                lines += [f"_{b.caption}_", ""]
        elif isinstance(b, Registered):
            lines += [f"## {b.title}", ""]
            body = [ln for ln in b.text.splitlines() if not ln.startswith("<!--")]
            lines += [("#" + ln if ln.startswith("#") else ln) for ln in body] + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_report(report: Report, folder: Path, stem: str = "report") -> list[Path]:
    """Write ``<stem>.html``, ``<stem>.md`` and ``figures/<name>.svg`` (all new, all or none)."""
    folder = Path(folder)
    files = [
        (folder / f"{stem}.html", render_html(report).encode("utf-8"), 0o644),
        (folder / f"{stem}.md", render_markdown(report).encode("utf-8"), 0o644),
    ]
    if report.figures():
        (folder / "figures").mkdir(exist_ok=True)
    files += [
        (folder / "figures" / f"{f.name}.svg", f.svg.encode("utf-8"), 0o644)
        for f in report.figures()
    ]
    write_files_new(files)
    return [p for p, _, _ in files]
