"""Command handlers of the freeze manifest: ``freeze_manifest`` and ``validate``.

``freeze_manifest(ctx, args)``: ``args.input`` (the freeze input JSON), ``args.root`` (the folder
bound paths are relative to; the current folder when None) and ``args.out`` (the manifest to
create).  Exit 0 when the manifest is written; every refusal raises :class:`UserError` (exit 2)
and writes nothing.  An existing ``args.out`` is refused before any work and, should it appear
meanwhile, at the exclusive create.

``validate(ctx, args)``: ``args.manifest`` and ``args.root`` (None: no re-hashing).  Exit 0
only when everything holds; 1 with one line per problem on stderr; 2 (UserError) when the
manifest or the root cannot be read.  See :mod:`.freeze` for the config keys.
"""

from __future__ import annotations

import sys
from typing import Any

from prereg.engines import StudyContext
from prereg.files import canonical_bytes_nl, refuse_existing, write_new

from .freeze import build_manifest, check_manifest, read_manifest


def freeze_manifest(ctx: StudyContext, args: Any) -> int:
    refuse_existing(args.out)
    root = args.root if args.root is not None else "."
    manifest = build_manifest(args.input, root, ctx.config, ctx.spec_digest, ctx.version)
    write_new(args.out, canonical_bytes_nl(manifest))
    print(
        f"{args.out}: froze {len(manifest['artifacts'])} files; "
        f"self_sha256 {manifest['self_sha256']}"
    )
    return 0


def validate(ctx: StudyContext, args: Any) -> int:
    manifest = read_manifest(args.manifest)
    problems = check_manifest(manifest, args.manifest, args.root, ctx.config)
    if problems:
        print(
            f"{args.manifest}: the manifest does not hold ({len(problems)} problem(s))",
            file=sys.stderr,
        )
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    recorded = manifest["spec_digest"]
    if recorded != ctx.spec_digest:
        print(
            f"note: {args.manifest} was frozen under spec digest {recorded}; "
            f"the current spec is {ctx.spec_digest}",
            file=sys.stderr,
        )
    checked = "schema, self digest and rules" + (
        ", and every bound file re-hashed"
        if args.root is not None
        else " (no --root: files not re-hashed)"
    )
    print(f"{args.manifest}: holds: {checked}")
    return 0


COMMANDS = {"freeze_manifest": freeze_manifest, "validate": validate}
