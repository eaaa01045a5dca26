"""The registry reads the entry points itself (without importing importlib.metadata) and finds
exactly what importlib.metadata.entry_points(group=...) finds: the same entry points of the
same distributions in the same order, for folder layouts generated at random (names differing
only in case or punctuation, a distribution on the path twice, comments, other sections); where
it cannot vouch for that (a zip file on the path, a malformed line), it asks importlib.metadata.
A plug-in installed between two processes is found by the second: nothing is cached."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.engines import registry
from tests.conftest import ROOT


def _by_metadata(paths: list[str]) -> list[tuple[str, str, str]]:
    importlib.metadata.FastPath.__new__.cache_clear()  # its per-folder cache
    found = importlib.metadata.distributions(path=paths)
    eps = []
    seen = set()
    for dist in found:  # importlib.metadata.entry_points(), over ``paths`` instead of sys.path
        if dist._normalized_name in seen:
            continue
        seen.add(dist._normalized_name)
        eps.extend(ep for ep in dist.entry_points if ep.group == registry.GROUP)
    return [(ep.name, ep.value, str(ep.dist._path)) for ep in eps]


def _direct(paths: list[str]) -> list[tuple[str, str, str]]:
    return [
        (ep.name, ep.value, ep.dist.path)
        for folder in registry._metadata_folders(paths)
        for ep in registry._read_entry_points(folder)
    ]


def test_this_installation_gives_what_importlib_metadata_gives():
    want = [
        (ep.name, ep.value, str(ep.dist._path))
        for ep in importlib.metadata.entry_points(group=registry.GROUP)
    ]
    assert want  # prereg's own engines at least
    # (registry.entry_points() asks importlib.metadata itself when another finder that knows
    # distributions is installed, as a test runner's worker may have one)
    got = [
        (ep.name, ep.value, getattr(ep.dist, "path", None) or str(ep.dist._path))
        for ep in registry.entry_points()
    ]
    assert got == want
    assert _direct(sys.path) == want == _by_metadata(sys.path)


_NAME = st.text(alphabet="abAB-_.", min_size=1, max_size=4).filter(lambda s: s[0] not in "-_.")
_LINE = st.one_of(
    st.tuples(
        st.sampled_from(["k1", "k-2", " k1 "]), st.sampled_from(["m:E", "m.n:E.F", "m [x]"])
    ).map(lambda kv: f"{kv[0]} = {kv[1]}"),
    st.sampled_from(
        [
            "# a comment",
            "",
            "   ",
            f"[{registry.GROUP}]",
            f" [{registry.GROUP}] ",
            f"[{registry.GROUP}.other]",
            "[console_scripts]",
            "[[prereg.engines]]",
        ]
    ),
)
_DIST = st.tuples(
    st.integers(0, 2),  # which folder of the path
    _NAME,
    st.sampled_from(["-1.0.dist-info", ".dist-info", "-2.egg-info", ".egg-info"]),
    st.one_of(  # entry_points.txt (mostly opening the group's section), or none
        st.none(),
        st.tuples(st.booleans(), st.booleans(), st.lists(_LINE, max_size=6)).map(
            lambda t: (["[other]", "x = y"] if t[0] else []) + [f"[{registry.GROUP}]"] * t[1] + t[2]
        ),
    ),
    st.sampled_from(["\n", "\r\n"]),
)


@settings(max_examples=200, deadline=None)
@given(dists=st.lists(_DIST, max_size=8))
def test_random_layouts_give_what_importlib_metadata_gives(dists, tmp_path_factory):
    base = tmp_path_factory.mktemp("layout")
    folders = [base / f"site{i}" for i in range(3)]
    for f in folders[:2]:
        f.mkdir()  # the third stays missing, as a path entry may be
    for where, name, suffix, lines, newline in dists:
        folder = folders[min(where, 1)] / f"{name}{suffix}"
        if folder.exists():
            continue
        folder.mkdir()
        if lines is not None:
            (folder / "entry_points.txt").write_bytes(newline.join(lines).encode("utf-8"))
    paths = [str(f) for f in folders]
    assert _direct(paths) == _by_metadata(paths)


def _dist(site: Path, folder: str, text: str) -> None:
    (site / folder).mkdir(parents=True)
    (site / folder / "entry_points.txt").write_text(textwrap.dedent(text), encoding="utf-8")


def test_the_first_distribution_of_a_name_wins_and_case_and_punctuation_do_not_matter(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _dist(a, "My.Pkg-1.0.dist-info", f"[{registry.GROUP}]\none = first:E\n")
    _dist(b, "my_pkg-2.0.dist-info", f"[{registry.GROUP}]\ntwo = second:E\n")
    _dist(b, "other-1.0.dist-info", f"# x\n[{registry.GROUP}]\n three =  third : E \n[x]\nq = r\n")
    got = _direct([str(a), str(b)])
    assert got == _by_metadata([str(a), str(b)])
    assert [(n, v) for n, v, _ in got] == [("one", "first:E"), ("three", "third : E")]


@pytest.mark.parametrize("case", ["zip on the path", "line without =", "upper-case suffix"])
def test_what_it_cannot_vouch_for_is_left_to_importlib_metadata(case, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    entry = f"[{registry.GROUP}]\nzipped = zmod:E\n"
    paths = [str(site)]
    if case == "zip on the path":
        archive = tmp_path / "plugins.zip"
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("zpkg-1.0.dist-info/entry_points.txt", entry)
            z.writestr("zpkg-1.0.dist-info/METADATA", "Name: zpkg\nVersion: 1.0\n")
        paths.append(str(archive))
    elif case == "line without =":
        _dist(site, "bad-1.0.dist-info", f"[{registry.GROUP}]\nno equals sign here\n")
    else:  # importlib.metadata takes this one's name from its metadata
        _dist(site, "Upper-1.0.DIST-INFO", entry)
        (site / "Upper-1.0.DIST-INFO" / "METADATA").write_text("Name: Upper\nVersion: 1.0\n")
    with pytest.raises(registry._Unsure):
        _direct(paths)
    monkeypatch.setattr(sys, "path", paths)
    importlib.metadata.FastPath.__new__.cache_clear()  # its per-folder cache
    if case == "line without =":  # importlib.metadata's own failure, as before
        with pytest.raises(TypeError):
            importlib.metadata.entry_points(group=registry.GROUP)
        with pytest.raises(TypeError):
            registry.entry_points()
        return
    want = [(ep.name, ep.value) for ep in importlib.metadata.entry_points(group=registry.GROUP)]
    assert want == [("zipped", "zmod:E")]
    assert [(ep.name, ep.value) for ep in registry.entry_points()] == want


PLUGIN = """\
from prereg.engines.base import Engine

ENGINE = Engine(kind="late-engine", summary="Installed after the first run.", module="lateengine")
"""

PROBE = (
    "import sys\n"
    "from prereg.engines import registry\n"
    "print(','.join(registry.kinds()), 'importlib.metadata' in sys.modules)\n"
)


def test_a_plugin_installed_between_two_runs_is_found_by_the_second(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    env = {"PYTHONPATH": str(site)}

    def kinds() -> tuple[list[str], str]:
        r = subprocess.run(
            [sys.executable, "-c", PROBE],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**__import__("os").environ, **env},
        )
        assert r.returncode == 0, r.stderr
        listed, imported = r.stdout.split()
        return listed.split(","), imported

    before, imported = kinds()
    assert "late-engine" not in before and "reachability-probe" in before
    assert imported == "False"  # found without importlib.metadata
    (site / "lateengine").mkdir()
    (site / "lateengine" / "__init__.py").write_text(PLUGIN)
    _dist(
        site, "lateengine-0.1.dist-info", f"[{registry.GROUP}]\nlate-engine = lateengine:ENGINE\n"
    )
    after, imported = kinds()
    assert after == sorted([*before, "late-engine"])
    assert imported == "False"
