"""`prereg init`: a starter for the factorial engine, and a copy of a study of each other engine,
each compiles; nothing is overwritten."""

from __future__ import annotations

import json

import pytest

from prereg.cli import main
from prereg.compiler.load import load_yaml


def test_the_factorial_starter_compiles_and_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "my-study"]) == 0
    spec = tmp_path / "spec" / "studies" / "my-study.yaml"
    assert spec.read_text().startswith("# yaml-language-server: $schema=")
    assert main(["compile"]) == 0
    items, obs, out = (str(tmp_path / n) for n in ("i.jsonl", "o.jsonl", "S.json"))
    assert main(["my-study", "items", "--out", items]) == 0
    assert (
        main(
            [
                "my-study",
                "simulate",
                "--items",
                items,
                "--scenario",
                "effect",
                "--seed",
                "1",
                "--out",
                obs,
            ]
        )
        == 0
    )
    assert main(["my-study", "score", "--items", items, "--observations", obs, "--out", out]) == 0
    # the starter's sizing claims are checked by its diagnose command; as its comment says,
    # 100 rows a cell do not meet its power claim
    text = spec.read_text()
    assert "does NOT meet its own power claim (h1-power)" in text
    diag = tmp_path / "D.json"
    argv = ["my-study", "diagnose", "--simulations", "200", "--seed", "1", "--out", str(diag)]
    assert main(argv) == 0
    claims = {c["id"]: c for c in json.loads(diag.read_text())["claims"]}
    assert sorted(claims) == ["cell-half-width", "h1-false-positives", "h1-power"]
    assert claims["cell-half-width"]["holds"] and claims["h1-false-positives"]["holds"]
    assert claims["cell-half-width"]["figure"] == pytest.approx(0.0838, abs=1e-4)
    power = claims["h1-power"]
    assert not power["holds"]
    exact = _starter_power()
    assert exact == pytest.approx(0.1273, abs=1e-4)
    assert abs(power["figure"] - exact) <= 3 * power["mcSe"], (power, exact)
    capsys.readouterr()
    assert main(["init", "my-study"]) == 2
    assert "already exists; refusing to overwrite it" in capsys.readouterr().err


def _starter_power() -> float:
    """P(h1 supported) under the starter's `effect` scenario, exactly: per system a two-sided
    pooled z test of 100 treatment rows at 0.80 against 100 control rows at 0.70 (every row is
    observed: a failed first attempt is retried), the two systems independent.  Holm over two
    P values supports h1 when both adjusted P values are below 0.05, that is when the smaller
    P is below 0.025 and the larger below 0.05: with A = P(p < 0.025) and B = P(p < 0.05) of
    one system, P = A·B + (B − A)·A.  The z statistic by hand over every pair of counts,
    checked against statsmodels' proportions_ztest at a few of them."""
    import numpy as np
    from scipy.stats import binom, norm
    from statsmodels.stats.proportion import proportions_ztest

    n = 100
    k = np.arange(n + 1)
    k1, k2 = np.meshgrid(k, k, indexing="ij")
    pooled = (k1 + k2) / (2 * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (k1 - k2) / n / np.sqrt(pooled * (1 - pooled) * 2 / n)
    p = np.where(np.isnan(z), 1.0, 2 * norm.sf(np.abs(z)))
    for a, b in [(80, 70), (75, 62), (91, 90)]:
        assert p[a, b] == pytest.approx(proportions_ztest([a, b], [n, n])[1], rel=1e-9)
    w = np.outer(binom.pmf(k, n, 0.8), binom.pmf(k, n, 0.7))
    a_, b_ = w[p < 0.025].sum(), w[p < 0.05].sum()
    return float(a_ * b_ + (b_ - a_) * a_)


@pytest.mark.parametrize("source", ["d17-multifact", "s3-verifier-freeze", "jev-multicorrect"])
def test_a_copy_of_each_engines_study_compiles(project_copy, source, capsys):
    new = f"copy-of-{source.split('-')[0]}"
    assert main(["--project", str(project_copy), "init", new, "--from", source]) == 0
    assert main(["--project", str(project_copy), "compile", new]) == 0
    copy = load_yaml(project_copy / "spec" / "studies" / f"{new}.yaml").data
    original = load_yaml(project_copy / "spec" / "studies" / f"{source}.yaml").data
    assert (copy["id"], copy["version"], copy["status"]) == (new, "0.1", "draft")
    assert "amendments" not in copy
    keep = {k: v for k, v in original.items() if k not in ("id", "version", "status", "amendments")}
    assert {k: v for k, v in copy.items() if k in keep} == keep


@pytest.mark.parametrize(
    "argv, message",
    [
        (["init", "Bad Id"], "is not an identifier"),
        (["init", "check"], "is a prereg command"),
        (["init", "x", "--from", "nope"], "--from: no study 'nope'"),
    ],
)
def test_init_refusals(project_copy, argv, message, capsys):
    assert main(["--project", str(project_copy), *argv]) == 2
    assert message in capsys.readouterr().err


def test_init_for_each_engine_kind_compiles(tmp_path, capsys, monkeypatch):
    """`prereg init STUDY --engine KIND` in an empty folder: the factorial starter, or a copy of
    a study of that engine that prereg ships; every result compiles."""
    from prereg.cli import main
    from prereg.engines import registry

    monkeypatch.chdir(tmp_path)
    for kind in registry.kinds():
        assert main(["init", f"new-{kind}", "--engine", kind]) == 0, capsys.readouterr().err
    assert main(["compile"]) == 0, capsys.readouterr().err
    engines = {
        p.stem: p.read_text().split("\nengine: ", 1)[1].split("\n", 1)[0]
        for p in (tmp_path / "spec" / "studies").glob("*.yaml")
    }
    assert engines == {f"new-{k}": k for k in registry.kinds()}


def test_init_refuses_an_unknown_engine_and_two_sources(tmp_path, capsys, monkeypatch):
    from prereg.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["init", "x", "--engine", "magic"]) == 2
    assert "unknown engine 'magic' (registered:" in capsys.readouterr().err
    assert main(["init", "x", "--engine", "factorial", "--from", "y"]) == 2
    assert "--from or --engine, not both" in capsys.readouterr().err
    assert not (tmp_path / "spec" / "studies" / "x.yaml").exists()


def test_the_starter_names_a_schema_inside_its_project_and_compile_keeps_the_copy_current(
    tmp_path, capsys, monkeypatch
):
    """The editor hint points at the project's own copy of the language (no folder outside
    the project); compile refreshes a stale copy, check reports it, and the copy never decides
    what compiles."""
    from prereg.compiler.project import HOME

    monkeypatch.chdir(tmp_path)
    assert main(["init", "my-study"]) == 0
    spec = tmp_path / "spec" / "studies" / "my-study.yaml"
    first = spec.read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../generated/prereg.schema.json"
    copy = tmp_path / "generated" / "prereg.schema.json"
    shipped = (HOME / "generated" / "prereg.schema.json").read_bytes()
    assert copy.read_bytes() == shipped
    assert main(["compile"]) == 0
    assert main(["check"]) == 0
    # an older (here: emptied-out) copy: check fails naming it, compile still validates against
    # the shipped language and rewrites the copy
    copy.write_text('{"$defs": {}}\n')
    capsys.readouterr()
    assert main(["check"]) == 1
    assert "generated/prereg.schema.json is not the language this prereg speaks" in (
        capsys.readouterr().out
    )
    assert main(["compile"]) == 0
    assert "wrote generated/prereg.schema.json" in capsys.readouterr().out
    assert copy.read_bytes() == shipped
    assert main(["check"]) == 0


def test_a_refused_init_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    assert main(["init", "my-study", "--from", "no-such-study"]) == 2
    assert not (tmp_path / "generated").exists()
    assert list((tmp_path / "spec" / "studies").iterdir()) == []


def test_a_language_copy_that_is_no_regular_file_is_refused_not_read_or_replaced(
    tmp_path, capsys, monkeypatch
):
    """A FIFO (or a folder) where the copy belongs: check and compile name it without blocking
    on it, and compile writes nothing."""
    import os

    monkeypatch.chdir(tmp_path)
    assert main(["init", "my-study"]) == 0
    copy = tmp_path / "generated" / "prereg.schema.json"
    copy.unlink()
    os.mkfifo(copy)
    capsys.readouterr()
    assert main(["check"]) == 1
    assert "generated/prereg.schema.json: cannot read: a FIFO" in capsys.readouterr().out
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert "generated/prereg.schema.json: cannot read" in err and "Traceback" not in err
    assert not (tmp_path / "generated" / "my_study").exists()
    copy.unlink()
    copy.mkdir()
    assert main(["compile"]) == 2
    assert "a folder, not a regular file" in capsys.readouterr().err
