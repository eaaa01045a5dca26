"""The ``prereg`` command line.

    prereg [--project DIR] compile [STUDY ...] [--language]
    prereg [--project DIR] check [--language]
    prereg [--project DIR] diff OLD.yaml NEW.yaml [--format text|markdown|json]
    prereg [--project DIR] diff --against GIT_REF [STUDY] [--format ...]
    prereg [--project DIR] seal STUDY
    prereg sign-statement STATEMENT --key PEM [--out ENVELOPE]
    prereg verify-statement ENVELOPE --public-key PEM [--statement STATEMENT]
    prereg [--project DIR] <study-id> <command> ...   (its engine's commands and its spec's)

A user's mistake prints ``error: ...`` (one line per problem) and exits 2; it never prints a
traceback.  Every study command also takes ``--json`` (its summary as one JSON object on
stdout) and ``--quiet`` (no progress on stderr); exit statuses are those of :mod:`prereg.exits`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from prereg import __version__, exits
from prereg.console import Console
from prereg.errors import UserError

EXIT_USER = exits.USAGE


def _iso_datetime(text: str) -> str:
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date-time: {text!r}") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"date-time needs a zone (Z or +hh:mm): {text!r}")
    return text


_INTEGER = re.compile(r"-?[0-9]+")


def _integer(text: str) -> int:
    """An integer option: ASCII digits with an optional minus sign, within ±(2^53 − 1), the
    range JSON carries exactly (what a command writes, its seeds and counts, is JSON).  Not
    Python's ``int``, which takes other scripts' digits, spaces and underscores and any size."""
    from prereg.records import MAX_SAFE_INTEGER, integer_out_of_range

    if not _INTEGER.fullmatch(text):
        raise ValueError(text)  # argparse: "invalid int value: '...'"
    if len(text.lstrip("-")) > 20 or abs(int(text)) > MAX_SAFE_INTEGER:
        raise argparse.ArgumentTypeError(integer_out_of_range(text))
    return int(text)


_integer.__name__ = "int"


def _integer_list(text: str) -> list[int]:
    items = [x.strip() for x in text.split(",")]  # an empty item ("1,,2", "1,") is refused
    if not all(_INTEGER.fullmatch(x) for x in items):
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}")
    return [_integer(x) for x in items]


def _path(text: str) -> str:
    """A path option: not empty (``Path("")`` is the current folder, so an empty --out named
    the folder the command ran in)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path; name a file or folder")
    return text


_path.__name__ = "path"


ARG_TYPES = {
    "string": str,
    "integer": _integer,
    "number": float,
    "path": _path,
    "datetime": _iso_datetime,
    "integer_list": _integer_list,
}


# the last refusal of this process (a usage error or a UserError), for the JSON answer of a
# command run with --json that ended before printing its own (:func:`main`)
_LAST_ERROR: dict[str, Any] = {}


class _Once(argparse.Action):
    """An option of one value, of any command: given twice, it is refused (argparse would keep
    the last silently: score would read one of two files named, compile one of two projects).
    :class:`_Parser` makes it the action of every option that stores a value."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given_once", set())
        if self.dest in seen:
            parser.error(
                f"argument {option_string}: given twice; it takes one value (an option the"
                " command reads several times says so in its help)"
            )
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    """argparse with suggestions: a misspelt command, study or option gets "did you mean";
    an option of one value given twice is refused (:class:`_Once`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _Once)
        self.register("action", "store", _Once)

    def error(self, message: str):
        import difflib
        import re

        hint = ""
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(2)) or [
                c.strip() for c in m.group(2).split(",") if c.strip()
            ]
            if not choices:
                message = f"there is no command {m.group(1)!r}: nothing is declared here"
            close = difflib.get_close_matches(m.group(1), choices, n=1, cutoff=0.6)
            if close:
                hint = f"; did you mean {close[0]!r}?"
        m = re.search(r"unrecognized arguments: (\S+)", message)
        if m and m.group(1).startswith("--"):
            hint = self._option_hint(m.group(1).split("=")[0], difflib)
        _LAST_ERROR["message"] = f"{self.prog}: {message + hint}"
        super().error(message + hint)

    def parse_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_args(args, namespace)

    def _option_hint(self, option: str, difflib) -> str:
        """What to say of an option no parser on the way took: the command given has it under
        another spelling, or it is an option of another command (argparse reports the
        unrecognized arguments of a command from the top parser, which knows all of them)."""

        def long_options(q):
            return {o for a in q._actions for o in a.option_strings if o[:2] == "--"}

        commands = {}
        for a in self._actions:
            if isinstance(a, argparse._SubParsersAction):
                commands.update(a.choices)
        given = next((t for t in getattr(self, "_argv", ()) if t in commands), None)
        own = long_options(self) | (long_options(commands[given]) if given else set())
        elsewhere = sorted(
            c for c, q in commands.items() if c != given and option in long_options(q)
        )
        if given and elsewhere and option not in own:
            others = ", ".join(map(repr, elsewhere[:3])) + (
                " and others" if len(elsewhere) > 3 else ""
            )
            verb = "has" if len(elsewhere) == 1 else "have"
            return (
                f"; {given!r} has no option {option} ({others} {verb} it; see"
                f" `{self.prog} {given} --help`)"
            )
        close = difflib.get_close_matches(option, sorted(own - {option}), n=1, cutoff=0.7)
        return f"; did you mean {close[0]!r}?" if close else ""


def _base_parser(add_help: bool = True) -> argparse.ArgumentParser:
    p = _Parser(
        prog="prereg",
        add_help=add_help,
        description="Compile study preregistrations (YAML specs) into validated, digest-pinned code and "
        "documents, and run the compiled studies.",
        epilog="Study commands: `prereg <study-id> --help` lists a study's commands (its engine's, changed or added to by its spec).",
    )
    p.add_argument("--version", action="version", version=f"prereg {__version__}")
    p.add_argument(
        "--project",
        metavar="DIR",
        help="the project folder (default: the nearest folder with spec/studies/)",
    )
    return p


def _add_core_commands(sub) -> None:
    c = sub.add_parser(
        "compile",
        help="validate specs and write generated/",
        description="Validate spec/studies/*.yaml against the language and the semantic checks, render the "
        "templates and write generated/<study>/ (only changed files are rewritten). Nothing is written when "
        "any spec has a problem.",
    )
    c.add_argument(
        "studies", nargs="*", metavar="STUDY", help="study ids to compile (default: all)"
    )
    c.add_argument(
        "--language",
        action="store_true",
        help="also regenerate generated/prereg.schema.json with LinkML and docs/language.md",
    )
    c.add_argument(
        "--quiet",
        action="store_true",
        help="no line per file written; the summary line and any warning or error still print",
    )
    k = sub.add_parser(
        "check",
        help="verify generated/ is exactly what the specs compile to, and sealed studies against their seals",
        description="Recompile in memory and compare with generated/. Exit 0 when identical; 1 with a unified "
        "diff naming each stale, edited, missing or unexpected file. For each sealed study "
        "(spec/studies/<id>.seal.json), also exit 1 naming each registered path that changed since the seal "
        "without a later amendment declaring it. Then, for each study with sizing claims, where they stand: "
        "the newest diagnose document (DIAGNOSE.json, any *diagnose*.json in the project, or the files "
        "--diagnosis names) of the study's design as it is now; a warning names each failing claim, and says "
        "when every diagnosis is of an earlier design (a note when there is none). These do not change the exit "
        "status unless --strict is given.",
    )
    k.add_argument(
        "--diagnosis",
        action="append",
        type=_path,
        metavar="FILE",
        help="read the sizing claims from this diagnose document (repeat for several) instead of"
        " searching the project",
    )
    k.add_argument(
        "--strict",
        action="store_true",
        help="also exit 1 when a sizing claim fails, or a study with claims has no diagnosis of its"
        " design as it is now",
    )
    k.add_argument(
        "--language",
        action="store_true",
        help="also regenerate the language schema with LinkML and the language reference"
        " (docs/language.md), and compare bytes",
    )
    k.add_argument(
        "--json",
        dest="json_summary",
        action="store_true",
        help="print the result as one JSON object on stdout",
    )
    m = sub.add_parser(
        "demo",
        help="run every study on the bundled demo inputs and write reports",
        description="Check the specs, then run each study's commands on the bundled inputs (examples/demo.json, "
        "or the steps of the plan --plan names) into OUT, write one HTML and one Markdown report per study "
        "(plots inline, the registered PREREG.md beside the findings), and end with OUT/index.html.",
    )
    m.add_argument(
        "--out", default="out/demo", type=_path, help="output folder (default: out/demo)"
    )
    m.add_argument(
        "--force", action="store_true", help="replace an earlier run in the output folder"
    )
    m.add_argument(
        "--plan",
        type=_path,
        metavar="FILE",
        help="run the steps of this plan instead (the form of examples/demo.json: a project's own"
        " studies, their commands and the reports)",
    )
    d = sub.add_parser(
        "diff",
        help="semantic difference between two versions of a spec",
        description="List every semantic change from OLD to NEW by path, each classified as "
        "registered (changes what the study does or decides) or editorial (prose and record-keeping). "
        "With --against GIT_REF, compare the specs (or one STUDY's) as committed at that revision with "
        "the working tree. A registered change is declared when an amendment of NEW after OLD's "
        "version names its path (as `prereg check` holds a sealed study). --format json keys are "
        "camelCase like every other output. Exit 0 when every registered change is declared by an "
        "amendment (or there is none), 1 when one is not, 2 on an error, and 2 when NEW does not "
        "compile (the changes are listed, then each problem at its line, as compile gives it).",
    )
    d.add_argument(
        "specs",
        nargs="*",
        type=_path,
        metavar="SPEC",
        help="OLD.yaml NEW.yaml; with --against, an optional STUDY id",
    )
    d.add_argument(
        "--against", metavar="GIT_REF", help="compare with the specs at this git revision"
    )
    d.add_argument(
        "--format",
        choices=["text", "markdown", "json"],
        default="text",
        help="text (default), markdown (for a pull-request comment) or json",
    )
    i = sub.add_parser(
        "init",
        help="start a new study spec that compiles",
        description="Write spec/studies/<STUDY>.yaml: the commented factorial starter (a crossed design "
        "with items, attempts, metrics, a gate, a family, sizing claims, a hypothesis, a decision, scenarios and a "
        "diagnose command), or with --from a "
        "copy of an existing study of the project (any engine) as a new draft. The project is --project, "
        "the nearest one upwards, or the current folder. Never overwrites.",
    )
    i.add_argument("study", metavar="STUDY", help="the new study id")
    i.add_argument("--from", dest="source", metavar="STUDY", help="copy this study of the project")
    i.add_argument(
        "--engine",
        metavar="KIND",
        help="the engine: factorial (default) writes the starter; another kind copies a study of"
        " that engine (the project's, else one prereg ships)",
    )
    t = sub.add_parser(
        "tables",
        help="write the per-cell figures, estimates, contrasts and analyses of a SCORE.json as CSV "
        "or Parquet",
        description="Flatten a SCORE.json (any engine that scores cells) into cells, estimates, "
        "contrasts and analyses tables (and auroc where present): nested figures become dotted "
        "column names (an analysis' options.lower, exact.estimate, counts.n1). "
        "--csv DIR writes <table>.csv, --parquet DIR <table>.parquet (needs prereg[tables]); "
        "all tables are created or none, never overwritten.",
    )
    t.add_argument("score", metavar="SCORE.json", type=_path, help="the score document")
    t.add_argument("--csv", metavar="DIR", type=_path, help="folder to write the CSV tables into")
    t.add_argument(
        "--parquet", metavar="DIR", type=_path, help="folder to write Parquet tables into"
    )
    t.add_argument(
        "--json", dest="json_summary", action="store_true", help="print what was written as JSON"
    )
    co = sub.add_parser(
        "completion",
        help="print the shell completion script (bash, zsh or fish)",
        description="Print a script (made by shtab from prereg's own parsers) that completes "
        "prereg's commands and options, and the studies of the project in the current folder (or "
        "--project) with their commands and options, as they are when it is made. Enable it with "
        '`eval "$(prereg completion bash)"` in ~/.bashrc, `prereg completion zsh` in ~/.zshrc the '
        "same way, or `prereg completion fish | source` in fish's config.fish.",
    )
    co.add_argument("shell", choices=["bash", "zsh", "fish"], help="the shell")
    s = sub.add_parser(
        "seal",
        help="register a study (a draft) and pin its registered content in spec/studies/<id>.seal.json",
        description="Register and seal a study in one step, after `prereg compile`: a draft's status "
        "is set to registered (that line of the spec only) and generated/ compiled again; then "
        "spec/studies/<STUDY>.seal.json is written: the version sealed, the registered content "
        "(prose, version, status and amendments left out) and its digest. When the study is not "
        "ready, every problem is listed at once and nothing changes. Afterwards `prereg check` fails "
        "when the registered content changes without a new amendment naming the changed paths. A seal is "
        "never overwritten.",
    )
    s.add_argument("study", metavar="STUDY", help="the study id")
    x = sub.add_parser(
        "export",
        help="write a study's registration in the OSF or PRP-QUANT template (Markdown) or as JSON",
        description="Lay out the study's registration (checked as compile checks it, in the words "
        "of its PREREG.md) in the sections of the OSF preregistration template (--format osf) or "
        "the items of the PRP-QUANT template (--format prp-quant), as Markdown, or both as JSON "
        "(--format json); each stamped with the spec digest. Printed, or written to --out (created, "
        "never overwritten).",
    )
    x.add_argument("study", metavar="STUDY", help="the study id")
    x.add_argument("--format", required=True, metavar="FORMAT", help="osf, prp-quant or json")
    x.add_argument("--out", metavar="FILE", type=_path, help="the file to create (default: print)")
    la = sub.add_parser(
        "ledger-abort",
        help="close a collection session that can never end as recorded, with its reason and spend",
        description="Record in the seed ledger LEDGER that session RUN_ID, started and never ended "
        "(its run folder lost, the collector gone, a start interrupted under an older prereg), is "
        "aborted: its reason, the spend it attested and the instant, in one transaction with an "
        "event of the append-only log. The session's row is left as it was; `ledger-show` lists "
        "the abort, later sessions of the corpus may start, and a score from the lineage lists "
        "the aborted run (abortedRuns) and scores the others. Refused: a run the ledger does not "
        "know, one that ended or was aborted, an instant before its start. Nothing else is "
        "written; no run file is touched.",
    )
    la.add_argument(
        "ledger", metavar="LEDGER", type=_path, help="the ledger database (an existing one)"
    )
    la.add_argument("run_id", metavar="RUN_ID", help="the started session to abort")
    la.add_argument("--reason", required=True, help="why the session cannot end (recorded)")
    # integers as every command takes them (session-end's too): ASCII digits within ±(2^53 - 1),
    # which the ledger's SQLite integers hold (a larger one was an OverflowError traceback)
    la.add_argument("--calls", required=True, type=_integer, help="calls the session made")
    la.add_argument("--tokens", required=True, type=_integer, help="tokens the session used")
    la.add_argument("--usd", required=True, help="the session's attested spend in USD (a decimal)")
    la.add_argument("--now", help="the instant recorded (ISO 8601 with a zone; default: the clock)")
    _add_attest_commands(sub)


def _add_attest_commands(sub) -> None:
    ss = sub.add_parser(
        "sign-statement",
        help="sign an in-toto statement (a freeze's <stem>.intoto.json) as a DSSE envelope",
        description="Write a DSSE envelope (payload type application/vnd.in-toto+json) whose "
        "payload is STATEMENT, byte for byte, signed with the private key in the PEM file --key "
        "(Ed25519, ECDSA or RSA, unencrypted). Default --out: beside the statement, "
        "<stem>.intoto.dsse.json. Never overwritten. Needs prereg[sign].",
    )
    ss.add_argument(
        "statement", metavar="STATEMENT", type=_path, help="the in-toto statement (JSON)"
    )
    ss.add_argument(
        "--key", required=True, metavar="PEM", type=_path, help="the private key to sign with"
    )
    ss.add_argument("--out", metavar="ENVELOPE", type=_path, help="the envelope to create")
    vs = sub.add_parser(
        "verify-statement",
        help="check a DSSE envelope's signature and that it carries the statement beside it",
        description="Check that ENVELOPE's signature verifies with the public key in the PEM file "
        "--public-key and that its payload is, byte for byte, the statement it signs (--statement; "
        "default: the <stem>.intoto.json beside a <stem>.intoto.dsse.json). Exit 0 when both hold, "
        "2 naming what does not. Needs prereg[sign].",
    )
    vs.add_argument("envelope", metavar="ENVELOPE", type=_path, help="the DSSE envelope (JSON)")
    vs.add_argument(
        "--public-key", required=True, metavar="PEM", type=_path, help="the signer's public key"
    )
    vs.add_argument(
        "--statement", metavar="STATEMENT", type=_path, help="the statement it should carry"
    )
    for q in (ss, vs):
        q.add_argument(
            "--json", dest="json_summary", action="store_true", help="print the outcome as JSON"
        )


def _cmd_sign_statement(project, args) -> int:
    from prereg.attest import _read, envelope_path, sign_statement
    from prereg.files import refuse_existing, write_new

    out = args.out if args.out is not None else envelope_path(args.statement)
    refuse_existing(out)
    data = sign_statement(_read(args.statement, "statement"), args.key, args.statement)
    write_new(out, data)
    con = Console(json_mode=args.json_summary)
    con.line(f"{out}: {args.statement} signed (a DSSE envelope) with {args.key}")
    con.summary({"envelope": str(out), "statement": str(args.statement)})
    con.finish(exits.OK)
    return exits.OK


def _cmd_verify_statement(project, args) -> int:
    from prereg.attest import verify_envelope

    done = verify_envelope(args.envelope, args.public_key, args.statement)
    con = Console(json_mode=args.json_summary)
    con.line(
        f"{args.envelope}: the signature verifies with {args.public_key} (key id"
        f" {done['keyid']}); its payload is {done['statement']}"
    )
    con.summary({**done, "verified": True})
    con.finish(exits.OK)
    return exits.OK


def _cmd_ledger_abort(project, args) -> int:
    from datetime import UTC, datetime, timedelta

    from prereg.engines.reachability.budget import iso_ms, parse_instant
    from prereg.ledger import LedgerConflict, open_existing, usd_amount

    now = parse_instant(args.now, "--now") if args.now else datetime.now(UTC)
    for name in ("calls", "tokens"):
        if getattr(args, name) < 0:
            raise UserError(f"--{name}: must not be negative")
    usd = usd_amount(args.usd, "--usd")
    if not args.reason.strip():
        raise UserError("--reason: say why the session cannot end (it is recorded)")
    led = open_existing(args.ledger)
    if led is None:
        raise UserError(f"{args.ledger}: no ledger there")
    at_ms = (now - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
    try:
        with led:
            row = led.abort_session(
                run_id=args.run_id,
                reason=args.reason,
                calls=args.calls,
                tokens=args.tokens,
                usd=usd,
                at=iso_ms(now),
                at_ms=at_ms,
            )
    except LedgerConflict as exc:
        raise UserError(f"{exc.kind}: {args.ledger}: {exc.message}") from None
    print(
        f"aborted session {row['run_id']!r} at {row['at']} in {args.ledger}: {row['reason']};"
        f" spend {row['calls']} calls, {row['tokens']} tokens, USD {row['usd']}"
    )
    return exits.OK


def _cmd_export(project, args) -> int:
    from prereg.compiler.export import export
    from prereg.files import write_new

    text = export(project, args.study, args.format)
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_new(args.out, text.encode("utf-8"))
        print(f"wrote {args.out}: {args.study} in the {args.format} form")
    return exits.OK


def _cmd_compile(project, args) -> int:
    from prereg.compiler import build, langdoc, language

    if args.language:
        schema = language.render_schema(project)
        build.write_generated(project, {}, prune=False)
        target = project.root / "generated/prereg.schema.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != schema:
            target.write_bytes(schema)
            print("wrote generated/prereg.schema.json")
        if langdoc.write_docs(project):
            print(f"wrote {langdoc.DOCS.as_posix()}")
        from prereg.compiler import methodsdoc

        if methodsdoc.write(project):
            print(f"wrote {methodsdoc.DOCS.as_posix()}")
    loaded = build.load_all(project, args.studies or None)  # loaded once: rendered, then read
    _refuse_unsealed_changes(project, loaded)
    files = {rel: text.encode("utf-8") for rel, text in build.render_studies(loaded).items()}
    if not args.language and language.refresh_copy(project) and not args.quiet:
        print("wrote generated/prereg.schema.json (the language this prereg speaks)")
    if args.studies:
        changed = build.write_generated(project, files, prune=False)
    else:
        changed = build.write_generated(project, files)
    for rel in changed if not args.quiet else ():
        print(f"wrote {rel}" if rel in files else f"removed {rel}")
    _warn_unready(loaded)
    from prereg.compiler.project import package_name

    packages = {rel.split("/")[1] for rel in files}
    studies = sorted(p.stem for p in project.spec_files() if package_name(p.stem) in packages)
    print(
        f"compiled {len(studies)} stud{'y' if len(studies) == 1 else 'ies'}: {', '.join(studies)}; {len(changed)} file(s) changed"
    )
    return 0


def _refuse_unsealed_changes(project, studies) -> None:
    """Compile refuses what every study command would: a sealed study whose registered
    content changed with no amendment declaring it (or whose seal was removed or altered),
    with the lines `prereg check` gives, before anything is written."""
    from prereg.compiler import seal

    problems = []
    for study in studies:
        found, where, lost = seal.last_seal(project.root, study.id)
        if found is None:
            continue
        problems.extend(lost + seal.check_study(study, found, where))
    if problems:
        raise UserError(
            "sealed registered content changed without an amendment declaring it; nothing was"
            " written (raise version, set status: amended and name each changed path in a new"
            " amendment)",
            problems=problems,
        )


def _warn_unready(studies) -> None:
    """Warnings (on stderr) for what keeps a loaded study from being registered or sealed."""
    from prereg.compiler.readiness import gaps

    for study in studies:
        for pointer, message in gaps(study.data):
            sys.stderr.write(f"warning: {study.loaded.where(pointer)}: at {pointer}: {message}\n")


def _cmd_check(project, args) -> int:
    from prereg.compiler import build, langdoc, language, seal

    problems = []
    stale = language.schema_is_current(project) or language.copy_problem(project)
    if stale:
        problems.append(stale + "\n")
    elif args.language:
        want = language.render_schema(project)
        if (project.root / "generated/prereg.schema.json").read_bytes() != want:
            problems.append(
                "stale or edited: generated/prereg.schema.json (run prereg compile --language)\n"
            )
    if args.language:
        from prereg.compiler import methodsdoc

        problems.extend(langdoc.docs_problems(project))
        problems.extend(methodsdoc.problems(project))
    studies = build.load_all(project)
    files = {rel: text.encode("utf-8") for rel, text in build.render_studies(studies).items()}
    problems.extend(build.diff_generated(project, files))
    sealed = seal.check_seals(project, studies)
    con = Console(json_mode=args.json_summary)
    if problems:
        for p in problems:
            con.line(p.rstrip("\n"))
        con.line(
            f"check failed: {len(problems)} generated file(s) differ from what the specs compile to; run prereg compile"
        )
    if sealed:
        for p in sealed:
            con.line(p)
        con.line(
            f"check failed: {len(sealed)} problem(s) with sealed registered content; "
            "declare each changed path in a new amendment"
        )
    code = exits.FAILED if problems or sealed else exits.OK
    if not code:
        con.line(f"generated/ matches the specs ({len(files)} files)")
    stands = _claims_standing(project, studies, args.diagnosis, con)
    unmet = [s.study for s in stands if s.state != "holds"]
    if args.strict and unmet and not code:
        con.line(f"check failed (--strict): sizing claims not shown to hold for {', '.join(unmet)}")
        code = exits.FAILED
    con.summary(
        {
            "ok": not code,
            "files": len(files),
            "studies": sorted(s.id for s in studies),
            "differences": problems,
            "sealProblems": sealed,
            "claims": [s.summary() for s in stands],
        }
    )
    con.finish(code, command="check")
    return code


def _claims_standing(project, studies, named, con) -> list:
    """Where each study's sizing claims stand (:mod:`prereg.diagnose.standing`), printed."""
    from pathlib import Path

    from prereg.diagnose import standing

    if not any(s.data.get("claims") for s in studies):
        return []
    if named:
        paths = [Path(p) for p in named]
        missing = [p for p in named if not Path(p).exists()]  # a folder is read, and refused
        if missing:
            raise UserError(f"--diagnosis {missing[0]}: no such file")
        found, bad = standing.read_documents(paths, project.root)
        if bad:
            raise UserError("--diagnosis: " + bad[0])
    else:
        found, _ = standing.read_documents(standing.candidate_files(project.root), project.root)
    searched = "among the --diagnosis files" if named else "in the project"
    stands = standing.standings(studies, found, searched)
    for s in stands:
        for line in s.lines(s.study):
            con.line(line)
    return stands


def _cmd_demo(project, args) -> int:
    from pathlib import Path

    from prereg.demo import run_demo

    plan = None if args.plan is None else Path(args.plan)
    return run_demo(project, Path(args.out), force=args.force, plan=plan)


def _cmd_diff(project, args) -> int:
    from pathlib import Path

    from prereg.compiler import diff

    if args.against is not None:
        if len(args.specs) > 1:
            raise UserError("diff --against GIT_REF takes at most one STUDY")
        study = Path(args.specs[0]).name.removesuffix(".yaml") if args.specs else None
        comparisons = diff.compare_against(project, args.against, study)
        news = [
            (project.spec_file(c.study), c.new_label)
            for c in comparisons
            if project.spec_file(c.study).exists()
        ]
    else:
        if len(args.specs) != 2:
            raise UserError("diff needs OLD.yaml NEW.yaml (or --against GIT_REF [STUDY])")
        old_file, new_file = args.specs
        old = diff.read_pinned_spec_file(old_file, project)
        new = diff.read_pinned_spec_file(new_file, project)
        study = str(new.get("id") or Path(new_file).stem)
        comparisons = [diff.compare(old, new, study, old_file, new_file)]
        news = [(Path(new_file), new_file)]
    sys.stdout.write(diff.RENDERERS[args.format](comparisons))
    # the changes are listed either way; a NEW spec that compile would refuse is an error
    refused = {label: diff.compile_problems(path, project, label) for path, label in news}
    problems = [p for found in refused.values() for p in found]
    if problems:
        files = ", ".join(label for label, found in refused.items() if found)
        raise UserError(
            f"{files}: does not compile ({len(problems)}"
            f" problem{'' if len(problems) == 1 else 's'}); the changes above are to a spec"
            " that `prereg compile` refuses",
            problems=problems,
        )
    return diff.exit_code(comparisons)


def _cmd_init(project, args) -> int:
    from prereg.compiler.init import init_study, project_for_init

    project = project_for_init(args.project)
    path = init_study(project, args.study, args.source, engine=args.engine)
    print(f"wrote {project.rel(path)}")
    print(f"next: edit it, then `prereg compile {args.study}` and `prereg {args.study} --help`")
    return 0


def _cmd_tables(project, args) -> int:
    from prereg.outputs.tables import write_tables

    con = Console(json_mode=args.json_summary)
    written = write_tables(args.score, args.csv, args.parquet)
    for p in written:
        con.line(f"wrote {p}")
    con.summary({"outputs": [str(p) for p in written]})
    con.finish(exits.OK, command="tables")
    return exits.OK


def _cmd_completion(project, args) -> int:
    from prereg.completion import script

    sys.stdout.write(script(args.shell, project))
    return exits.OK


def _cmd_seal(project, args) -> int:
    from prereg.compiler import seal

    path, sealed, registered = seal.seal_study(project, args.study)
    spec = project.rel(project.spec_file(args.study))
    if registered:
        print(
            f"registered {sealed['study']}: status set to registered in {spec}; generated/ compiled"
        )
    print(
        f"sealed {sealed['study']} version {sealed['version']}: {project.rel(path)} ({sealed['digest']})"
    )
    print(
        f"next: commit {spec}, {project.rel(path)} and generated/; from now on a registered change"
        " needs an amendment naming its path (`prereg check` and `prereg diff` say which)"
    )
    _warn_claims_at_seal(project, args.study)
    return 0


def _warn_claims_at_seal(project, study_id: str) -> None:
    """Sealing a design whose sizing claims fail, or were never diagnosed as registered, is
    allowed; it is said on stderr (as `prereg check` says it)."""
    from prereg.compiler import build
    from prereg.diagnose import standing

    studies = build.load_all(project, [study_id])
    found, _ = standing.read_documents(standing.candidate_files(project.root), project.root)
    for s in standing.standings(studies, found):
        if s.state != "holds":
            for line in s.lines(s.study):
                sys.stderr.write(line + "\n")


def _study_parser(project, study_id: str, module) -> argparse.ArgumentParser:
    if not module.COMMANDS:
        raise UserError(
            f"study {study_id!r} has no commands (its engine provides none and its spec declares"
            " none)"
        )
    p = _Parser(
        prog=f"prereg {study_id}",
        description=f"Operator commands of {study_id} {module.VERSION}.",
    )
    add_study_commands(p.add_subparsers(dest="command", metavar="COMMAND", required=True), module)
    return p


def add_study_commands(sub, module) -> None:
    """A subparser for each of the study's commands (its arguments typed)."""
    for c in module.COMMANDS:
        cp = sub.add_parser(
            c["id"], help=c["summary"], description=c["description"] or c["summary"]
        )
        declared = {a["name"] for a in c["arguments"]}
        if "--json" not in declared:
            cp.add_argument(
                "--json",
                dest="json_summary",
                action="store_true",
                help="print the command's summary as one JSON object on stdout instead of text",
            )
        if "--quiet" not in declared:
            cp.add_argument(
                "--quiet", action="store_true", help="no progress on stderr (errors still go there)"
            )
        for a in c["arguments"]:
            name = a["name"]
            if a["kind"] == "flag":
                cp.add_argument(name, action="store_true", help=a["help"])
            elif a["kind"] == "option":
                cp.add_argument(
                    name,
                    type=ARG_TYPES[a["type"]],
                    required=bool(a["required"]),
                    help=a["help"],
                    action="append" if a.get("repeated") else _Once,
                )
            else:
                cp.add_argument(
                    name.replace("-", "_"),
                    metavar=name.upper(),
                    type=ARG_TYPES[a["type"]],
                    nargs=None if a["required"] else "?",
                    help=a["help"],
                )


def _prepare_study(project, study_id: str, argv: Sequence[str]):
    from prereg.study import load_generated

    module = load_generated(project, study_id)
    _refuse_missing_command(study_id, module, argv)
    args = _study_parser(project, study_id, module).parse_args(list(argv))
    command = next(c for c in module.COMMANDS if c["id"] == args.command)
    ctx = module.context(project_root=project.root)
    from prereg.engines import registry

    engine = registry.require(module.ENGINE, f"{module.SPEC_FILE}: study {study_id!r} uses an ")
    handlers = engine.commands()
    if command["handler"] not in handlers:
        raise UserError(
            f"the {module.ENGINE} engine has no handler {command['handler']!r} for command {args.command!r}"
        )
    args.project_root = project.root
    return module, args, ctx, handlers, command


def _refuse_missing_command(study_id: str, module, argv: Sequence[str]) -> None:
    """A study asked for a command its engine offers other studies (or ``diagnose``, which
    some engines never offer): refused with the reason, not with argparse's nearest name."""
    asked = next((a for a in argv if not a.startswith("-")), None)
    ids = [c["id"] for c in module.COMMANDS]
    if asked is None or asked in ids or "-h" in argv[:1] or "--help" in argv[:1]:
        return
    import importlib

    from prereg.engines import registry

    engine = registry.registry().get(module.ENGINE)
    if engine is None:
        return
    config = importlib.import_module(module.__name__ + ".constants").ENGINE_CONFIG
    why = engine.missing_command(config, asked)
    if why is None and asked == "diagnose" and "diagnose" not in engine.commands():
        why = f"the {module.ENGINE} engine offers no diagnose command"
    if why is not None:
        raise UserError(
            f"{module.SPEC_FILE}: study {study_id!r} has no {asked} command: {why}; its commands:"
            f" {', '.join(ids)}"
        )


def _run_study(project, study_id: str, argv: Sequence[str]) -> int:
    try:
        module, args, ctx, handlers, command = _prepare_study(project, study_id, argv)
    except UserError as exc:
        if "--json" in argv:  # refused before the command ran: still one JSON answer
            named = next((a for a in argv if not a.startswith("-")), None)
            con = Console(json_mode=True)
            con.summary({"error": exc.message, "problems": exc.problems})
            con.finish(exc.exit_code, study=study_id, command=named)
        raise
    con = Console(
        json_mode=bool(getattr(args, "json_summary", False)),
        quiet=bool(getattr(args, "quiet", False)),
    )
    args.console = con
    where = {"study": study_id, "command": args.command}
    # With --json, stdout holds the one JSON object: whatever a handler prints itself goes
    # to stderr instead.
    quiet_stdout = (
        contextlib.redirect_stdout(sys.stderr) if con.json_mode else contextlib.nullcontext()
    )
    from prereg.gcpause import relaxed

    try:
        try:
            _refuse_too_many_workers(args)
            with quiet_stdout, relaxed():
                code = int(handlers[command["handler"]](ctx, args) or 0)
        except MemoryError as exc:
            raise _out_of_memory(exc) from None
        except ValueError as exc:
            if not _too_big(exc):
                raise
            raise _out_of_memory(MemoryError(str(exc))) from None
    except UserError as exc:
        con.summary({"error": exc.message, "problems": exc.problems})
        con.finish(exc.exit_code, **where)
        raise
    con.finish(code, **where)
    return code


def _refuse_too_many_workers(args) -> None:
    """A study command's ``--workers`` beyond what this machine runs (every engine's
    ``--workers`` starts local processes, as many as it has tasks)."""
    workers = getattr(args, "workers", None)
    if isinstance(workers, int) and not isinstance(workers, bool):
        from prereg.runner import most_workers

        most = most_workers()
        if workers > most:
            raise UserError(
                f"--workers: {workers:,} worker processes; at most {most} on this machine (four"
                " a CPU, at least eight)"
            )


def _one_blas_thread() -> None:
    """Ask OpenBLAS for one thread unless the user asked for a number.

    Read once, when numpy first loads OpenBLAS, so this runs before any import of numpy. The
    matrices here are small (the audit's learners, the power plan's sums): a pool of threads
    only costs, about 0.1 CPU-s a numpy-importing process to start and keep spinning (25
    alternating runs of ``import numpy``: 0.31 against 0.20 CPU-s, the same wall time). The
    bytes written do not depend on the count (a test prepares the demo seed with 4 threads
    and gets the reference digests).
    """

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _tolerant_streams() -> None:
    """Make stdout and stderr survive any encoding (``PYTHONIOENCODING=ascii``, ``LANG=C``): a
    character the stream cannot encode is written as its escape (``\\u2265``) instead of
    raising UnicodeEncodeError in the middle of a command.  UTF-8 streams are left alone."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "utf-8"
        try:
            if codecs.lookup(encoding).name == "utf-8":
                continue
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, LookupError, ValueError, OSError):
            pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; with ``--json``, stdout holds exactly one JSON object whatever
    happens: the command's own answer, or, when it was refused before it could give one (a
    usage error, a refusal), ``{"error", "problems", "exitCode"}``."""
    from prereg import console

    _one_blas_thread()
    _tolerant_streams()
    argv = list(sys.argv[1:] if argv is None else argv)
    wants_json = "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv
    answered = console.JSON_ANSWERS[0]
    _LAST_ERROR.clear()
    try:
        from prereg.interrupts import terminate_as_interrupt

        with terminate_as_interrupt():
            code = _main(argv)
    except SystemExit as exc:  # argparse: a usage error (2), or --help / --version (0)
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        if not wants_json or code == 0 or console.JSON_ANSWERS[0] != answered:
            raise
    if wants_json and code != 0 and console.JSON_ANSWERS[0] == answered:
        con = console.Console(json_mode=True)
        con.summary(
            {
                "error": _LAST_ERROR.get("message", "refused (see stderr)"),
                "problems": list(_LAST_ERROR.get("problems", ())),
            }
        )
        con.finish(code)
    return code


def _main(argv: list[str]) -> int:
    parser = _base_parser()
    try:
        from prereg.console import progress_delay

        progress_delay()  # a bad PREREG_PROGRESS_DELAY is refused before any work
        pre, rest = _base_parser(add_help=False).parse_known_args(argv)
        from prereg.compiler.project import find_project

        first = next((a for a in rest if not a.startswith("-")), None)
        from prereg.compiler.project import CORE_COMMANDS

        if first is not None and first not in CORE_COMMANDS:
            project = find_project(pre.project)
            ids = [p.stem for p in project.spec_files()]
            if first in ids:
                idx = rest.index(first)
                return _run_study(project, first, rest[idx + 1 :])
        sub = parser.add_subparsers(dest="cmd", metavar="COMMAND")
        _add_core_commands(sub)
        try:
            project = find_project(pre.project)
            for sid in (p.stem for p in project.spec_files()):
                if sid in CORE_COMMANDS:
                    continue  # compile refuses such a spec; the command keeps its name
                sub.add_parser(
                    sid,
                    help=f"run a command of study {sid} (see `prereg {sid} --help`)",
                    add_help=False,
                )
        except UserError:
            project = None
        # the global options were taken from anywhere on the line (as a study command takes
        # them), so `prereg check --project DIR` is `prereg --project DIR check`
        args = parser.parse_args(rest)
        args.project = pre.project
        if args.cmd is None:
            parser.print_help()
            return EXIT_USER
        if (
            project is None
            and not (args.cmd == "diff" and args.against is None)
            and args.cmd
            not in (
                "init",
                "tables",
                "completion",
                "ledger-abort",
                "sign-statement",
                "verify-statement",
            )
        ):
            project = find_project(pre.project)
        commands = {
            "compile": _cmd_compile,
            "check": _cmd_check,
            "diff": _cmd_diff,
            "seal": _cmd_seal,
            "init": _cmd_init,
            "demo": _cmd_demo,
            "tables": _cmd_tables,
            "completion": _cmd_completion,
            "export": _cmd_export,
            "ledger-abort": _cmd_ledger_abort,
            "sign-statement": _cmd_sign_statement,
            "verify-statement": _cmd_verify_statement,
        }
        return commands[args.cmd](project, args)
    except UserError as exc:
        _LAST_ERROR.update(message=exc.message, problems=exc.problems)
        lines = exc.lines()
        print(f"error: {lines[0]}", file=sys.stderr)
        for line in lines[1:]:
            print(line, file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return exits.INTERRUPTED
    except ValueError as exc:
        # a path holding a NUL character (no shell passes one; an in-process call can), which
        # the system's calls refuse with ValueError wherever a command opens it
        held = [(i, a) for i, a in enumerate(argv, 1) if isinstance(a, str) and "\x00" in a]
        if "null byte" not in str(exc) or not held:
            raise
        i, arg = held[0]
        shown = repr(arg) if len(arg) <= 60 else repr(arg[:60]) + "…"
        message = f"argument {i} ({shown}) holds a NUL character, which no path may hold"
        _LAST_ERROR.update(message=message)
        print(f"error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return exits.BROKEN_PIPE
    except OSError as exc:
        # a path the system refuses where no reader or writer words it (a name past the
        # length limit, a loop of links): the file and the system's reason, never a traceback
        if exc.filename is None:
            raise
        message = f"{exc.filename}: {exc.strerror or exc}"
        _LAST_ERROR.update(message=message)
        print(f"error: {message}", file=sys.stderr)
        return exits.USAGE
    except MemoryError as exc:
        _LAST_ERROR.update(message=_out_of_memory(exc).message)
        print(f"error: {_out_of_memory(exc).message}", file=sys.stderr)
        return exits.USAGE


#: numpy's words for an array no machine holds (a ValueError, not a MemoryError): a size
#: from the inputs (the s3 plan's arrays of --eligible-repository-count columns)
_TOO_BIG = ("array is too big", "maximum allowed dimension exceeded", "too many elements")


def _too_big(exc: ValueError) -> bool:
    text = str(exc).lower()
    return any(words in text for words in _TOO_BIG)


def _out_of_memory(exc: MemoryError) -> UserError:
    """The inputs asked for more memory than there is (a count of billions, say): a refusal
    like any other, and nothing was written (outputs are written at the end)."""
    detail = str(exc).strip()
    return UserError(
        "out of memory: the inputs ask for more than this machine has"
        + (f" ({detail[:200]})" if detail else "")
        + "; nothing was written"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
