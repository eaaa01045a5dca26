"""DSSE envelopes over in-toto statements: sign a statement with a private key, verify one.

A statement (say the ``<stem>.intoto.json`` a freeze writes beside its manifest) is signed as
the payload of a DSSE envelope (https://github.com/secure-systems-lab/dsse) of payload type
``application/vnd.in-toto+json``: :func:`sign_statement` returns the envelope's bytes,
:func:`verify_envelope` checks one against a public key and against the statement it should
carry.  The envelope, its pre-authentication encoding and the signatures are the
securesystemslib library's (``dsse.Envelope``, ``signer.CryptoSigner``, ``signer.SSlibKey``):
an encoding or signature scheme written by hand is easy to get subtly wrong, and a verifier
elsewhere reads the library's form.  Keys are PEM files (Ed25519, ECDSA or RSA; a private key
unencrypted, PKCS#8 or the key type's traditional form).

The library and pyca/cryptography are the optional extra ``prereg[sign]``, imported only here,
inside the functions, so starting prereg does not load them; without them a signing or
verifying command is refused with a message naming the extra.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any

from prereg.errors import UserError

#: The DSSE payload type of an in-toto statement.
PAYLOAD_TYPE = "application/vnd.in-toto+json"
EXTRA = "pip install prereg[sign]"


def envelope_path(statement: str | Path) -> Path:
    """Where the envelope of ``statement`` goes by default: ``<stem>.intoto.json`` ->
    ``<stem>.intoto.dsse.json`` (any other ``X.json`` -> ``X.dsse.json``)."""
    statement = Path(statement)
    stem = statement.name[: -len(".json")] if statement.name.endswith(".json") else statement.name
    return statement.with_name(stem + ".dsse.json")


def statement_path(envelope: str | Path) -> Path:
    """The statement an envelope at its default place sits beside (:func:`envelope_path`
    backwards); refused when the envelope's name is not of that form."""
    envelope = Path(envelope)
    if not envelope.name.endswith(".dsse.json"):
        raise UserError(
            f"{envelope}: not named <statement stem>.dsse.json, so the statement it carries is"
            " not known; name it with --statement"
        )
    return envelope.with_name(envelope.name[: -len(".dsse.json")] + ".json")


def _libraries():
    """securesystemslib's DSSE and signer modules and cryptography's PEM loaders."""
    try:
        from cryptography.hazmat.primitives import serialization
        from securesystemslib import dsse, signer
    except ImportError as exc:
        raise UserError(
            f"signing and verifying statements needs the optional libraries securesystemslib and"
            f" cryptography ({exc.name or 'one of them'} is not installed): {EXTRA}"
        ) from None
    return dsse, signer, serialization


def _read(path: str | Path, what: str) -> bytes:
    from prereg.files import read_regular

    try:  # a regular file only: a FIFO would block the command
        return read_regular(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a folder, not a {what}") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the {what} ({exc.strerror})") from None


def _private_key(path: str | Path):
    _, signer, serialization = _libraries()
    from cryptography.exceptions import UnsupportedAlgorithm

    data = _read(path, "private key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise UserError(
            f"{path}: the private key is encrypted; give an unencrypted PEM key"
        ) from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise UserError(f"{path}: not a PEM private key prereg can sign with ({exc})") from None
    try:
        return signer.CryptoSigner(key)
    except ValueError as exc:
        raise UserError(
            f"{path}: a {type(key).__name__} cannot sign a DSSE envelope here ({exc});"
            " use an Ed25519, ECDSA or RSA key"
        ) from None


def _public_key(path: str | Path):
    _, signer, serialization = _libraries()
    from cryptography.exceptions import UnsupportedAlgorithm

    data = _read(path, "public key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        hint = " (this is a private key; give its public half)" if b"PRIVATE" in data else ""
        raise UserError(f"{path}: not a PEM public key{hint} ({exc})") from None
    try:
        return signer.SSlibKey.from_crypto(key)
    except ValueError as exc:
        raise UserError(f"{path}: an unsupported kind of public key ({exc})") from None


def _statement_problem(payload: bytes) -> str | None:
    """What makes ``payload`` not an in-toto Statement v1 (None when it is one)."""
    from prereg.records import loads_strict

    try:
        value = loads_strict(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return f"not JSON ({exc})"
    if not isinstance(value, dict):
        return "not a JSON object"
    if value.get("_type") != "https://in-toto.io/Statement/v1":
        return f"$._type is {value.get('_type')!r}, not 'https://in-toto.io/Statement/v1'"
    if not isinstance(value.get("subject"), list) or not value["subject"]:
        return "$.subject is not a non-empty list"
    if not isinstance(value.get("predicateType"), str):
        return "$.predicateType is not a string"
    return None


def sign_statement(statement: bytes, key: str | Path, label: str = "statement") -> bytes:
    """The DSSE envelope (canonical JSON and a newline) over the statement bytes, signed with
    the private key in the PEM file ``key``; the statement must be an in-toto Statement v1."""
    from prereg.files import canonical_bytes_nl

    problem = _statement_problem(statement)
    if problem is not None:
        raise UserError(f"{label}: not an in-toto Statement v1: {problem}")
    dsse, _, _ = _libraries()
    signer = _private_key(key)
    envelope = dsse.Envelope(payload=statement, payload_type=PAYLOAD_TYPE, signatures={})
    envelope.sign(signer)
    return canonical_bytes_nl(envelope.to_dict())


def _envelope(path: str | Path, data: bytes, dsse) -> Any:
    from prereg.records import loads_strict

    try:
        value = loads_strict(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path}: the envelope is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise UserError(f"{path}: $: the envelope is not a JSON object")
    for name, typ in (("payload", str), ("payloadType", str), ("signatures", list)):
        if not isinstance(value.get(name), typ):
            raise UserError(
                f"{path}: $.{name}: missing or not a {'list' if typ is list else 'string'}"
                " (a DSSE envelope has payload, payloadType and signatures)"
            )
    if value["payloadType"] != PAYLOAD_TYPE:
        raise UserError(
            f"{path}: $.payloadType: {value['payloadType']!r}, not {PAYLOAD_TYPE!r}"
            " (an in-toto statement)"
        )
    try:
        base64.b64decode(value["payload"], validate=True)
    except (binascii.Error, ValueError):
        raise UserError(f"{path}: $.payload: not base64") from None
    for i, s in enumerate(value["signatures"]):
        if not (isinstance(s, dict) and isinstance(s.get("sig"), str)):
            raise UserError(f"{path}: $.signatures[{i}]: not a signature (needs sig and keyid)")
        try:
            base64.b64decode(s["sig"], validate=True)
        except (binascii.Error, ValueError):
            raise UserError(f"{path}: $.signatures[{i}].sig: not base64") from None
        if not isinstance(s.get("keyid"), str):
            raise UserError(f"{path}: $.signatures[{i}].keyid: missing or not a string")
    try:
        return dsse.Envelope.from_dict(value)
    except (KeyError, ValueError, TypeError) as exc:
        raise UserError(f"{path}: $.signatures: {exc}") from None


def verify_envelope(
    envelope: str | Path, public_key: str | Path, statement: str | Path | None = None
) -> dict[str, Any]:
    """Check the DSSE envelope in the file ``envelope``: it carries an in-toto statement, a
    signature of it verifies with the PEM public key ``public_key``, and its payload is, byte
    for byte, the statement file ``statement`` (default: the one it sits beside, see
    :func:`statement_path`).  Returns ``{"envelope", "statement", "keyid"}``; every failure is
    a :class:`UserError` naming the file and what does not hold."""
    dsse, signer, _ = _libraries()
    from securesystemslib.exceptions import VerificationError

    statement = statement_path(envelope) if statement is None else Path(statement)
    parsed = _envelope(envelope, _read(envelope, "envelope"), dsse)
    key = _public_key(public_key)
    try:
        accepted = parsed.verify([key], 1)
    except VerificationError:
        signed_by = ", ".join(sorted(parsed.signatures)) or "none"
        if key.keyid not in parsed.signatures:
            raise UserError(
                f"{envelope}: $.signatures: not signed by the key of {public_key} (its key id"
                f" {key.keyid}; the envelope is signed by key id {signed_by})"
            ) from None
        raise UserError(
            f"{envelope}: $.signatures: the signature by the key of {public_key} does not verify"
            " over $.payload: the payload or the signature was changed after signing"
        ) from None
    problem = _statement_problem(parsed.payload)
    if problem is not None:
        raise UserError(f"{envelope}: $.payload: not an in-toto Statement v1: {problem}")
    beside = _read(statement, "statement")
    if beside != parsed.payload:
        raise UserError(
            f"{envelope}: $.payload is not the statement {statement} (signed: "
            f"{len(parsed.payload)} bytes, the file: {len(beside)} bytes): the"
            " statement changed since it was signed, or the envelope belongs to another one"
        )
    return {"envelope": str(envelope), "statement": str(statement), "keyid": next(iter(accepted))}
