"""Loading a compiled study at run time, pinned to its spec's digest.

The generated package generated/<pkg>/ is imported by path.  Before any command runs, the spec
it was compiled from is parsed again and digested; a mismatch refuses to run ("spec changed
since the last compile").  Parsing is cheap and never imports LinkML.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from prereg.compiler.load import Loaded, load_yaml_bytes, read_spec_bytes
from prereg.compiler.project import Project, package_name
from prereg.digest import digest, sha256_hex
from prereg.engines import StudyContext
from prereg.errors import UserError

_NAMESPACE = "prereg_studies"


def load_generated(project: Project, study_id: str) -> ModuleType:
    """Import generated/<pkg>/ as ``prereg_studies.<pkg>``."""
    pkg = package_name(study_id)
    init = project.generated_dir / pkg / "__init__.py"
    if not init.exists():
        raise UserError(
            f"study {study_id!r} is not compiled ({project.rel(init)} is missing): run prereg compile {study_id}"
        )
    # The module name pins the project and the compiled package's digest line, so a process
    # that recompiles a study imports the new code rather than a cached module.
    key = sha256_hex(str(project.root).encode() + b"\0" + init.read_bytes())[:12]
    name = f"{_NAMESPACE}.{pkg}_{key}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(init.parent)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    module.__prereg_project__ = project
    return module


# Parsed specs and their digests, kept in the process by the file's bytes: a process that runs
# many commands of one study (the demo, a test session) parses the spec once, and any change to
# the file is a new key, so the pin is checked against the file as it is now.  Read-only: the
# parse is shared by every context pinned to the same bytes.
_PARSED: dict[tuple[str, bytes], tuple[Loaded, str]] = {}
_PARSED_KEPT = 8


def _parsed_spec(path: Path, shown: Path) -> tuple[Loaded, str]:
    """(the parse of the spec at ``path``, its digest), parsed once per process and content."""
    raw = read_spec_bytes(path, shown)
    key = (str(shown), raw)
    hit = _PARSED.get(key)
    if hit is None:
        loaded = load_yaml_bytes(raw, shown)
        hit = (loaded, digest(loaded.data))
        _PARSED[key] = hit
        while len(_PARSED) > _PARSED_KEPT:
            del _PARSED[next(iter(_PARSED))]
    return hit


def pinned_context(
    *, study_id, version, spec_file, spec_digest, config, project_root=None
) -> StudyContext:
    if project_root is not None:
        path = Path(project_root) / spec_file
        if not path.exists():
            raise UserError(f"{spec_file}: the spec of study {study_id!r} is missing")
        loaded, current = _parsed_spec(path, Path(spec_file))
        from prereg.custom import needs_pinning

        if needs_pinning(loaded.data):
            # the statistics' files and value lists are part of the registration: digest them
            # as they are now
            from prereg.custom import pinned

            loaded.data = pinned(loaded.data, Path(project_root), path.parent)
            current = digest(loaded.data)
        if current != spec_digest:
            files = [
                f"{s.get('path') or s.get('file')} (sha256:{s.get('sha256')})"
                for s in (loaded.data.get("statistics") or [])
                if isinstance(s, dict)
            ]
            from prereg.valuelists import conditions

            lists = [
                f"{c.get('values_file')} (sha256:{c.get('values_sha256')})"
                for _, c in conditions(loaded.data)
            ]
            also = f"; its statistics' files are part of it: {', '.join(files)}" if files else ""
            if lists:
                also += f"; its value lists are part of it: {', '.join(dict.fromkeys(lists))}"
            raise UserError(
                f"{spec_file}: spec changed since the last compile "
                f"(spec {current}, generated code {spec_digest}{also}): run prereg compile {study_id}"
            )
        _refuse_unsealed_changes(Path(project_root), study_id, loaded)
    return StudyContext(
        study_id=study_id,
        spec_digest=spec_digest,
        version=version,
        config=config,
        # the project the study runs in (the rules that ask what it has committed need it)
        extras={"projectRoot": Path(project_root)} if project_root is not None else {},
    )


def _refuse_unsealed_changes(root: Path, study_id: str, loaded) -> None:
    """A sealed study runs only while its registered content matches its seal (or a later
    amendment declares each change): the seal holds at run time, not only in `prereg check`.
    The seal is the seal file or, when that was deleted, moved back or rewritten, the latest
    one committed to git (:func:`prereg.compiler.seal.last_seal`)."""
    from types import SimpleNamespace

    from prereg.compiler import seal

    sealed, shown, problems = seal.last_seal(root, study_id)
    if sealed is None:
        return
    problems = problems + seal.check_study(
        SimpleNamespace(data=loaded.data, loaded=loaded), sealed, shown
    )
    if problems:
        raise UserError(
            f"study {study_id!r} is sealed ({shown}) and its registered content changed without"
            " an amendment declaring it, or its seal was removed or altered; it will not run",
            problems=problems,
        )


def study_context(project: Project, study_id: str) -> tuple[ModuleType, StudyContext]:
    module = load_generated(project, study_id)
    return module, module.context(project_root=project.root)


def engine_api_attribute(engine_kind: str, study_id: str, config, name: str):
    """``name`` from the engine's Python API bound to a study's config (a generated
    package's module ``__getattr__``); AttributeError when the engine has no such name."""
    reason = ""
    if not name.startswith("__"):
        from prereg.engines import registry

        engine = registry.get(engine_kind)
        factory = engine.api_factory() if engine is not None else None
        if factory is not None:
            try:
                bound = factory(config)
            except UserError as exc:
                # an AttributeError, so that `from <study> import <submodule>` still imports it
                bound, reason = None, f" (the {engine_kind} API is unavailable: {exc.message})"
            if name in getattr(bound, "_fields", ()):
                return getattr(bound, name)
    raise AttributeError(f"study {study_id!r} has no attribute {name!r}{reason}")
