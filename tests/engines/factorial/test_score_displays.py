"""SCORE.md shows figures as the constant ``reporting`` registers them: each figure to
``decimals`` places, each P value to ``p_value_digits`` significant digits; SCORE.json keeps
every figure whole whatever they are."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from prereg.cli import main
from tests.conftest import ROOT

STUDY = "answer-position"


def scored(tmp: Path, decimals: int, digits: int) -> tuple[dict, str]:
    root = tmp / f"d{decimals}-p{digits}"
    shutil.copytree(ROOT / "examples" / STUDY / "spec", root / "spec")
    spec = root / "spec" / "studies" / f"{STUDY}.yaml"
    text = spec.read_text(encoding="utf-8")
    text, n = re.subn(r"(\n\s+)decimals: 4(\n\s+)p_value_digits: 4",
                      rf"\1decimals: {decimals}\2p_value_digits: {digits}", text)  # fmt: skip
    assert n == 1
    spec.write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    items, obs, out = root / "items.jsonl", root / "obs.jsonl", root / "SCORE.json"
    run = ["--project", str(root), STUDY]
    assert main([*run, "items", "--out", str(items), "--quiet"]) == 0
    assert main([*run, "simulate", "--items", str(items), "--scenario", "position-bias",
                 "--seed", "1", "--out", str(obs), "--quiet"]) == 0  # fmt: skip
    assert main([*run, "score", "--items", str(items), "--observations", str(obs),
                 "--out", str(out), "--quiet"]) == 0  # fmt: skip
    return json.loads(out.read_text()), out.with_suffix(".md").read_text(encoding="utf-8")


def rows(md: str, section: str) -> dict[str, list[str]]:
    part = md.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in part.splitlines():
        m = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if m:
            out[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return out


@pytest.mark.parametrize(("decimals", "digits"), [(2, 3), (5, 2)])
def test_score_md_shows_figures_as_registered(tmp_path, decimals, digits):
    doc, md = scored(tmp_path, decimals, digits)

    def fig(x: float) -> str:  # the registered places, written out by hand
        return f"{x:.{decimals}f}"

    cells = rows(md, "Cells")
    ids = list(doc["cells"][0]["metrics"])
    for c in doc["cells"]:
        shown = cells[c["cell"]][2:]
        for mid, text in zip(ids, shown, strict=True):
            f = c["metrics"][mid]
            assert text == f"{fig(f['estimate'])} [{fig(f['lower'])}, {fig(f['upper'])}]"
            assert re.fullmatch(rf"\d+\.\d{{{decimals}}} \[\d+\.\d{{{decimals}}}, .*\]", text)
    contrasts = rows(md, "Contrasts")
    assert doc["contrasts"]
    for c in doc["contrasts"]:
        shown = contrasts[c["id"]]
        assert shown[2].startswith(fig(c["estimate"]) + " [")
        p = shown[4]
        assert p == f"{c['p']:.{digits}g}"
        # at most the registered significant digits, and the same number to that precision
        assert len(re.sub(r"^0\.0*|e.*$|\.", "", p)) <= digits
        assert float(p) == pytest.approx(c["p"], rel=10.0 ** (1 - digits))
    # SCORE.json keeps the whole figures: a P value has more digits than shown
    assert any(len(repr(c["p"])) > digits + 4 for c in doc["contrasts"])
