"""Markdown to HTML for the generated PREREG.md documents and a report's inline text.

Parsing is markdown-it-py's (CommonMark with GFM pipe tables); what this module adds are its
own rules and renderer hooks, so every page reads the same way:

- raw HTML is never passed through (``html=False``: it is escaped as text), and HTML comments
  at the start of a block (the generated header) are dropped by a block rule;
- links to other sites (any address with a scheme: ``https:``, ``mailto:``...) and autolinks
  are rendered as text followed by their address, and images as their text and address, so a
  rendered page never refers to the network; links within the page (``#id``) stay links;
- every heading gets an id, ``prereg-`` + :func:`slug` of its text (``-2``, ``-3``... when
  repeated), so a report can link a registered rule; ``heading_offset`` moves every heading
  down that many levels (at most ``<h6>``);
- every table is captioned with the heading it stands under (a second table under one
  heading with "(table 2)" after it, and so on), its column headers carry
  ``scope="col"`` and it scrolls inside ``<div class="scroll">`` instead of overflowing;
- a code span holding a digest (32 or more hex digits, optionally ``sha256:``) gets
  ``class="digest"``, which the page's CSS never breaks mid-hex (it scrolls in its own box);
  any other code span may break only after a separator (``-``, ``_``, ``/``, ``.``: a
  ``<wbr>`` there, :func:`breakable`), never inside a word of an id or a path.

``render(text, heading_offset=0) -> str`` returns an HTML fragment, ``inline(text) -> str``
the HTML of one paragraph's inline Markdown.  markdown-it is imported when the first text is
rendered: :func:`slug`, :func:`unique` and :data:`PREFIX` are usable without it.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import Any

PREFIX = "prereg-"

_DIGEST = re.compile(r"^(sha256:)?[0-9a-f]{32,}$")
_SCHEME = re.compile(r"^[a-zA-Z][\w+.-]*:")


# a separator inside a word (a "." before a digit is a decimal point or a version, not one)
_SEPARATOR = re.compile(r"(?<=\w)([-_/]|\.(?!\d))(?=\w)")


def breakable(text: str) -> str:
    """``text`` escaped for HTML, with a ``<wbr>`` (a line may break there) after each
    ``-``, ``_``, ``/`` or ``.`` between two word characters (not a decimal point): a long id
    or path wraps at its separators on a narrow page, never inside a word."""
    return _SEPARATOR.sub(r"\1<wbr>", html.escape(text, quote=False))


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


def render(text: str, heading_offset: int = 0) -> str:
    """The HTML fragment of a Markdown document."""
    return _parser().render(text, {"heading_offset": heading_offset})


def inline(text: str) -> str:
    """The inline Markdown of one line or paragraph as HTML (no block structure)."""
    return _parser().renderInline(text, {"heading_offset": 0})


# -- the markdown-it parser and its rules -------------------------------------------------------


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.block.ruler.before(
        "table", "comment", _comment_block, {"alt": ["paragraph", "reference", "blockquote"]}
    )
    # before text_join, which turns the escapes of the captions parsed here into text too
    md.core.ruler.before("text_join", "prereg_headings_tables", _headings_and_tables)
    md.core.ruler.push("prereg_offline_links", _offline_links)
    md.add_render_rule("code_inline", _code_inline)
    md.add_render_rule("table_open", lambda *a: '<div class="scroll"><table>\n')
    md.add_render_rule("table_close", lambda *a: "</table></div>\n")
    return md


def _comment_block(state, start: int, end: int, silent: bool) -> bool:
    """An HTML comment opening a block, up to the line holding ``-->`` (or the end): dropped."""
    if state.sCount[start] - state.blkIndent >= 4:  # indented code
        return False
    if not state.src.startswith("<!--", state.bMarks[start] + state.tShift[start]):
        return False
    if silent:
        return True
    last = start
    while last < end and "-->" not in state.src[state.bMarks[last] : state.eMarks[last]]:
        last += 1
    state.line = min(last + 1, end)
    return True


def _headings_and_tables(state) -> None:
    """Heading ids and levels; each table's caption (the heading above it) and th scope."""
    from markdown_it.token import Token

    offset = int(state.env.get("heading_offset", 0) or 0)
    ids: set[str] = set()
    tokens, out = state.tokens, []
    heading: str | None = None
    tables = 0  # under the current heading
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            title = tokens[i + 1].content
            heading, tables = title, 0
            tok.attrSet("id", unique(ids, PREFIX + slug(title)))
        if tok.type in ("heading_open", "heading_close"):
            tok.tag = f"h{min(6, int(tok.tag[1:]) + offset)}"
        elif tok.type == "th_open":
            tok.attrs = {"scope": "col", **tok.attrs}
        out.append(tok)
        if tok.type == "table_open" and heading:
            # a second table under one heading is captioned apart: "Cells (table 2)"
            tables += 1
            text = heading if tables == 1 else f"{heading} (table {tables})"
            caption = Token("inline", "", 0, content=text, children=[])
            state.md.inline.parse(text, state.md, state.env, caption.children)
            out += [
                Token("caption_open", "caption", 1, block=True),
                caption,
                Token("caption_close", "caption", -1, block=True),
            ]
    state.tokens = out


def _offline_links(state) -> None:
    """Links to other sites become their text and address; images their alt text and
    address: nothing on a page is fetched or followed off it."""
    from markdown_it.token import Token

    for tok in state.tokens:
        if tok.type != "inline" or not tok.children:
            continue
        out: list[Any] = []
        closing: list[str | None] = []  # per open link: the text that replaces its close
        for child in tok.children:
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                if child.markup == "autolink":
                    closing.append("")
                elif _SCHEME.match(href):
                    closing.append(f" ({href})")
                else:
                    closing.append(None)
                    out.append(child)
                continue
            if child.type == "link_close":
                tail = closing.pop() if closing else None
                if tail is None:
                    out.append(child)
                elif tail:
                    out.append(Token("text", "", 0, content=tail))
                continue
            if child.type == "image":
                out += child.children or []
                out.append(Token("text", "", 0, content=f" ({child.attrGet('src')})"))
                continue
            out.append(child)
        tok.children = out


def _code_inline(self, tokens, idx: int, options, env) -> str:
    text = tokens[idx].content
    if _DIGEST.match(text.strip()):
        return '<code class="digest">' + html.escape(text, quote=False) + "</code>"
    return "<code>" + breakable(text) + "</code>"
