"""The engines this installation knows: every :class:`~prereg.engines.base.Engine` registered
under the entry-point group ``prereg.engines``.

prereg's own engines are registered the way a third party's are, in ``pyproject.toml``::

    [project.entry-points."prereg.engines"]
    reachability-probe = "prereg.engines.reachability.plugin:ENGINE"

The entry point's name is the engine's ``kind``.  Discovery runs once per process (on first
use) and loads every plug-in object, which must be cheap: a plug-in module holds an Engine and
names everything else.  A plug-in that cannot be imported, is not an Engine, is malformed, or
claims a kind another entry point already claimed is reported as a :class:`UserError` naming
the entry point, never as a traceback.

The entry points are found the way ``importlib.metadata.entry_points(group=...)`` finds them
(every ``*.dist-info`` and ``*.egg-info`` folder of each ``sys.path`` folder, the first
distribution of each name winning, in the same order), but by reading the folders and their
``entry_points.txt`` directly: importing ``importlib.metadata`` and building its distribution
objects cost every command 30-50 ms.  Nothing is cached between processes, so a plug-in
installed a moment ago is found.  Where the direct reading could differ from
``importlib.metadata`` (a zip file or an ``.egg`` on the path, another finder that knows
distributions, a metadata folder whose suffix is not lower case, a malformed entry-point line
in the group), ``importlib.metadata`` itself is asked.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from prereg.engines.base import Engine
from prereg.errors import UserError

GROUP = "prereg.engines"

_INFO = (".dist-info", ".egg-info")
#: importlib.metadata.EntryPoint.pattern: ``module[:attr.path] [extras]``.
_REFERENCE = re.compile(
    r"(?P<module>[\w.]+)\s*"
    r"(:\s*(?P<attr>[\w.]+)\s*)?"
    r"((?P<extras>\[.*\])\s*)?$"
)


class _Distribution:
    """The distribution an entry point comes from; its name and version (read from its
    metadata by importlib.metadata) are needed only to word a problem."""

    def __init__(self, path: str):
        self.path = path

    def _metadata(self):
        import importlib.metadata
        import pathlib

        return importlib.metadata.PathDistribution(pathlib.Path(self.path))

    @property
    def name(self) -> str:
        return self._metadata().name

    @property
    def version(self) -> str:
        return self._metadata().version


class EntryPoint:
    """One ``name = value`` line of the group, as importlib.metadata's EntryPoint reads and
    loads it."""

    __slots__ = ("name", "value", "group", "dist")

    def __init__(self, name: str, value: str, dist):
        self.name, self.value, self.group, self.dist = name, value, GROUP, dist

    def load(self):
        import importlib

        match = _REFERENCE.match(self.value)
        module = importlib.import_module(match.group("module"))
        obj = module
        for attr in filter(None, (match.group("attr") or "").split(".")):
            obj = getattr(obj, attr)
        return obj

    def __repr__(self) -> str:
        return f"EntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"


class _Unsure(Exception):
    """The direct reading cannot vouch for giving what importlib.metadata gives."""


def _normalize(name: str) -> str:
    """importlib.metadata's Prepared.normalize (PEP 503, dashes as underscores)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _metadata_folders(paths) -> list[str]:
    """The metadata folders importlib.metadata's path finder yields for ``paths``, first of
    each distribution name only (its ``_unique``), in its order."""
    seen: set[str] = set()
    out: list[str] = []
    for entry in paths:
        if not isinstance(entry, str):
            raise _Unsure(f"path entry {entry!r} is not a string")
        root = entry or "."
        if os.path.basename(entry).lower().endswith(".egg"):
            raise _Unsure(f"path entry {entry} is an egg")
        try:
            children = os.listdir(root)
        except OSError:
            if os.path.exists(root):  # a zip file, which importlib.metadata reads
                raise _Unsure(f"path entry {entry} is not a folder") from None
            continue
        groups: dict[str, list[str]] = {}
        for child in children:
            if not child.lower().endswith(_INFO):
                continue
            if not child.endswith(_INFO):  # its name would come from its metadata file
                raise _Unsure(f"metadata folder {child} has an upper-case suffix")
            name = _normalize(child.rpartition(".")[0].partition("-")[0])
            groups.setdefault(name, []).append(child)
        for name, children_of_name in groups.items():
            for child in children_of_name:
                if name not in seen:
                    seen.add(name)
                    out.append(os.path.join(entry, child))
    return out


def _read_entry_points(folder: str) -> list[EntryPoint]:
    """The group's lines of ``folder/entry_points.txt`` (importlib.metadata's Sectioned)."""
    try:
        with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as fh:
            text = fh.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return []
    if GROUP not in text:  # no section of the group: nothing to read
        return []
    out = []
    dist = _Distribution(folder)
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        if "=" not in line:
            raise _Unsure(f"{folder}/entry_points.txt: a line without '='")
        if section == GROUP:
            name, value = (part.strip() for part in line.split("=", 1))
            out.append(EntryPoint(name, value, dist))
    return out


def _path_finder_only() -> bool:
    """Whether the standard path finder is the only finder that knows distributions."""
    import importlib.machinery

    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
    return finders == [importlib.machinery.PathFinder]


def entry_points() -> list:
    """The entry points of the group, as ``importlib.metadata.entry_points(group=GROUP)``
    lists them."""
    if _path_finder_only():
        try:
            return [ep for f in _metadata_folders(sys.path) for ep in _read_entry_points(f)]
        except (_Unsure, UnicodeDecodeError, OSError):
            pass
    import importlib.metadata

    return list(importlib.metadata.entry_points(group=GROUP))


def _where(ep) -> str:
    dist = getattr(ep, "dist", None)
    source = f", distribution {dist.name} {dist.version}" if dist is not None else ""
    return f"entry point {ep.name} = {ep.value} (group {GROUP}{source})"


@lru_cache(maxsize=1)
def registry() -> Mapping[str, Engine]:
    """``{kind: Engine}`` of every registered engine, sorted by kind."""
    found: dict[str, tuple[Engine, EntryPoint]] = {}
    problems: list[str] = []
    for ep in sorted(entry_points(), key=lambda e: (e.name, e.value)):
        try:
            engine = ep.load()
        except Exception as exc:  # whatever a broken plug-in raises while importing
            problems.append(f"{_where(ep)}: cannot be loaded: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(engine, Engine):
            problems.append(
                f"{_where(ep)}: names a {type(engine).__name__}, not a prereg.engines.base.Engine"
            )
            continue
        bad = engine.problems()
        if engine.kind != ep.name:
            bad.append(f"describes engine {engine.kind!r}; the entry point's name must be its kind")
        if bad:
            where = _where(ep)
            problems.extend(f"{where}: {b}" for b in bad)
            continue
        if engine.kind in found:
            first_engine, first = found[engine.kind]
            if first.value == ep.value and first_engine == engine:
                continue  # the same registration seen twice (a distribution on the path twice)
            problems.append(
                f"{_where(ep)}: engine {engine.kind!r} is already registered by {_where(first)}"
            )
            continue
        found[engine.kind] = (engine, ep)
    if problems:
        noun = "plug-in is" if len(problems) == 1 else "plug-ins are"
        raise UserError(f"the engine {noun} broken; fix or uninstall it", problems=problems)
    return MappingProxyType({kind: found[kind][0] for kind in sorted(found)})


def kinds() -> list[str]:
    return list(registry())


def get(kind: str) -> Engine | None:
    return registry().get(kind)


def unknown(kind: object) -> str:
    """The rule an unknown ``engine:`` value breaks, listing the registered kinds."""
    known = ", ".join(kinds())
    if not known:
        known = "none; is prereg installed? run make setup"
    return f"unknown engine {str(kind)!r} (registered: {known})"


def require(kind: str, what: str = "") -> Engine:
    """The engine of ``kind``, or a UserError saying it is not registered."""
    engine = get(kind)
    if engine is None:
        raise UserError(f"{what}{unknown(kind)}")
    return engine


def reset() -> None:
    """Forget the discovered engines (tests that install or remove a plug-in call this)."""
    registry.cache_clear()
