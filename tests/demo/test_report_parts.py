"""Report parts: the Markdown renderer, stable inline SVG, and the d17 report on hand-made
outputs (a prepared folder only, then a small score)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from prereg.compiler.project import Project
from prereg.reports import Step, build_report, study_info
from prereg.reports import plot as rplot
from prereg.reports.markdown import render
from prereg.reports.page import Figure, Report, Table, render_html, render_markdown, write_report

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
        '<div class="scroll"><table><caption>Table</caption><thead><tr><th scope="col">a</th>'
        '<th scope="col" style="text-align:right">b</th></tr></thead>'
        '<tbody><tr><td><code>1|2</code></td><td style="text-align:right">3</td></tr>'
        "</tbody></table></div>\n"
        "<ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul>\n"
        "<ol><li>first</li><li>second</li></ol>\n"
        '<pre><code class="language-py">if a &lt; b:</code></pre>\n'
        "<blockquote><p>quoted</p>\n</blockquote>\n"
    )


def test_markdown_escapes_html_and_never_links_out():
    out = render("<script>alert(1)</script> [site](https://example.org/x) &lt;kept&gt;")
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "href" not in out and "site (https://example.org/x)" in out
    assert "&lt;kept&gt;" in out  # a character reference is decoded, then escaped again


def test_markdown_heading_offset():
    assert render("# a\n###### b", heading_offset=1) == (
        '<h2 id="prereg-a">a</h2>\n<h6 id="prereg-b">b</h6>\n'
    )


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
    assert inline.replace(" ", "") == doc.replace(" ", "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', ""
    ).replace('xmlns="http://www.w3.org/2000/svg"', "")


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
    p = Svgs()
    p.feed(html)
    return p.titles


@pytest.mark.parametrize("passes", [True, False])
def test_d17_prepared_only(tmp_path, d17, passes):
    prepared = _prepared(tmp_path, d17, passes)
    step = Step("prepare", "prepare", ["prepare", "seed", "{out}/prepared"],
                ["prepare", "seed", str(prepared)], 0, True)  # fmt: skip
    report = build_report(d17, tmp_path, [step])
    html = render_html(report)
    assert titles(html) == ["Shortcut audit: best surface-cue learner per group"]
    assert report.status == "prepared 30 rows; not scored; shortcut audit " + (
        "passes" if passes else "FAILS"
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
        "specDigest": d17.spec_digest, "seed": "demo-seed", "decision": "HOLD",
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
    assert report.decision == "decision HOLD: 2 insufficient"
    assert report.status.startswith("needs attention")
    assert report.ok is False  # a gate failed
    got = titles(html)
    assert got == [
        "raw-accuracy per cell (test split) with Wilson intervals",
        "Calibrated confidence against calibrated-accuracy per cell (test split)",
        "Shortcut audit: best surface-cue learner per group",
    ]
    assert "FAILED in 1 cell(s): c2" in html and "Red cells fail a registered gate" in html
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
    assert "| `c3` |" in md and "**Decision: HOLD**" in md


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
