"""Figures for reports: matplotlib with the Agg backend, inlined as stable SVG text.

Every figure is made inside :func:`figure` (a context manager) and turned into text by
:func:`svg`: the XML prolog, DOCTYPE and metadata block are dropped, text stays text
(``svg.fonttype: none``), and element ids are salted with the figure's own name (so two
figures on one page never share an id, and the same figure has the same bytes on every run).
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

STYLE = {
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "path.simplify": False,
}

#: Colours used across reports (colour-blind safe: Okabe–Ito).
BLUE, ORANGE, GREEN, RED, GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#777777"


@contextmanager
def figure(width: float, height: float, **subplots) -> Iterator[tuple[Figure, object]]:
    """A new figure ``(fig, axes)`` of ``width`` × ``height`` inches, closed on exit."""
    with matplotlib.rc_context(STYLE):
        fig, axes = plt.subplots(figsize=(width, height), **subplots)
        try:
            yield fig, axes
        finally:
            plt.close(fig)


_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)


def svg(fig: Figure, name: str, title: str) -> str:
    """The figure as a standalone SVG document (with a ``<title>``); every id is prefixed
    with ``name``, so figures sharing a page never share an id."""
    buf = io.StringIO()
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": f"prereg:{name}"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = _METADATA.sub("", _PROLOG.sub("", buf.getvalue()))
    ids = set(re.findall(r' id="([^"]+)"', text))

    def local(m: re.Match) -> str:
        ref = m.group(2)
        return f"{m.group(1)}{name}-{ref}" if ref in ids else m.group(0)

    text = re.sub(r'( id="|url\(#|href="#)([^")]+)', local, text)
    head_end = text.index(">") + 1
    label = html.escape(title)
    return (
        f'{text[: head_end - 1]} role="img" aria-label="{label}">\n <title>{label}</title>'
        + text[head_end:]
    )


def inline(svg_text: str) -> str:
    """An SVG document for inlining in HTML: the namespace declarations are dropped (the HTML
    parser puts ``<svg>`` in the SVG namespace itself)."""
    head_end = svg_text.index(">")
    head = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg_text[:head_end])
    return head + svg_text[head_end:]


def png(fig: Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes without software or date metadata."""
    buf = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()
