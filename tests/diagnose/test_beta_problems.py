"""A `beta` per-problem success distribution (`clusters[].distribution: beta`) for samples
per problem: compiled, simulated and diagnosed.

Oracles written here: numpy's own beta sampler (rng.beta) and binomial draws for an
independent beta-binomial re-simulation of the registered design, the unbiased pass@k formula
with math.comb, and the beta-binomial moments (mean r, intraclass correlation ρ = 1/(a+b+1))
by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from prereg.cli import main

from .test_units_dgp import EXAMPLE, agree, diagnose, project, share, simulate

RHO = 0.2


def beta_problems(rate_nucleus: float = 0.2, rate_greedy: float = 0.15):
    def edit(spec):
        sc = spec["scenarios"][0]
        sc["rates"] = [
            {"where": [{"factor": "decoding", "levels": ["nucleus"]}], "rate": rate_nucleus},
            {"rate": rate_greedy},
        ]
        sc["clusters"][0]["correlation"] = RHO
        sc["clusters"][0]["distribution"] = "beta"

    return edit


def test_pass_at_k_power_matches_an_independent_beta_binomial_simulation(tmp_path):
    """samples-units with beta problems: nucleus rate 0.2, greedy-temp 0.15, ρ = 0.2 (a + b =
    4); 20 problems × 12 samples, 232 of 240 observed; a problem analysed with 10 valid
    samples, the gate 75% of 20; supported when nucleus' pass@5 is at least 0.55.  The rule
    reads nucleus alone and the gate only the missing samples, so the oracle draws each
    nucleus problem's chance from numpy's beta sampler on its own."""
    root = project(tmp_path, "samples-units", beta_problems())
    cond = diagnose(root, "samples-units", "nucleus-better", 400)
    rng = np.random.default_rng(61)
    reps = 8000
    s = 1 / RHO - 1
    table = np.full((13, 13), np.nan)
    for n_ in range(5, 13):
        for c_ in range(n_ + 1):
            table[n_, c_] = 1 - math.comb(n_ - c_, 5) / math.comb(n_, 5)
    held = np.ones(reps, dtype=bool)
    for decoding in ("greedy-temp", "nucleus"):
        seen = np.zeros((reps, 240), dtype=bool)
        np.put_along_axis(seen, rng.random((reps, 240)).argsort(axis=1)[:, :232], True, axis=1)
        n = seen.reshape(reps, 20, 12).sum(axis=2)
        ok = n >= 10
        held &= ok.sum(axis=1) / 20 >= 0.75
        if decoding == "nucleus":
            p = rng.beta(0.2 * s, 0.8 * s, (reps, 20))
            c = rng.binomial(n, p)  # the passing samples among a problem's observed ones
            estimates = np.where(ok, table[n, c], 0.0).sum(axis=1) / ok.sum(axis=1)
    supported = float((held & (estimates >= 0.55)).mean())
    assert 0.2 < supported < 0.8  # a design where power is neither 0 nor 1
    agree(share(cond)[0], 400, supported, reps)
    got = next(a for a in cond["analyses"] if a["id"] == "pass-at-5-nucleus")
    # the truth in closed form by hand: 1 − (3.2·4.2·5.2·6.2·7.2)/(4·5·6·7·8)
    truth = 1 - (3.2 * 4.2 * 5.2 * 6.2 * 7.2) / (4 * 5 * 6 * 7 * 8)
    assert got["truth"] == pytest.approx(truth, abs=1e-6)
    se = estimates.std(ddof=1) / math.sqrt(reps)
    assert abs(got["bias"] - (estimates.mean() - truth)) <= 4 * math.hypot(got["biasMcSe"], se)


def test_simulated_samples_have_the_beta_binomial_moments(tmp_path):
    """simulate under beta problems: over 40 simulated logs of 20 problems × 12 samples, the
    share passing is the rate and the within-problem correlation of two samples is ρ
    (the beta-binomial variance of a problem's count, n r(1 − r)(1 + (n − 1)ρ))."""
    root = project(tmp_path, "samples-units", beta_problems(0.4, 0.4))
    counts = []
    for seed in range(1, 41):
        recs = simulate(root, "samples-units", "nucleus-better", seed)
        per: dict[tuple, list[int]] = {}
        for r in recs:
            if r.get("passed") is not None:
                per.setdefault((r["problem"], r["decoding"]), []).append(int(r["passed"]))
        counts += [sum(v) for v in per.values() if len(v) == 12]
    c = np.array(counts, dtype=float)
    rate = c.mean() / 12
    assert abs(rate - 0.4) <= 4 * math.sqrt(0.4 * 0.6 * (1 + 11 * RHO) / 12 / c.size)
    # ρ from the variance of the count: var = 12 r(1 − r)(1 + 11ρ)
    rho = (c.var(ddof=1) / (12 * 0.4 * 0.6) - 1) / 11
    assert abs(rho - RHO) < 0.06  # the SE of this moment estimate at ~1,400 problems is ~0.015


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda sc: sc["clusters"].insert(
                0,
                {
                    "field": "batch",
                    "correlation": 0.1,
                    "shared": True,
                    "size": {"low": 24, "high": 24},
                },
            ),
            "/scenarios/0/clusters/1/distribution: scenario 'nucleus-better': a beta level is"
            " the scenario's only level",
        ),
        (
            lambda sc: sc.update(
                calibration=[
                    {
                        "field": "confidence",
                        "distribution": "uniform",
                        "low": 0.5,
                        "high": 1,
                        "curve": "calibrated",
                    }
                ]
            ),
            "/scenarios/0/clusters/0/distribution: scenario 'nucleus-better': a beta level"
            " draws the chance of the outcome, which calibration draws from its curve",
        ),
        (
            lambda sc: [sc.pop("outcome"), sc.pop("rates")],
            "/scenarios/0/clusters/0/distribution: scenario 'nucleus-better': a beta level"
            " draws the chance of the outcome, and the scenario draws none",
        ),
        (
            lambda sc: sc["clusters"][0].update(distribution="gamma"),
            "/scenarios/0/clusters/0/distribution",
        ),
    ],
)
def test_compile_refuses_a_beta_level_it_cannot_draw_at_its_path(tmp_path, capsys, edit, message):
    spec = yaml.safe_load((EXAMPLE / "samples-units.yaml").read_text())
    spec["record_contracts"][0]["fields"] += [
        {"name": "batch", "type": "string", "nullable": True},
        {"name": "confidence", "type": "number", "nullable": True},
    ]
    spec["scenarios"][0]["clusters"][0]["distribution"] = "beta"
    edit(spec["scenarios"][0])
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "samples-units.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "samples-units.yaml:" in err
    assert not (root / "generated" / "samples_units").exists()
