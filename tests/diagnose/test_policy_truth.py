"""The truth of a mean when the attempt policy reads the metric's own field.

The common policy ``failed: [{field: latency_ms, op: is_null}]`` (an attempt without a latency
failed) reads the field the mean averages, but only to say the attempt failed: a counted
attempt carries the number the scenario drew, so the mean's expectation is the scenario's (a
lognormal's exp(μ + σ²/2), a log-mean's μ).  diagnose reports that truth, with the bias and
coverage against it, and simulated studies scatter about it (checked against a numpy
re-simulation of the same law).  A policy that selects on the number itself (``where:
latency_ms gt 100``) truncates it: no closed form, and ``truthUndefined`` names the policy's
condition."""

from __future__ import annotations

import json
import math

import numpy as np

from prereg.cli import main
from tests.diagnose.test_row_batches import compiled

ESTIMATES = (
    "    rule:\n      all_of:\n"
    "        - compare: {target: latency-ratio, quantity: p, op: lt, value: 0.05}\n",
    "    estimates:\n"
    "      - {id: latency-new, metric: latency, of: {where: [{factor: system, levels: [new]}]},"
    " interval: t, level: 0.95}\n"
    "      - {id: raw-new, metric: raw-latency, of: {where: [{factor: system, levels: [new]}]},"
    " interval: t, level: 0.95}\n"
    "      - {id: accuracy-new, metric: accuracy, of: {where: [{factor: system, levels: [new]}]},"
    " interval: wilson, level: 0.95}\n"
    "    rule:\n      all_of:\n"
    "        - compare: {target: latency-ratio, quantity: p, op: lt, value: 0.05}\n"
    "        - compare: {target: latency-new, quantity: estimate, op: lt, value: 400}\n"
    "        - compare: {target: raw-new, quantity: estimate, op: lt, value: 400}\n",
)
RAW = (
    "  - {id: latency, title: Latency,",
    "  - {id: raw-latency, title: Raw latency, definition: mean latency, compute: {kind: mean,"
    " field: latency_ms}}\n  - {id: latency, title: Latency,",
)
POLICY = ("  failed: [{field: ok, op: is_null}]", "  failed: [{field: latency_ms, op: is_null}]")
RETRIES = (
    "    description: Both systems alike.\n",
    "    description: Both systems alike.\n    coverage: 0.9\n    failed_attempt_rate: 0.3\n",
)


def diagnosed(tmp_path, edits) -> dict:
    ctx, plan = compiled(tmp_path, "latency-analyses", edits)
    out = tmp_path / "D.json"
    rc = main(["--project", str(tmp_path), "latency-analyses", "diagnose", "--simulations", "400",
               "--seed", "5", "--scenario", "same", "--out", str(out)])  # fmt: skip
    assert rc == 0
    return json.loads(out.read_text())


def test_a_policy_failing_attempts_without_the_number_keeps_the_truth(tmp_path):
    doc = diagnosed(tmp_path, (ESTIMATES, RAW, POLICY, RETRIES))
    (cond,) = doc["conditions"]
    rows = {e["id"]: e for e in cond["estimates"]}
    # lognormal(6.0, 0.5): the geometric mean exp(6), the mean exp(6 + 0.125)
    # (DIAGNOSE.json writes figures to 6 decimals)
    assert rows["latency-new"]["truth"] == round(math.exp(6.0), 6)
    assert rows["raw-new"]["truth"] == round(math.exp(6.125), 6)
    assert rows["accuracy-new"]["truth"] == 0.6  # the scenario's rate: a rate's truth too
    for e in rows.values():
        assert "truthUndefined" not in e
        assert e["coverage"] is not None and 0.9 < e["coverage"]["share"] <= 1.0
    # the numpy oracle: 400 studies of the counted rows (30 rows, 90% observed) of the new
    # arm, their geometric and plain means about the truth as diagnose's bias says
    rng = np.random.default_rng(7)
    kept = rng.binomial(30, 0.9, size=400)
    gm = [math.exp(rng.normal(6.0, 0.5, k).mean()) for k in kept]
    am = [rng.lognormal(6.0, 0.5, k).mean() for k in kept]
    for got, sims in ((rows["latency-new"], gm), (rows["raw-new"], am)):
        want = float(np.mean(sims)) - got["truth"]
        se = float(np.std(sims)) / math.sqrt(len(sims))
        assert abs(got["bias"] - want) < 5 * se * math.sqrt(2)


def test_a_policy_selecting_on_the_number_says_why_there_is_no_truth(tmp_path):
    where = (
        "  failed: [{field: ok, op: is_null}]",
        "  failed: [{field: ok, op: is_null}]\n  where: [{field: latency_ms, op: gt, value: 100}]",
    )
    doc = diagnosed(tmp_path, (ESTIMATES, RAW, where))
    (cond,) = doc["conditions"]
    rows = {e["id"]: e for e in cond["estimates"]}
    for e in (rows["latency-new"], rows["raw-new"]):
        assert e["truth"] is None
        assert "attempt policy" in e["truthUndefined"]
        assert "where" in e["truthUndefined"] and "latency_ms gt" in e["truthUndefined"]
