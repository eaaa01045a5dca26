"""Texts a `prereg demo` run declares public for its length: the arguments of its plan.

A plan is a file, so a seed written in it is public whatever its form.  A study rule that
would refuse a committed seed for gold material (the reachability engine's seed policy) asks
:func:`development_label` first: a text of the running plan is accepted as a *development*
seed instead, and every output it reaches carries the label (development material, never a
real freeze).  Only the plan runner fills the registry (:func:`development_texts`); no option
or environment variable of a command does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

_DEVELOPMENT: dict[str, str] = {}


@contextmanager
def development_texts(texts: Iterable[str], source: str) -> Iterator[None]:
    """While the block runs, each of ``texts`` (the plan's arguments) has the development
    label naming ``source`` (the plan)."""
    label = (
        f"the seed is written in the plan {source}, so its gold is public: development"
        " material for a demonstration, not a real freeze"
    )
    added = {t for t in texts if isinstance(t, str) and t and t not in _DEVELOPMENT}
    for t in added:
        _DEVELOPMENT[t] = label
    try:
        yield
    finally:
        for t in added:
            _DEVELOPMENT.pop(t, None)


def development_label(text: str) -> str | None:
    """The development label of ``text`` while a plan run declares it, else None."""
    return _DEVELOPMENT.get(text)
