"""Benchmark: rendering report pages (markdown-it-py for Markdown, Jinja2 for the pages).

Times, median of N runs after one warm-up, in process:

- the first render in a fresh interpreter (importing markdown-it-py and Jinja2, building the
  parser and loading the templates), as the demo pays it once;
- ``prereg.reports.markdown.render`` of each committed study's PREREG.md (as a report embeds
  it, one heading level down);
- ``prereg.reports.page.render_html`` of a synthetic report: a 400-row table with a code and
  an inline-Markdown column, facts, paragraphs, and d17's PREREG.md as its registered block.

    python bench/bench_report.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def median_ms(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def first_render_ms() -> float:
    code = (
        "import time\n"
        "from prereg.reports import page\n"
        "t = time.perf_counter()\n"
        "page.render_html(page.Report('s', 'T', 'ok', True, [page.Para('*x*')]))\n"
        "print((time.perf_counter() - t) * 1000)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs

    from prereg.reports import markdown, page

    firsts = sorted(first_render_ms() for _ in range(5))
    print(f"first page render in a fresh process (imports, parser, templates): "
          f"median {statistics.median(firsts):.1f} ms of 5")  # fmt: skip
    docs = sorted((ROOT / "generated").glob("*/PREREG.md"))
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        ms = median_ms(lambda text=text: markdown.render(text, heading_offset=1), runs)
        print(f"markdown.render {doc.parent.name}/PREREG.md ({len(text):,} chars): {ms:.1f} ms")
    digest = "sha256:" + "0123456789abcdef" * 4
    rows = [(f"c{i}", digest, f"[h{i % 7}](#prereg-h{i % 7}) *{i}*", i / 7) for i in range(400)]
    report = page.Report("s", "Synthetic", "ok", True)
    report.add(
        page.Facts([("spec digest", digest), ("rows", "400")], frozenset({"spec digest"})),
        page.Para("A paragraph with **strong** text and `code`."),
        page.Heading("Cells"),
        page.Table(
            ("cell", "digest", "rule", "estimate"),
            rows,
            numeric=frozenset({3}),
            code=frozenset({0, 1}),
            markdown=frozenset({2}),
        ),  # fmt: skip
        page.Registered("PREREG.md", (ROOT / "generated/d17_multifact/PREREG.md").read_text()),
    )
    ms = median_ms(lambda: page.render_html(report), runs)
    print(f"render_html: 400-row table and d17's PREREG.md: {ms:.1f} ms (median of {runs})")


if __name__ == "__main__":
    main()
