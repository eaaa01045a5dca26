"""Project discovery: the spec tree a command works on.

A project is a folder holding ``spec/studies/*.yaml``.  Commands use the project given by
``--project DIR`` or else the nearest folder, from the current one upwards, that has
``spec/studies/``.  The language schema is the project's ``generated/prereg.schema.json``
when the project carries the language source (``spec/prereg.linkml.yaml``), else the one
prereg ships with (a user's project may hold a copy of it for editors; compile keeps the copy
current and check reports a stale one, but the copy never decides what compiles).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from prereg.errors import UserError

LANGUAGE_SOURCE = Path("spec/prereg.linkml.yaml")
LANGUAGE_SCHEMA = Path("generated/prereg.schema.json")
STUDIES = Path("spec/studies")
GENERATED = Path("generated")
# Where prereg finds its templates, the language's schema and its bundled studies: the
# checkout it runs from (runtime/prereg/compiler/project.py -> the repository's root), or,
# installed from a wheel, the copy the wheel carries (prereg/_shipped, laid out the same way;
# setup.py puts it there).
_CHECKOUT = Path(__file__).resolve().parents[3]
HOME = (
    _CHECKOUT
    if (_CHECKOUT / "templates").is_dir() and (_CHECKOUT / "runtime" / "prereg").is_dir()
    else Path(__file__).resolve().parents[1] / "_shipped"
)


#: The CLI's own commands: a study id may not be one of them (`prereg <id>` would be ambiguous).
CORE_COMMANDS = frozenset(
    {
        "compile",
        "check",
        "diff",
        "seal",
        "demo",
        "init",
        "tables",
        "completion",
        "export",
        "ledger-abort",
        "sign-statement",
        "verify-statement",
    }
)


def python_name(ident: str) -> str:
    """The Python identifier an id becomes in generated code: lowercase, each hyphen or dot an
    underscore (``My-Study`` -> ``my_study``, ``v1.2`` -> ``v1_2``), ``v_`` before a leading
    digit. Deterministic, and the same for ids that differ only in case or separator, which
    the compiler therefore refuses as a clash."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", str(ident)).lower()
    return "v_" + name if name[:1].isdigit() else name


#: Names the generated modules define or import themselves, which an id's name must not take:
#: rules.py calls prereg.rules.decide (a hypothesis function named decide would call itself),
#: constants.py defines the engine's SEED_POLICY ... ENGINE_CONFIG after the constants (a
#: constant named BUDGET would be replaced, and its registered value lost), records.py
#: subclasses Record and defines CONTRACTS and SCHEMA_DIR.
RESERVED_FUNCTIONS = frozenset({"decide"})
RESERVED_CONSTANTS = frozenset(
    {"SEED_POLICY", "BUDGET", "FREEZE_ROLES", "RECORD_CONTRACTS", "ENGINE_CONFIG"}
)
RESERVED_CLASSES = frozenset({"Record", "Path", "CONTRACTS", "SCHEMA_DIR"})


def _safe(name: str, reserved: frozenset[str]) -> str:
    import keyword

    return name + "_" if keyword.iskeyword(name) or name in reserved else name


def function_name(ident: str) -> str:
    """The function a hypothesis id names in rules.py: :func:`python_name`, with a final
    ``_`` when that is a Python keyword or a name rules.py uses itself (``pass`` ->
    ``pass_``, ``decide`` -> ``decide_``); the id itself is kept as written everywhere else
    (HYPOTHESES maps it to the function)."""
    return _safe(python_name(ident), RESERVED_FUNCTIONS)


def constant_name(ident: str) -> str:
    """The module constant a constant id names in constants.py (``v1.2`` -> ``V1_2``), with a
    final ``_`` when that is a name constants.py gives the engine's configuration
    (``budget`` -> ``BUDGET_``)."""
    return _safe(python_name(ident).upper(), RESERVED_CONSTANTS)


def class_name(ident: str) -> str:
    """The class a record contract id names in records.py (``record-contract`` ->
    ``RecordContract``), with a final ``_`` when that is a Python keyword (``none`` ->
    ``None_``) or a name records.py uses itself (``record`` -> ``Record_``)."""
    parts = re.split(r"[-_.]", str(ident))
    name = "".join(p[:1].upper() + p[1:] for p in parts if p)
    return _safe(name, RESERVED_CLASSES)


def package_name(study_id: str) -> str:
    """The package of a study's generated code (``My-Study`` -> ``my_study``)."""
    return python_name(study_id)


@dataclass(frozen=True)
class Project:
    root: Path

    @property
    def studies_dir(self) -> Path:
        return self.root / STUDIES

    @property
    def generated_dir(self) -> Path:
        return self.root / GENERATED

    @property
    def language_source(self) -> Path:
        return self.root / LANGUAGE_SOURCE

    @property
    def schema_path(self) -> Path:
        """The language the specs are validated against: the project's own when it carries the
        language source (prereg's own checkout), else the one this prereg ships. A copy of the
        shipped schema in a user's project (for editors, see :func:`language.copy_problem`)
        is never what decides, so a stale copy cannot change what compiles."""
        if self.language_source.exists():
            return self.root / LANGUAGE_SCHEMA
        return HOME / LANGUAGE_SCHEMA

    def spec_files(self) -> list[Path]:
        # Folders are skipped; anything else named *.yaml (a FIFO, a device) is kept, so that
        # reading it is refused with its name rather than it being silently ignored.
        return sorted(p for p in self.studies_dir.glob("*.yaml") if not p.is_dir())

    def spec_file(self, study_id: str) -> Path:
        return self.studies_dir / f"{study_id}.yaml"

    def rel(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)
        except (RuntimeError, OSError):
            # a loop of links (RuntimeError before Python 3.13, OSError after): named as it
            # lies, so that its reading is refused with its name
            try:
                return path.absolute().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                return str(path)


def find_project(explicit: str | os.PathLike | None = None) -> Project:
    if explicit is not None:
        root = Path(explicit)
        if not (root / STUDIES).is_dir():
            raise UserError(f"{root}: not a prereg project (no {STUDIES}/ folder)")
        return Project(root.resolve())
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / STUDIES).is_dir():
            return Project(candidate)
    raise UserError(
        f"no prereg project here: no {STUDIES}/ folder in {here} or above (use --project DIR)"
    )
