"""The completion script offers a project's studies by their spec files' names; a name that is
no study id (compile never takes it) is left out, since bash's ``compgen -W`` expands the words
it offers: a spec file named ``a$(touch PWNED).yaml`` in a cloned project ran the command at
the first <Tab>."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from prereg.compiler.project import Project
from prereg.completion import script
from tests.cli.test_completion import COMPLETE

pytest.importorskip("shtab", reason="shtab (a dependency of prereg) is not installed")

HOSTILE = ["a$(touch PWNED1)", "b'\"; touch PWNED2; echo '", "c`touch PWNED3`", "d;e", "-x"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_spec_file_names_that_are_no_study_id_are_not_offered(tmp_path):
    studies = tmp_path / "spec" / "studies"
    studies.mkdir(parents=True)
    for name in [*HOSTILE, "my-study"]:
        (studies / f"{name}.yaml").write_text("id: x\n")
    text = script("bash", Project(tmp_path))
    assert not any(name in text for name in HOSTILE)
    path = tmp_path / "prereg.bash"
    path.write_text(text)
    done = subprocess.run(
        ["bash", "-c", COMPLETE, "complete", str(path), "prereg", ""],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "my-study" in done.stdout.split()
    assert not list(tmp_path.glob("PWNED*"))
