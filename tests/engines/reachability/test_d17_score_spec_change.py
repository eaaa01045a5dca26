"""A threshold changed in the spec (H1's 0.10 → 0.20) and recompiled changes the verdicts
computed from the same observations, with no runtime edit."""

from __future__ import annotations

import d17_score_helpers as h

from prereg.cli import main

H1_DIFFERENCE = "quantity: abs_estimate, op: ge, value: 0.10}"


def test_h1_threshold_from_the_spec(project_copy, capsys):
    spec = project_copy / "spec" / "studies" / "d17-multifact.yaml"
    # an unsealed copy: this test changes registered content to see the runtime follow
    spec.with_name(spec.name.replace(".yaml", ".seal.json")).unlink()
    text = spec.read_text(encoding="utf-8")
    h1 = text[text.index("  - id: h1\n") : text.index("  - id: h2\n")]
    assert h1.count(H1_DIFFERENCE) == 2  # the missing-link encodings and absence
    spec.write_text(
        text.replace(h1, h1.replace(H1_DIFFERENCE, H1_DIFFERENCE.replace("0.10", "0.20"))),
        encoding="utf-8",
    )
    assert main(["--project", str(project_copy), "compile", "d17-multifact"]) == 0
    capsys.readouterr()
    _, _, changed = h.study(project_copy)
    _, ctx, registered = h.study()
    assert "0.2)" in (project_copy / "generated/d17_multifact/rules.py").read_text()

    resp = h.Respondent(h.table(ctx.config))
    mc = {"split": "test", "layout": "equalized", "outcome": "missing-contrastive"}
    resp.set_correct(0, pool=["pool-a", "pool-c"], **mc)
    for k, before, after in (
        (22, "supported", "not-supported"),  # difference 0.10
        (43, "supported", "not-supported"),  # 0.1955
        (44, "supported", "supported"),  # 0.20
    ):
        resp.set_correct(k, pool="pool-b", **mc)
        old, new = h.run(resp, rules=registered), h.run(resp, rules=changed)
        assert (old.verdicts["h1"], new.verdicts["h1"]) == (before, after), k
        assert {k: v for k, v in old.verdicts.items() if k != "h1"} == {
            k: v for k, v in new.verdicts.items() if k != "h1"
        }
        assert old.contrasts == new.contrasts  # the same figures; only the rule moved
