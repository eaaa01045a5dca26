"""Report parts: the Markdown renderer, stable inline SVG, and the d17 report on hand-made
outputs (a prepared folder only, then a small score)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from prereg.compiler.project import Project
from prereg.reports import Step, build_report, study_info
from prereg.reports import plot as rplot
from prereg.reports.markdown import inline, render
from prereg.reports.page import (
    Facts,
    Figure,
    Heading,
    Para,
    Registered,
    Report,
    Table,
    render_html,
    render_index,
    render_markdown,
    write_report,
)

ROOT = Path(__file__).resolve().parents[2]


# -- markdown -----------------------------------------------------------------------------------


def test_markdown_blocks():
    text = (
        "<!-- generated\nheader -->\n# Title\n\nA *b* **c** `d<e>` [f](#g) and x_y_z.\n\n"
        "## Table\n\n| a | b |\n|---|---:|\n| `1\\|2` | 3 |\n\n"
        "- one\n  - nested\n- two\n\n1. first\n2. second\n\n```py\nif a < b:\n```\n\n> quoted\n"
    )
    assert render(text) == (
        '<h1 id="prereg-title">Title</h1>\n'
        '<p>A <em>b</em> <strong>c</strong> <code>d&lt;e&gt;</code> <a href="#g">f</a>'
        " and x_y_z.</p>\n"
        '<h2 id="prereg-table">Table</h2>\n'
        '<div class="scroll"><table>\n<caption>Table</caption>\n<thead>\n<tr>\n'
        '<th scope="col">a</th>\n<th scope="col" style="text-align:right">b</th>\n</tr>\n'
        "</thead>\n<tbody>\n<tr>\n<td><code>1|2</code></td>\n"
        '<td style="text-align:right">3</td>\n</tr>\n</tbody>\n</table></div>\n'
        "<ul>\n<li>one\n<ul>\n<li>nested</li>\n</ul>\n</li>\n<li>two</li>\n</ul>\n"
        "<ol>\n<li>first</li>\n<li>second</li>\n</ol>\n"
        '<pre><code class="language-py">if a &lt; b:\n</code></pre>\n'
        "<blockquote>\n<p>quoted</p>\n</blockquote>\n"
    )


def test_markdown_escapes_html_and_never_links_out():
    out = render("<script>alert(1)</script> [site](https://example.org/x) &lt;kept&gt;")
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "href" not in out and "site (https://example.org/x)" in out
    assert "&lt;kept&gt;" in out  # a character reference is decoded, then escaped again


def test_markdown_raw_html_blocks_are_text_and_comments_are_dropped():
    out = render(
        '<div onclick="x()">\n<b>bold</b>\n</div>\n\n<details><summary>s</summary>\n\n'
        "text <!-- inline --> <img src=x>\n\n<!-- a comment\nover lines -->\nafter\n"
    )
    assert "<div" not in out and "<b>" not in out and "<details" not in out and "<img" not in out
    assert "&lt;div onclick=" in out and "&lt;b&gt;bold&lt;/b&gt;" in out
    assert "&lt;details&gt;&lt;summary&gt;s&lt;/summary&gt;" in out
    assert "&lt;!-- inline --&gt;" in out  # only a comment opening a block is dropped
    assert "a comment" not in out and "over lines" not in out and "<p>after</p>" in out


def test_markdown_never_refers_to_another_site():
    out = render(
        "[a](https://example.org/a) <https://example.org/b> [m](mailto:x@example.org) "
        "![plot](https://example.org/p.png) ![local](figures/f.svg) [c][ref] [in](#prereg-x)\n\n"
        "[ref]: http://example.org/c\n"
    )
    assert re.findall(r"<a\b[^>]*>", out) == ['<a href="#prereg-x">']  # the in-page link only
    assert "<img" not in out and "src=" not in out
    assert "a (https://example.org/a)" in out and "https://example.org/b" in out
    assert "m (mailto:x@example.org)" in out and "c (http://example.org/c)" in out
    assert "plot (https://example.org/p.png)" in out and "local (figures/f.svg)" in out
    assert inline("see [site](https://example.org/)") == "see site (https://example.org/)"


def test_markdown_heading_offset():
    assert render("# a\n###### b", heading_offset=1) == (
        '<h2 id="prereg-a">a</h2>\n<h6 id="prereg-b">b</h6>\n'
    )


def test_markdown_heading_ids_are_unique_and_stable():
    text = "# Gates\n\n## `h1`: one & two\n\n## Gates\n\n### Gates\n\nGates\n---\n\n## ?\n"
    out = render(text)
    ids = re.findall(r'<h[1-6] id="([^"]+)">', out)
    assert ids == [
        "prereg-gates",
        "prereg-h1-one-two",
        "prereg-gates-2",
        "prereg-gates-3",
        "prereg-gates-4",  # a setext heading is a heading too
        "prereg-section",
    ]
    assert render(text) == out  # the same text gives the same ids (and bytes) every time
    assert render("# Gates\n") == '<h1 id="prereg-gates">Gates</h1>\n'  # ids are per document


def test_markdown_tables_are_captioned_scoped_and_keep_digests_whole():
    digest = "sha256:" + "0123456789abcdef" * 4
    out = render(
        f"## Inputs *seen*\n\n| role | digest |\n|---|:---:|\n| corpus | `{digest}` |\n"
        f"| bare | `{'ab' * 16}` | \n| short | `abc123` |\n\nno heading:\n\n| x |\n|---|\n| 1 |\n"
    )
    assert out.count("<table>") == 2 and out.count('<div class="scroll"><table>') == 2
    assert "<caption>Inputs <em>seen</em></caption>" in out  # the heading above it, rendered
    assert out.count("<caption>") == 2  # the second table stands under the same heading,
    assert "<caption>Inputs <em>seen</em> (table 2)</caption>" in out  # captioned apart
    again = render("## A\n\n| x |\n|---|\n| 1 |\n\n## B\n\n| y |\n|---|\n| 2 |\n")
    assert "<caption>A</caption>" in again and "<caption>B</caption>" in again  # counted anew
    assert re.findall(r"<th\b[^>]*>", out) == [
        '<th scope="col">',
        '<th scope="col" style="text-align:center">',
        '<th scope="col">',
    ]
    assert f'<code class="digest">{digest}</code>' in out
    assert f'<code class="digest">{"ab" * 16}</code>' in out
    assert "<code>abc123</code>" in out
    assert render("| x |\n|---|\n| 1 |\n").count("<caption>") == 0  # no heading, no caption
    escapes = render("## a \\* b &amp; `c`\n\n| x |\n|---|\n| 1 |\n")
    assert "<caption>a * b &amp; <code>c</code></caption>" in escapes


def test_markdown_inline_has_no_block_structure():
    assert inline("# not a heading *x* `y`") == "# not a heading <em>x</em> <code>y</code>"
    assert inline("a & <b>") == "a &amp; &lt;b&gt;"


# -- svg ----------------------------------------------------------------------------------------


def _svg(name: str) -> str:
    with rplot.figure(3, 2) as (fig, ax):
        ax.plot([0, 1, 2], [1, 0, 1], "o-")
        ax.set_title("t")
        return rplot.svg(fig, name, "A <plot>")


def test_svg_is_byte_stable_titled_and_its_ids_are_prefixed():
    one, two = _svg("alpha"), _svg("alpha")
    assert one == two
    assert one.startswith("<svg ") and "<title>A &lt;plot&gt;</title>" in one
    assert "<metadata>" not in one and "<?xml" not in one
    import re

    ids = re.findall(r' id="([^"]+)"', one)
    assert ids and all(i.startswith("alpha-") for i in ids)
    refs = re.findall(r'(?:url\(#|href="#)([^")]+)', one)
    assert refs and set(refs) <= set(ids)
    other = set(re.findall(r' id="([^"]+)"', _svg("beta")))
    assert not other & set(ids)  # two figures on one page share no id


def test_inline_svg_drops_namespaces_only():
    doc = _svg("gamma")
    inline = rplot.inline(doc)
    assert "xmlns" in doc and "xmlns" not in inline and "http" not in inline
    # the namespaces go and the figure's least width comes (see the next test)
    least = f' style="min-width:{rplot.min_width(doc)}px"'
    assert least in inline
    assert inline.replace(least, "").replace(" ", "") == doc.replace(" ", "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', ""
    ).replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_a_figure_is_never_drawn_narrower_than_its_smallest_text_allows():
    """The least width of a figure is where its smallest text is 10 px tall, and a pixel
    more (the browser's rounding of the height): a viewBox 450 units wide with text of 9 and
    7.5 units is 601 px (7.5 x 600 / 450 = 10); 599 would draw that text below 10 px. No
    viewBox or no text: no least width."""
    doc = (
        '<svg width="450pt" height="100pt" viewBox="0 0 450 100">'
        "<text style=\"font-size: 9px; font-family: 'DejaVu Sans'\">a</text>"
        '<text style="font-size: 7.5px" transform="rotate(-90 0 0)">b</text></svg>'
    )
    assert rplot.min_width(doc) == 601
    assert 7.5 * 599 / 450 < 10 <= 7.5 * 600 / 450
    assert rplot.min_width(doc, legible=12) == 721
    assert rplot.min_width(doc.replace("7.5px", "9.1px")) == 501  # ceil(450 * 10 / 9) + 1
    assert rplot.min_width('<svg width="4pt"><text style="font-size: 9px">a</text></svg>') is None
    assert rplot.min_width('<svg viewBox="0 0 450 100"><path d="M0 0"/></svg>') is None
    assert 'style="min-width:601px"' in rplot.inline(doc)


def test_a_figure_for_phones_is_redrawn_narrower_until_its_text_fits():
    """fit_width redraws a figure narrower until its least width fits a phone's column
    (350 px): a drawing whose viewBox is 72 units an inch with 7-unit text needs
    ceil(72 w x 10 / 7) + 1 px, so 4.4 inches (454 px) are redrawn at 4.4 x 0.97 x 350 / 454
    inches (330 px); a drawing that never fits (a fixed 600-unit box) gives "" after four
    attempts, and a fitting first drawing is kept as it is."""
    import math

    widths: list[float] = []

    def draw(width: float, box: float | None = None) -> str:
        widths.append(width)
        units = box if box is not None else 72 * width
        return f'<svg viewBox="0 0 {units} 100"><text style="font-size: 7px">a</text></svg>'

    text = rplot.fit_width(draw, 4.4)
    assert len(widths) == 2 and widths[1] == pytest.approx(4.4 * 0.97 * 350 / 454)
    assert rplot.min_width(text) == math.ceil(72 * widths[1] * 10 / 7) + 1 <= rplot.PHONE_PX
    widths.clear()
    assert rplot.fit_width(lambda w: draw(w, box=600), 4.4) == "" and len(widths) == 4
    widths.clear()
    assert rplot.fit_width(draw, 3.0) == draw(3.0) and len(widths) == 2


# -- the page writer ----------------------------------------------------------------------------


def test_page_renders_tables_figures_and_refuses_to_overwrite(tmp_path):
    report = Report("s", "T & co", "fine", True)
    report.add(
        Table(("a", "b|c"), [(1, "x|y"), (None, "`z`")], numeric=frozenset({0})),
        Figure("f", "F", _svg("f"), "cap"),
    )
    html = render_html(report)
    assert "T &amp; co</h1>" in html and '<td class="num">1</td>' in html
    assert '<td class="num">–</td>' in html and '<figure id="fig-f">' in html
    md = render_markdown(report)
    assert "| a | b|c |" in md and "| 1 | x\\|y |" in md and "![F](figures/f.svg)" in md
    written = write_report(report, tmp_path)
    assert [p.name for p in written] == ["report.html", "report.md", "f.svg"]
    assert (tmp_path / "figures" / "f.svg").read_text() == report.blocks[1].svg
    from prereg.errors import UserError

    with pytest.raises(UserError, match="already exists"):
        write_report(report, tmp_path)


class Refs(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.starts: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.starts.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.text.append(data)


def refs(page: str) -> Refs:
    r = Refs()
    r.feed(page)
    r.close()
    return r


HOSTILE = "<script>alert(1)</script> & <b>co</b>"


def test_page_escapes_every_value_and_refers_to_no_other_site():
    digest = "sha256:" + "ab" * 32
    report = Report(HOSTILE, "Study " + HOSTILE, "status " + HOSTILE, False, decision=HOSTILE)
    report.add(
        Heading("Heading " + HOSTILE),
        Para("para " + HOSTILE + " [away](https://example.org/x)"),
        Facts([("fact " + HOSTILE, "v " + HOSTILE), ("digest", digest)], frozenset({"digest"})),
        Table(
            ("col " + HOSTILE, "digest", "md"),
            [("cell " + HOSTILE, digest, "[site](http://example.org/) & [in](#fig-f)")],
            code=frozenset({1}),
            markdown=frozenset({2}),
            caption="caption " + HOSTILE,
            folded="fold " + HOSTILE,
        ),
        Figure("f", "F", _svg("f"), "figure " + HOSTILE),
        Registered("registered " + HOSTILE, "# <script>x()</script>\n\n[a](https://example.org)\n"),
    )
    page = render_html(report)
    assert "<script" not in page and "<b>" not in page
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;co&lt;/b&gt;"
    for where in ("Study ", "status ", "Heading ", "para ", "fact ", "v ", "col ", "cell ",
                  "caption ", "fold ", "figure ", "registered "):  # fmt: skip
        assert where + escaped in page, where
    assert f"<title>Study {escaped}: {escaped}</title>" in page
    assert f'<p class="status decision">{escaped}</p>' in page
    assert f'<code class="digest">{digest}</code>' in page  # in the facts and the table
    assert page.count(f'<code class="digest">{digest}</code>') == 2
    parsed = refs(page)
    hrefs = [a.get("href") or a.get("src") for _, a in parsed.starts if {"href", "src"} & set(a)]
    # the back link, the contents' link to the heading (an id made of its text, escaped) and
    # the in-page link only
    assert hrefs == ["../index.html", "#heading-script-alert-1-script-b-co-b", "#fig-f"]
    text = "".join(parsed.text)
    assert "away (https://example.org/x)" in text and "site (http://example.org/)" in text
    assert render_html(report) == page  # same report, same bytes


def test_index_page_escapes_its_values():
    page = render_index(
        "prereg demo",
        "overall " + HOSTILE,
        False,
        [{"study": "s" + HOSTILE, "status": "st " + HOSTILE, "ok": False,
          "report": "s/report.html", "markdown": "s/report.md"},
         {"study": "t", "status": "not run", "ok": False}],
        [{"study": "s", "title": "step " + HOSTILE, "result": "ok"}],
        ["s/a&b <x>.json"],
    )  # fmt: skip
    assert "<script" not in page and "<b>" not in page
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;co&lt;/b&gt;"
    for where in ("overall ", '<code class="id">s', "st ", "step "):
        assert where + escaped in page, where
    assert (
        '<a href="s/a&amp;b &lt;x&gt;.json"><code>s/<wbr>a&amp;b &lt;x&gt;.json</code></a>' in page
    )
    assert (
        '<td data-label="status" class="bad">not run</td><td class="links" data-label="report">–</td>'
        in page
    )
    # on a phone each study is a card of labelled lines (its status is long); the steps stay a table
    assert page.count('<table class="stack">') == 1
    assert '<table class="stack"><caption>Studies: each one' in page
    hrefs = [a["href"] for tag, a in refs(page).starts if tag == "a"]
    # the contents (the sections the index has, each an id of it), then the links
    assert hrefs == [
        "#studies",
        "#steps",
        "#outputs",
        "s/report.html",
        "s/report.md",
        "s/a&b <x>.json",
    ]
    assert all(f'id="{h[1:]}"' in page for h in hrefs[:3])


def _loaded_after(code: str, *args: str) -> str:
    """Which of markdown-it, Jinja2 and matplotlib a fresh interpreter holds after ``code``."""
    import subprocess
    import sys

    code += (
        "\nimport sys\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'markdown_it', 'jinja2',"
        " 'matplotlib'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_report_modules_load_jinja2_and_markdown_it_only_to_render():
    imports = "import prereg.reports.markdown, prereg.reports.verdicts, prereg.reports.page"
    assert _loaded_after(imports) == "['matplotlib']"  # the plot module, as before
    render = imports + "\nprereg.reports.markdown.inline('*x*')"
    assert _loaded_after(render) == "['markdown_it', 'matplotlib']"


def test_a_scores_verdict_explanations_load_no_renderer_and_no_plotting():
    """SCORE.md's verdict explanations (rule words, deciding figures) come without the report
    pages' imports: score commands stay fast."""
    assert _loaded_after("import prereg.decide.explain, prereg.reports.verdicts") == "[]"


def test_a_study_command_that_renders_nothing_loads_no_renderer(tmp_path):
    command = (
        "import sys\nfrom prereg.cli import main\n"
        "assert main(['jev-multicorrect', 'score', '--lists', 'examples/jev/lists.jsonl',"
        " '--labels', 'examples/jev/labels.jsonl', '--predictions',"
        " 'examples/jev/predictions.jsonl', '--out', sys.argv[1]]) == 0"
    )
    assert _loaded_after(command, str(tmp_path / "REPORT.json")) == "[]"


# -- the d17 report on hand-made outputs --------------------------------------------------------

D17 = "d17-multifact"


@pytest.fixture(scope="module")
def d17():
    return study_info(Project(ROOT), D17)


def _audit(passes: bool) -> dict:
    groups = [
        {"group": "control:x", "max": 1.0, "n": 10, "passes": None, "scores": {}, "yes": 5},
        {"group": "gated:y", "max": 0.52, "n": 10, "passes": True, "scores": {}, "yes": 5},
        {"group": "gated:z", "max": 0.7 if not passes else 0.55, "n": 10, "passes": passes,
         "scores": {}, "yes": 5},
    ]  # fmt: skip
    return {"controlMax": 1.0, "equalizedMax": max(g["max"] for g in groups[1:]),
            "equalizedPasses": passes, "folds": 5, "groups": groups, "limit": 0.6}  # fmt: skip


def _prepared(folder: Path, d17, passes: bool = True) -> Path:
    p = folder / "prepared"
    p.mkdir(parents=True)
    prereg = {"studyId": D17, "specDigest": d17.spec_digest, "seed": "demo-seed",
              "seedClass": "public", "rows": 30, "generatorId": "gen/v1",
              "corpusDigest": "sha256:" + "1" * 64, "goldDigest": "sha256:" + "2" * 64,
              "auditDigest": "sha256:" + "3" * 64, "dispatchOrderDigest": "sha256:" + "4" * 64}  # fmt: skip
    (p / "preregistration.json").write_text(json.dumps(prereg))
    (p / "audit.json").write_text(json.dumps({**_audit(passes), "specDigest": d17.spec_digest}))
    return p


class Svgs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.titles, self._stack = [], []

    def handle_starttag(self, tag, attrs):
        self._stack.append(tag)

    def handle_endtag(self, tag):
        self._stack.pop()

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_data(self, data):
        if self._stack[-1:] == ["title"] and "svg" in self._stack:
            self.titles.append(data)


def titles(html: str) -> list[str]:
    """The titles of a page's figures, a figure's narrow twin (for phones) left out."""
    from tests.demo.test_demo_reports import NARROW

    p = Svgs()
    p.feed(NARROW.sub("", html))
    return p.titles


@pytest.mark.parametrize("passes", [True, False])
def test_d17_prepared_only(tmp_path, d17, passes):
    prepared = _prepared(tmp_path, d17, passes)
    step = Step("prepare", "prepare", ["prepare", "seed", "{out}/prepared"],
                ["prepare", "seed", str(prepared)], 0, True)  # fmt: skip
    report = build_report(d17, tmp_path, [step])
    html = render_html(report)
    assert titles(html) == ["Shortcut audit: best surface-cue learner per group"]
    # d17 registers 7 sizing claims, and no diagnose step ran
    assert (
        report.status
        == "prepared 30 rows; not scored; shortcut audit "
        + ("passes" if passes else "FAILS")
        + "; 7 sizing claims not diagnosed"
    )
    assert report.ok is passes
    assert "sha256:" + "1" * 64 in html and d17.spec_digest in html
    assert "no verdicts yet" in html


def _cell(cid, split, levels, k, n, conf, cal_k, unreliable=False):
    from prereg.stats.proportions import wilson_interval

    lo, hi = wilson_interval(k, n, level=0.95)
    clo, chi = wilson_interval(cal_k, n, level=0.95)
    return {
        "cell": cid, "split": split, "levels": levels, "rows": n, "observed": n,
        "metrics": {
            "raw-accuracy": {"correct": k, "estimate": k / n, "lower": lo, "upper": hi},
            "calibrated-accuracy": {"correct": cal_k, "estimate": cal_k / n, "lower": clo, "upper": chi},
            "mean-confidence": conf, "decile-ece": 0.05, "coverage": 1.0, "said-yes-rate": 0.5,
        },
        "calibrationUnreliable": unreliable, "byPosition": {},
    }  # fmt: skip


def test_d17_score_report(tmp_path, d17):
    prepared = _prepared(tmp_path, d17)
    cells = [
        _cell("c1", "test", {"pool": "pool-a", "hops": "1", "outcome": "yes", "layout": "equalized"}, 90, 100, 0.9, 88),
        _cell("c2", "test", {"pool": "pool-b", "hops": "3", "outcome": "relay-off", "layout": "equalized"}, 20, 100, 0.8, 30, True),
        _cell("c3", "tuning", {"pool": "pool-a", "hops": "1", "outcome": "yes", "layout": "equalized"}, 1, 2, 0.7, 1),
    ]  # fmt: skip
    doc = {
        "specDigest": d17.spec_digest, "seed": "demo-seed",
        "decision": {"outcome": "HOLD", "rule": "otherwise", "why": "the registered decision reads no data"},
        "corpusDigest": "sha256:" + "1" * 64, "goldDigest": "sha256:" + "2" * 64,
        "observations": {"sha256": "sha256:" + "5" * 64, "records": 210, "rows": 202, "observedRows": 202},
        "calibrator": {"id": "cal-1", "digest": "sha256:" + "6" * 64, "effectiveAt": "a", "expiresAt": "b"},
        "clock": {"collectionEndBound": "x", "evaluatedAt": "y"}, "complete": False,
        "gates": [{"id": "coverage", "metric": "coverage", "op": "ge", "value": 0.95, "passed": False,
                   "where": {"split": ["test"]}, "failures": [{"cell": "c2", "figure": 0.5}]}],
        "verdicts": {"h1": "insufficient", "replication": "insufficient"},
        "cells": cells, "auroc": [], "estimates": [], "contrasts": [],
    }  # fmt: skip
    (tmp_path / "SCORE.json").write_text(json.dumps(doc))
    steps = [
        Step("p", "prepare", ["prepare", "s", "{out}/prepared"], ["prepare", "s", str(prepared)], 0, True),
        Step("s", "score", ["score", "--out", "{out}/SCORE.json"], ["score", "--out", str(tmp_path / "SCORE.json")], 0, True),
    ]  # fmt: skip
    report = build_report(d17, tmp_path, steps)
    html = render_html(report)
    assert (
        report.decision == "decision HOLD: registered whatever the data; verdicts: 2 insufficient"
    )
    assert report.status.startswith("needs attention")
    assert report.ok is False  # a gate failed
    got = titles(html)
    assert got == [
        "raw-accuracy per cell (test split) with Wilson intervals",
        "Calibrated confidence against calibrated-accuracy per cell (test split)",
        "Shortcut audit: best surface-cue learner per group",
    ]
    assert "FAILED in 1 cell(s): c2" in html and "Vermilion cells fail a registered gate" in html
    for h in ("h1", "replication"):
        assert f'">{h}</a></td>' in html
    forest = html[html.index('<figure id="fig-forest">') : html.index("</figure>")]
    # one interval per test cell: panel titles name both pools, tick labels both rows
    assert ">pool pool-a</text>" in forest and ">pool pool-b</text>" in forest
    assert "hops 1 · yes · equalized" in forest and "hops 3 · relay-off · equalized" in forest
    assert "tuning" not in forest
    reliability = html[html.index('<figure id="fig-reliability">') :]
    assert "calibration unreliable" in reliability[: reliability.index("</figure>")]
    md = render_markdown(report)
    assert "| `c3` |" in md and "**HOLD**: registered whatever the data" in md


def test_step_options_and_the_command_shown():
    step = Step(
        "t",
        "score",
        ["score", "{root}/in.jsonl", "--out", "{out}/R.json", "--root={root}", "{out}"],
        ["score", "/p/in.jsonl", "--out", "/o/s/R.json", "--root=/p", "/o/s"],
        0,
        True,
    )
    assert step.option("--out") == "/o/s/R.json"
    assert step.option("--root") == "/p"
    assert step.option("--seed") is None
    assert step.shown() == "score in.jsonl --out R.json --root=. ."


# -- s3's error bars ----------------------------------------------------------------------------


@pytest.mark.parametrize("level", [0.95, 0.9, 0.99, 0.5, 0.999])
def test_the_power_figures_quantile_is_scipy_stats_norm_ppf_bit_for_bit(level):
    from scipy.stats import norm

    from prereg.reports.clusterpower import mc_z

    assert mc_z(level).hex() == float(norm.ppf(0.5 + level / 2)).hex()


def test_ids_and_paths_may_break_only_after_their_separators():
    from prereg.reports.markdown import breakable

    # a <wbr> after each separator between two word characters, none inside a word, none in
    # a decimal number or a version, and the text escaped
    assert breakable("spec/studies/d17-multifact.yaml") == (
        "spec/<wbr>studies/<wbr>d17-<wbr>multifact.<wbr>yaml"
    )
    assert breakable("tst-pool-a_h1_yes") == "tst-<wbr>pool-<wbr>a_<wbr>h1_<wbr>yes"
    assert breakable("1.0 0.05 -3 a<b") == "1.0 0.05 -3 a&lt;b"
    assert inline("`key-cell`") == "<code>key-<wbr>cell</code>"


def test_a_jev_diagnose_step_is_reported_and_a_failing_claim_turns_the_status_red(tmp_path):
    """The multicorrect report shows a diagnose step's section (the PASS claim, the verdict
    shares) and, when the claim fails, says so in its status line."""
    from prereg.cli import main

    out = tmp_path / "DIAGNOSE.json"
    args = ["jev-multicorrect", "diagnose", "--simulations", "2", "--seed", "1"]
    args += ["--out", str(out), "--quiet"]
    assert main(["--project", str(ROOT), *args]) == 0
    info = study_info(Project(ROOT), "jev-multicorrect")
    step = Step("diagnose", "diagnose", args, args, 0, True)
    report = build_report(info, tmp_path, [step])
    html = render_html(report)
    doc = json.loads(out.read_text())
    assert [c["id"] for c in doc["claims"]] == ["PASS"]
    assert "Operating characteristics (diagnose)" in html and "<code>PASS</code>" in html
    held = doc["claims"][0]["holds"]
    assert ("sizing claim FAILS: PASS" in report.status) is (not held)
    # the same run with its claim failing: the status names it and is not well
    doc["claims"][0]["holds"] = False
    out.write_text(json.dumps(doc))
    failed = build_report(info, tmp_path, [step])
    assert "sizing claim FAILS: PASS" in failed.status and failed.ok is False
    assert '<td data-label="holds">NO' in render_html(failed)
