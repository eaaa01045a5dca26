"""A walk of the jev source document (in Chinese): facts PREREG.md must carry, read from it.

tests/fixtures/jev/source-document.txt is a copy of the document this study implements. Each
test reads a statement or a figure from it and checks that the spec or the readable
preregistration states it (in English), so a drift in either one fails here.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache

from jev_helpers import FIXTURES, ROOT

from prereg.compiler.build import load_all, render_prereg_md
from prereg.compiler.project import Project

SOURCE = FIXTURES / "source-document.txt"


@cache
def _source() -> str:
    return " ".join(SOURCE.read_text(encoding="utf-8").split())


@cache
def _study():
    (jev,) = [s for s in load_all(Project(ROOT)) if s.id == "jev-multicorrect"]
    return jev


@cache
def _prereg() -> str:
    return " ".join(render_prereg_md(_study()).split())


def _constant(cid: str):
    (value,) = [c["value"] for c in _study().data["constants"] if c["id"] == cid]
    return value


def test_the_blinding_says_the_identity_check_is_only_a_contract():
    """Source, "方法与本地协议": the identity check is only a contract and does not promise to
    defend against a malicious callback reading an outer closure. The blinding said the
    predictor never sees the correct set, unqualified (found by the walk, amendment 1.3)."""
    assert "身份检查只是契约，不承诺能防御恶意回调读取外部闭包" in _source()
    text = _prereg()
    blinding = text[text.index("### Blinding") :]
    assert "This identity check is a contract, not a defence" in blinding
    assert "malicious callback that reads the labels from an outer closure" in blinding


def test_the_threshold_grid_and_tie_rule_are_the_sources():
    """Source: thresholds 0, 0.01, ..., 1 on validation only, ties to the smallest."""
    assert "只在 validation 上按 0,0.01,…,1 拟合阈值（并列取最小值）" in _source()
    grid = _constant("threshold-grid")
    ts = [
        Fraction(grid["first"] + k * grid["step"], grid["denominator"])
        for k in range((grid["last"] - grid["first"]) // grid["step"] + 1)
    ]
    assert ts[0] == 0 and ts[1] == Fraction(1, 100) and ts[-1] == 1 and len(ts) == 101
    assert _constant("threshold-fit") == {
        "fit": "validation",
        "evaluate": "test",
        "ties": "smallest",
    }


def test_the_gap_scale_bins_and_seed_are_the_sources():
    """Source: Δ = 100(max − min); 10 equal-width bins; diagnostic(42) among three seeds."""
    src = _source()
    assert re.search(r"\\Delta_i=100\\left\(", src)
    assert "用10个等宽箱计算 ECE" in src and "diagnostic(42)" in src and "三种子" in src
    conv = _constant("metric-conventions")
    assert conv["gap_scale"] == 100 and conv["ece_bins"] == 10 and conv["multi_correct_min"] == 2
    seeds = _constant("diagnostic-seeds")
    assert seeds[0] == 42 and len(seeds) == 3


def test_the_eight_contracts_are_the_sources_in_its_order():
    """Source, "本地复现": eight scoring/isolation contracts, listed in order."""
    listed = re.search(r"本地诊断只检查8项评分/隔离契约：([^。]+)。", _source()).group(1)
    parts = listed.split("、")
    assert len(parts) == 8
    words = ["排序", "低份额", "阈值", "不重叠", "拒答", "无标签", "五拷贝", "重新归一化"]
    assert all(w in p for w, p in zip(words, parts, strict=True))
    contracts = _constant("diagnostic")["contracts"]
    assert contracts == [
        "ranking_vs_set_recovery",
        "below_uniform_counted",
        "threshold_frozen",
        "overlap_refused",
        "refusals_fail",
        "public_callback_blind",
        "five_copy_gap",
        "first_bin_exclusion_renormalised",
    ]


def test_the_audited_papers_code_and_date_are_the_sources():
    """Source, 论文信息: the audited code's repository, tag and commit; first public date."""
    src = _source()
    repo, tag, commit = re.search(
        r"原作者开源代码\s+(\S+)，MIT；论文固定标签 `([^`]+)` 对应 commit `([0-9a-f]{40})`", src
    ).groups()
    date = re.search(r"首次公开日期\s+(\d{4}-\d{2}-\d{2})", src).group(1)
    reg = _study().data["registration"]
    assert f"{repo} at tag {tag} (commit {commit})" in reg["identifier"]
    assert f"first public on {date}" in reg["registration_date"]
