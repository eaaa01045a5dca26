"""Properties of prereg diff over random single edits of the golden example spec."""

from __future__ import annotations

import copy
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prereg.compiler import diff
from prereg.compiler.load import load_yaml

ROOT = Path(__file__).resolve().parents[1]
SPEC = load_yaml(ROOT / "golden/compile-basic/project/spec/studies/example-probe.yaml").data
KEY_FIELDS = {"id", "name", "role", "version", "verdict", "scope", "factor"}
PROSE = {"title", "description", "statement", "summary", "help", "label", "rationale"}


def _leaves(value, path=()):
    """(path, value) of every scalar that is not inside a list of scalars (the test's own walk)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return
        for i, v in enumerate(value):
            yield from _leaves(v, path + (i,))
    else:
        yield path, value


LEAVES = [p for p, _ in _leaves(SPEC) if p[-1] not in KEY_FIELDS]


def _pointer(path) -> str:
    return "".join(f"/{p}" for p in path)


def _set(spec, path, value):
    target = spec
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(LEAVES),
    st.one_of(st.integers(-5, 500), st.text(max_size=8), st.booleans(), st.floats(0, 1)),
)
def test_one_scalar_edit_is_one_change_at_its_pointer(path, value):
    old_value = SPEC
    for p in path:
        old_value = old_value[p]
    assume(not diff._same(old_value, value))
    new = copy.deepcopy(SPEC)
    _set(new, path, value)
    (change,) = diff.diff_specs(SPEC, new)
    assert change.pointer == _pointer(path)
    assert change.old_pointer == _pointer(path)
    assert change.covered_by(_pointer(path))
    top_record = path[0] in ("version", "status", "amendments")
    inside_value = path[0] == "constants" and len(path) > 2 and path[2] == "value"
    prose = not inside_value and any(p in PROSE for p in path if isinstance(p, str))
    # the registration record is prose, except its date and identifier
    prose = prose or (
        path[0] == "registration" and path[1] not in ("registration_date", "identifier")
    )
    assert change.kind == ("editorial" if top_record or prose else "registered")
    assert change.message.endswith(".")
    # the registered part is exactly what a seal would see change
    pinned = diff.diff_specs(diff.registered_content(SPEC), diff.registered_content(new))
    assert [c.pointer for c in pinned] == ([] if change.kind == "editorial" else [change.pointer])


@settings(max_examples=50, deadline=None)
@given(st.permutations(range(len(SPEC["cells"]))))
def test_permuting_cells_reports_only_moves_and_enough_of_them(order):
    new = copy.deepcopy(SPEC)
    new["cells"] = [SPEC["cells"][i] for i in order]
    changes = diff.diff_specs(SPEC, new)
    assert all(c.rule == "cell_moved" for c in changes)
    moved = {c.path for c in changes}
    # applying the reported moves to the cells that stay put gives back the new order
    stay = [c["id"] for c in SPEC["cells"] if f"/cells[{c['id']}]" not in moved]
    wanted = [c["id"] for c in new["cells"] if f"/cells[{c['id']}]" not in moved]
    assert stay == wanted
    assert (changes == []) == (list(order) == sorted(order))
