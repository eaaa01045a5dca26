"""Reports people can look at: one HTML page (and its Markdown twin) per study run.

A report is built from a study's output folder after its demo (or operator) steps ran, by the
reporter the study's engine registers (``Engine.reporter``, see :mod:`prereg.engines.base`);
each reporter is generic over the studies of its engine: figures come from the output files, titles, labels and thresholds from
those outputs or from the study's spec, never from study facts written in code.

- :func:`study_info(project, study_id) -> StudyInfo`: what a report needs to know about a
  compiled study (spec data, compiled config, digest, command handlers, PREREG.md).
- :func:`build_report(info, folder, steps) -> Report`: the study's report
  (:class:`prereg.reports.page.Report`); ``steps`` are the :class:`Step` results that wrote
  ``folder``.
- :func:`prereg.reports.page.write_report(report, folder)`: report.html, report.md, figures/.

matplotlib (the ``reports`` extra) is imported only when a report is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Step:
    """One operator command that ran: its plan entry and result.

    ``template`` holds the arguments as the plan writes them (``{out}`` for the study's output
    folder, ``{root}`` for the project); ``args`` the same, filled in.
    """

    title: str
    command: str
    template: Sequence[str]
    args: Sequence[str]
    exit: int
    ok: bool

    def option(self, name: str) -> str | None:
        """The value given to option ``name`` (``--out``), or None."""
        args = list(self.args)
        for i, a in enumerate(args):
            if a == name and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(name + "="):
                return a.split("=", 1)[1]
        return None

    def shown_arg(self, i: int) -> str:
        """Argument ``i`` of the template as :meth:`shown` writes it (placeholders resolved to
        paths relative to the project root or the study's output folder)."""
        a = self.template[i]
        for placeholder in ("{root}/", "{out}/"):
            a = a.replace(placeholder, "")
        return a.replace("{root}", ".").replace("{out}", ".")

    def shown(self) -> str:
        """The command as a reader would type it: inputs relative to the project root, outputs
        relative to the study's output folder."""
        parts = [self.command]
        for a in self.template[1:]:
            for placeholder in ("{root}/", "{out}/"):
                a = a.replace(placeholder, "")
            parts.append(a.replace("{root}", ".").replace("{out}", "."))
        return " ".join(parts)


@dataclass(frozen=True)
class StudyInfo:
    study_id: str
    title: str
    version: str
    status: str
    engine: str
    spec_file: str
    spec_digest: str
    spec: Mapping[str, Any]  # the parsed spec
    config: Mapping[str, Any]  # the compiled configuration (ctx.config)
    handlers: Mapping[str, str]  # command id -> engine handler name
    prereg_md: str | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    def steps_for(self, steps: Sequence[Step], handler: str) -> list[Step]:
        """The steps that ran ``handler`` (a command the spec does not list is taken to name
        its handler: ``calibrator-fit`` → ``calibrator_fit``)."""
        return [
            s for s in steps if self.handlers.get(s.command, s.command.replace("-", "_")) == handler
        ]


def study_info(project, study_id: str) -> StudyInfo:
    """The :class:`StudyInfo` of a compiled study of ``project`` (pinned to its spec)."""
    from prereg.compiler.load import load_yaml
    from prereg.study import study_context

    module, ctx = study_context(project, study_id)
    spec_path = project.root / module.SPEC_FILE
    spec = load_yaml(spec_path).data
    prereg_path = Path(module.__file__).parent / "PREREG.md"
    return StudyInfo(
        study_id=module.STUDY_ID,
        title=str(spec.get("title") or module.STUDY_ID),
        version=str(module.VERSION),
        status=str(module.STATUS),
        engine=str(module.ENGINE),
        spec_file=str(module.SPEC_FILE),
        spec_digest=str(module.SPEC_DIGEST),
        spec=spec,
        config=ctx.config,
        handlers={str(c["id"]): str(c["handler"]) for c in module.COMMANDS},
        prereg_md=prereg_path.read_text(encoding="utf-8") if prereg_path.exists() else None,
    )


def build_report(info: StudyInfo, folder: Path, steps: Sequence[Step]):
    """The :class:`~prereg.reports.page.Report` of ``info``'s outputs in ``folder``."""
    from prereg.engines import registry

    engine = registry.get(info.engine)
    builder = engine.report_builder() if engine is not None else None
    if builder is None:
        from prereg.reports import common

        return common.generic_report(info, Path(folder), steps)
    return builder(info, Path(folder), steps)
