"""The wheel carries what prereg reads from its checkout: the code templates, the language's
JSON Schema and the bundled studies (``prereg init --engine`` starts from one), copied into the
package as ``prereg/_shipped/`` (laid out as in the checkout, which
``prereg.compiler.project.HOME`` points to when there is no checkout around the package).
Everything else is in pyproject.toml."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("templates/*.j2", "generated/prereg.schema.json", "spec/studies/*.yaml")


class BuildPyShipped(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout itself
        dest = Path(self.build_lib) / "prereg" / "_shipped"
        for pattern in SHIPPED:
            found = sorted(ROOT.glob(pattern))
            if not found:
                raise SystemExit(f"setup.py: nothing matches {pattern} to ship")
            for src in found:
                target = dest / src.relative_to(ROOT)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)


setup(cmdclass={"build_py": BuildPyShipped})
