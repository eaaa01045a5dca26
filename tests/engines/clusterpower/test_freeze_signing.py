"""A signed freeze: ``freeze-manifest --sign-key PEM`` writes the statement's DSSE envelope in
the same unit as the manifest, and ``validate --public-key PEM`` checks it.  The sealed s3
spec declares neither option (its users sign with ``prereg sign-statement``); a spec may
declare them, so the handlers read them as optional arguments."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from prereg.engines.checking import command_problems
from prereg.engines.clusterpower.freeze_commands import COMMANDS
from prereg.engines.clusterpower.spec_checks import HANDLERS
from prereg.errors import UserError
from tests.engines.clusterpower.test_freeze import Case, ctx


def write_key(folder: Path, name: str) -> tuple[Path, Path, ed25519.Ed25519PublicKey]:
    key = ed25519.Ed25519PrivateKey.generate()
    private, public = folder / f"{name}.pem", folder / f"{name}.pub.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public, key.public_key()


@pytest.fixture
def keys(tmp_path: Path):
    folder = tmp_path / "keys"
    folder.mkdir()
    return write_key(folder, "signer"), write_key(folder, "other")


def freeze(case: Case, out: Path, sign_key: Path | None) -> int:
    case.input.write_text(json.dumps(case.data, indent=2), encoding="utf-8")
    args = SimpleNamespace(input=str(case.input), root=str(case.root), out=str(out))
    if sign_key is not None:
        args.sign_key = str(sign_key)
    return COMMANDS["freeze_manifest"](ctx(), args)


def validate(manifest: Path, public: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    args = SimpleNamespace(manifest=str(manifest), root=None, public_key=str(public))
    code = COMMANDS["validate"](ctx(), args)
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def test_a_signed_freeze_writes_the_envelope_beside_an_unchanged_statement(
    tmp_path: Path, keys, capsys
) -> None:
    (private, public, key), _ = keys
    case = Case(tmp_path, "X6")
    plain = tmp_path / "plain" / "freeze-manifest.json"
    signed = tmp_path / "signed" / "freeze-manifest.json"
    assert freeze(case, plain, None) == 0
    assert not (plain.parent / "freeze-manifest.intoto.dsse.json").exists()
    assert freeze(case, signed, private) == 0
    statement = signed.parent / "freeze-manifest.intoto.json"
    envelope = signed.parent / "freeze-manifest.intoto.dsse.json"
    assert sorted(os.listdir(signed.parent)) == sorted([signed.name, statement.name, envelope.name])
    # signing adds a file; the manifest and the statement are the bytes an unsigned freeze writes
    assert signed.read_bytes() == plain.read_bytes()
    assert statement.read_bytes() == (plain.parent / statement.name).read_bytes()
    doc = json.loads(envelope.read_bytes())
    body = base64.b64decode(doc["payload"])
    assert body == statement.read_bytes()
    kind = doc["payloadType"].encode()
    # DSSE v1 pre-authentication encoding, by the specification, verified with the key itself
    key.verify(
        base64.b64decode(doc["signatures"][0]["sig"]),
        b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body),
    )
    code, text = validate(signed, public, capsys)
    assert code == 0
    assert "its statement's signature verifies" in text


def test_validate_refuses_another_key_and_a_changed_envelope(tmp_path: Path, keys, capsys) -> None:
    (private, public, _), (_, other, _) = keys
    case = Case(tmp_path, "X6")
    out = tmp_path / "first" / "freeze-manifest.json"
    assert freeze(case, out, private) == 0
    envelope = out.parent / "freeze-manifest.intoto.dsse.json"
    with pytest.raises(UserError, match=r"\$\.signatures: not signed by the key of .*other"):
        validate(out, other, capsys)
    doc = json.loads(envelope.read_bytes())
    body = bytearray(base64.b64decode(doc["payload"]))
    body[-3] ^= 0x01  # one byte of the signed statement
    doc["payload"] = base64.b64encode(bytes(body)).decode()
    envelope.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=r"dsse\.json: \$\.signatures: .* does not verify"):
        validate(out, public, capsys)


def test_validate_refuses_a_signed_statement_of_another_manifest(
    tmp_path: Path, keys, capsys
) -> None:
    (private, public, _), _ = keys
    case = Case(tmp_path, "X6")
    out = tmp_path / "first" / "freeze-manifest.json"
    assert freeze(case, out, private) == 0
    # a second freeze of other inputs, signed with the same key, its statement and envelope
    # copied over the first's: the envelope verifies and carries the statement beside it, but
    # that statement is not the first manifest's
    case.data["contamination_status"] = "another status"
    other = tmp_path / "second" / "freeze-manifest.json"
    assert freeze(case, other, private) == 0
    for name in ("freeze-manifest.intoto.json", "freeze-manifest.intoto.dsse.json"):
        (out.parent / name).write_bytes((other.parent / name).read_bytes())
    with pytest.raises(UserError, match="not the in-toto statement of"):
        validate(out, public, capsys)


def test_without_the_libraries_a_signed_freeze_is_refused_before_any_work(
    tmp_path: Path, keys, monkeypatch
) -> None:
    (private, _, _), _ = keys
    case = Case(tmp_path, "X6")
    for name in [m for m in sys.modules if m.split(".")[0] == "securesystemslib"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "securesystemslib", None)
    with pytest.raises(UserError, match=r"pip install prereg\[sign\]"):
        freeze(case, case.out, private)
    assert not case.out.parent.exists() or os.listdir(case.out.parent) == []


def test_a_bad_key_writes_none_of_the_three(tmp_path: Path) -> None:
    case = Case(tmp_path, "X6")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a key\n")
    with pytest.raises(UserError, match="junk.pem: not a PEM private key"):
        freeze(case, case.out, junk)
    assert os.listdir(case.out.parent) == []


def test_a_spec_may_declare_the_signing_options() -> None:
    spec = {
        "commands": [
            {
                "id": "freeze-manifest",
                "handler": "freeze_manifest",
                "arguments": [
                    {"name": "input", "kind": "positional", "type": "path", "required": True},
                    {"name": "--root", "kind": "option", "type": "path", "required": True},
                    {"name": "--out", "kind": "option", "type": "path", "required": True},
                    {"name": "--sign-key", "kind": "option", "type": "path", "required": False},
                ],
            },
            {
                "id": "validate",
                "handler": "validate",
                "arguments": [
                    {"name": "manifest", "kind": "positional", "type": "path", "required": True},
                    {"name": "--root", "kind": "option", "type": "path", "required": False},
                    {"name": "--public-key", "kind": "option", "type": "path"},
                ],
            },
        ]
    }
    assert command_problems(spec, "cluster-power-freeze", HANDLERS) == []
    spec["commands"][1]["arguments"][2]["name"] = "--public-keys"
    [(ptr, message)] = command_problems(spec, "cluster-power-freeze", HANDLERS)
    assert ptr == "/commands/1/arguments/2/name" and "--public-keys" in message
