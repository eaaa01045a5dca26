"""The diff fixtures are fragments: each pair (fixtures/<rule>/{old,new}.yaml) holds only what
its rule compares, as buf's breaking-change fixtures do, so no NEW of theirs compiles. A test
of what diff reports for them takes ``fragments``: the compile check of NEW (tested on whole
specs in test_diff_cli.py) then finds nothing."""

from __future__ import annotations

import pytest

from prereg.compiler import diff


@pytest.fixture
def fragments(monkeypatch):
    monkeypatch.setattr(diff, "compile_problems", lambda *args, **kwargs: [])
