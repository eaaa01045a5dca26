"""The assemble handler: copies exactly the bound files, refuses symlinks and bad inputs whole."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from s3_study import ROOT, context

from prereg.engines.clusterpower import COMMANDS
from prereg.errors import UserError

EXAMPLES = ROOT / "examples" / "s3"
INPUT = EXAMPLES / "freeze-demo" / "freeze-input.json"


def assemble(root: Path, out: Path, input_path: Path = INPUT, leave_out="power_plan") -> int:
    args = SimpleNamespace(input=str(input_path), root=str(root), out=str(out), leave_out=leave_out)
    return COMMANDS["assemble"](context(None, "sha256:" + "0" * 64, "1.2"), args)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "s3"
    shutil.copytree(EXAMPLES, r)
    (r / "freeze-demo" / "power_plan.json").unlink(missing_ok=True)
    (r / "unbound.txt").write_text("not bound\n", encoding="utf-8")
    return r


def files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_copies_exactly_the_bound_files(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    assert assemble(root, out) == 0
    bound = {
        a["path"]
        for a in json.loads(INPUT.read_text(encoding="utf-8"))["artifacts"]
        if a["role"] != "power_plan"
    }
    got = files(out)
    assert set(got) == bound
    assert got == {k: v for k, v in files(root).items() if k in bound}


def test_a_symlinked_bound_file_is_refused_and_nothing_is_made(root: Path, tmp_path: Path) -> None:
    target = root / "freeze-demo" / "analysis.py"
    outside = tmp_path / "elsewhere.py"
    outside.write_bytes(target.read_bytes())
    target.unlink()
    os.symlink(outside, target)
    out = tmp_path / "copy"
    with pytest.raises(UserError) as ei:
        assemble(root, out)
    text = "\n".join(ei.value.lines())
    assert "analysis_code freeze-demo/analysis.py" in text and "symlink" in text
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.py", "s3"]  # no temp left


def test_an_input_failing_its_contract_copies_nothing(root: Path, tmp_path: Path) -> None:
    data = json.loads(INPUT.read_text(encoding="utf-8"))
    data["freeze_target"] = "X9"
    data["artifacts"].append({"role": "verdicts", "path": "../x.json"})
    bad = tmp_path / "input.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError) as ei:
        assemble(root, tmp_path / "copy", input_path=bad)
    assert "freeze input refused" in ei.value.message
    assert "$.freeze_target" in "\n".join(ei.value.lines())
    data["freeze_target"] = "X7"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError) as ei:
        assemble(root, tmp_path / "copy", input_path=bad)
    text = "\n".join(ei.value.lines())
    assert "unknown role 'verdicts'" in text
    assert not (tmp_path / "copy").exists()


def test_missing_parent_is_created_and_a_missing_root_creates_nothing(
    root: Path, tmp_path: Path
) -> None:
    assert assemble(root, tmp_path / "no" / "copy") == 0
    assert (tmp_path / "no" / "copy").is_dir()
    with pytest.raises(UserError, match="root is not a readable folder"):
        assemble(tmp_path / "no-root", tmp_path / "new" / "copy")
    assert not (tmp_path / "new").exists()
    assert not (tmp_path / "copy").exists()
