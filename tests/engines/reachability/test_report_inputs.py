"""The d17 report's inputs table shows a file's size only when the digest it names verifies
against the file, by that digest's own definition (file bytes, or content without a member)."""

from __future__ import annotations

import json

from prereg.engines.reachability.calibrator import artifact_digest
from prereg.engines.reachability.canon import record_digest
from prereg.reports.reachability import _size_if


def test_a_content_digest_verifies_the_file_it_names_and_a_changed_file_shows_no_size(tmp_path):
    gold = {"schemaVersion": "x", "labels": {"r1": "yes"}, "worlds": {}}
    digest = record_digest(gold)
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({**gold, "specDigest": "sha256:" + "0" * 64}))
    assert _size_if(path, digest, without="specDigest") == path.stat().st_size
    # the file's own bytes are not what this digest is of
    assert _size_if(path, digest) is None
    path.write_text(json.dumps({**gold, "labels": {"r1": "no"}, "specDigest": "x"}))
    assert _size_if(path, digest, without="specDigest") is None


def test_the_calibrator_digest_is_of_its_content_without_its_own_digest(tmp_path):
    artifact = {"blocks": [{"lower": 0.0, "n": 3, "yes": 1}], "id": "c1"}
    artifact["digest"] = artifact_digest(artifact, "digest")
    path = tmp_path / "calibrator.json"
    path.write_text(json.dumps(artifact))
    assert _size_if(path, artifact["digest"], without="digest") == path.stat().st_size
    path.write_text(json.dumps({**artifact, "id": "c2"}))
    assert _size_if(path, artifact["digest"], without="digest") is None


def test_a_missing_or_unreadable_file_shows_no_size(tmp_path):
    assert _size_if(tmp_path / "absent.json", "sha256:" + "0" * 64, without="specDigest") is None
    (tmp_path / "list.json").write_text("[1, 2]")
    assert _size_if(tmp_path / "list.json", "sha256:" + "0" * 64, without="specDigest") is None
    (tmp_path / "bad.json").write_text("{not json")
    assert _size_if(tmp_path / "bad.json", "sha256:" + "0" * 64, without="specDigest") is None
    assert _size_if(None, "sha256:" + "0" * 64) is None
