"""Paired numeric contrasts from a spec alone: the paired t test and interval of the
differences (scipy's ttest_rel and t.interval), a ratio of geometric means over pairs (on the
logs, against the log of a ratio margin), a paired bootstrap redrawn by hand, and rows
without a partner left out and counted."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import ROOT
from tests.engines.factorial.examples import by_id, read_jsonl, write_jsonl

FIXTURE = ROOT / "tests" / "fixtures" / "factorial" / "paired-latency.yaml"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("paired-numbers")
    (root / "spec" / "studies").mkdir(parents=True)
    shutil.copy(FIXTURE, root / "spec" / "studies" / "paired-latency.yaml")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    assert (
        main(
            ["--project", str(root), "paired-latency", "items", "--out", str(root / "items.jsonl")]
        )
        == 0
    )
    return root


def test_paired_numbers_agree_with_scipy(project):
    rng = np.random.default_rng(4)
    items = read_jsonl(project / "items.jsonl")
    base = {f"item-{n:02d}": rng.normal(500, 80) for n in range(1, 41)}
    recs = []
    for it in items:
        n = int(it["itemId"].removeprefix("item-"))
        if it["system"] == "new" and n == 40:
            recs.append(
                {"rowId": it["rowId"], "attempt": 1, "ok": None, "latency_ms": None, "tokens": None}
            )
            continue  # item 40 failed under the new system: its pair is incomplete
        shift = -30.0 if it["system"] == "new" else 0.0
        lat = round(base[it["itemId"]] + shift + rng.normal(0, 20), 3)
        tok = int(1000 * (0.9 if it["system"] == "new" else 1.0) * math.exp(rng.normal(0, 0.1)))
        recs.append(
            {"rowId": it["rowId"], "attempt": 1, "ok": True, "latency_ms": lat, "tokens": tok}
        )
    obs = write_jsonl(project / "runs.jsonl", recs)
    out = project / "SCORE.json"
    code = main(
        [
            "--project",
            str(project),
            "paired-latency",
            "score",
            "--items",
            str(project / "items.jsonl"),
            "--observations",
            str(obs),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    doc = json.loads(out.read_text())
    c = by_id(doc["contrasts"])
    got = {}
    for r in recs:
        item = next(it for it in items if it["rowId"] == r["rowId"])
        if r["ok"]:
            got.setdefault(item["itemId"], {})[item["system"]] = r
    pairs = [v for v in got.values() if len(v) == 2]
    new = np.array([p["new"]["latency_ms"] for p in pairs])
    old = np.array([p["old"]["latency_ms"] for p in pairs])
    t = stats.ttest_rel(new, old, alternative="less")
    d = new - old
    lo, hi = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    lat = c["latency-new-vs-old"]
    assert lat["pairs"] == {"by": "itemId", "n": 39, "unpairedA": 0, "unpairedB": 1}
    assert lat["estimate"] == pytest.approx(d.mean(), abs=1e-6)
    assert (lat["lower"], lat["upper"]) == (
        pytest.approx(lo, abs=1e-6),
        pytest.approx(hi, abs=1e-6),
    )
    assert lat["p"] == pytest.approx(t.pvalue, rel=1e-5)
    # the paired bootstrap: one draw of the pairs' indexes per resample
    gen = np.random.Generator(np.random.PCG64(9))
    boots = []
    for _ in range(400):
        ix = gen.integers(0, d.size, d.size)
        boots.append(new[ix].mean() - old[ix].mean())
    blo, bhi = np.quantile(boots, [0.05, 0.95])
    assert (c["latency-boot"]["lower"], c["latency-boot"]["upper"]) == (
        pytest.approx(blo, abs=1e-6),
        pytest.approx(bhi, abs=1e-6),
    )
    # tokens: the ratio of geometric means over the pairs, tested on the logs against ln 1.1
    ln = np.log([p["new"]["tokens"] for p in pairs]) - np.log([p["old"]["tokens"] for p in pairs])
    tk = c["tokens-ratio"]
    assert tk["measure"] == "ratio"
    assert tk["estimate"] == pytest.approx(math.exp(ln.mean()), abs=1e-6)
    lo, hi = stats.t.interval(0.95, ln.size - 1, loc=ln.mean(), scale=stats.sem(ln))
    assert tk["upper"] == pytest.approx(math.exp(hi), abs=1e-6)
    p = stats.ttest_1samp(ln, math.log(1.1), alternative="less").pvalue
    assert tk["p"] == pytest.approx(p, rel=1e-5)
    want = "supported" if t.pvalue < 0.05 and math.exp(hi) < 1.1 else "not-supported"
    assert doc["verdicts"]["faster"] == want == "supported"


def test_pairs_by_an_array_field(tmp_path):
    """A pairing field holding arrays pairs rows by their JSON value (no unhashable crash)."""
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    text = FIXTURE.read_text()
    text = text.replace(
        "      - {name: tokens, type: integer, nullable: true}",
        "      - {name: tokens, type: integer, nullable: true}\n      - {name: tags, type: array}",
    ).replace(
        "        pair_by: itemId\n        interval: t\n        level: 0.95\n        test: paired-t\n        alternative: less\n    ",
        "        pair_by: tags\n        interval: t\n        level: 0.95\n        test: paired-t\n        alternative: less\n    ",
        1,
    )
    (root / "spec" / "studies" / "paired-latency.yaml").write_text(text)
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    items = root / "items.jsonl"
    assert main(["--project", str(root), "paired-latency", "items", "--out", str(items)]) == 0
    recs = []
    for it in read_jsonl(items):
        n = int(it["itemId"].removeprefix("item-"))
        lat = 500.0 + n + (-10.0 if it["system"] == "new" else 0.0) + (n % 3)
        recs.append(
            {
                "rowId": it["rowId"],
                "attempt": 1,
                "ok": True,
                "latency_ms": lat,
                "tokens": 900 + n,
                "tags": [n, "x"],
            }
        )
    obs = write_jsonl(root / "runs.jsonl", recs)
    out = root / "SCORE.json"
    code = main(
        [
            "--project",
            str(root),
            "paired-latency",
            "score",
            "--items",
            str(items),
            "--observations",
            str(obs),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    c = by_id(json.loads(out.read_text())["contrasts"])["latency-new-vs-old"]
    assert c["pairs"]["by"] == "tags" and c["pairs"]["n"] == 40
    assert c["estimate"] == pytest.approx(-10.0)
