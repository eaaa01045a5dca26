"""Reading user input files strictly against a compiled record contract (a JSON Schema).

JSON is parsed strictly: duplicate keys, NaN/Infinity literals and numbers that overflow are
refused; JSONL is one object per LF-terminated line, no blank lines, no BOM.  Every problem is
reported as ``file:line: at /json/path: rule``, up to ``max_problems`` and then a count.
"""

from __future__ import annotations

import json
import math
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from prereg.errors import UserError
from prereg.files import read_regular
from prereg.jsonl import LONG_NUMBER


class StrictJSONError(ValueError):
    """A JSON text that is valid for Python's json module but not for prereg."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise StrictJSONError(f"duplicate key {k!r}")
            seen.add(k)
    return out


def _bad_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not a JSON value")


class ImpreciseNumberError(StrictJSONError):
    """A JSON number that a double does not hold as written (:func:`imprecise_number`)."""


_SMALLEST_NORMAL = 2.2250738585072014e-308


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"number {text} overflows a double")
    if len(text) > 17 or -_SMALLEST_NORMAL < value < _SMALLEST_NORMAL:
        problem = imprecise_number(text, value)
        if problem is not None:
            raise ImpreciseNumberError(problem)
    return value


def _shown_number(text: str) -> str:
    return text if len(text) <= 30 else text[:30] + "…"


def imprecise_number(text: str, value: float | None = None, *, spec: bool = False) -> str | None:
    """The rule a decimal number ``text`` breaks when the double it reads as (``value``) is
    decided as another decimal than the one written, or None.

    A number in data is read as a double and decided as the shortest decimal that reads back
    as it (:func:`prereg.stats.compare.decimal_fraction`). Up to 17 significant digits name a
    double (``printf("%.17g")`` writes them), so such a number is that double; one of more
    significant digits (other than trailing zeros) claims a value no double holds, and one
    below the smallest normal double (about 2.2e-308) may read as 0 or another subnormal:
    those are refused unless the shortest decimal is the number written. With ``spec``
    (a spec's threshold, "the decimal written"), any number whose double's shortest decimal
    is not the number written is refused."""
    from decimal import Decimal, InvalidOperation, localcontext

    if value is None:
        value = float(text)
    shown = _shown_number(text)
    with localcontext() as ctx:
        ctx.Emax, ctx.Emin = 999999999999999999, -999999999999999999
        try:
            written = Decimal(text)
        except InvalidOperation:  # an exponent past even those bounds (or a YAML 1.1 form)
            if spec:
                return None
            written = None
    if written is not None and written == Decimal(repr(value)):
        return None
    if spec:
        return (
            f"number {shown} is not a decimal a double holds: it would be read as"
            f" {value!r}, not as written; write {value!r} or a number of at most 15"
            " significant digits"
        )
    if value == 0:
        return (
            f"number {shown} is below the smallest double (about 5e-324): it would be read"
            f" as {value!r}, not as written"
        )
    if -_SMALLEST_NORMAL < value < _SMALLEST_NORMAL:
        return (
            f"number {shown} is below the smallest double that holds it as written (about"
            f" 2.2e-308): it would be read as {value!r}, not as written"
        )
    digits = len("".join(map(str, written.as_tuple().digits)).strip("0")) if written else 0
    if digits <= 17:
        return None
    return (
        f"number {shown} has {digits} significant digits, more than a double holds: it"
        f" would be read as {value!r}, not as written"
    )


class HugeIntegerError(StrictJSONError):
    """An integer of more digits than Python converts (4,300); ``text`` its digits."""

    def __init__(self, text: str) -> None:
        super().__init__(integer_out_of_range(text))
        self.text = text


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts (4,300)
        raise HugeIntegerError(text) from None


_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicates,
    parse_constant=_bad_constant,
    parse_float=_float,
    parse_int=_int,
)


class HugeInteger:
    """A record's integer of more digits than Python converts (4,300), kept as its text: the
    contract check refuses it at its field, in the words of any integer of its field's type
    that is out of range (:func:`describe`), where the parse would stop the whole line."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return _shown_number(self.text)


def _record_int(text: str) -> int | HugeInteger:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts (4,300)
        return HugeInteger(text)


#: The strict reader of a record (a JSONL line, a JSON array's element): as :data:`_DECODER`,
#: an integer of any length read (:class:`HugeInteger`) and refused at its field.
_RECORD_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicates,
    parse_constant=_bad_constant,
    parse_float=_float,
    parse_int=_record_int,
)


def loads_record(text: str) -> Any:
    """:func:`loads_strict` for one record: an integer beyond what Python converts is a
    :class:`HugeInteger`, for the contract check to refuse at its field."""
    if text[:1] == "\ufeff":
        raise StrictJSONError(BOM_WORDS)
    try:
        return _RECORD_DECODER.decode(text)
    except RecursionError:
        raise StrictJSONError("nesting too deep to parse") from None


def integer_as_double(value: int) -> str | None:
    """The rule an integer in a number field breaks when the double it is read as is decided
    as another number than the one written (as a number written with a point would be,
    :func:`imprecise_number`), or when no double holds it; None for one it holds."""
    if -(2**53) <= value <= 2**53:
        return None
    text = str(value)
    try:
        double = float(value)
    except OverflowError:
        return f"number {_shown_number(text)} overflows a double"
    return imprecise_number(text, double)


#: How every reader refuses a UTF-8 byte-order mark (the project's files are UTF-8 without one:
#: docs/language.md, "Files").
BOM_WORDS = "starts with a byte-order mark (U+FEFF); save it as UTF-8 without BOM"


def cr_problem(line: str, terminated: bool = True) -> str | None:
    """How a JSONL line holding a carriage return is refused, or None: ``CRLF line ending``
    for a CR just before the line's LF (``terminated``: an LF follows the line), else the
    first CR not followed by LF (lone-CR line endings, or a CR as JSON whitespace inside the
    line), at its column."""
    at = line.find("\r")
    if at < 0:
        return None
    if at == len(line) - 1 and terminated:
        return "CRLF line ending; use LF"
    return (
        f"carriage return (CR) not followed by LF at column {at + 1}: lines end with LF alone"
        " (not CR, as classic Mac OS ended them)"
    )


def loads_strict(text: str, *, record: bool = False) -> Any:
    """Parse JSON refusing duplicate keys, NaN/Infinity literals, numbers that overflow and a
    leading byte-order mark.

    The project's one strict JSON reader. Raises ``StrictJSONError`` for those, or
    ``json.JSONDecodeError`` (which carries line and column) for malformed text; both are
    ``ValueError``s. An integer of more digits than Python converts is refused at its JSON
    path, in the words of a record's integer out of range (:func:`integer_beyond_64_bits`)
    with ``record`` (an engine's record), else of a JSON document's (``±(2^53 − 1)``).
    """
    if text[:1] == "\ufeff":  # json.loads' own words name a codec ("decode using utf-8-sig")
        raise StrictJSONError(BOM_WORDS)
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise StrictJSONError("nesting too deep to parse") from None
    except HugeIntegerError as exc:
        words = integer_beyond_64_bits if record else integer_out_of_range
        where = _huge_at(text)
        raise StrictJSONError(
            (f"at {json_path(where)}: " if where is not None else "") + words(exc.text)
        ) from None


def _huge_at(text: str) -> tuple | None:
    """The JSON path of the first integer of more digits than Python converts in ``text``
    (valid JSON up to it), or None."""
    try:
        value = _RECORD_DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    found = _huge_in(value)
    return None if found is None else found[0]


def not_text(head: bytes) -> str | None:
    """``not UTF-8: ...`` for a file whose first bytes ``head`` name it as no UTF-8 text (a
    compressed file, UTF-16 or UTF-32 text, a Parquet file), else None: refused as one
    problem of the file, where each line's bytes would be one."""
    return next((not_utf8(head, 0) for marks, _ in _NOT_TEXT if head.startswith(marks)), None)


def text_head_problem(path) -> str | None:
    """:func:`not_text` of a regular file's first bytes; None when it cannot be read (its
    reader says why)."""
    from prereg.files import open_regular

    try:
        fd = open_regular(path)
    except OSError:
        return None
    try:
        return not_text(os.read(fd, 4))
    except OSError:
        return None
    finally:
        os.close(fd)


def json_syntax_words(exc: json.JSONDecodeError, text: str) -> str:
    """What is wrong at a JSON syntax error, and at which column: a control character inside
    a string named (Python's json says "Invalid control character at")."""
    ch = text[exc.pos : exc.pos + 1]
    if exc.msg.startswith("Invalid control character") and ch:
        return (
            f"{_char_words(ch)} at column {exc.colno}, inside a string: JSON writes it escaped"
            f" (\\u{ord(ch):04x})"
        )
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"


def _char_words(ch: str) -> str:
    if ch == "\x00":
        return "a NUL byte (U+0000)"
    if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
        return f"the control character U+{ord(ch):04X}"
    return f"{ch!r}"


def json_line_problem(exc: Exception, line: str) -> str:
    """How a JSONL line that is not one JSON value is refused, in the project's words: what
    follows the object (a NUL byte, a second object, other text) and at which column, where
    Python's json says "Extra data: line 1 column 47 (char 46)"; a control character where a
    value should start is named too. Other problems keep json's message."""
    if isinstance(exc, json.JSONDecodeError) and exc.lineno == 1:
        rest = line[exc.pos :]
        col = exc.colno
        if exc.msg == "Extra data" and rest:
            first = rest.lstrip(" \t")
            col += len(rest) - len(first)
            what = (
                "a second JSON value"
                if first[:1] in ("{", "[", '"') or first[:1].isdigit()
                else _char_words(first[0])
                if first and not first[0].isalnum()
                else f"text {first[:20]!r}"
            )
            return (
                f"not valid JSON: {what} at column {col}, after the JSON object; a line holds"
                " one JSON object and nothing else"
            )
        if rest and (ord(rest[0]) < 0x20 or 0x7F <= ord(rest[0]) < 0xA0):
            if exc.msg.startswith("Invalid control character"):
                return (
                    f"not valid JSON: {_char_words(rest[0])} at column {col}, inside a string:"
                    f" JSON writes it escaped (\\u{ord(rest[0]):04x})"
                )
            return f"not valid JSON: {_char_words(rest[0])} at column {col} ({exc.msg})"
    return f"not valid JSON: {exc}"


#: The first bytes of files a reader of text is given by mistake, and what they are.
_NOT_TEXT = (
    ((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"), "UTF-32 text (it starts with UTF-32's byte-order mark)"),
    ((b"\xff\xfe", b"\xfe\xff"), "UTF-16 text (it starts with UTF-16's byte-order mark)"),
    ((b"\x1f\x8b",), "a gzip-compressed file; decompress it (gunzip) first"),
    ((b"PK\x03\x04",), "a zip archive; extract the file first"),
    ((b"PAR1",), "a Parquet file; name it .parquet"),
)  # fmt: skip


def not_utf8(head: bytes, at: int) -> str:
    """Why bytes starting with ``head`` are not UTF-8 text, their first bad byte at ``at``
    (from 0): a compressed file, another encoding or a Parquet file named by its first bytes,
    else the byte's place."""
    for marks, what in _NOT_TEXT:
        if head.startswith(marks):
            return f"not UTF-8: {what}" + ("; save it as UTF-8" if "text" in what else "")
    return f"not UTF-8 (byte {at})"


MAX_SAFE_INTEGER = 2**53 - 1  # the largest integer every JSON reader carries exactly


def integer_out_of_range(text: str) -> str:
    """The rule an integer outside ±(2^53 − 1) breaks, in words (``text``: its digits, cut
    to 24 characters), as every reader of JSON, YAML and options says it."""
    shown = text if len(text) <= 24 else text[:24] + "…"
    return f"integer {shown} is outside ±(2^53 − 1), which JSON does not carry exactly"


#: The range of an integer field's value, in every format (JSONL, a JSON array, CSV, Parquet):
#: a 64-bit integer's, as Parquet and pyarrow hold it.
INT64_RANGE = (-(2**63), 2**63 - 1)


def integer_beyond_64_bits(text: str) -> str:
    """The rule a record's integer outside :data:`INT64_RANGE` breaks, in words."""
    shown = text if len(text) <= 24 else text[:24] + "…"
    return (
        f"integer {shown} is outside the range of a 64-bit integer"
        " (-9,223,372,036,854,775,808 to 9,223,372,036,854,775,807)"
    )


_LONG_DIGITS = re.compile(r"[0-9]{16}")  # 2^53 has 16 digits: a shorter integer is safe


def unsafe_integer(value: Any, text: str | None = None) -> str | None:
    """The first integer in ``value`` outside ±(2^53 − 1), as ``at /json/path: rule``, or None.

    Canonical JSON (RFC 8785), which every digest is taken over, has no such integer, so a
    document holding one can be neither digested nor written again; it is refused where it is
    read, at its place, instead of failing later in the digest.  Given the ``text`` the value
    was parsed from, a text without 16 digits in a row is known safe without the walk (which
    costs about 50 ms over a prepared gold file)."""
    if text is not None and _LONG_DIGITS.search(text) is None:
        return None
    stack: list[tuple[tuple, Any]] = [((), value)]
    while stack:
        where, v = stack.pop()
        if type(v) is int and not -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
            return f"at {json_path(where)}: {integer_out_of_range(str(v))}"
        if isinstance(v, dict):
            stack.extend((where + (k,), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((where + (i,), x) for i, x in reversed(list(enumerate(v))))
    return None


def read_json_file(path, *, missing: str | None = None, obj: bool = True) -> Any:
    """One JSON document from a regular file, parsed strictly (:func:`loads_strict`).

    Every problem is a UserError naming the file: missing (``missing`` adds a hint), not a
    regular file, unreadable, not UTF-8, not valid JSON (duplicate keys, NaN, overflow, too
    deep), or, with ``obj``, not a JSON object.
    """
    path = Path(path)
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        raise UserError(f"{path}: missing" + (f" ({missing})" if missing else "")) from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raise UserError(f"{path}:1: {BOM_WORDS}")
    try:
        text = raw.decode("utf-8")
        value = loads_strict(text)
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: {not_utf8(raw, exc.start)}") from None
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({str(exc)[:200]})") from None
    if obj and not isinstance(value, dict):
        raise UserError(f"{path}: not a JSON object")
    problem = unsafe_integer(value, text)
    if problem:
        raise UserError(f"{path}: {problem}")
    return value


def json_path(path) -> str:
    return "".join("/" + str(p) for p in path) or "/"


# -- fields found below the top of a record (a field's ``path``) -----------------------------
#
# A contract whose fields have paths compiles to a schema with nested objects and names each
# field's path in ``x-prereg-paths``. Its records are checked as written (the schema describes
# the nesting), then each is given to the study as {field name: value}, a field whose path is
# cut short (an object on the way missing) being absent. Such a contract takes none of the
# typed fast paths, which read top-level keys.


@lru_cache(maxsize=32)
def contract_paths(
    schema_path: str,
) -> tuple[tuple[str, ...], tuple[tuple[str, tuple], ...]] | None:
    """(the fields read at their top-level key, (name, path) of each field with a path) of the
    contract schema in ``schema_path``, or None when no field has a path."""
    try:
        schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    paths = schema.get("x-prereg-paths") if isinstance(schema, dict) else None
    if not paths:
        return None
    roots = {p[0] for p in paths.values()}
    plain = tuple(k for k in schema.get("properties", {}) if k not in roots)
    return plain, tuple((name, tuple(p)) for name, p in paths.items())


def lifted(rows: list[dict], schema_path) -> list[dict]:
    """``rows`` (checked against the contract) as the study reads them: each field by its
    name, one with a path taken from where the path leads (absent when an object on the way
    is missing or null); keys that are no field's are left out. Rows of a contract without
    paths are returned as they are."""
    shape = contract_paths(str(schema_path))
    if shape is None:
        return rows
    plain, paths = shape
    out = []
    for row in rows:
        rec = {k: row[k] for k in plain if k in row}
        for name, path in paths:
            v: Any = row
            for k in path:
                if type(v) is not dict or k not in v:
                    break
                v = v[k]
            else:
                rec[name] = v
        out.append(rec)
    return out


def nested_record(rec: dict, fields) -> dict:
    """A record the study holds by field names (``rec``) written as its contract's
    ``fields`` place them: a field with a ``path`` at the end of it, inside an object per key
    before; the inverse of :func:`lifted`, for the records the engine writes."""
    out: dict = {}
    for f in fields:
        name = f["name"]
        if name not in rec:
            continue
        path = f.get("path") or (name,)
        node = out
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = rec[name]
    return out


def nested_lines(chunks, fields):
    """The JSONL bytes of ``chunks`` (whole lines of records by field names) with each record
    written as :func:`nested_record` places it (canonical JSON, one record a line), or
    ``chunks`` themselves when no field has a path."""
    if not any(f.get("path") for f in fields):
        yield from chunks
        return
    from prereg.files import canonical_bytes_nl

    for chunk in chunks:
        yield b"".join(
            canonical_bytes_nl(nested_record(loads_strict(line.decode("utf-8")), fields))
            for line in chunk.splitlines()
            if line
        )


def _path_words(where: tuple, shape) -> str:
    """What a problem at ``where`` (a JSON path into a record) has to do with the fields of a
    contract with paths: the field whose value lies there, or the fields whose paths run
    through it; empty when none does."""
    if shape is None:
        return ""
    _plain, paths = shape
    exact = [n for n, p in paths if p == where]
    if exact:
        return f" (field {exact[0]!r})"
    below = [n for n, p in paths if len(p) > len(where) and p[: len(where)] == where]
    if below and where:
        return (
            f" (on the path of field{'s' if len(below) > 1 else ''} {', '.join(map(repr, below))})"
        )
    return ""


def _missing_where(err) -> tuple:
    """The JSON path of the key a ``required`` error finds missing (jsonschema writes the key's
    repr before " is a required property")."""
    import ast

    where = tuple(err.absolute_path)
    try:
        key = ast.literal_eval(err.message.split(" is a required property")[0])
    except (ValueError, SyntaxError):
        return where
    return where + (key,) if isinstance(key, str) else where


@lru_cache(maxsize=32)
def _validator(schema_path: str):
    schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    import jsonschema  # only for a record the typed fast path does not accept

    cls = jsonschema.validators.validator_for(schema)
    # an integer field holds an integer as written: JSON Schema's integer also takes 1.0, a
    # double, which need not be the integer written (9007199254740993.0 is read as ...992)
    # (and within 64 bits, the range of an integer field in every format: INT64_RANGE)
    # and a number field's integer is one a double holds as written (integer_as_double)
    checker = cls.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _c, x: type(x) is int and INT64_RANGE[0] <= x <= INT64_RANGE[1],
            "number": lambda _c, x: (
                type(x) is float or (type(x) is int and integer_as_double(x) is None)
            ),
        }
    )
    return jsonschema.validators.extend(cls, type_checker=checker)(schema)


def _shown(value: Any, limit: int = 60) -> str:
    """A value as JSON for a message, cut to ``limit`` characters (a huge bad value is not
    echoed whole), its invisible characters escaped (:func:`visible`)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return visible(text if len(text) <= limit else text[: limit - 1] + "…")


#: Characters a terminal shows as nothing, or that reorder the text after them: C1 controls,
#: the soft hyphen, zero-width and joining characters, bidirectional marks, embeddings,
#: overrides and isolates, line and paragraph separators, the byte-order mark.
_INVISIBLE = re.compile(
    "[\u0080-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb]"
)


def visible(text: str) -> str:
    """``text`` with each invisible character written as its escape (``\\u202e``): a value
    echoed in a message holding a right-to-left override reversed the rest of the line, and
    one with a zero-width joiner looked like the value it is not."""
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _normal_form_twin(value: Any, allowed: Any) -> str:
    """`` (... another Unicode normalisation form ...)`` when ``value`` is text equal to one
    of ``allowed`` once both are normalised (NFC), else ''."""
    import unicodedata

    if not isinstance(value, str) or not isinstance(allowed, list):
        return ""
    nfc = unicodedata.normalize("NFC", value)
    twin = next(
        (a for a in allowed if isinstance(a, str) and unicodedata.normalize("NFC", a) == nfc), None
    )
    if twin is None:
        return ""

    def form(s):
        return (
            "NFC"
            if unicodedata.is_normalized("NFC", s)
            else "NFD"
            if unicodedata.is_normalized("NFD", s)
            else "unnormalised"
        )

    return (
        f" (it is {_shown(twin)} in another Unicode normalisation form: the value is"
        f" {form(value)}, the contract's {form(twin)}; write it as the contract does)"
    )


def describe(err) -> str:  # a jsonschema.ValidationError
    v = err.validator
    if v == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        return (
            "unexpected field "
            + ", ".join(repr(e[:40]) for e in extra[:5])
            + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        )
    if v == "required":
        return "missing field " + err.message.split(" is a required")[0]
    if v == "type":
        huge = type(err.instance) is HugeInteger
        if (type(err.instance) is int or huge) and "integer" in err.validator_value:
            return integer_beyond_64_bits(err.instance.text if huge else str(err.instance))
        if huge and "number" in err.validator_value:
            return f"number {_shown_number(err.instance.text)} overflows a double"
        if type(err.instance) is int and "number" in err.validator_value:
            problem = integer_as_double(err.instance)
            if problem is not None:
                return problem
        said = f"expected {err.validator_value}, got {_shown(err.instance, 40)}"
        if type(err.instance) is float and "integer" in err.validator_value:
            said += (
                " (an integer is written without a point or exponent: a number such as 1.0"
                " is a double, which need not hold the integer written)"
            )
        return said
    if v == "pattern":
        return f"{_shown(err.instance)} does not match the pattern {err.validator_value}"
    if v == "enum":
        return (
            f"{_shown(err.instance)} is not one of {_shown(err.validator_value, 120)}"
            + _normal_form_twin(err.instance, err.validator_value)
        )
    message = err.message
    shown = repr(err.instance)
    if len(shown) > 60 and message.startswith(shown):  # the value cut, not the rule after it
        message = _shown(err.instance) + message[len(shown) :]
    return message if len(message) <= 200 else message[:199] + "…"


def schema_problems(obj: Any, schema_path: Path) -> list[str]:
    accept = _accepts(str(schema_path))
    if accept is not None and accept(obj):
        return []
    errs = sorted(
        _validator(str(schema_path)).iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))
    )
    shape = contract_paths(str(schema_path))
    if shape is None:
        return [f"at {json_path(e.absolute_path)}: {describe(e)}" for e in errs]
    out = []
    for e in errs:
        said = describe(e)
        where = tuple(e.absolute_path)
        if e.validator == "required":
            where = _missing_where(e)
            if any(len(p) > len(where) and p[: len(where)] == where for _n, p in shape[1]):
                said = said.replace("missing field ", "missing object ", 1)
        out.append(f"at {json_path(e.absolute_path)}: {said}{_path_words(where, shape)}")
    return out


def record_problems(obj: Any, schema_path: Path) -> list[str]:
    """:func:`schema_problems` of a record read by :data:`_RECORD_DECODER`, and an integer of
    more digits than Python converts where the contract leaves the value free (an object
    field's content), which no later step could hold."""
    problems = schema_problems(obj, schema_path)
    if not problems:
        where = _huge_in(obj)
        if where is not None:
            problems = [f"at {json_path(where[0])}: {integer_beyond_64_bits(where[1])}"]
    return problems


def _huge_in(value: Any) -> tuple[tuple, str] | None:
    """(JSON path, digits) of the first :class:`HugeInteger` in ``value``, or None."""
    stack: list[tuple[tuple, Any]] = [((), value)]
    while stack:
        where, v = stack.pop()
        if type(v) is HugeInteger:
            return where, v.text
        if isinstance(v, dict):
            stack.extend((where + (k,), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((where + (i,), x) for i, x in reversed(list(enumerate(v))))
    return None


def rows_problems(rows: list[Any], schema_path: Path) -> list[tuple[int, str]]:
    """``(index, problem)`` for every problem of every row against the record contract in
    ``schema_path``: the contract's compiled predicate accepts a row that holds, and only a row
    it does not accept is worded by :func:`schema_problems` (jsonschema)."""
    accept = _accepts(str(schema_path))
    out: list[tuple[int, str]] = []
    for i, row in enumerate(rows):
        if accept is not None and accept(row):
            continue
        out.extend((i, p) for p in schema_problems(row, schema_path))
    return out


# -- a typed fast path: a schema compiled into one predicate ---------------------------------
#
# A record contract is a small object schema; jsonschema spends tens of microseconds walking it
# per record. ``schema_predicate`` compiles the keywords the compiler and the engines write
# (type, enum of strings, numeric bounds, string length and pattern, arrays with items and item
# counts, objects with properties, required, additionalProperties (false, true or a schema) and
# property counts, nested to any depth) into a predicate that is True only when the schema
# holds (it is stricter where that is simpler: an integer must be a Python int, never 1.0).
# A value it does not accept is validated by jsonschema as before, which reports the problems
# (or finds none); a schema with any other keyword has no predicate (None).

_IGNORED = frozenset({"$comment", "$schema", "$id", "title", "description", "examples"})
_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}
_BOUNDS = {
    "minimum": lambda x, b: x >= b,
    "maximum": lambda x, b: x <= b,
    "exclusiveMinimum": lambda x, b: x > b,
    "exclusiveMaximum": lambda x, b: x < b,
}


def _annotation(key: str) -> bool:
    return key in _IGNORED or key.startswith("x-")


def _keyword_check(key: str, v: Any):
    """The check of one keyword (True for a value it does not apply to), None when unknown."""
    if key == "enum" and isinstance(v, list) and all(type(e) is str or e is None for e in v):
        allowed = frozenset(e for e in v if e is not None)
        if None in v:  # a nullable field's allowed values: null is one of them
            return lambda x, a=allowed: x is None or (type(x) is str and x in a)
        return lambda x, a=allowed: type(x) is str and x in a
    if key in _BOUNDS and type(v) in (int, float):
        op = _BOUNDS[key]
        return lambda x, b=v, op=op: type(x) not in (int, float) or op(x, b)
    if key in ("minLength", "maxLength") and type(v) is int:
        lo = key == "minLength"
        return lambda x, n=v, lo=lo: type(x) is not str or (len(x) >= n if lo else len(x) <= n)
    if key == "pattern" and isinstance(v, str):
        try:
            rx = re.compile(v)
        except re.error:
            return None
        return lambda x, rx=rx: type(x) is not str or rx.search(x) is not None
    if key in ("minItems", "maxItems") and type(v) is int:
        lo = key == "minItems"
        return lambda x, n=v, lo=lo: type(x) is not list or (len(x) >= n if lo else len(x) <= n)
    if key in ("minProperties", "maxProperties") and type(v) is int:
        lo = key == "minProperties"
        return lambda x, n=v, lo=lo: type(x) is not dict or (len(x) >= n if lo else len(x) <= n)
    if key == "items":
        item = schema_predicate(v)
        if item is None:
            return None
        return lambda x, f=item: type(x) is not list or all(map(f, x))
    return None


_MEMBER_KEYS = ("properties", "required", "additionalProperties")


def _members_check(schema: dict):
    """properties, required and additionalProperties of an object schema as one check (a
    record contract's hot path: one call per record), or None."""
    props = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(props, dict) or not isinstance(required, list):
        return None
    if not all(type(e) is str for e in required):
        return None
    fields = {}
    for name, sub in props.items():
        f = schema_predicate(sub)
        if f is None:
            return None
        fields[name] = f
    items = tuple(fields.items())
    need = frozenset(required)
    known = frozenset(props)
    if extra is True or extra is False:
        closed = extra is False
        extra_f = None
    else:
        closed = False
        extra_f = schema_predicate(extra)
        if extra_f is None:
            return None

    def members(x: Any) -> bool:
        if type(x) is not dict:
            return True
        keys = x.keys()
        if not need.issubset(keys) or (closed and not known.issuperset(keys)):
            return False
        for k, f in items:
            if k in x and not f(x[k]):
                return False
        if extra_f is not None:
            for k, v in x.items():
                if k not in known and not extra_f(v):
                    return False
        return True

    return members


def schema_predicate(schema: Any):
    """A predicate for ``schema`` (see above), or None when it uses what the fast path lacks."""
    if not isinstance(schema, dict):
        return None
    exact = None
    if "type" in schema:
        t = schema["type"]
        names = [t] if isinstance(t, str) else t
        if not isinstance(names, list) or not names or any(n not in _TYPES for n in names):
            return None
        exact = frozenset(c for n in names for c in _TYPES[n])
    checks = []
    if exact is not None and "integer" in names and "number" not in names:
        lo, hi = INT64_RANGE
        checks.append(lambda x: type(x) is not int or lo <= x <= hi)
    if exact is not None and "number" in names:
        big = 2**53  # an integer beyond it is a number as written only if a double holds it
        checks.append(lambda x: type(x) is not int or -big <= x <= big or integer_as_double(x) is None)  # fmt: skip
    if any(k in schema for k in _MEMBER_KEYS):
        c = _members_check(schema)
        if c is None:
            return None
        checks.append(c)
    for key, v in schema.items():
        if key == "type" or key in _MEMBER_KEYS or _annotation(key):
            continue
        c = _keyword_check(key, v)
        if c is None:
            return None
        checks.append(c)
    if exact is None:
        if len(checks) == 1:
            return checks[0]
        return lambda x: all(c(x) for c in checks)
    if not checks:
        return lambda x: type(x) in exact
    if len(checks) == 1:
        only = checks[0]
        return lambda x: type(x) in exact and only(x)

    def check(x: Any) -> bool:
        return type(x) in exact and all(c(x) for c in checks)

    return check


def _value_check(schema: Any):
    """:func:`schema_predicate` (the name the record contracts' values were checked by)."""
    return schema_predicate(schema)


@lru_cache(maxsize=32)
def _accepts(schema_path: str):
    """The predicate of a record contract (an object schema) in a file, or None."""
    schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    return schema_predicate(schema)


def _refuse_bom(path: Path, block: bytes, offset: int) -> None:
    """Refuse a file whose first block starts with a UTF-8 byte-order mark."""
    from prereg.jsonl import BOM

    if offset == 0 and block.startswith(BOM):
        raise UserError(f"{path}:1: {BOM_WORDS}")


def _strict_lines(path, data, offset, lineno, schema_path, rows, problems) -> int:
    """:func:`_strict_line` over each line of a block of a JSONL file (at byte ``offset``, after
    ``lineno`` lines); the line count after it."""
    lines = _block_lines(path, data, offset)
    last = len(lines) - 1 if not data.endswith(b"\n") else -1
    for i, line in enumerate(lines):
        lineno += 1
        _strict_line(path, lineno, line, schema_path, rows, problems, i != last)
    return lineno


def _block_lines(path: Path, block: bytes, offset: int) -> list[str]:
    """A block's lines (whole lines, the block at byte ``offset`` of the file), decoded as
    UTF-8; a block that is not UTF-8 is refused at the file's byte."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = block if offset == 0 else b""
        raise UserError(f"{path}: {not_utf8(head, offset + exc.start)}") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def iter_jsonl_lines(path: Path):
    """(line number, text, whether an LF ends it) for each line of a JSONL file, streamed;
    refuses BOM, a file that is not UTF-8 and an empty file (CR and blank lines are the
    caller's)."""
    from prereg.jsonl import LineBlocks

    source = LineBlocks(path)
    offset = 0
    no = 1
    try:
        for _first, block, _n in source:
            _refuse_bom(path, block, offset)
            lines = _block_lines(path, block, offset)
            offset += len(block)
            last = len(lines) - 1 if not block.endswith(b"\n") else -1
            for i, line in enumerate(lines):
                yield no, line, i != last
                no += 1
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    if source.size == 0:
        raise UserError(f"{path}: the file is empty")


def read_records(path, schema_path: Path, fmt: str, *, max_problems: int = 50) -> list[dict]:
    """Parse and validate every record; raise one UserError listing the problems."""
    path = Path(path)
    problems: list[str] = []
    rows: list[dict] = []
    if fmt == "json":
        try:
            text = read_regular(path).decode("utf-8")
            obj = loads_strict(text)
        except OSError as exc:
            raise UserError(f"{path}: cannot read: {exc.strerror}") from None
        except (ValueError, StrictJSONError) as exc:
            raise UserError(f"{path}: not valid JSON: {exc}") from None
        problem = unsafe_integer(obj, text)
        if problem:
            raise UserError(f"{path}: {problem}")
        problems = [f"{path}: {p}" for p in schema_problems(obj, schema_path)]
        rows = [obj]
    else:
        for lineno, line, terminated in iter_jsonl_lines(path):
            _strict_line(path, lineno, line, schema_path, rows, problems, terminated)
    _refuse_problems(path, schema_path, problems, max_problems)
    return lifted(rows, schema_path)


_SPACE = re.compile(r"[ \t\n\r]*")


def read_json_array_records(
    path, schema_path: Path, *, max_problems: int = 50
) -> tuple[list[dict], list[int]]:
    """(records, the line each starts on) of a JSON document that is an array of records
    (``[{...}, {...}]``, as pandas' ``to_json(orient="records")`` and many tools' exports
    write one), each record read as strictly as a JSONL line and checked against the contract
    schema; the problems located at each record's line, in one UserError."""
    path = Path(path)
    try:
        raw = read_regular(path)
        text = raw.decode("utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: {not_utf8(raw, exc.start)}") from None
    if text[:1] == "\ufeff":
        raise UserError(f"{path}:1: {BOM_WORDS}")
    at = _SPACE.match(text).end()
    if at == len(text):
        raise UserError(f"{path}: the file is empty")
    if text[at] != "[":
        kind = "an object" if text[at] == "{" else "not an array"
        raise UserError(
            f"{path}: a .json file of records is one JSON array of objects ([{{...}}, {{...}}],"
            f' pandas\' to_json(orient="records")), and this document is {kind}; a log of one'
            " object per line is named .jsonl"
        )
    rows: list[dict] = []
    lines: list[int] = []
    problems: list[str] = []
    line, seen = 1, 0

    def line_at(i: int) -> int:
        nonlocal line, seen
        line += text.count("\n", seen, i)
        seen = i
        return line

    at = _SPACE.match(text, at + 1).end()
    if text.startswith("]", at):
        raise UserError(f"{path}: the array holds no records")
    while True:
        where = line_at(at)
        try:
            obj, end = _RECORD_DECODER.raw_decode(text, at)
        except RecursionError:
            problems.append(f"{path}:{where}: nesting too deep to parse")
            break
        except json.JSONDecodeError as exc:
            said = json_syntax_words(exc, text)
            problems.append(f"{path}:{exc.lineno}: not valid JSON: {said}")
            break
        except ValueError as exc:  # a strict refusal: a repeated key, NaN, a long number
            problems.append(f"{path}:{where}: {exc}")
            break
        if not isinstance(obj, dict):
            problems.append(f"{path}:{where}: not a JSON object")
        else:
            # an integer field's range is its contract's (INT64_RANGE), as in a JSONL file
            problems.extend(f"{path}:{where}: {p}" for p in record_problems(obj, schema_path))
            rows.append(obj)
            lines.append(where)
        at = _SPACE.match(text, end).end()
        if text.startswith(",", at):
            at = _SPACE.match(text, at + 1).end()
            continue
        if text.startswith("]", at):
            at += 1
            break
        problems.append(f"{path}:{line_at(at)}: not valid JSON: expected , or ] after a record")
        break
    if not problems and _SPACE.match(text, at).end() != len(text):
        problems.append(f"{path}:{line_at(at)}: not valid JSON: text after the array")
    _refuse_problems(path, schema_path, problems, max_problems)
    return lifted(rows, schema_path), lines


def _strict_line(
    path: Path,
    lineno: int,
    line: str,
    schema_path: Path,
    rows: list,
    problems: list,
    terminated: bool = True,
) -> None:
    """One JSONL line read strictly: its object appended to ``rows`` (when it is one), its
    problems, located, to ``problems``; ``terminated``: an LF ends the line (all but a file's
    last line, when the file does not end with one)."""
    if line.strip() == "":
        problems.append(f"{path}:{lineno}: blank line")
        return
    cr = cr_problem(line, terminated)
    if cr is not None:
        problems.append(f"{path}:{lineno}: {cr}")
        if not cr.startswith("CRLF"):  # JSON would add "Extra data" to a line of lines
            return
        line = line[:-1]
    try:
        obj = loads_record(line)
    except ImpreciseNumberError as exc:  # valid JSON, a number no double holds as written
        problems.append(f"{path}:{lineno}: {exc}")
        return
    except (ValueError, StrictJSONError) as exc:
        problems.append(f"{path}:{lineno}: {json_line_problem(exc, line)}")
        return
    if not isinstance(obj, dict):
        problems.append(f"{path}:{lineno}: not a JSON object")
        return
    problems.extend(f"{path}:{lineno}: {p}" for p in record_problems(obj, schema_path))
    rows.append(obj)


def _refuse_problems(path, schema_path: Path, problems: list[str], max_problems: int) -> None:
    """One UserError listing the first ``max_problems`` problems, if there are any."""
    refuse_counted(path, schema_path, problems[:max_problems], len(problems), max_problems)


# a boolean field (nullable or not) given 1/0 or the text "true"/"false" in a JSON record
_NOT_A_JSON_BOOLEAN = re.compile(
    r"expected (?:boolean|\['boolean', 'null'\]), got (?:0|1|\"(?:true|false|True|False)\")$"
)


def _contract_hints(schema_path: Path, shown: list[str]) -> list[str]:
    """What a newcomer reading a tool's log most often needs, once under the problems of a
    study's record contract (generated/<study>/schemas/): a field the tool writes and the study
    does not read, and a boolean the tool writes as 1 or 0."""
    if Path(schema_path).parent.name != "schemas":
        return []
    hints = []
    if any(": unexpected field " in p for p in shown):
        hints.append(
            "hint: a record carries only the fields its record contract names; to leave the"
            " keys the study does not read unread, write other_fields: ignore on the contract"
            " (or declare each: {name: doc, type: object, required: false})"
        )
    missing = next(
        (m for p in shown for m in re.findall(r"at /: missing field '([^']+)'", p)), None
    )
    nest = next(
        (m for p in shown for m in re.findall(r"at /: unexpected field '([^']+)'", p)), None
    )
    if missing and nest:
        hints.append(
            f"hint: if the log writes field {missing!r} inside the object {nest!r}, the field"
            f" reads it where it lies with its path: {{name: {missing}, path: [{nest}, ...]}}"
            " (docs/vocabulary.md, Files)"
        )
    if any(_NOT_A_JSON_BOOLEAN.search(p) for p in shown):
        hints.append(
            "hint: a JSON boolean is written true or false; a log writing 1 and 0 declares the"
            " field {type: integer, allowed: [0, 1]} and compares it with value: 1 (one writing"
            ' "true" and "false" as text: {type: string, allowed: ["true", "false"]}, value:'
            ' "true"); true_values and false_values name the cells of a CSV file'
        )
    return hints


def refuse_counted(path, schema_path: Path, shown: list[str], total: int, max_problems: int):
    """One UserError listing ``shown`` (the first ``max_problems`` problems) of ``total``, if
    there are any."""
    if total:
        shown = list(shown)
        if total > max_problems:
            shown.append(f"… and {total - max_problems} more")
        shown.extend(_contract_hints(schema_path, shown))
        raise UserError(f"{path}: {total} problem(s) against {schema_path.name}", problems=shown)


class Record:
    """Base of the generated record dataclasses: ``SCHEMA`` and ``FORMAT`` are class attributes."""

    SCHEMA: Path
    FORMAT: str

    @classmethod
    def read(cls, path, *, max_problems: int = 50) -> list:
        """Read and validate a file of these records; one instance per record."""
        import dataclasses

        json_names = getattr(cls, "NAMES", {})
        names = {f.name: json_names.get(f.name, f.name) for f in dataclasses.fields(cls)}
        rows = read_records(path, cls.SCHEMA, cls.FORMAT, max_problems=max_problems)
        return [cls(**{a: row.get(j) for a, j in names.items()}) for row in rows]


# -- a typed fast path for JSONL record files ------------------------------------------------
#
# ``read_jsonl_records`` is ``read_records(path, schema_path, "jsonl")`` with msgspec: the same
# records and the same refusals, word for word. A record contract that is a closed object
# schema of scalar fields, each with a ``type`` (or an ``enum`` of strings) and the keywords the
# compiler writes for scalars (numeric bounds, string length and pattern), is compiled into a
# msgspec Struct that accepts only records the contract's predicate accepts (see
# ``_scalar_type``). A block of whole lines is taken at C speed when every line decodes alone
# (one JSON value each: no blank line, nothing after the value) into that Struct and into plain
# values, holds no CR, and the block's count of ``"`` [whitespace] ``:`` sequences (at least its
# count of object keys; a quote-colon in a string only adds) equals the decoded records' count
# of keys (no nested objects: every field is a scalar), so no key occurs twice. NaN, Infinity,
# numbers that overflow, invalid UTF-8 and lone surrogates are refused by the decoder. Any other
# block is read line by line as ``read_records`` reads it, with its messages.

_EXACT = 2**53  # an integer bound of a float compared exactly


def _int_meta(schema: dict):
    """(ge, le) for an integer under the bounds of ``schema``, or None when they are not
    numbers."""
    lo, hi = INT64_RANGE
    for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        if key not in schema:
            continue
        b = schema[key]
        if type(b) not in (int, float) or not math.isfinite(b):
            return None
        if key == "minimum":
            lo = max(lo, math.ceil(b))
        elif key == "exclusiveMinimum":
            lo = max(lo, math.floor(b) + 1)
        elif key == "maximum":
            hi = min(hi, math.floor(b))
        else:
            hi = min(hi, math.ceil(b) - 1)
    return lo, hi


def _float_meta(schema: dict) -> dict | None:
    """msgspec bounds for a float under the bounds of ``schema``, or None when they cannot be
    compared exactly (a bound not a finite number, an integer bound beyond 2**53, both an
    inclusive and an exclusive bound on one side)."""
    names = {"minimum": "ge", "exclusiveMinimum": "gt", "maximum": "le", "exclusiveMaximum": "lt"}
    meta = {}
    for key, name in names.items():
        if key not in schema:
            continue
        b = schema[key]
        if type(b) not in (int, float) or not math.isfinite(b):
            return None
        if type(b) is int and abs(b) > _EXACT:
            return None
        meta[name] = float(b)
    if ("ge" in meta and "gt" in meta) or ("le" in meta and "lt" in meta):
        return None
    return meta


_SCALAR_KEYS = frozenset(
    {
        "type",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
    }
)


def _scalar_type(schema: Any):
    """A msgspec type accepting only values ``schema_predicate(schema)`` accepts (decoded from
    JSON), or None where the fast path has none. With an ``enum`` the type is a Literal of the
    listed strings the predicate accepts; otherwise a union of one type per JSON type, each
    constrained by the keywords that apply to it (integers also to a 64-bit range)."""
    import msgspec

    if not isinstance(schema, dict):
        return None
    if any(k not in _SCALAR_KEYS and not _annotation(k) for k in schema):
        return None
    accept = schema_predicate(schema)
    if accept is None:
        return None
    if "enum" in schema:
        from typing import Literal

        allowed = [e for e in schema["enum"] if accept(e)]
        return Literal[tuple(allowed)] if allowed else None
    t = schema.get("type")
    names = [t] if isinstance(t, str) else t
    if not isinstance(names, list) or not names or len(set(names)) != len(names):
        return None
    from typing import Annotated, Union

    members: list[Any] = []
    for name in names:
        if name == "string":
            meta = {}
            for key, arg in (("minLength", "min_length"), ("maxLength", "max_length")):
                if key in schema:
                    if type(schema[key]) is not int or schema[key] < 0:
                        return None
                    meta[arg] = schema[key]
            # a pattern is checked on the decoded values (``_patterns``): msgspec's own check
            # costs several times Python's ``re`` search per value
            members.append(Annotated[str, msgspec.Meta(**meta)] if meta else str)
        elif name in ("integer", "number"):
            bounds = _int_meta(schema)
            if bounds is None or bounds[0] > bounds[1]:
                return None
            members.append(Annotated[int, msgspec.Meta(ge=bounds[0], le=bounds[1])])
            if name == "number":
                fmeta = _float_meta(schema)
                if fmeta is None:
                    return None
                members.append(Annotated[float, msgspec.Meta(**fmeta)] if fmeta else float)
        elif name == "boolean":
            members.append(bool)
        elif name == "null":
            members.append(None)
        else:
            return None
    return members[0] if len(members) == 1 else Union[tuple(members)]  # noqa: UP007 (built)


def _record_struct(schema: Any):
    """(a msgspec Struct, the ``(field, compiled pattern)`` its string values must match) of a
    closed object schema of scalar fields (see ``_scalar_type``), or None."""
    import msgspec

    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    keys = {"type", "properties", "required", "additionalProperties"}
    if any(k not in keys and not _annotation(k) for k in schema):
        return None
    props = schema.get("properties", {})
    required = schema.get("required", [])
    if schema.get("additionalProperties", True) is not False or not isinstance(props, dict):
        return None
    if not isinstance(required, list) or not all(type(r) is str for r in required):
        return None
    if not set(required) <= set(props):
        return None
    fields: list[tuple] = []
    rename = {}
    patterns = []
    for i, (name, sub) in enumerate(props.items()):
        t = _scalar_type(sub)
        if t is None:
            return None
        if "pattern" in sub and "enum" not in sub:
            try:
                patterns.append((name, re.compile(sub["pattern"])))
            except (re.error, TypeError):
                return None
        attr = f"f{i}"
        rename[attr] = name
        if name in required:
            fields.append((attr, t))
        else:
            fields.append((attr, t | msgspec.UnsetType, msgspec.UNSET))
    try:
        struct = msgspec.defstruct(
            "Record", fields, rename=rename, forbid_unknown_fields=True, kw_only=True, gc=False
        )
    except (TypeError, ValueError):
        return None
    return struct, tuple(patterns)


@lru_cache(maxsize=32)
def _contract_struct(schema_path: str):
    """(schema, Struct, patterns) of a record contract in a file, or None where the typed fast
    path has no Struct (see ``_record_struct``)."""
    try:
        schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(schema, dict) and schema.get("x-prereg-paths"):
        return None  # fields below the top (or renamed): read record by record, then lifted
    compiled = _record_struct(schema)
    return None if compiled is None else (schema, *compiled)


@lru_cache(maxsize=32)
def _typed_decoders(schema_path: str):
    """(typed decoder, plain decoder, patterns) for a record contract in a file, or None."""
    compiled = _contract_struct(schema_path)
    if compiled is None:
        return None
    import msgspec

    _schema, struct, patterns = compiled
    return msgspec.json.Decoder(struct), msgspec.json.Decoder(), patterns, _long_numbers(struct)


def _long_numbers(struct):
    """The search for a number a double may not hold as written
    (:data:`prereg.jsonl.LONG_NUMBER`) where the record has a float field, else None: an
    integer is exact, and the typed decode refuses a number where a string or boolean is."""
    from prereg.jsonl import LONG_NUMBER_FLAT

    types = repr(getattr(struct, "__annotations__", {}))
    if "float" not in types:
        return None
    return LONG_NUMBER if "list" in types or "tuple" in types else LONG_NUMBER_FLAT


def _patterns_hold(rows: list[dict], patterns) -> bool:
    """Every string value of each patterned field matches its pattern (``re.search``)."""
    for name, rx in patterns:
        values = [r.get(name) for r in rows]
        try:
            held = all(map(rx.search, values))
        except TypeError:  # a field left out, or another type than a string
            held = all(rx.search(v) for v in values if type(v) is str)
        if not held:
            return False
    return True


def _typed_block(block: bytes, typed, plain, patterns, long=LONG_NUMBER) -> list[dict] | None:
    """The records of a block of whole LF-terminated lines, or None when the fast path cannot
    vouch for it (see above)."""
    import msgspec

    if not block.endswith(b"\n") or b"\r" in block or (long and long.search(block)):
        return None
    lines = block.split(b"\n")
    lines.pop()
    try:
        list(map(typed.decode, lines))
        rows = list(map(plain.decode, lines))
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None
    from prereg.jsonl import _colons, _keys

    keys = sum(map(len, rows))
    if (keys != _colons(block) and keys != _keys(block)) or not _patterns_hold(rows, patterns):
        return None
    return rows


def read_jsonl_records(
    path, schema_path: Path, *, max_problems: int = 50, block: int | None = None
) -> list[dict]:
    """``read_records(path, schema_path, "jsonl")``: every record, or one UserError listing the
    problems, the same records and words; blocks of lines (``block`` bytes or more, default
    :data:`prereg.jsonl.BLOCK`) a typed decoder vouches for skip the per-line parse and the
    per-record schema check (see above)."""
    decoders = _typed_decoders(str(schema_path))
    if decoders is None:
        return read_records(path, schema_path, "jsonl", max_problems=max_problems)
    typed, plain, patterns, long = decoders
    path = Path(path)
    problems: list[str] = []
    rows: list[dict] = []
    for data, _n, offset, lineno in _file_blocks(path, block):
        fast = _typed_block(data, typed, plain, patterns, long)
        if fast is not None:
            rows.extend(fast)
            continue
        _strict_lines(path, data, offset, lineno, schema_path, rows, problems)
    _refuse_problems(path, schema_path, problems, max_problems)
    return rows


def _file_blocks(path: Path, block: int | None):
    """(block, its LF count, its byte offset, the lines before it) for each block of whole
    lines of a JSONL file (:class:`prereg.jsonl.LineBlocks`), a byte-order mark, an unreadable
    file and an empty one refused; the last item is followed by nothing, and the LineBlocks
    (its size and SHA-256 complete) is the generator's return value."""
    from prereg.jsonl import LineBlocks

    source = LineBlocks(path, block)
    blocks = iter(source)
    offset = 0
    while True:
        try:
            item = next(blocks, None)
        except OSError as exc:
            raise UserError(f"{path}: cannot read: {exc.strerror}") from None
        if item is None:
            break
        first, data, n = item
        _refuse_bom(path, data, offset)
        yield data, n, offset, first - 1
        offset += len(data)
    if source.size == 0:
        raise UserError(f"{path}: the file is empty")
    return source


# -- the same records as columns ---------------------------------------------------------------


@lru_cache(maxsize=32)
def _column_decoders(schema_path: str):
    """(decoder of a JSON array of records, the Struct's attribute per field, the fields in
    order, the required fields, patterns), or None where the typed fast path has no Struct."""
    compiled = _contract_struct(schema_path)
    if compiled is None:
        return None
    import msgspec

    schema, struct, patterns = compiled
    names = list(schema.get("properties", {}))
    required = frozenset(schema.get("required", []))
    attrs = [f"f{i}" for i in range(len(names))]
    return (
        msgspec.json.Decoder(list[struct]),
        attrs,
        names,
        required,
        patterns,
        _long_numbers(struct),
    )


def _column_block(block: bytes, decoders, n: int) -> tuple[dict[str, list], dict[str, int]] | None:
    """(columns, absences per field) of a block of ``n`` whole LF-terminated lines, or None when the
    fast path cannot vouch for it. The lines are decoded as one JSON array (the LFs become
    commas): a blank line or a line of anything but one value then fails to decode or yields
    another count of records than of lines; the key count rules out a repeated key as
    :func:`_typed_block` does."""
    import msgspec

    from prereg.columnar import ABSENT

    dec, attrs, names, required, patterns, long = decoders
    if not block.endswith(b"\n") or b"\r" in block or (long and long.search(block)):
        return None
    try:
        rows = dec.decode(b"[" + block[:-1].replace(b"\n", b",") + b"]")
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None
    if len(rows) != n:
        return None
    from operator import attrgetter

    from prereg.jsonl import _colons, _keys

    columns: dict[str, list] = {}
    absent: dict[str, int] = {}
    keys = 0
    unset = msgspec.UNSET
    for attr, name in zip(attrs, names, strict=True):
        col = list(map(attrgetter(attr), rows))
        if name not in required:
            gone = col.count(unset)
            if gone:
                col = [ABSENT if v is unset else v for v in col]
                absent[name] = gone
            keys += n - gone
        else:
            keys += n
        columns[name] = col
    if keys != _colons(block) and keys != _keys(block):
        return None
    for name, rx in patterns:
        col = columns[name]
        try:
            held = all(map(rx.search, col))
        except TypeError:  # a field left out, or another type than a string
            held = all(rx.search(v) for v in col if type(v) is str)
        if not held:
            return None
    return columns, absent


def share_columns(cols: dict[str, list], share) -> dict[str, tuple]:
    """Each field of ``share`` ({field: (index, ids)}) in ``cols`` holding its strings once
    (the column goes through :func:`prereg.columnar.shared_positions`); returns {field:
    (index, positions)} of the fields whose positions were found."""
    from prereg.columnar import shared_positions

    found = {}
    for name, (index, ids) in (share or {}).items():
        if cols.get(name):
            cols[name], at = shared_positions(cols[name], index, ids)
            if at is not None:
                found[name] = (index, at)
    return found


def read_jsonl_columns(
    path, schema_path: Path, *, max_problems: int = 50, block: int | None = None, share=None
):
    """:func:`read_jsonl_records`'s records as :class:`prereg.columnar.RecordColumns`: the
    same records and the same refusals, word for word. Blocks the typed decoder vouches for
    go straight into columns; any other block is read line by line with the strict reader's
    messages. ``share`` ({field: (index, ids)}) holds a field's strings once, block by block
    (:func:`share_columns`)."""
    from prereg.columnar import RecordColumns

    decoders = _column_decoders(str(schema_path))
    if decoders is None:
        rows = read_records(path, schema_path, "jsonl", max_problems=max_problems)
        names = list(dict.fromkeys(k for r in rows for k in r))
        out = RecordColumns.from_dicts(names, rows)
        out.positions = share_columns(out.columns, share)
        return out
    path = Path(path)
    problems: list[str] = []
    ends: list = []  # the LineBlocks, once every block is read (its size and SHA-256)

    def blocks():
        ends.append((yield from _file_blocks(path, block)))

    parts = blocks_columns(path, schema_path, decoders, blocks(), problems, share)
    _refuse_problems(path, schema_path, problems, max_problems)
    out = joined_columns(decoders[2], parts)
    out.digest = (ends[0].sha256, ends[0].size)
    return out


def blocks_columns(
    path: Path, schema_path: Path, decoders, blocks, problems: list[str], share=None
) -> list:
    """(columns, absences, records, shared positions) of each block of ``blocks`` (``(block,
    LF count, byte
    offset, lines before it)``, whole lines): the typed decoder's columns where it vouches for
    the block, else the strict reader's records, its problems, located, added to
    ``problems`` (a block with problems, or any after one, adds no columns); ``share`` as
    :func:`share_columns`."""
    from prereg.columnar import RecordColumns

    names = decoders[2]
    parts: list = []
    waiting: list[int] = []  # the parts whose shared fields are looked up together, next

    def share_waiting() -> None:
        if waiting:
            _share_parts(parts, waiting, share)
            waiting.clear()

    for data, n, offset, lineno in blocks:
        fast = _column_block(data, decoders, n)
        if fast is not None:
            parts.append((fast[0], fast[1], n, {}))
        else:
            rows: list[dict] = []
            _strict_lines(path, data, offset, lineno, schema_path, rows, problems)
            if problems:
                continue
            part = RecordColumns.from_dicts(names, rows)
            parts.append((part.columns, part.absent, part.n, {}))
        if share:
            waiting.append(len(parts) - 1)
            if sum(parts[i][2] for i in waiting) >= SHARE_BATCH:
                share_waiting()
    share_waiting()
    return parts


#: how many records' shared fields :func:`blocks_columns` looks up at once: a lookup's array
#: passes cost about as much for a block of 4,000 ids as for 60,000, and the copies of the
#: strings a batch replaces (a few MiB) are freed batch by batch
SHARE_BATCH = 1 << 16


def _share_parts(parts: list, at: list[int], share) -> None:
    """:func:`share_columns` over the parts at ``at`` as one column per field: each part gets
    its own slice of the shared strings and of the positions back."""
    if len(at) == 1:
        cols, absent, n, _ = parts[at[0]]
        parts[at[0]] = (cols, absent, n, share_columns(cols, share))
        return
    joined = {
        name: [v for i in at for v in parts[i][0][name]]
        for name in share
        if all(parts[i][0].get(name) for i in at)
    }
    found = share_columns(joined, share)
    start = 0
    for i in at:
        cols, absent, n, _ = parts[i]
        for name in joined:
            cols[name] = joined[name][start : start + n]
        positions = {name: (index, pos[start : start + n]) for name, (index, pos) in found.items()}
        parts[i] = (cols, absent, n, positions)
        start += n


def joined_columns(names: list[str], parts: list):
    """One :class:`prereg.columnar.RecordColumns` of the parts (``(columns, absences,
    records, shared positions)``), in order."""
    from prereg.columnar import RecordColumns

    if len(parts) == 1:
        columns, absent, n, positions = parts[0]
    else:
        columns = {name: [] for name in names}
        absent = dict.fromkeys(names, 0)
        n = 0
        for cols, gone, k, _ in parts:
            for name in names:
                columns[name].extend(cols[name])
                absent[name] += gone.get(name, 0)
            n += k
        import numpy as np

        positions = {}
        for name, (index, _) in (parts[0][3] if parts else {}).items():
            # a field's positions, when every part found them in the same index
            ats = [p[3].get(name) for p in parts]
            if all(a is not None and a[0] is index for a in ats):
                positions[name] = (index, np.concatenate([a[1] for a in ats]))
    out = RecordColumns(names, columns, n, absent)
    out.positions = positions
    return out
