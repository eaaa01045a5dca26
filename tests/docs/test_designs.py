"""docs/designs.md: every yaml fragment compiles as written. Each block follows an HTML comment
naming it: `common` (the head of every study), `frame NAME` (a study's factors, cells, log
contract and attempts) or `design NAME on FRAME` (merged onto its frame: lists appended, other
values set); each design is compiled as a study of its own, and `prereg compile` must accept
it with no error. The page's JSON log lines are parsed too, and each must hold the fields its
frame's contract declares."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from prereg.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "designs.md"
BLOCK = re.compile(r"<!-- (?P<name>[^>]*?) -->\n```yaml\n(?P<body>.*?)```\n", re.S)
JSON_LINE = re.compile(r"```json\n(?P<line>.*?)\n```\n", re.S)
DESIGNS = ("factorial", "paired", "non-inferiority", "equivalence", "continuous")
DESIGNS += (
    "calibration",
    "brier-comparison",
    "clustered",
    "trend",
    "interaction",
    "agreement",
    "pass-at-k",
)


def fragments() -> tuple[dict, dict[str, dict], dict[str, tuple[str, dict]]]:
    text = PAGE.read_text(encoding="utf-8")
    assert text.count("```yaml\n") == len(BLOCK.findall(text)), "a yaml block without its name"
    common, frames, designs = None, {}, {}
    for m in BLOCK.finditer(text):
        words, body = m["name"].split(), yaml.safe_load(m["body"])
        if words == ["common"]:
            common = body
        elif words[0] == "frame" and len(words) == 2:
            frames[words[1]] = body
        elif words[0] == "design" and len(words) == 4 and words[2] == "on":
            designs[words[1]] = (words[3], body)
        else:  # pragma: no cover - the page names every block one of three ways
            raise AssertionError(f"unknown block name {m['name']!r}")
    assert common is not None
    return common, frames, designs


def merged(*parts: dict) -> dict:
    out: dict = {}
    for part in parts:
        for key, value in part.items():
            if isinstance(value, list) and isinstance(out.get(key), list):
                out[key] = out[key] + value
            else:
                out[key] = value
    return out


def test_the_page_has_every_common_design_and_is_linked_from_the_readme():
    _, frames, designs = fragments()
    assert set(designs) == set(DESIGNS)
    assert all(frame in frames for frame, _ in designs.values())
    assert "docs/designs.md" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("design", DESIGNS)
def test_each_design_compiles(tmp_path, design, capsys):
    common, frames, designs = fragments()
    frame, body = designs[design]
    spec = merged(common, frames[frame], body)
    spec["id"] = design
    studies = tmp_path / "spec" / "studies"
    studies.mkdir(parents=True)
    (studies / f"{design}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    code = main(["--project", str(tmp_path), "compile"])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "generated" / design.replace("-", "_") / "rules.py").exists()


def test_each_log_line_holds_its_frames_fields():
    _, frames, _ = fragments()
    lines = [json.loads(m["line"]) for m in JSON_LINE.finditer(PAGE.read_text(encoding="utf-8"))]
    assert len(lines) == len(frames)
    for record, frame in zip(lines, frames.values(), strict=True):
        (contract,) = frame["record_contracts"]
        assert set(record) == {f["name"] for f in contract["fields"]}
