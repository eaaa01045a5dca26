"""Properties of the plan runner's confinement (prereg.demo.confinement_problems): for any
arguments a plan step may hold, the check never fails with an exception, and every argument
that would write outside {out}, name another project or leave the project is reported."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.demo import confinement_problems

PARTS = st.sampled_from(["{out}", "{root}", "..", ".", "x", "a.json", "/", "~", "--project",
                         "--out", "{", "}", "-", "\x00", "é"])  # fmt: skip
ARG = st.lists(PARTS, min_size=0, max_size=6).map(lambda ps: "/".join(ps).replace("//", "/"))


def _escapes(arg: str) -> bool:
    """Whether an {out} path leaves {out} (the rule, computed independently of the code)."""
    if not arg.startswith("{out}"):
        return False
    parts = [p for p in arg[len("{out}") :].split("/") if p not in ("", ".")]
    depth = 0
    for p in parts:
        depth += -1 if p == ".." else 1
        if depth < 0:
            return True
    return False


@settings(max_examples=400, deadline=None)
@given(args=st.lists(ARG | st.text(max_size=12), min_size=1, max_size=6))
def test_every_escape_is_reported_and_nothing_raises(tmp_path_factory, args):
    root = Path(os.path.realpath(tmp_path_factory.getbasetemp()))
    plan = {"steps": [{"title": "t", "study": "s", "args": args}]}
    problems = confinement_problems(plan, root)
    where = {p for p, _ in problems}
    for j, arg in enumerate(args):
        at = f"/steps/0/args/{j}"
        if arg == "--project" or arg.startswith("--project="):
            assert at in where, (arg, problems)
        if _escapes(arg) or arg.startswith(("/", "~", "../")) or "/../" in arg:
            assert at in where, (arg, problems)
        if j > 0 and args[j - 1] == "--out" and not arg.startswith("{out}"):
            assert at in where, (arg, problems)
