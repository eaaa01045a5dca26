"""The template environment looks up ``x.name`` on a plain dict as Jinja2's own environment
does (the attribute first, then the item, else undefined): the same value or the same
undefined for data keys, a dict's own attributes, keys shadowing them and absent keys."""

from __future__ import annotations

import jinja2
import pytest

from prereg.compiler.render import _Environment, environment

DATA = {"id": "a", "items": [1, 2], "get": "shadowed", "value": None, "": 0}


@pytest.mark.parametrize(
    "name", ["id", "items", "get", "value", "", "missing", "keys", "__class__"]
)
@pytest.mark.parametrize("obj", [DATA, {}, type("D", (dict,), {})(id="sub"), ["x"], "text"])
def test_getattr_is_jinjas(obj, name):
    ours = _Environment().getattr(obj, name)
    theirs = jinja2.Environment().getattr(obj, name)
    if isinstance(theirs, jinja2.Undefined):
        assert type(ours) is type(theirs)
        assert (ours._undefined_obj, ours._undefined_name) == (obj, name)
    else:
        assert ours == theirs


def test_templates_render_dict_methods_and_items_as_before():
    source = "{{ d.id }}|{{ d.items() | list }}|{{ d.get('id') }}|{{ d.missing is defined }}"
    data = {"d": {"id": "x", "items": "shadow"}}
    assert environment().from_string(source).render(**data) == jinja2.Environment().from_string(
        source
    ).render(**data)
