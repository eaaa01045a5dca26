"""Figures for reports: matplotlib with the Agg backend, inlined as stable SVG text.

Every figure is made inside :func:`figure` (a context manager) and turned into text by
:func:`svg`: the XML prolog, DOCTYPE and metadata block are dropped, text stays text
(``svg.fonttype: none``), and element ids are salted with the figure's own name (so two
figures on one page never share an id, and the same figure has the same bytes on every run).
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Callable, Iterator
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
BLUE, ORANGE, GREEN, VERMILION, GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#777777"
REDDISH_PURPLE, SKY_BLUE = "#CC79A7", "#56B4E9"

#: The word a caption uses for each colour a figure draws with: Okabe–Ito's names (their
#: vermilion is not red, nor their orange yellow), and grey for the greys of lines and zero
#: lines. A caption that names a colour names one of these, and one its figure draws with.
COLOUR_NAMES = {
    BLUE: "blue",
    ORANGE: "orange",
    GREEN: "green",
    VERMILION: "vermilion",
    GREY: "grey",
    REDDISH_PURPLE: "reddish purple",
    SKY_BLUE: "sky blue",
    "#999999": "grey",
    "#444444": "dark grey",
}


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


#: The smallest text of a figure on a page, in CSS pixels: a figure is never drawn narrower
#: than the width at which its smallest text is this tall (on a phone, 390 px wide, a figure
#: 600 px wide scaled to fit showed 9 pt labels about 6 px tall); a figure wider than its
#: column then scrolls in its own box.
LEGIBLE_PX = 10

_VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
_FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px")


def min_width(svg_text: str, legible: float = LEGIBLE_PX) -> int | None:
    """The narrowest width, in CSS pixels, at which every text of the figure is at least
    ``legible`` pixels tall (its font size in the figure's own units scaled by the width
    over the viewBox's); None for a figure without a viewBox or text. matplotlib writes every
    text's size in the viewBox's units and only rotates text, so the smallest size scales
    with the figure's width alone. One pixel is added: the browser lays the height out to a
    fraction of a pixel and scales the drawing by the smaller of the two ratios, which at the
    exact width drew 10 px text 9.9995 px tall."""
    box = _VIEWBOX.search(svg_text[: svg_text.index(">")])
    sizes = [float(x) for x in _FONT_SIZE.findall(svg_text)]
    if box is None or not sizes or min(sizes) <= 0:
        return None
    return math.ceil(float(box.group(1)) * legible / min(sizes)) + 1


#: The widest a figure may need to be (its :func:`min_width`) to fit a phone's column without
#: scrolling: a page 390 px wide leaves a figure 356 px (less a scroll bar's 15 px, the body's
#: padding and the figure's margins), and a few pixels are kept spare.
PHONE_PX = 350


def fit_width(draw: Callable[[float], str], width: float, most: int = PHONE_PX) -> str:
    """A figure drawn for a phone: ``draw(width)`` returns the SVG of the figure ``width``
    inches wide, redrawn narrower (its text keeps its size in points, so it grows against the
    figure) until its :func:`min_width` is at most ``most`` pixels; "" when four attempts did
    not fit (the page then scrolls the wide figure on a phone)."""
    for _ in range(4):
        text = draw(width)
        need = min_width(text)
        if need is None or need <= most:
            return text
        width *= 0.97 * most / need
    return ""


def inline(svg_text: str) -> str:
    """An SVG document for inlining in HTML: the namespace declarations are dropped (the HTML
    parser puts ``<svg>`` in the SVG namespace itself), and the figure is given its
    :func:`min_width` as a CSS ``min-width`` (a narrower column scrolls it sideways, see
    ``.plot`` in the stylesheet, rather than shrink its text below :data:`LEGIBLE_PX`)."""
    head_end = svg_text.index(">")
    head = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg_text[:head_end])
    least = min_width(svg_text)
    if least is not None:
        head += f' style="min-width:{least}px"'
    return head + svg_text[head_end:]


def png(fig: Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes without software or date metadata."""
    buf = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()
