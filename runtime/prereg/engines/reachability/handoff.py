"""The collection hand-off of a reachability-probe study: from a prepared folder to collection.

The study's facts come from the constants ``hand-off`` (schema ids, the calibration mode, the
ledger's file name, the run folder's file names), ``hand-off-budget`` (the fresh-ledger
allowance, the worst-case reservation), ``refusal-codes``, ``calibration`` (the registered artifact's window and the session limit) and
``budget`` (the call timeout, the floors, the shared cap).  Every refusal is a
:class:`prereg.errors.UserError` whose message starts with the study's refusal code
(``public-demo-seed: ...``).

Handlers (``handler(ctx, args) -> int``):

- ``approval_template``: ``args.outdir``, ``args.out``, optional
  ``args.calibration_artifact_digest``, ``args.dev_review_digest``;
- ``bundle``: ``args.outdir``, ``args.approval``, ``args.dev_review``,
  ``args.dev_review_digest``, ``args.context``, ``args.out``, optional ``args.artifact_root``,
  ``args.ledger``, ``args.now``;
- ``validate_bundle``: ``args.bundle``, optional ``args.session_start``, ``args.call_at``,
  ``args.now``;
- ``dry_run_ledger``: ``args.bundle``, ``args.approval_digest``, ``args.artifact_root``,
  optional ``args.ledger``, ``args.now`` (exit 0 only when ready, 1 otherwise);
- ``ledger_freeze``: ``args.bundle``, ``args.artifact_root``;
- ``session_start``: ``args.bundle``, ``args.artifact_root``, ``args.run_id``,
  ``args.run_dir``, ``args.at``;
- ``session_end``: ``args.bundle``, ``args.artifact_root``, ``args.run_dir``, ``args.calls``,
  ``args.tokens``, ``args.usd``;
- ``ledger_show``: ``args.artifact_root``, optional ``args.ledger``, ``args.json``.

Files (all JSON objects; paths inside them are relative to the file that names them):

- approval: ``{schemaVersion, studyId, specDigest, generatorId, seed, corpusDigest,
  preregistrationDigest, calibration: {mode, calibrationArtifactDigest}, floorsUsd: {study,
  portfolio}, approvalReference}``; anchored by the SHA-256 of its bytes;
- development review: ``{schemaVersion, corpusDigest, ...}``; anchored by its bytes' SHA-256;
- calibration context: ``{schemaVersion, calibrator: {file, trustedDigest}}`` (the artifact
  digest, as ``score --calibrator-digest`` takes it);
- bundle: what the collector needs and checks (see :func:`bundle_document`); its digest is
  the SHA-256 of its bytes;
- a run folder: ``frozen.json`` (written at session start: ``collectionStartedAt`` and the
  prior runs of the corpus with their evidence digests), ``observations.jsonl`` (the
  collector's attempts) and ``integrity.json`` (written at session end: the SHA-256 of both
  and the run's evidence digest, the digest of ``{runId, frozen, observations}``).

Each has a shipped JSON Schema (:mod:`prereg.outputs`, ``reachability-*``); an approval,
development review, context, bundle or score config a command reads is checked against its
schema right after its version id (:func:`_schema`), every problem named by JSON pointer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prereg.digest import PREFIX, digest, sha256_hex
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import canonical_bytes_nl, output_file, read_regular, refuse_existing, write_new
from prereg.records import loads_strict, read_json_file, unsafe_integer

from .budget import budget_plan, calibration_window, iso_ms, parse_instant

if TYPE_CHECKING:  # the engine configuration and the seed policy: loaded where a handler needs
    # them, so that the command table (and score, which finds its handler in it) does not
    from .config import EngineConfig

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def ms(t: datetime) -> int:
    """Integer milliseconds since the epoch (the ledger's instants)."""
    return (t - EPOCH) // timedelta(milliseconds=1)


# -- the study's hand-off facts -----------------------------------------------------------------


@dataclass(frozen=True)
class HandOff:
    """The ``hand-off``, ``calibration`` and ``budget`` facts the hand-off uses."""

    raw: Mapping[str, Any]
    ec: EngineConfig
    spec_digest: str
    study_id: str
    version: str

    @classmethod
    def of(cls, ctx: StudyContext) -> HandOff:
        from .config import study_config

        consts = ctx.config["constants"]
        return cls(
            {
                **consts["hand-off"],
                **consts["hand-off-budget"],
                "refusals": consts["refusal-codes"],
            },
            study_config(ctx.config),
            ctx.spec_digest,
            ctx.study_id,
            ctx.version,
        )

    def code(self, name: str) -> str:
        return self.raw["refusals"][name]

    def refuse(self, name: str, message: str) -> UserError:
        return UserError(f"{self.code(name)}: {message}")

    def version_of(self, kind: str) -> str:
        return self.raw["schemaVersions"][kind]

    @property
    def window(self):
        return calibration_window(self.ec.calibration)

    @property
    def call_timeout(self) -> timedelta:
        return timedelta(seconds=float(self.ec.budget["timeoutSeconds"]))

    def ledger_path(self, args: argparse.Namespace, root: str | Path | None = None) -> Path:
        given = getattr(args, "ledger", None)
        if given:
            return Path(given)
        root = root if root is not None else getattr(args, "artifact_root", None)
        if not root:
            raise UserError("internal: the command needs the artifact root or --ledger")
        return Path(root) / self.raw["ledgerFile"]


def _now(args: argparse.Namespace) -> datetime:
    text = getattr(args, "now", None)
    return parse_instant(text, "--now") if text else datetime.now(UTC)


def _span(d: timedelta) -> str:
    seconds = int(d.total_seconds())
    if seconds >= 86400:
        return f"{seconds // 86400} d {seconds % 86400 // 3600} h"
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds} s"


def file_digest(path: Path, what: str) -> tuple[str, bytes]:
    """``sha256:<hex>`` of a regular file's bytes, and the bytes."""
    try:
        data = read_regular(path)
    except FileNotFoundError:
        raise UserError(f"{path}: missing ({what})") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({what}): {exc.strerror or exc}") from None
    return PREFIX + sha256_hex(data), data


def _object(path: Path, data: bytes | None = None, what: str = "a JSON object") -> dict[str, Any]:
    if data is None:
        obj = read_json_file(path, missing=what)  # its integers checked there
    else:
        try:
            text = data.decode("utf-8")
            obj = loads_strict(text)
        except (UnicodeDecodeError, ValueError) as exc:
            raise UserError(f"{path}: not valid JSON ({str(exc)[:120]})") from None
        problem = unsafe_integer(obj, text)
        if problem:
            raise UserError(f"{path}: {problem}")
    if not isinstance(obj, dict):
        raise UserError(f"{path}: not a JSON object ({what})")
    return obj


def _field(obj: Mapping[str, Any], path: Path, pointer: str, kind: type = str) -> Any:
    """The value at a JSON pointer of ``obj`` (``/calibration/mode``), of type ``kind``."""
    value: Any = obj
    for key in pointer.strip("/").split("/"):
        if isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        elif isinstance(value, Mapping) and key in value:
            value = value[key]
        else:
            raise UserError(f"{path}: at {pointer}: missing")
    ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        raise UserError(f"{path}: at {pointer}: expected {kind.__name__}, got {value!r}")
    return value


# the shipped JSON Schema (prereg.outputs) of each hand-off file a command reads
_SCHEMAS = {
    "approval": "approval",
    "bundle": "bundle",
    "devReview": "dev-review",
    "context": "calibration-context",
    "scoreConfig": "score-config",
}


def _schema(
    h: HandOff,
    obj: Mapping[str, Any],
    path: Path,
    kind: str,
    code: str,
    codes: Mapping[str, str] | None = None,
) -> None:
    """Refuse ``obj`` (led by ``code``, or by ``codes[key]`` when the first problem is under
    the top-level ``key``) unless it carries the study's version id of ``kind`` and holds to
    the shipped schema of its kind: every problem located by JSON pointer."""
    from prereg import outputs

    want = h.version_of(kind)
    if obj.get("schemaVersion") != want:
        raise h.refuse(
            code, f"{path}: at /schemaVersion: {obj.get('schemaVersion')!r}, expected {want!r}"
        )
    doc_schema = outputs.schema_for("reachability-probe", _SCHEMAS[kind])
    found = outputs.problems(obj, doc_schema)
    if found:
        for key, other in (codes or {}).items():
            if found[0].startswith((f"at /{key}:", f"at /{key}/")):
                code = other
                break
        raise UserError(
            f"{h.code(code)}: {path}: {found[0]} (schema {doc_schema['$id']})",
            problems=found[1:],
        )


def _relative(target: Path, base: Path) -> str:
    return Path(os.path.relpath(target.resolve(), base.resolve())).as_posix()


def _resolve(base_file: Path, rel: str) -> Path:
    p = Path(rel)
    return p if p.is_absolute() else base_file.parent / p


# -- the prepared folder, checked against the regenerated study ---------------------------------


def read_prepared(h: HandOff, outdir: Path) -> dict[str, Any]:
    """The prepared folder's preregistration object (prepared under the current spec)."""
    from .layout import PREREGISTRATION

    prereg_path = outdir / PREREGISTRATION
    prereg = read_json_file(prereg_path, missing="is this a prepared folder?")
    if not isinstance(prereg, dict) or not isinstance(prereg.get("seed"), str):
        raise UserError(f"{prereg_path}: not a preregistration object with a seed")
    if prereg.get("specDigest") != h.spec_digest:
        raise h.refuse(
            "changedPreregistration",
            f"{prereg_path}: prepared under spec {prereg.get('specDigest')}, not the current"
            f" spec {h.spec_digest}",
        )
    from .seeds import check_seed_syntax

    check_seed_syntax(prereg["seed"], h.ec.seed_policy)
    return prereg


def verify_prepared(ctx: StudyContext, h: HandOff, outdir: Path) -> dict[str, Any]:
    """The preregistration object of the study regenerated from the prepared folder's seed,
    after comparing every file of the folder with it byte for byte (``prepared-mismatch``)."""
    from .commands import regenerated_digests

    seed = read_prepared(h, outdir)["seed"]
    files, regenerated = regenerated_digests(ctx, h.ec, seed)
    for name, want in files:
        got, _ = file_digest(outdir / name, "a prepared file")
        if got != want:
            raise h.refuse(
                "preparedMismatch",
                f"{outdir / name}: differs from the study regenerated from seed {seed!r}"
                f" ({got}, regenerated {want})",
            )
    return regenerated


def preregistration_digest(prereg: Mapping[str, Any]) -> str:
    return digest(dict(prereg))


# -- approval-template --------------------------------------------------------------------------


def approval_template(ctx: StudyContext, args: argparse.Namespace) -> int:
    h = HandOff.of(ctx)
    out = output_file(args.out)
    refuse_existing(out)
    prereg = verify_prepared(ctx, h, Path(args.outdir))
    ph = h.raw["placeholder"]
    cal = getattr(args, "calibration_artifact_digest", None)
    review = getattr(args, "dev_review_digest", None)
    floors = h.ec.budget["floorsUsd"]
    approval = {
        "schemaVersion": h.version_of("approval"),
        "studyId": h.study_id,
        "specDigest": h.spec_digest,
        "generatorId": h.ec.generator_id,
        "seed": prereg["seed"],
        "corpusDigest": prereg["corpusDigest"],
        "preregistrationDigest": preregistration_digest(prereg),
        "calibration": {
            "mode": h.raw["calibrationMode"],
            "calibrationArtifactDigest": cal
            or f"{ph} the registered calibrator artifact's digest, sha256:...>",
        },
        "floorsUsd": {"study": floors["study"], "portfolio": floors["portfolio"]},
        "approvalReference": (
            f"development review {review}"
            if review
            else f"{ph} a reference that cites the development review digest>"
        ),
    }
    write_new(out, json.dumps(approval, indent=2, ensure_ascii=False) + "\n", mode=0o600)
    todo = [
        k for k, v in (("calibrationArtifactDigest", cal), ("approvalReference", review)) if not v
    ]
    _out(f"wrote the approval for seed {prereg['seed']!r} to {out} (mode 600)")
    _out(
        "  attested floors (USD): study {study}, portfolio {portfolio}: raise them to all spend"
        " so far".format(**approval["floorsUsd"])
    )
    if todo:
        _out(f"  to complete before bundle: {', '.join(todo)}")
    return 0


def _placeholders(value: Any, marker: str, pointer: str = "") -> list[str]:
    if isinstance(value, str):
        return [pointer or "/"] if value.startswith(marker) else []
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in _placeholders(v, marker, f"{pointer}/{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _placeholders(v, marker, f"{pointer}/{i}")]
    return []


# -- the calibration context --------------------------------------------------------------------


def load_context_calibrator(ctx: StudyContext, h: HandOff, context_path: Path, module):
    """The calibrator a calibration context names, its trusted digest verified
    (``context-digest``) and its window the registered one (``calibration-scope``)."""
    from .calibrator import artifact_digest, load_calibrator
    from .score_commands import schema_path
    from .scoring import scoring_spec

    spec = scoring_spec(ctx.config)
    context = _object(context_path, what="a calibration context")
    _schema(h, context, context_path, "context", "contextDigest")
    rel = _field(context, context_path, "/calibrator/file")
    trusted = _field(context, context_path, "/calibrator/trustedDigest")
    cal_path = _resolve(context_path, rel)
    names = spec.calibrator_fields
    artifact = _object(cal_path, what="a calibrator artifact")
    actual = artifact_digest(artifact, names["digest"])
    if actual != trusted:
        raise h.refuse(
            "contextDigest",
            f"{context_path}: at /calibrator/trustedDigest: {cal_path} has digest {actual},"
            f" not the trusted {trusted}",
        )
    cal = load_calibrator(
        cal_path,
        schema_path(module, spec.contracts["calibrator"]),
        trusted,
        float(h.ec.calibration["validDays"]),
        names,
    )
    win = h.window
    if cal.effective_at != win.effective_at or cal.expires_at != win.expires_at:
        raise h.refuse(
            "calibrationScope",
            f"{cal_path}: valid {cal.window()}, not the registered window"
            f" {iso_ms(win.effective_at)} to {iso_ms(win.expires_at)}",
        )
    return cal, trusted


# -- bundle -------------------------------------------------------------------------------------


def _decimal(value: Any, where: str) -> Decimal:
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        raise UserError(f"{where}: {value!r} is not a number") from None
    if not d.is_finite() or d < 0:
        raise UserError(f"{where}: {value!r} is not a non-negative number")
    return d


def ledger_spend(path: Path) -> dict[str, Any]:
    """The spend a ledger records (zero when there is no ledger yet; none is created)."""
    from prereg.ledger import open_existing

    led = open_existing(path)
    if led is None:
        return {"calls": 0, "tokens": 0, "usd": Decimal(0), "fresh": True}
    with led:
        return {**led.spend(), "fresh": False}


def worst_case(h: HandOff, rows: int) -> dict[str, Decimal]:
    """The registered worst-case reservation (``hand-off.worstCase``), its calls checked against
    rows × (1 + retries)."""
    wc = h.raw["worstCase"]
    attempts = budget_plan(h.ec.budget, rows).attempts
    if int(wc["calls"]) != attempts:
        raise UserError(
            f"constant hand-off: worstCase.calls {wc['calls']} is not the {rows:,} rows × (1 +"
            f" {h.ec.budget['retriesPerRequest']} retries) = {attempts:,} attempts"
        )
    return {
        k: _decimal(wc[k], f"constant hand-off: worstCase.{k}") for k in ("calls", "tokens", "usd")
    }


def bundle_document(
    h: HandOff,
    prereg: Mapping[str, Any],
    *,
    corpus_rel: str,
    approval_digest: str,
    approval: Mapping[str, Any],
    approval_rel: str,
    dev_review_digest: str,
    calibrator_digest: str,
    qualified_at: datetime,
    development: str | None = None,
) -> dict[str, Any]:
    win = h.window
    wc = worst_case(h, int(prereg["rows"]))
    return {
        "schemaVersion": h.version_of("bundle"),
        "studyId": h.study_id,
        "version": h.version,
        "specDigest": h.spec_digest,
        "generatorId": h.ec.generator_id,
        "seed": prereg["seed"],
        "rows": prereg["rows"],
        "preregistrationDigest": preregistration_digest(prereg),
        "corpusDigest": prereg["corpusDigest"],
        "goldDigest": prereg["goldDigest"],
        "auditDigest": prereg["auditDigest"],
        "dispatchOrderDigest": prereg["dispatchOrderDigest"],
        "corpus": {"file": corpus_rel, "sha256": prereg["corpusDigest"]},
        "approvalDigest": approval_digest,
        "approval": {"file": approval_rel, "sha256": approval_digest},
        "approvalReference": approval["approvalReference"],
        "devReviewDigest": dev_review_digest,
        "floorsUsd": dict(approval["floorsUsd"]),
        "calibration": {
            "mode": approval["calibration"]["mode"],
            "calibrationArtifactDigest": calibrator_digest,
            "effectiveAt": iso_ms(win.effective_at),
            "expiresAt": iso_ms(win.expires_at),
        },
        "window": {
            "sessionMinutes": h.ec.calibration["sessionMinutes"],
            "callTimeoutSeconds": h.ec.budget["timeoutSeconds"],
            "latestSessionStart": iso_ms(win.latest_start),
        },
        "worstCase": {k: str(v) if k == "usd" else int(v) for k, v in wc.items()},
        "qualifiedAt": iso_ms(qualified_at),
        # a seed a plan run declared (:func:`.seeds.development_seeds`): not for live collection
        **({"development": development} if development else {}),
    }


def bundle(ctx: StudyContext, args: argparse.Namespace) -> int:
    from .seeds import classify_seed

    h = HandOff.of(ctx)
    out = output_file(args.out)
    refuse_existing(out)
    now = _now(args)
    outdir = Path(args.outdir)
    prereg = read_prepared(h, outdir)  # regenerated and compared below, after the cheap checks
    seed = prereg["seed"]
    # a seed committed anywhere in the project's repository (or its history) is public too
    sc = classify_seed(seed, h.ec.seed_policy, ctx.extras.get("projectRoot"), history=True)
    if sc.public:
        raise h.refuse(
            "publicSeed",
            f"seed {seed!r} is public ({sc.reason}): a public seed's gold can be regenerated"
            " from source, so it is never bundled for live collection; prepare a fresh"
            " private seed",
        )
    # the development review, anchored by its digest
    review_path = Path(args.dev_review)
    review_digest, review_bytes = file_digest(review_path, "the development review")
    if review_digest != args.dev_review_digest:
        raise h.refuse(
            "devReviewDigest",
            f"{review_path}: digest {review_digest} differs from the anchored development"
            f" review digest {args.dev_review_digest}",
        )
    review = _object(review_path, review_bytes, "a development review")
    _schema(h, review, review_path, "devReview", "devReviewCorpus")
    if review.get("corpusDigest") != prereg["corpusDigest"]:
        raise h.refuse(
            "devReviewCorpus",
            f"{review_path}: at /corpusDigest: reviews corpus {review.get('corpusDigest')},"
            f" not the prepared {prereg['corpusDigest']}",
        )
    # the approval
    approval_path = Path(args.approval)
    approval_digest, approval_bytes = file_digest(approval_path, "the approval")
    approval = _object(approval_path, approval_bytes, "an approval")
    _schema(h, approval, approval_path, "approval", "approvalMismatch")
    todo = _placeholders(approval, h.raw["placeholder"])
    if todo:
        raise h.refuse(
            "approvalIncomplete",
            f"{approval_path}: not completed at {', '.join(todo)} (a template placeholder remains)",
        )
    binds = {
        "/studyId": h.study_id,
        "/specDigest": h.spec_digest,
        "/generatorId": h.ec.generator_id,
        "/seed": seed,
        "/corpusDigest": prereg["corpusDigest"],
        "/preregistrationDigest": preregistration_digest(prereg),
    }
    for pointer, want in binds.items():
        got = approval.get(pointer[1:])
        if got != want:
            raise h.refuse(
                "approvalMismatch",
                f"{approval_path}: at {pointer}: {got!r}, but the prepared folder has {want!r}",
            )
    mode = _field(approval, approval_path, "/calibration/mode")
    if mode != h.raw["calibrationMode"]:
        raise h.refuse(
            "calibrationScope",
            f"{approval_path}: at /calibration/mode: {mode!r}; this study is calibrated in"
            f" {h.raw['calibrationMode']!r} mode with the registered artifact only",
        )
    approved_cal = _field(approval, approval_path, "/calibration/calibrationArtifactDigest")
    reference = _field(approval, approval_path, "/approvalReference")
    if args.dev_review_digest not in reference:
        raise h.refuse(
            "approvalReference",
            f"{approval_path}: at /approvalReference: {reference!r} does not cite the"
            f" development review digest {args.dev_review_digest}",
        )
    # the floors cover the registered floors plus the spend the ledger records
    root = getattr(args, "artifact_root", None) or outdir.resolve().parent
    ledger = h.ledger_path(args, root)
    spent = ledger_spend(ledger)
    registered = h.ec.budget["floorsUsd"]
    for kind in ("study", "portfolio"):
        floor = _decimal(
            _field(approval, approval_path, f"/floorsUsd/{kind}", float),
            f"{approval_path}: at /floorsUsd/{kind}",
        )
        need = _decimal(registered[kind], "registered floor") + spent["usd"]
        if floor < need:
            raise h.refuse(
                "floorsBelowSpend",
                f"{approval_path}: at /floorsUsd/{kind}: USD {floor} is below the registered"
                f" floor {registered[kind]} plus the USD {spent['usd']} the ledger {ledger}"
                f" records (USD {need})",
            )
    # the calibration context: the approved artifact, its trusted digest, the registered window
    module = _module(ctx, args)
    cal, trusted = load_context_calibrator(ctx, h, Path(args.context), module)
    if approved_cal != trusted:
        raise h.refuse(
            "calibrationScope",
            f"{approval_path}: at /calibration/calibrationArtifactDigest: {approved_cal} is not"
            f" the context's registered calibrator {trusted}",
        )
    if not cal.valid_at(now):
        raise h.refuse(
            "calibrationExpired" if now > cal.expires_at else "calibrationScope",
            f"calibrator {cal.id} is not valid at {iso_ms(now)} (valid {cal.window()})",
        )
    if verify_prepared(ctx, h, outdir) != prereg:
        raise h.refuse(
            "preparedMismatch", f"{outdir}: preregistration.json is not the regenerated one"
        )
    from .layout import CORPUS

    doc = bundle_document(
        h,
        prereg,
        corpus_rel=_relative(outdir / CORPUS, out.parent if str(out.parent) else Path(".")),
        approval_digest=approval_digest,
        approval=approval,
        approval_rel=_relative(approval_path, out.parent if str(out.parent) else Path(".")),
        dev_review_digest=review_digest,
        calibrator_digest=trusted,
        qualified_at=now,
        development=sc.development,
    )
    data = canonical_bytes_nl(doc)
    write_new(out, data, mode=0o600)
    _out(f"bundled seed {seed!r} ({prereg['rows']:,} rows) into {out}")
    _out(f"  bundle digest: {PREFIX}{sha256_hex(data)}")
    _out(f"  approval digest (anchor it): {approval_digest}")
    _out(
        f"  calibrator {cal.id} qualified at {iso_ms(now)}; sessions may start until"
        f" {doc['window']['latestSessionStart']}"
    )
    if sc.development:
        _out(f"  a development bundle: {sc.development}")
    return 0


def _module(ctx: StudyContext, args: argparse.Namespace):
    from .score_commands import study_module

    return study_module(ctx, args)


# -- the collector boundary ---------------------------------------------------------------------


@dataclass(frozen=True)
class Bundle:
    path: Path
    digest: str
    doc: Mapping[str, Any]

    @property
    def corpus_path(self) -> Path:
        return _resolve(self.path, self.doc["corpus"]["file"])


def validate_bundle(
    ctx: StudyContext,
    path: str | Path,
    *,
    session_start: datetime | None = None,
    call_at: datetime | None = None,
    now: datetime | None = None,
) -> Bundle:
    """The collector's check of a bundle before dispatch; the :class:`Bundle` when it holds.

    Refused (a UserError led by the study's code): another generator (``generator-id``), a
    public seed (``public-demo-seed``), calibration not in artifact mode or not the registered
    window (``calibration-scope``), bundled under another spec (``changed-preregistration``),
    a corpus file that is not the bundled one (``prepared-mismatch``); a session start whose
    session would end after the calibrator's expiry (``sessionWindowOpen``); a call whose
    timeout would end after it, or ``now`` past it (``calibration-expired``).
    """
    h = HandOff.of(ctx)
    path = Path(path)
    bundle_digest, data = file_digest(path, "a bundle")
    doc = _object(path, data, "a bundle")
    _schema(h, doc, path, "bundle", "bundleDigest")
    gen = doc.get("generatorId")
    if gen != h.ec.generator_id:
        raise h.refuse(
            "generatorId",
            f"{path}: at /generatorId: {gen!r}; this collector boundary is keyed on"
            f" {h.ec.generator_id!r}",
        )
    seed = _field(doc, path, "/seed")
    from .seeds import check_seed_syntax, classify_seed

    check_seed_syntax(seed, h.ec.seed_policy)
    sc = classify_seed(seed, h.ec.seed_policy, ctx.extras.get("projectRoot"))
    if sc.public:
        raise h.refuse(
            "publicSeed", f"{path}: seed {seed!r} is public ({sc.reason}); not dispatched"
        )
    if "development" in doc and not sc.development:
        raise h.refuse(
            "publicSeed",
            f"{path}: at /development: a development bundle ({doc['development']}); not"
            " dispatched for live collection",
        )
    mode = _field(doc, path, "/calibration/mode")
    if mode != h.raw["calibrationMode"]:
        raise h.refuse(
            "calibrationScope",
            f"{path}: at /calibration/mode: {mode!r}, not {h.raw['calibrationMode']!r}",
        )
    win = h.window
    expires = parse_instant(_field(doc, path, "/calibration/expiresAt"), f"{path}: expiresAt")
    if expires != win.expires_at:
        raise h.refuse(
            "calibrationScope",
            f"{path}: at /calibration/expiresAt: {iso_ms(expires)}, not the registered expiry"
            f" {iso_ms(win.expires_at)}",
        )
    if doc.get("specDigest") != h.spec_digest:
        raise h.refuse(
            "changedPreregistration",
            f"{path}: bundled under spec {doc.get('specDigest')}, not the current spec"
            f" {h.spec_digest}",
        )
    for pointer, kind in (
        ("/corpus/file", str),
        ("/corpus/sha256", str),
        ("/corpusDigest", str),
        ("/preregistrationDigest", str),
        ("/approvalDigest", str),
        ("/floorsUsd/study", float),
        ("/rows", int),
    ):
        _field(doc, path, pointer, kind)
    b = Bundle(path, bundle_digest, doc)
    corpus_digest, corpus = file_digest(b.corpus_path, "the bundled corpus")
    if corpus_digest != doc.get("corpusDigest") or corpus_digest != doc["corpus"].get("sha256"):
        raise h.refuse(
            "preparedMismatch",
            f"{b.corpus_path}: digest {corpus_digest}, not the bundled corpus"
            f" {doc.get('corpusDigest')}",
        )
    rows = 0
    for n, rec_gen in enumerate(_corpus_generators(b.corpus_path, corpus), start=1):
        if rec_gen != h.ec.generator_id:
            raise h.refuse(
                "generatorId",
                f"{b.corpus_path}:{n}: at /provenance/generatorId: {rec_gen!r}",
            )
        rows += 1
    if rows != doc.get("rows"):
        raise h.refuse(
            "preparedMismatch", f"{b.corpus_path}: {rows} rows, the bundle says {doc.get('rows')}"
        )
    check_chain(h, b)
    if now is not None:
        if now > win.expires_at:
            raise h.refuse(
                "calibrationExpired",
                f"now {iso_ms(now)} is past the calibrator's expiry {iso_ms(win.expires_at)}",
            )
        if now < win.effective_at:
            raise h.refuse(
                "calibrationScope",
                f"now {iso_ms(now)} is before the calibrator is effective"
                f" ({iso_ms(win.effective_at)})",
            )
    if session_start is not None:
        check_session_window(h, session_start)
    if call_at is not None:
        end = call_at + h.call_timeout
        if end > win.expires_at:
            raise h.refuse(
                "calibrationExpired",
                f"a call at {iso_ms(call_at)} may run until {iso_ms(end)} (timeout"
                f" {h.ec.budget['timeoutSeconds']} s), after the calibrator's expiry"
                f" {iso_ms(win.expires_at)}: stop the collection",
            )
    return b


def _differs(doc: Mapping[str, Any], pointer: str, want: Any) -> tuple[bool, Any]:
    value: Any = doc
    for key in pointer.strip("/").split("/"):
        value = value.get(key) if isinstance(value, Mapping) else None
    same = value == want and type(value) is type(want)
    if not same and isinstance(value, (int, float)) and isinstance(want, (int, float)):
        same = not isinstance(value, bool) and Decimal(str(value)) == Decimal(str(want))
    return not same, value


def check_chain(h: HandOff, b: Bundle) -> None:
    """Every value the bundle carries, re-checked against where it came from: the approval it
    names (its bytes' digest the bundle's ``approvalDigest``; each approved value the bundle's
    copy), the prepared folder of its corpus (the seed, rows and digests of its
    preregistration.json) and the registered facts (window, worst case, version).  An edited
    value anywhere in the bundle is refused at its JSON pointer, with the digest of the source
    it no longer matches."""
    from .layout import PREREGISTRATION

    doc, path = b.doc, b.path
    # the approval, anchored by the digest the bundle carries (and the ledger records)
    ref = doc.get("approval")
    if not isinstance(ref, Mapping) or not isinstance(ref.get("file"), str):
        raise h.refuse("approvalDigest", f"{path}: at /approval: names no approval file")
    approval_path = _resolve(path, ref["file"])
    approval_digest, approval_bytes = file_digest(approval_path, "the bundle's approval")
    for pointer in ("/approvalDigest", "/approval/sha256"):
        bad, got = _differs(doc, pointer, approval_digest)
        if bad:
            raise h.refuse(
                "approvalDigest",
                f"{path}: at {pointer}: {got}, but the approval {approval_path} has digest"
                f" {approval_digest}",
            )
    approval = _object(approval_path, approval_bytes, "an approval")
    copies = {
        "/studyId": "/studyId",
        "/specDigest": "/specDigest",
        "/generatorId": "/generatorId",
        "/seed": "/seed",
        "/corpusDigest": "/corpusDigest",
        "/preregistrationDigest": "/preregistrationDigest",
        "/approvalReference": "/approvalReference",
        "/floorsUsd/study": "/floorsUsd/study",
        "/floorsUsd/portfolio": "/floorsUsd/portfolio",
        "/calibration/mode": "/calibration/mode",
        "/calibration/calibrationArtifactDigest": "/calibration/calibrationArtifactDigest",
    }
    for here, there in copies.items():
        _, want = _differs(approval, there, None)
        bad, got = _differs(doc, here, want)
        if bad:
            raise h.refuse(
                "approvalMismatch",
                f"{path}: at {here}: {got!r}, but the approval ({approval_digest}) approved"
                f" {want!r}",
            )
    # the prepared folder the corpus lies in
    prereg_path = b.corpus_path.parent / PREREGISTRATION
    prereg_digest_bytes, prereg_bytes = file_digest(prereg_path, "the bundle's prepared folder")
    prereg = _object(prereg_path, prereg_bytes, "a preregistration")
    expected = {
        "/seed": prereg.get("seed"),
        "/rows": prereg.get("rows"),
        "/corpusDigest": prereg.get("corpusDigest"),
        "/goldDigest": prereg.get("goldDigest"),
        "/auditDigest": prereg.get("auditDigest"),
        "/dispatchOrderDigest": prereg.get("dispatchOrderDigest"),
        "/preregistrationDigest": preregistration_digest(prereg),
    }
    for pointer, want in expected.items():
        bad, got = _differs(doc, pointer, want)
        if bad:
            raise h.refuse(
                "preparedMismatch",
                f"{path}: at {pointer}: {got!r}, but the prepared {prereg_path}"
                f" ({prereg_digest_bytes}) has {want!r}",
            )
    # the registered facts
    win = h.window
    rows = prereg.get("rows")
    wc = worst_case(h, int(rows)) if type(rows) is int else {}
    registered = {
        "/studyId": h.study_id,
        "/version": h.version,
        "/calibration/effectiveAt": iso_ms(win.effective_at),
        "/calibration/expiresAt": iso_ms(win.expires_at),
        "/window/sessionMinutes": h.ec.calibration["sessionMinutes"],
        "/window/callTimeoutSeconds": h.ec.budget["timeoutSeconds"],
        "/window/latestSessionStart": iso_ms(win.latest_start),
        **{f"/worstCase/{k}": (str(v) if k == "usd" else int(v)) for k, v in wc.items()},
    }
    for pointer, want in registered.items():
        bad, got = _differs(doc, pointer, want)
        if bad:
            raise h.refuse(
                "changedPreregistration",
                f"{path}: at {pointer}: {got!r}, but the registered study ({h.spec_digest}) has"
                f" {want!r}",
            )


def _corpus_generators(path: Path, corpus: bytes):
    """Each corpus line's ``provenance.generatorId``, in file order: from the fast reader
    when it vouches for the file (a corpus as ``prepare`` writes it), else line by line with
    the strict reader, refusing a line that is not a corpus record."""
    from .prepared import corpus_records

    records = corpus_records(corpus)
    if records is not None:
        yield from (r.provenance.generatorId for r in records)
        return
    for n, line in enumerate(corpus.decode("utf-8", "replace").splitlines(), start=1):
        try:
            yield loads_strict(line)["provenance"]["generatorId"]
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}:{n}: not a corpus record ({exc})") from None


def check_session_window(h: HandOff, start: datetime) -> None:
    """A session may start at ``start`` iff start + the session limit <= the expiry (and the
    calibrator is already effective)."""
    win = h.window
    if not win.may_start(start) or start < win.effective_at:
        minutes = h.ec.calibration["sessionMinutes"]
        raise h.refuse(
            "sessionWindow",
            f"false: a {minutes}-minute session starting {iso_ms(start)} would end"
            f" {iso_ms(start + win.session)}; sessions may start from"
            f" {iso_ms(win.effective_at)} until {iso_ms(win.latest_start)} (calibrator expiry"
            f" {iso_ms(win.expires_at)})",
        )


def validate_bundle_command(ctx: StudyContext, args: argparse.Namespace) -> int:
    start = getattr(args, "session_start", None)
    call = getattr(args, "call_at", None)
    b = validate_bundle(
        ctx,
        args.bundle,
        session_start=parse_instant(start, "--session-start") if start else None,
        call_at=parse_instant(call, "--call-at") if call else None,
        now=_now(args),
    )
    _out(f"bundle {b.path}: valid ({b.digest})")
    _out(
        f"  generator {b.doc['generatorId']}, seed {b.doc['seed']!r} (private),"
        f" {b.doc['rows']:,} rows, calibration {b.doc['calibration']['mode']}"
        f" {b.doc['calibration']['calibrationArtifactDigest']}"
    )
    if start:
        _out(f"  a session may start at {start}")
    if call:
        _out(f"  a call may be dispatched at {call}")
    return 0


# -- the ledger commands ------------------------------------------------------------------------

_CONFLICT_CODES = {
    "seed-corpus": "seedReused",
    "corpus-preregistration": "changedPreregistration",
    "seed-not-frozen": "seedNotFrozen",
    "run-reused": "runReused",
    "session-open": "sessionOpen",
    "run-unknown": "sessionUnrecorded",
    "run-ended": "runReused",
    "instant-order": "sessionOpen",
}


def _conflict(h: HandOff, exc) -> UserError:
    return h.refuse(_CONFLICT_CODES[exc.kind], exc.message)


def dry_run_ledger(ctx: StudyContext, args: argparse.Namespace) -> int:
    from prereg.ledger import open_existing

    h = HandOff.of(ctx)
    now = _now(args)
    b = validate_bundle(ctx, args.bundle)
    doc = b.doc
    ledger = h.ledger_path(args)
    checks: list[tuple[str, bool, str]] = []
    checks.append(
        (
            h.code("approvalDigest"),
            doc["approvalDigest"] == args.approval_digest,
            f"the bundle's approval {doc['approvalDigest']}, anchored {args.approval_digest}",
        )
    )
    led = open_existing(ledger)
    spent = {"calls": 0, "tokens": 0, "usd": Decimal(0)}
    if led is None:
        where = f"ledger {ledger}: none yet (a fresh ledger)"
        checks.append((h.code("seedReused"), True, "no seed frozen yet"))
        checks.append((h.code("changedPreregistration"), True, "no corpus observed yet"))
    else:
        with led:
            where = f"ledger {ledger}: schema version {led.version}"
            row = led.seed(doc["seed"])
            if row is None:
                checks.append((h.code("seedReused"), True, f"seed {doc['seed']!r} not frozen yet"))
            else:
                same = row["corpus_digest"] == doc["corpusDigest"]
                checks.append(
                    (
                        h.code("seedReused"),
                        same,
                        f"seed {doc['seed']!r} frozen at {row['frozen_at']} with corpus"
                        f" {row['corpus_digest']}" + ("" if same else " (another corpus)"),
                    )
                )
            other = led.other_preregistration(doc["corpusDigest"], doc["preregistrationDigest"])
            checks.append(
                (
                    h.code("changedPreregistration"),
                    other is None,
                    "the corpus has no freeze or session under another preregistration"
                    if other is None
                    else f"the corpus was {other[0]} under preregistration"
                    f" {other[1]['preregistration_digest']}",
                )
            )
            spent = led.spend()
    win = h.window
    open_ = win.may_start(now) and now >= win.effective_at
    minutes = h.ec.calibration["sessionMinutes"]
    checks.append(
        (
            h.code("sessionWindow"),
            open_,
            f"{'true' if open_ else 'false'}: now {iso_ms(now)} + {minutes} minutes ="
            f" {iso_ms(now + win.session)}, expiry {iso_ms(win.expires_at)}",
        )
    )
    need = worst_case(h, int(doc["rows"]))
    allow = h.raw["allowance"]
    left = {k: _decimal(allow[k], f"allowance {k}") - spent[k] for k in ("calls", "tokens", "usd")}
    floor = _decimal(doc["floorsUsd"]["study"], f"{b.path}: at /floorsUsd/study")
    cap = _decimal(h.ec.budget["sharedCapUsd"], "sharedCapUsd")
    shared = cap - floor - need["usd"]
    within = all(left[k] - need[k] >= 0 for k in need) and shared >= 0
    budget_lines = [
        f"  {k}: allowance {allow[k]:,} − recorded {spent[k]:,} = {left[k]:,} left; worst case"
        f" {need[k]:,}; headroom {left[k] - need[k]:,}"
        for k in ("calls", "tokens", "usd")
    ]
    checks.append(
        (
            h.code("budgetExceeded"),
            within,
            f"shared cap USD {cap} − attested study floor {floor} − reserved"
            f" {need['usd']} = {shared}",
        )
    )
    ready = all(ok for _, ok, _ in checks)
    _out(f"dry run of bundle {b.path} ({b.digest}) at {iso_ms(now)}")
    _out(f"  seed {doc['seed']!r}, corpus {doc['corpusDigest']}")
    _out(f"  {where}")
    for code, ok, text in checks:
        _out(f"  check {code}: {'ok' if ok else 'NOT READY'}; {text}")
    _out("  budget against the allowance (worst case: every request retried):")
    for line in budget_lines:
        _out("  " + line)
    _out(f"ready: {'yes' if ready else 'no'}")
    return 0 if ready else 1


def ledger_freeze(ctx: StudyContext, args: argparse.Namespace) -> int:
    from prereg.ledger import Ledger, LedgerConflict

    h = HandOff.of(ctx)
    now = _now(args)
    b = validate_bundle(ctx, args.bundle, now=now)
    doc = b.doc
    path = h.ledger_path(args)
    try:
        with Ledger(path) as led:
            r = led.freeze(
                seed=doc["seed"],
                generator_id=doc["generatorId"],
                corpus_digest=doc["corpusDigest"],
                preregistration_digest=doc["preregistrationDigest"],
                spec_digest=doc["specDigest"],
                bundle_digest=b.digest,
                at=iso_ms(now),
                at_ms=ms(now),
            )
    except LedgerConflict as exc:
        raise _conflict(h, exc) from None
    if r.recorded:
        _out(f"froze seed {doc['seed']!r} with corpus {doc['corpusDigest']} in {path}")
    else:
        _out(
            f"seed {doc['seed']!r} was already frozen with this corpus and preregistration at"
            f" {r.seed['frozen_at']} (nothing recorded)"
        )
    return 0


def _open_ledger(h: HandOff, path: Path):
    """The existing ledger at ``path`` (refused: none there, ``seed-not-frozen``)."""
    from prereg.ledger import open_existing

    led = open_existing(path)
    if led is None:
        raise h.refuse("seedNotFrozen", f"{path}: no ledger there (nothing has been frozen)")
    return led


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def session_start(ctx: StudyContext, args: argparse.Namespace) -> int:
    """Write the run's ``frozen.json`` (atomically), then record the start in the ledger.

    The run file comes first: a crash between the two leaves a run file the ledger does not
    know, and the same command run again finds it (the same run, bundle and start) and records
    it; a refusal by the ledger removes the run file this command wrote.  The other order left
    a started session without its run file, and no way forward."""
    from prereg.ledger import LedgerConflict

    h = HandOff.of(ctx)
    now = _now(args)
    at = parse_instant(args.at, "--at")
    if at > now:
        raise h.refuse(
            "futureInstant", f"--at {iso_ms(at)} is after now {iso_ms(now)}: not started yet"
        )
    if getattr(args, "now", None) is None and now - at > h.call_timeout:
        # on the real clock a session starts now: an earlier --at is development only (with
        # --now, the simulated clock), never a backdated start of a live collection
        raise h.refuse(
            "sessionWindow",
            f"--at {iso_ms(at)} is {_span(now - at)} before the clock ({iso_ms(now)}): on the"
            f" real clock a session starts now (at most the call timeout,"
            f" {h.ec.budget['timeoutSeconds']} s, earlier); a backdated start is for"
            " development, with --now",
        )
    b = validate_bundle(ctx, args.bundle, session_start=at)
    doc = b.doc
    run_dir = Path(args.run_dir)
    frozen_path = run_dir / h.raw["runFiles"]["frozen"]
    path = h.ledger_path(args)
    keys = {
        "run_id": args.run_id,
        "seed": doc["seed"],
        "corpus_digest": doc["corpusDigest"],
        "preregistration_digest": doc["preregistrationDigest"],
        "bundle_digest": b.digest,
        "started_at": iso_ms(at),
        "started_at_ms": ms(at),
    }
    resumed = False
    with _open_ledger(h, path) as led:
        try:
            prior = led.start_session(**keys, record=False)
        except LedgerConflict as exc:
            raise _conflict(h, exc) from None
        frozen = {
            "schemaVersion": h.version_of("frozen"),
            "studyId": h.study_id,
            "runId": args.run_id,
            "bundleDigest": b.digest,
            "seed": doc["seed"],
            "corpusDigest": doc["corpusDigest"],
            "preregistrationDigest": doc["preregistrationDigest"],
            "collectionStartedAt": iso_ms(at),
            "priorRuns": [
                {"runId": p["run_id"], "evidenceDigest": p["evidence_digest"]} for p in prior
            ],
        }
        data = canonical_bytes_nl(frozen)
        # an interrupted start of this very session (run file written, ledger not) resumes
        resumed = _already_written(frozen_path, data)
        if not resumed:
            try:
                run_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UserError(
                    f"{run_dir}: cannot create the run folder: {exc.strerror}"
                ) from None
            write_new(frozen_path, data)
        try:
            led.start_session(**keys, expect_prior=[p["run_id"] for p in prior])
        except BaseException as exc:
            if not resumed:
                _unlink_quietly(frozen_path)
            if isinstance(exc, LedgerConflict):
                raise _conflict(h, exc) from None
            raise
    _out(
        f"session {args.run_id!r} started {iso_ms(at)} (ends by {iso_ms(at + h.window.session)});"
        f" recorded in {path}; "
        + (f"its run file {frozen_path} was already written" if resumed else f"wrote {frozen_path}")
    )
    if prior:
        _out(f"  resumes after {', '.join(p['run_id'] for p in prior)}")
    return 0


def _already_written(path: Path, data: bytes) -> bool:
    """Whether ``path`` already holds exactly ``data`` (an interrupted run of the same step,
    resumed); any other file there is refused, nothing there is False."""
    if not os.path.lexists(path):
        return False
    try:
        same = read_regular(path) == data
    except OSError:
        same = False
    if not same:
        refuse_existing(path)
    return True


def evidence(h: HandOff, run_dir: Path) -> dict[str, Any]:
    """The integrity object of a run folder (its files hashed; the evidence digest)."""
    files = h.raw["runFiles"]
    frozen_sha, frozen_bytes = file_digest(run_dir / files["frozen"], "the run's frozen.json")
    obs_sha, _ = file_digest(run_dir / files["observations"], "the run's observations")
    frozen = _object(run_dir / files["frozen"], frozen_bytes, "a run's frozen.json")
    run_id = frozen.get("runId")
    body = {"runId": run_id, "frozen": frozen_sha, "observations": obs_sha}
    return {
        "schemaVersion": h.version_of("integrity"),
        "runId": run_id,
        "frozenSha256": frozen_sha,
        "observationsSha256": obs_sha,
        "evidenceDigest": digest(body),
        "frozen": frozen,
    }


def session_end(ctx: StudyContext, args: argparse.Namespace) -> int:
    """Write the run's ``integrity.json`` (atomically), then record the end in the ledger; as
    with the start, a crash between the two is resumed by the same command run again."""
    from prereg.ledger import LedgerConflict

    h = HandOff.of(ctx)
    now = _now(args)
    b = validate_bundle(ctx, args.bundle)
    run_dir = Path(args.run_dir)
    integrity_path = run_dir / h.raw["runFiles"]["integrity"]
    ev = evidence(h, run_dir)
    frozen = ev.pop("frozen")
    if frozen.get("bundleDigest") != b.digest:
        raise h.refuse(
            "bundleDigest",
            f"{run_dir}: the run was started under bundle {frozen.get('bundleDigest')}, not"
            f" {b.digest}",
        )
    for name in ("calls", "tokens"):
        if int(getattr(args, name)) < 0:
            raise UserError(f"--{name}: must not be negative")
    from prereg.ledger import usd_amount

    usd = usd_amount(args.usd, "--usd")
    path = h.ledger_path(args)
    keys = {
        "run_id": ev["runId"],
        "evidence_digest": ev["evidenceDigest"],
        "calls": int(args.calls),
        "tokens": int(args.tokens),
        "usd": usd,
        "at": iso_ms(now),
        "at_ms": ms(now),
    }
    data = canonical_bytes_nl(ev)
    resumed = False
    with _open_ledger(h, path) as led:
        try:
            led.end_session(**keys, record=False)
        except LedgerConflict as exc:
            raise _conflict(h, exc) from None
        resumed = _already_written(integrity_path, data)
        if not resumed:
            write_new(integrity_path, data)
        try:
            led.end_session(**keys)
        except BaseException as exc:
            if not resumed:
                _unlink_quietly(integrity_path)
            if isinstance(exc, LedgerConflict):
                raise _conflict(h, exc) from None
            raise
    _out(
        f"session {ev['runId']!r} ended; spend {args.calls} calls, {args.tokens} tokens, USD {usd}"
    )
    _out(f"  evidence digest (trust it in the score config): {ev['evidenceDigest']}")
    return 0


def ledger_state(path: Path) -> dict[str, Any]:
    from prereg.ledger import open_existing

    led = open_existing(path)
    if led is None:
        raise UserError(f"{path}: no ledger there (nothing has been frozen under this root)")
    with led:
        return led.state()


def ledger_show(ctx: StudyContext, args: argparse.Namespace) -> int:
    h = HandOff.of(ctx)
    path = h.ledger_path(args)
    state = ledger_state(path)
    if getattr(args, "json", False):
        _out(json.dumps(state, indent=2, ensure_ascii=False))
        return 0
    _out(f"ledger {path} (schema version {state['ledgerSchemaVersion']})")
    _out(f"seeds frozen: {len(state['seeds'])}")
    for s in state["seeds"]:
        _out(f"  {s['seed']}: corpus {s['corpusDigest']}, frozen {s['frozenAt']}")
        _out(f"    preregistration {s['preregistrationDigest']}, bundle {s['bundleDigest']}")
    _out(f"sessions: {len(state['sessions'])}")
    aborts = {a["runId"]: a for a in state["aborts"]}
    for s in state["sessions"]:
        a = aborts.get(s["runId"])
        end = (
            f"ended, evidence {s['evidenceDigest']}; {s['calls']} calls, {s['tokens']} tokens,"
            f" USD {s['usd']}"
            if s["evidenceDigest"]
            else f"aborted {a['at']} ({a['reason']}); {a['calls']} calls, {a['tokens']} tokens,"
            f" USD {a['usd']}"
            if a
            else "not ended"
        )
        _out(f"  {s['runId']} ({s['seed']}): started {s['startedAt']}; {end}")
    sp = state["spend"]
    _out(f"recorded spend: {sp['calls']} calls, {sp['tokens']} tokens, USD {sp['usd']}")
    _out(f"events: {len(state['events'])}")
    for e in state["events"]:
        _out(
            f"  {e['n']}. {e['kind']} {e['seed']}{' ' + e['runId'] if e['runId'] else ''} at {e['at']}"
        )
    return 0


HANDOFF_COMMANDS = {
    "approval_template": approval_template,
    "bundle": bundle,
    "validate_bundle": validate_bundle_command,
    "dry_run_ledger": dry_run_ledger,
    "ledger_freeze": ledger_freeze,
    "session_start": session_start,
    "session_end": session_end,
    "ledger_show": ledger_show,
}


def registered_plan(ctx: StudyContext, rows: int) -> tuple[bool, list[str], dict[str, Any]]:
    """(within, lines, summary) of the registered worst case (``hand-off-budget``) against the
    fresh-ledger allowance, the study budget and the shared cap less the registered study
    floor: what ``dry-run`` decides and ``prepare`` enforces before anything is written."""
    h = HandOff.of(ctx)
    need = worst_case(h, rows)
    allow = {k: _decimal(h.raw["allowance"][k], f"allowance {k}") for k in need}
    b = h.ec.budget
    study = {k: _decimal(b["study"][k], f"budget study {k}") for k in need}
    cap = _decimal(b["sharedCapUsd"], "sharedCapUsd")
    floor = _decimal(b["floorsUsd"]["study"], "floorsUsd.study")
    shared = cap - floor - need["usd"]
    over = [k for k in need if need[k] > allow[k] or need[k] > study[k]]
    within = not over and shared >= 0
    lines = [
        f"  {k}: worst case {need[k]:,}; allowance {allow[k]:,} (budget {study[k]:,});"
        f" headroom {allow[k] - need[k]:,} ({'ok' if k not in over else 'EXCEEDED'})"
        for k in ("calls", "tokens", "usd")
    ]
    lines.append(
        f"  shared cap USD {cap} − registered study floor {floor} − reserved {need['usd']} ="
        f" {shared} ({'ok' if shared >= 0 else 'EXCEEDED'})"
    )
    # The registered tokens at the reservation floor need not give the registered USD (the
    # source's 19.96M tokens at USD 0.10 per million is 1.996, its stated USD 1.706): say so,
    # and what the plan would be at that figure; the decision stays on the registered one.
    price = _decimal(
        b["reservationFloorUsdPerMillionTokens"], "reservationFloorUsdPerMillionTokens"
    )
    at_floor = need["tokens"] * price / Decimal(1_000_000)
    if at_floor != need["usd"]:
        left, cap_left = allow["usd"] - at_floor, cap - floor - at_floor
        ok = at_floor <= allow["usd"] and at_floor <= study["usd"] and cap_left >= 0
        lines.append(
            f"  usd at the reservation floor: {need['tokens']:,} tokens × {price} per 1M ="
            f" {at_floor.normalize():f}, not the registered {need['usd']} (the plan is decided on"
            f" the registered figure; at {at_floor.normalize():f} the headroom would be"
            f" {left.normalize():f} and the shared cap {cap_left.normalize():f} left:"
            f" {'ok' if ok else 'EXCEEDED'})"
        )
    summary = {
        "worstCase": {k: _json_num(v) for k, v in need.items()},
        "allowance": {k: _json_num(v) for k, v in allow.items()},
        "sharedHeadroomUsd": _json_num(shared),
        "usdAtReservationFloor": _json_num(at_floor),
        "within": within,
        "exceeded": over + ([] if shared >= 0 else ["sharedCap"]),
    }
    return within, lines, summary


def _json_num(d: Decimal):
    return int(d) if d == d.to_integral_value() else float(d)


def refuse_over_budget(ctx: StudyContext, rows: int) -> None:
    """``prepare``'s check: a plan whose registered worst case exceeds a limit is refused."""
    within, lines, summary = registered_plan(ctx, rows)
    if not within:
        h = HandOff.of(ctx)
        raise UserError(
            f"{h.code('budgetExceeded')}: the registered worst case exceeds"
            f" {', '.join(summary['exceeded'])} (constant hand-off-budget against the budget);"
            " nothing was prepared",
            problems=[ln.strip() for ln in lines],
        )
