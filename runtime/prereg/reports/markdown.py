"""A small Markdown-to-HTML renderer for the generated PREREG.md documents.

It covers what the templates write, and a little more: ATX headings, paragraphs, bullet and
numbered lists (nested by indentation), pipe tables (with ``:---:`` alignment), fenced code
blocks, block quotes, horizontal rules and HTML comments (dropped); inline code spans,
``**strong**``, ``*emphasis*``/``_emphasis_`` and links.  Raw HTML is never passed through:
everything is escaped.  Links to other sites are rendered as text followed by their address,
so a rendered page never refers to the network.

``render(text, heading_offset=0) -> str`` returns an HTML fragment; ``heading_offset`` moves
every heading down that many levels (at most ``<h6>``).  Every heading gets an id,
``prereg-`` + :func:`slug` of its text (``-2``, ``-3``... when repeated), so a report can link
a registered rule.
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)\s*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$")
_RULE = re.compile(r"^ {0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_INLINE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<codetext>.+?)(?P=ticks))"
    r"|(?P<link>\[(?P<label>[^\]]+)\]\((?P<target>[^)\s]+)\))"
    r"|(?P<strong>\*\*(?P<strongtext>.+?)\*\*)"
    r"|(?P<em>(?<![\w*])\*(?P<emtext>[^*\s](?:[^*]*[^*\s])?)\*(?![\w*])"
    r"|(?<!\w)_(?P<emtext2>[^_\s](?:[^_]*[^_\s])?)_(?!\w))"
)


PREFIX = "prereg-"


_DIGEST = re.compile(r"^(sha256:)?[0-9a-f]{32,}$")


def slug(text: str) -> str:
    """A stable heading id: lowercase letters, digits and single hyphens."""
    s = re.sub(r"[^a-z0-9]+", "-", html.unescape(text).lower().replace("`", "")).strip("-")
    return s or "section"


def unique(ids: set[str], base: str) -> str:
    """``base``, or ``base-2``, ``base-3``... not yet in ``ids`` (which it joins)."""
    out, k = base, 1
    while out in ids:
        k += 1
        out = f"{base}-{k}"
    ids.add(out)
    return out


def _text(s: str) -> str:
    """Plain text: character references decoded (as Markdown does), then escaped."""
    return html.escape(html.unescape(s), quote=False)


def inline(s: str) -> str:
    """Inline Markdown of one line or paragraph as HTML."""
    out: list[str] = []
    pos = 0
    for m in _INLINE.finditer(s):
        out.append(_text(s[pos : m.start()]))
        if m.group("code") is not None:
            text = m.group("codetext").strip()
            cls = ' class="digest"' if _DIGEST.match(text) else ""
            out.append(f"<code{cls}>" + html.escape(text, quote=False) + "</code>")
        elif m.group("link") is not None:
            label, target = inline(m.group("label")), m.group("target")
            if re.match(r"^[a-zA-Z][\w+.-]*:", target):  # another site (or scheme): text only
                out.append(f"{label} ({html.escape(target, quote=False)})")
            else:
                out.append(f'<a href="{html.escape(target)}">{label}</a>')
        elif m.group("strong") is not None:
            out.append("<strong>" + inline(m.group("strongtext")) + "</strong>")
        else:
            out.append("<em>" + inline(m.group("emtext") or m.group("emtext2")) + "</em>")
        pos = m.end()
    out.append(_text(s[pos:]))
    return "".join(out)


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells, cur, in_code = [], [], False
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line) and line[i + 1] == "|":
            cur.append("|")
            i += 2
            continue
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    cells.append("".join(cur).strip())
    return cells


def _table(lines: list[str], caption: str = "") -> str:
    head = _cells(lines[0])
    aligns = []
    for spec in _cells(lines[1]):
        left, right = spec.startswith(":"), spec.endswith(":")
        aligns.append("center" if left and right else "right" if right else None)

    def row(cells: list[str], tag: str) -> str:
        cells = (cells + [""] * len(head))[: len(head)]
        parts = []
        for c, a in zip(cells, aligns + [None] * len(head), strict=False):
            style = f' style="text-align:{a}"' if a else ""
            scope = ' scope="col"' if tag == "th" else ""
            parts.append(f"<{tag}{scope}{style}>{inline(c)}</{tag}>")
        return "<tr>" + "".join(parts) + "</tr>"

    body = "".join(row(_cells(ln), "td") for ln in lines[2:])
    cap = f"<caption>{inline(caption)}</caption>" if caption else ""
    return (
        f'<div class="scroll"><table>{cap}<thead>{row(head, "th")}</thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _list(lines: list[str]) -> str:
    """A list block: items with their continuation lines; deeper indentation nests."""
    base = len(_ITEM.match(lines[0]).group(1))
    ordered = _ITEM.match(lines[0]).group(2)[0].isdigit()
    items: list[list[str]] = []
    for ln in lines:
        m = _ITEM.match(ln)
        if m and len(m.group(1)) <= base:
            items.append([m.group(3)])
        else:
            items[-1].append(ln)
    tag = "ol" if ordered else "ul"
    parts = []
    for item in items:
        text, rest = [item[0]], []
        for ln in item[1:]:
            if rest or _ITEM.match(ln):
                rest.append(ln)
            else:
                text.append(ln.strip())
        nested = _list(rest) if rest else ""
        parts.append("<li>" + inline(" ".join(text)) + nested + "</li>")
    return f"<{tag}>" + "".join(parts) + f"</{tag}>"


def render(text: str, heading_offset: int = 0) -> str:
    """The HTML fragment of a Markdown document."""
    lines = text.splitlines()
    out: list[str] = []
    ids: set[str] = set()
    last_heading = ""
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        if stripped.startswith("<!--"):
            while i < n and "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            mark, lang = fence.group(1), fence.group(2)
            body = []
            i += 1
            while i < n and not lines[i].strip().startswith(mark):
                body.append(lines[i])
                i += 1
            i += 1
            cls = f' class="language-{html.escape(lang)}"' if lang else ""
            code = html.escape("\n".join(body), quote=False)
            out.append(f"<pre><code{cls}>{code}</code></pre>")
            continue
        heading = _HEADING.match(line)
        if heading:
            level = min(6, len(heading.group(1)) + heading_offset)
            hid = unique(ids, PREFIX + slug(heading.group(2)))
            out.append(f'<h{level} id="{hid}">{inline(heading.group(2))}</h{level}>')
            last_heading = heading.group(2)
            i += 1
            continue
        if _RULE.match(line):
            out.append("<hr>")
            i += 1
            continue
        if "|" in line and i + 1 < n and _TABLE_SEP.match(lines[i + 1]):
            block = [line, lines[i + 1]]
            i += 2
            while i < n and lines[i].strip() and "|" in lines[i]:
                block.append(lines[i])
                i += 1
            out.append(_table(block, last_heading))
            continue
        if stripped.startswith(">"):
            block = []
            while i < n and lines[i].strip().startswith(">"):
                block.append(re.sub(r"^\s*> ?", "", lines[i]))
                i += 1
            out.append("<blockquote>" + render("\n".join(block)) + "</blockquote>")
            continue
        if _ITEM.match(line):
            block = [line]
            i += 1
            while i < n and lines[i].strip() and not _HEADING.match(lines[i]):
                if not (_ITEM.match(lines[i]) or lines[i].startswith((" ", "\t"))):
                    break
                block.append(lines[i])
                i += 1
            out.append(_list(block))
            continue
        para = [stripped]
        i += 1
        while i < n and lines[i].strip():
            nxt = lines[i]
            if _HEADING.match(nxt) or _FENCE.match(nxt) or _ITEM.match(nxt):
                break
            if "|" in nxt and i + 1 < n and _TABLE_SEP.match(lines[i + 1]):
                break
            para.append(nxt.strip())
            i += 1
        out.append("<p>" + inline(" ".join(para)) + "</p>")
    return "\n".join(out) + "\n"
