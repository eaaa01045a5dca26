"""What a process keeps across the commands it runs, by name, so that it can be carried over.

A command may keep a result that a later command in the same process can reuse: the
reachability engine keeps the file digests of a study regenerated from its seed, so that
checking a prepared folder against its seed does not generate the corpus again. One
process runs many commands in the demo, and some of them in processes of their own (a
study's lanes, see :mod:`prereg.demo`); a lane's process returns :func:`snapshot` and the
study's process :func:`merge` s it, so what the lane computed is known to the commands that
follow. Every kept value is a function of its key alone (a key names everything the value
depends on), and values pickle.
"""

from __future__ import annotations

from typing import Any

_KEPT: dict[str, dict[Any, Any]] = {}


def kept(name: str) -> dict[Any, Any]:
    """The process's dict named ``name`` (created empty on first use)."""
    return _KEPT.setdefault(name, {})


def snapshot() -> dict[str, dict[Any, Any]]:
    """A copy of every non-empty kept dict."""
    return {name: dict(values) for name, values in _KEPT.items() if values}


def merge(snap: dict[str, dict[Any, Any]]) -> None:
    """Add a :func:`snapshot` taken in another process (its entries win: they are equal)."""
    for name, values in snap.items():
        kept(name).update(values)
