"""`prereg sign-statement` and `prereg verify-statement`: a DSSE envelope over an in-toto
statement, signed with a PEM private key and checked against a public key.

The envelope is checked independently of securesystemslib (which writes it): the
pre-authentication encoding is built here from the DSSE specification (protocol.md of
secure-systems-lab/dsse: ``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``, lengths in
ASCII decimal) and the signature verified over it with pyca/cryptography directly.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from prereg.cli import main

STATEMENT = (
    b'{"_type":"https://in-toto.io/Statement/v1","predicate":{"n":1},"predicateType":'
    b'"urn:prereg:test/v1","subject":[{"digest":{"sha256":"'
    + b"ab" * 32
    + b'"},"name":"a.txt"}]}\n'
)


def write_key(folder: Path, name: str, kind: str = "ed25519"):
    """A throwaway key pair as PEM files; returns (private path, public path, public key)."""
    key = (
        ed25519.Ed25519PrivateKey.generate()
        if kind == "ed25519"
        else ec.generate_private_key(ec.SECP256R1())
    )
    private = folder / f"{name}.pem"
    public = folder / f"{name}.pub.pem"
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


def pae(payload_type: str, body: bytes) -> bytes:
    t = payload_type.encode()
    return (
        b"DSSEv1 " + str(len(t)).encode() + b" " + t + b" " + str(len(body)).encode() + b" " + body
    )


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*map(str, argv)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture
def signed(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no project here: the commands need none
    statement = tmp_path / "m.intoto.json"
    statement.write_bytes(STATEMENT)
    private, public, _ = write_key(tmp_path, "signer")
    code, out, err = run(capsys, "sign-statement", statement, "--key", private)
    assert (code, err) == (0, "")
    return statement, tmp_path / "m.intoto.dsse.json", public


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa"])
def test_the_envelope_carries_the_statement_and_its_signature_verifies(
    tmp_path: Path, monkeypatch, capsys, kind: str
) -> None:
    monkeypatch.chdir(tmp_path)
    statement = tmp_path / "m.intoto.json"
    statement.write_bytes(STATEMENT)
    private, public, key = write_key(tmp_path, "signer", kind)
    code, out, _ = run(capsys, "sign-statement", statement, "--key", private)
    assert code == 0
    envelope_file = tmp_path / "m.intoto.dsse.json"  # the default place, beside the statement
    assert str(envelope_file) in out
    envelope = json.loads(envelope_file.read_bytes())
    assert set(envelope) == {"payload", "payloadType", "signatures"}
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert base64.b64decode(envelope["payload"]) == STATEMENT  # the statement, byte for byte
    assert statement.read_bytes() == STATEMENT  # left as it was
    [sig] = envelope["signatures"]
    raw = base64.b64decode(sig["sig"])
    message = pae("application/vnd.in-toto+json", STATEMENT)
    if kind == "ed25519":
        key.verify(raw, message)  # raises InvalidSignature when it does not verify
    else:
        key.verify(raw, message, ec.ECDSA(hashes.SHA256()))
    code, out, err = run(capsys, "verify-statement", envelope_file, "--public-key", public)
    assert (code, err) == (0, "")
    assert "the signature verifies" in out and str(statement) in out


def test_verify_json_answer(signed, capsys) -> None:
    _, envelope, public = signed
    code, out, _ = run(capsys, "verify-statement", envelope, "--public-key", public, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["verified"] is True and doc["exitCode"] == 0
    assert doc["keyid"] == json.loads(envelope.read_bytes())["signatures"][0]["keyid"]


def test_one_byte_of_the_payload_changed_is_refused(signed, capsys) -> None:
    statement, envelope, public = signed
    doc = json.loads(envelope.read_bytes())
    body = bytearray(base64.b64decode(doc["payload"]))
    at = body.index(b'"n":1') + 4
    body[at] = ord("2")  # {"n":1} -> {"n":2}: still a statement, no longer the one signed
    doc["payload"] = base64.b64encode(bytes(body)).decode()
    envelope.write_text(json.dumps(doc))
    code, out, err = run(capsys, "verify-statement", envelope, "--public-key", public)
    assert code == 2 and out == ""
    assert err.startswith(f"error: {envelope}: $.signatures: ")
    assert "does not verify over $.payload" in err
    assert "Traceback" not in err


def test_a_statement_changed_after_signing_is_refused(signed, capsys) -> None:
    statement, envelope, public = signed
    statement.write_bytes(STATEMENT.replace(b'"n":1', b'"n":3'))
    code, _, err = run(capsys, "verify-statement", envelope, "--public-key", public)
    assert code == 2
    assert f"{envelope}: $.payload is not the statement {statement}" in err


def test_another_public_key_is_refused(signed, tmp_path: Path, capsys) -> None:
    _, envelope, _ = signed
    _, other, _ = write_key(tmp_path, "other")
    code, _, err = run(capsys, "verify-statement", envelope, "--public-key", other)
    assert code == 2
    assert f"{envelope}: $.signatures: not signed by the key of {other}" in err
    assert "Traceback" not in err


def test_a_private_key_given_as_the_public_one_is_named(signed, tmp_path: Path, capsys) -> None:
    _, envelope, _ = signed
    code, _, err = run(
        capsys, "verify-statement", envelope, "--public-key", tmp_path / "signer.pem"
    )
    assert code == 2 and "this is a private key; give its public half" in err


@pytest.mark.parametrize(
    "change, where",
    [
        (lambda d: d.pop("signatures"), "$.signatures: missing"),
        (lambda d: d.update(payloadType="text/plain"), "$.payloadType: 'text/plain'"),
        (lambda d: d.update(payload="not base64!"), "$.payload: not base64"),
        (lambda d: d["signatures"][0].pop("keyid"), "$.signatures[0].keyid: missing"),
    ],
)
def test_a_malformed_envelope_is_located(signed, capsys, change, where) -> None:
    _, envelope, public = signed
    doc = json.loads(envelope.read_bytes())
    change(doc)
    envelope.write_text(json.dumps(doc))
    code, _, err = run(capsys, "verify-statement", envelope, "--public-key", public)
    assert code == 2 and f"{envelope}: {where}" in err


def test_only_a_statement_is_signed_and_nothing_is_overwritten(
    signed, tmp_path: Path, capsys
) -> None:
    statement, envelope, _ = signed
    before = envelope.read_bytes()
    code, _, err = run(capsys, "sign-statement", statement, "--key", tmp_path / "signer.pem")
    assert code == 2 and "already exists" in err
    assert envelope.read_bytes() == before
    other = tmp_path / "x.json"
    other.write_text('{"_type": "something else", "subject": []}')
    code, _, err = run(capsys, "sign-statement", other, "--key", tmp_path / "signer.pem")
    assert code == 2 and f"{other}: not an in-toto Statement v1: $._type" in err
    assert not (tmp_path / "x.dsse.json").exists()
    not_a_key = tmp_path / "junk.pem"
    not_a_key.write_text("hello\n")
    code, _, err = run(capsys, "sign-statement", statement, "--key", not_a_key, "--out", "e.json")
    assert code == 2 and f"{not_a_key}: not a PEM private key" in err
    assert not (tmp_path / "e.json").exists()


def test_without_the_libraries_both_commands_name_the_extra(
    signed, tmp_path: Path, monkeypatch, capsys
) -> None:
    statement, envelope, public = signed
    for name in [m for m in sys.modules if m.split(".")[0] == "securesystemslib"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "securesystemslib", None)  # import fails as if absent
    out = tmp_path / "again.dsse.json"
    code, _, err = run(
        capsys, "sign-statement", statement, "--key", tmp_path / "signer.pem", "--out", out
    )
    assert code == 2 and "pip install prereg[sign]" in err and "securesystemslib" in err
    assert not out.exists()
    code, _, err = run(capsys, "verify-statement", envelope, "--public-key", public)
    assert code == 2 and "pip install prereg[sign]" in err
    assert "Traceback" not in err


def test_starting_prereg_loads_neither_library() -> None:
    import subprocess

    probe = (
        "import sys, prereg.cli, prereg.engines.clusterpower.freeze_commands;"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'securesystemslib', 'cryptography'}))"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]"
