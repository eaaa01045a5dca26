"""A report as data, written as one self-contained HTML page and its Markdown twin.

A :class:`Report` is a title, a one-line status, and a list of blocks: :class:`Heading`,
:class:`Para`, :class:`Facts` (label → value pairs, values shown as code when asked),
:class:`Table`, :class:`Figure` (an SVG document from :func:`prereg.reports.plot.svg`) and
:class:`Registered` (a Markdown document, e.g. the study's PREREG.md).  The HTML page inlines
its CSS and every figure; the Markdown file links the figures, which :func:`write_report`
writes beside it as ``figures/<name>.svg``.  Nothing refers to the network.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prereg.files import write_files_new
from prereg.reports import markdown, plot

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;max-width:64em;
margin:1.5em auto;padding:0 1em;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:1.8em}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em;background:#f4f4f4;
padding:0 .2em;border-radius:3px;overflow-wrap:anywhere}
code.digest{overflow-wrap:normal;word-break:keep-all;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}
caption{text-align:left;color:#555;font-size:.88em;padding:.2em 0;caption-side:top}
pre{background:#f4f4f4;padding:.6em;overflow-x:auto}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .55em;vertical-align:top;text-align:left}
th{background:#f7f7f7}td.num{text-align:right;font-variant-numeric:tabular-nums}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;font-size:.92em}
dl.facts dt{color:#555}dl.facts dd{margin:0}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}
figcaption{color:#555;font-size:.88em;max-width:48em}
.status{font-size:1.1em;padding:.35em .7em;border-radius:4px;display:inline-block;
margin-right:.5em}
.ok{background:#e3f4ea;color:#0b5d2a}.decision{background:#eef1f6;color:#1f3a5f;
border:1px solid #c9d3e3}.bad{background:#fbe6e1;color:#8a2410}
.note{color:#555;font-size:.9em}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(28em,1fr));gap:1.5em}
details.registered{border:1px solid #ddd;border-radius:4px;padding:.4em 1em;margin-top:1em}
details.registered summary{cursor:pointer;font-weight:600}
nav a{margin-right:1em}
@media print{nav{display:none}body{max-width:none;margin:0;font-size:10pt}
a{color:inherit;text-decoration:none}.scroll{overflow:visible}code.digest{white-space:normal;
word-break:break-all}tr,figure{break-inside:avoid}h2,h3{break-after:avoid}
.status{border:1px solid #999}}
""".strip()


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


@dataclass(frozen=True)
class Figure:
    name: str  # file stem and id prefix: [a-z0-9-]+
    title: str
    svg: str  # a standalone SVG document
    caption: str = ""


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


def _esc(x: object) -> str:
    return html.escape(str(x), quote=False)


def _is_digest(v: object) -> bool:
    text = str(v)
    hexpart = text.split(":", 1)[1] if ":" in text else text
    return len(hexpart) >= 32 and all(c in "0123456789abcdef" for c in hexpart)


def _cell(v: object, code: bool) -> str:
    if v is None:
        return "–"
    if code and _is_digest(v):
        # a digest is never broken mid-hex: its table scrolls instead
        return f'<code class="digest">{_esc(v)}</code>'
    return f"<code>{_esc(v)}</code>" if code else _esc(v)


def html_page(title: str, body: str, back: str | None = None) -> str:
    nav = f'<nav><a href="{html.escape(back)}">← all reports</a></nav>\n' if back else ""
    return (
        "<!doctype html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        f"<title>{_esc(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n"
        f"{nav}{body}</body>\n</html>\n"
    )


def status_html(text: str, ok: bool) -> str:
    return f'<p class="status {"ok" if ok else "bad"}">{_esc(text)}</p>\n'


def render_html(report: Report, back: str | None = "../index.html") -> str:
    parts = [f"<h1>{_esc(report.title)}</h1>\n", status_html(report.status, report.ok)]
    if report.decision:
        parts.append(f'<p class="status decision">{_esc(report.decision)}</p>\n')
    ids: set[str] = set()
    heading = report.title
    for b in report.blocks:
        if isinstance(b, Heading):
            heading = b.text
            hid = markdown.unique(ids, markdown.slug(b.text))
            parts.append(f'<h{b.level} id="{hid}">{_esc(b.text)}</h{b.level}>\n')
        elif isinstance(b, Para):
            cls = ' class="note"' if b.note else ""
            parts.append(f"<p{cls}>{markdown.inline(b.text)}</p>\n")
        elif isinstance(b, Facts):
            rows = "".join(
                f"<dt>{_esc(k)}</dt><dd>{_cell(v, k in b.code)}</dd>" for k, v in b.items
            )
            parts.append(f'<dl class="facts">{rows}</dl>\n')
        elif isinstance(b, Table):
            head = "".join(f'<th scope="col">{_esc(h)}</th>' for h in b.header)
            body = []
            for r in b.rows:
                tds = []
                for i, v in enumerate(r):
                    cls = ' class="num"' if i in b.numeric else ""
                    if i in b.markdown and v is not None:
                        tds.append(f"<td{cls}>{markdown.inline(str(v))}</td>")
                    else:
                        tds.append(f"<td{cls}>{_cell(v, i in b.code)}</td>")
                body.append("<tr>" + "".join(tds) + "</tr>")
            caption = f"<caption>{_esc(b.caption or heading)}</caption>"
            parts.append(
                f'<div class="scroll"><table>{caption}<thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(body)}</tbody></table></div>\n"
            )
        elif isinstance(b, Figure):
            cap = f"<figcaption>{markdown.inline(b.caption)}</figcaption>" if b.caption else ""
            parts.append(
                f'<figure id="fig-{b.name}">\n{plot.inline(b.svg).rstrip()}\n{cap}</figure>\n'
            )
        elif isinstance(b, Registered):
            parts.append(
                f'<details class="registered" open><summary>{_esc(b.title)}</summary>\n'
                f"{markdown.render(b.text, heading_offset=1)}</details>\n"
            )
    return html_page(f"{report.title}: {report.study_id}", "".join(parts), back)


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
