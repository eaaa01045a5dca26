"""The shortcut audit: can simple learners predict gold from surface cues of the payload?

Population: the rows of the audit split, grouped by layout × pool × hops.  For each group,
four learners are cross-validated (rows sorted by id, fold = position mod ``folds``,
predictions pooled over folds) and scored by balanced accuracy rounded half-up:

1. ``scalarThreshold``: best single threshold over the 36 scalar features (keys in plain
   string order, then distinct training values ascending, then "≥ t ⇒ yes" before "< t ⇒ yes";
   a later candidate wins only with a strictly greater training balanced accuracy);
2. ``tokenThreshold``: the same over token counts of the entity-abstracted payload;
3. ``depth2Tree``: root = learner 1; each side refit with learner 1 on the training rows it
   routes (an empty side predicts no);
4. ``logistic``: class-balanced L2 logistic regression on the scalar features, z-scored with
   the training mean and population SD, full-batch gradient steps with a summed gradient.

Threshold learners are vectorized: each column is turned into value ranks once per group;
a fit counts positives and negatives per (column, rank) with one ``bincount`` and scores every
candidate from cumulative sums, so the first maximum in (column, value, direction) order is the
learner's choice.  The logistic regressions of every fold of every group run as one batch.

Line features use the fact lines without the rule line.  Line classes come from the
configured first-match rules (``contains`` / ``endsWith`` with the pool's words filled in).
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any

import numpy as np

from prereg.digest import digest

from .config import EngineConfig
from .generate import Row

LEARNERS = ("scalarThreshold", "tokenThreshold", "depth2Tree", "logistic")
_BASE_FEATURES = (
    "chars",
    "destinationFirstPos",
    "destinationMentions",
    "digits",
    "entities",
    "firstLineClass",
    "lastLineClass",
    "lines",
    "subjectBeforeDestination",
    "subjectFirstPos",
    "subjectMentions",
    "words",
)
_CLASS_SUFFIXES = ("Count", "MeanPos", "MinPos", "MaxPos")
# the base features computed from the texts, and their columns in computation order
_TEXT_COLUMNS = {
    name: j
    for j, name in enumerate(_BASE_FEATURES)
    if name not in ("firstLineClass", "lastLineClass", "lines")
}


# A class of word characters only: ranges and characters within A-Z, a-z, 0-9, and "_".
_WORD_CLASS = re.compile(r"\[(?:[A-Z](?:-[A-Z])?|[a-z](?:-[a-z])?|[0-9](?:-[0-9])?|_)+\]")


def scan_pattern(pattern: str) -> str:
    """A pattern that matches exactly where ``pattern`` does, and faster to scan with.

    Python's regular-expression engine skips ahead to the characters a pattern can start with
    only when the pattern starts with a character or a class; a leading ``\\b`` makes it try
    every position of the text.  For ``\\bC…`` with a class C of word characters only, the
    boundary before C's character just says the character before it is not a word character
    (or there is none), which is ``C(?<!\\wC)…``: the same matches, starting with the class
    (when C carries no quantifier).  Any other pattern is returned as it is.
    """
    if pattern.startswith("\\b"):
        m = _WORD_CLASS.match(pattern, 2)
        if m is not None and pattern[m.end() : m.end() + 1] not in ("*", "+", "?", "{"):
            cls = m.group(0)
            return f"{cls}(?<!\\w{cls}){pattern[m.end() :]}"
    return pattern


# An atom of a word-run pattern: a class of word characters only (as above) or one word
# character, alone, with a count of at least one ({m} or {m,n}) or with +.
_RUN_ATOM = (
    r"(?:\[(?:[A-Z](?:-[A-Z])?|[a-z](?:-[a-z])?|[0-9](?:-[0-9])?|_)+\]|[A-Za-z0-9_])"
    r"(?:\{[1-9][0-9]*(?:,[1-9][0-9]*)?\}|\+)?"
)
_RUN_PATTERN = re.compile(rf"\\b(?:{_RUN_ATOM})+\\b")
_PLAIN_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_MARK = "\x01"  # stands for an entity match while counting them (a text holding it is not sped up)


def matches_word_runs(pattern: str) -> bool:
    """True when ``pattern`` is ``\\b``, word-character atoms (see ``_RUN_ATOM``) and ``\\b``.

    Such a pattern matches only word characters, between a position that is not preceded by a
    word character and one that is not followed by one: its matches are exactly the maximal
    runs of word characters that its atoms match as a whole.  Whitespace is never a word
    character, so the matches in a text are the matches in its whitespace-separated tokens,
    each token on its own (and a substitution of them, the substitution token by token)."""
    return _RUN_PATTERN.fullmatch(pattern) is not None


def feature_keys(ec: EngineConfig) -> list[str]:
    """The scalar feature keys in plain string order (the order that decides ties)."""
    keys = list(_BASE_FEATURES)
    for lc in ec.audit["lineClasses"]:
        keys.extend(lc["name"] + s for s in _CLASS_SUFFIXES)
    return sorted(keys)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of a 1-D integer array: its distinct values, ascending. Written
    out because numpy 2.3+'s ``unique`` imports ``numpy.ma`` (25 ms, and more in two workers
    at once) to ask whether the array is masked."""
    a = np.sort(values)
    keep = np.empty(len(a), dtype=bool)
    keep[:1] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


class FeatureExtractor:
    def __init__(self, ec: EngineConfig):
        a = ec.audit
        self.ec = ec
        self.entity_re = re.compile(scan_pattern(a["entityPattern"]))
        self.entity_token = a["entityToken"]
        # the pattern as one group: its split yields the texts between matches and the matches
        self.entity_split = re.compile(f"({scan_pattern(a['entityPattern'])})").split
        # the group-wide text pass (see _text_values) needs matches inside tokens and a plain
        # replacement (a token of word characters: no escapes, no whitespace)
        self.tokenwise = (
            matches_word_runs(a["entityPattern"])
            and _PLAIN_TOKEN.fullmatch(self.entity_token) is not None
        )
        seps = a["mentionSeparators"]
        # a name is a token of a line (split on the separators) iff it occurs between
        # separators once every separator is mapped to the first one and the line is padded
        self.sep = seps[0]
        self.sep_table = str.maketrans({ch: seps[0] for ch in seps})
        self.seps = seps
        self.sep_delete = str.maketrans("", "", seps)
        self.other_code = a["otherLineClassCode"]
        self.class_codes = [(lc["name"], lc["code"]) for lc in a["lineClasses"]]
        code_of = dict(self.class_codes)
        self.rules_by_pool = {}
        for p in ec.pools:
            rules = []
            for r in a["lineClassRules"]:
                if "contains" in r:
                    rules.append((True, r["contains"].format(**p.words), code_of[r["class"]]))
                else:
                    rules.append((False, r["endsWith"].format(**p.words), code_of[r["class"]]))
            self.rules_by_pool[p.id] = tuple(rules)
        self.keys = feature_keys(ec)
        self.key_index = {k: j for j, k in enumerate(self.keys)}
        # where each computed value goes in the sorted key order
        order = list(_BASE_FEATURES)
        for name, _ in self.class_codes:
            order.extend(name + s for s in _CLASS_SUFFIXES)
        self.perm = np.array([self.key_index[k] for k in order], dtype=np.intp)

    def line_class(self, line: str, rules) -> int:
        for contains, text, code in rules:
            if contains:
                if text in line:
                    return code
            elif line.endswith(text):
                return code
        return self.other_code

    def abstract(self, payload: str) -> str:
        return self.entity_re.sub(self.entity_token, payload)

    def tokens(self, payload: str) -> Counter:
        return Counter(self.abstract(payload).split())

    def _mention_lines(self, name: str, padded: list[str]) -> list[int]:
        if any(ch in name for ch in self.seps) or not name:
            return []  # a name holding a separator is never a whole token
        needle = self.sep + name + self.sep
        return [k for k, t in enumerate(padded) if needle in t]

    def scalar_values(
        self, row: Row, fact_lines: list[str] | None = None, payload: str | None = None
    ) -> tuple[list[float], list[str] | None]:
        """The scalar features in computation order (see ``perm``) and, for the row's own
        payload, its abstracted whitespace tokens."""
        lines = row.fact_lines if fact_lines is None else fact_lines
        own = payload is None
        text = row.payload if own else payload
        rules = self.rules_by_pool[row.cell.pool.id]
        n = len(lines)
        denom = max(1, n - 1)
        chars = len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2
        raw = text.encode("utf-8")  # ASCII digits are single bytes in UTF-8, never inside others
        digits = len(raw) - len(raw.translate(None, b"0123456789"))
        abstracted = self.entity_re.sub(self.entity_token, text)
        toks = abstracted.split()
        words = len(toks)
        joined = "\n".join(lines)
        ents = len(set(self.entity_re.findall(joined)))
        sep = self.sep
        padded = [sep + ln + sep for ln in joined.translate(self.sep_table).split("\n")]
        s_hits = self._mention_lines(row.subject, padded)
        d_hits = self._mention_lines(row.destination, padded)
        lc = self.line_class
        classes = [lc(ln, rules) for ln in lines]
        if s_hits and d_hits:
            sbd = 1 if s_hits[0] < d_hits[0] else 0
        else:
            sbd = -1
        vals = [
            chars,
            d_hits[0] / denom if d_hits else -1,
            len(d_hits),
            digits,
            ents,
            classes[0] if n else self.other_code,
            classes[-1] if n else self.other_code,
            n,
            sbd,
            s_hits[0] / denom if s_hits else -1,
            len(s_hits),
            words,
        ]
        at: dict[int, list[int]] = {}
        for k, c in enumerate(classes):
            at.setdefault(c, []).append(k)
        for _, code in self.class_codes:
            ks = at.get(code)
            if ks:
                total = 0.0
                for k in ks:  # left-to-right sum of normalized positions, then one division
                    total += k / denom
                vals.extend((len(ks), total / len(ks), ks[0] / denom, ks[-1] / denom))
            else:
                vals.extend((0, -1, -1, -1))
        return vals, (toks if own else None)

    def line_codes(self, lines: list[str], rules) -> np.ndarray:
        """``[line_class(ln, rules) for ln in lines]`` as an array, one scan of the joined lines
        per rule: lines without a newline, joined with one, hold a text without a newline
        exactly where the joined text does inside their span, and end with it exactly where
        the text and a newline occur there; each rule's occurrences (left to right, so every
        line holding one has one found) are mapped to their lines, and the rules are applied
        last to first so that the first matching rule decides."""
        n = len(lines)
        codes = np.full(n, self.other_code, dtype=np.int64)
        if not n:
            return codes
        joined = "\n".join(lines) + "\n"
        if joined.count("\n") != n or any("\n" in text for _, text, _ in rules):
            return np.array([self.line_class(ln, rules) for ln in lines], dtype=np.int64)
        ends = np.cumsum(np.fromiter(map(len, lines), dtype=np.int64, count=n) + 1)
        for contains, text, code in reversed(rules):
            needle = text if contains else text + "\n"
            if not needle:  # every line holds "" and ends with it
                codes[:] = code
                continue
            pieces = joined.split(needle)
            if len(pieces) == 1:
                continue
            k = len(pieces) - 1
            starts = np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=k + 1)[:k])
            starts += np.arange(k, dtype=np.int64) * len(needle)
            codes[np.searchsorted(ends, starts, side="right")] = code
        return codes

    def group_matrix(
        self,
        rows: list[Row],
        fact_lines: list[list[str]] | None = None,
        payloads: list[str] | None = None,
    ) -> tuple[np.ndarray, list[list[str]] | None]:
        """:meth:`matrix` of :meth:`scalar_values` over ``rows`` (with ``fact_lines`` and
        ``payloads`` in place of the rows' own when given) and, for the rows' own payloads,
        their abstracted tokens; the line classes and their statistics are computed for all
        rows at once (the same values: class means summed left to right, as there), and so
        are the text features (see :meth:`_text_values`)."""
        return self._group(rows, fact_lines, payloads, "lists" if payloads is None else "none")

    def group_features(self, rows: list[Row]) -> tuple[np.ndarray, np.ndarray]:
        """(:meth:`group_matrix` of the rows, :func:`_token_counts` of their tokens)."""
        return self._group(rows, None, None, "counts")

    def _group(self, rows, fact_lines, payloads, tokens: str):
        own = payloads is None
        R = len(rows)
        lines_of = [r.fact_lines for r in rows] if fact_lines is None else fact_lines
        texts = [r.payload for r in rows] if own else payloads
        out = np.empty((R, len(self.perm)), dtype=np.float64)
        counts = np.fromiter(map(len, lines_of), dtype=np.int64, count=R)
        denom = np.maximum(1, counts - 1)
        # line classes of all lines, pool by pool
        codes = np.empty(int(counts.sum()), dtype=np.int64)
        first = np.concatenate(([0], np.cumsum(counts)[:-1])) if R else counts
        by_pool: dict[str, list[int]] = {}
        for j, r in enumerate(rows):
            by_pool.setdefault(r.cell.pool.id, []).append(j)
        for pool, js in by_pool.items():
            flat = [ln for j in js for ln in lines_of[j]]
            got = self.line_codes(flat, self.rules_by_pool[pool])
            if len(js) == R:
                codes[:] = got
            else:
                at = np.concatenate([np.arange(first[j], first[j] + counts[j]) for j in js])
                codes[at] = got
        line_row = np.repeat(np.arange(R), counts)
        k = np.arange(len(codes)) - np.repeat(first, counts)
        pos = k / denom[line_row]
        has = counts > 0
        other = float(self.other_code)
        first_cls = np.full(R, other)
        last_cls = np.full(R, other)
        first_cls[has] = codes[first[has]]
        last_cls[has] = codes[first[has] + counts[has] - 1]
        col = len(_BASE_FEATURES)
        for _, code in self.class_codes:
            m = codes == code
            r_m = line_row[m]
            pos_m = pos[m]
            cnt = np.bincount(r_m, minlength=R)
            block = np.full((R, 4), -1.0)
            block[:, 0] = cnt
            if len(r_m):
                seg = np.flatnonzero(np.diff(r_m, prepend=-1) != 0)
                rows_p = r_m[seg]
                c_p = cnt[rows_p]
                total = np.zeros(len(seg))
                for j in range(int(c_p.max())):  # left to right, as the row-wise sum
                    sel = c_p > j
                    total[sel] += pos_m[seg[sel] + j]
                block[rows_p, 1] = total / c_p
                block[rows_p, 2] = pos_m[seg]
                block[rows_p, 3] = pos_m[seg + c_p - 1]
            out[:, col : col + 4] = block
            col += 4
        cols = self._text_values(rows, lines_of, texts, counts, denom, tokens)
        if cols is None:  # the row-by-row form
            cols = self._text_values_rowwise(rows, lines_of, texts, denom, tokens)
        text_cols, toks = cols
        for name, j in _TEXT_COLUMNS.items():
            out[:, j] = text_cols[name]
        out[:, _BASE_FEATURES.index("firstLineClass")] = first_cls
        out[:, _BASE_FEATURES.index("lastLineClass")] = last_cls
        out[:, _BASE_FEATURES.index("lines")] = counts
        X = np.empty_like(out)
        X[:, self.perm] = out
        return X, toks

    def _text_values_rowwise(self, rows, lines_of, texts, denom, tokens: str):
        """:meth:`_text_values`, one row at a time (the form of :meth:`scalar_values`)."""
        R = len(rows)
        cols = {name: np.empty(R) for name in _TEXT_COLUMNS}
        toks_all = []
        er, token, sep = self.entity_re, self.entity_token, self.sep
        for j, r in enumerate(rows):
            text = texts[j]
            d = int(denom[j])
            toks = er.sub(token, text).split()
            joined = "\n".join(lines_of[j])
            padded = [sep + ln + sep for ln in joined.translate(self.sep_table).split("\n")]
            s_hits = self._mention_lines(r.subject, padded)
            d_hits = self._mention_lines(r.destination, padded)
            if s_hits and d_hits:
                sbd = 1 if s_hits[0] < d_hits[0] else 0
            else:
                sbd = -1
            raw = text.encode("utf-8")
            cols["chars"][j] = len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2
            cols["digits"][j] = len(raw) - len(raw.translate(None, b"0123456789"))
            cols["words"][j] = len(toks)
            cols["entities"][j] = len(set(er.findall(joined)))
            cols["destinationFirstPos"][j] = d_hits[0] / d if d_hits else -1
            cols["destinationMentions"][j] = len(d_hits)
            cols["subjectFirstPos"][j] = s_hits[0] / d if s_hits else -1
            cols["subjectMentions"][j] = len(s_hits)
            cols["subjectBeforeDestination"][j] = sbd
            if tokens != "none":
                toks_all.append(toks)
        if tokens == "none":
            return cols, None
        return cols, (toks_all if tokens == "lists" else _token_counts(toks_all))

    def _text_values(self, rows, lines_of, texts, counts, denom, tokens: str):
        """The text features of every row (``_TEXT_COLUMNS``: characters, digits, words,
        entities and the subject's and destination's mention lines) and the rows' abstracted
        tokens (``tokens``: "none", "lists" per row, or "counts": :func:`_token_counts` of
        them), in passes over the whole group; None where the row-by-row form is needed.

        With :attr:`tokenwise` the entity pattern matches only inside whitespace-separated
        tokens (see :func:`matches_word_runs`), so also only inside lines, and a payload's
        substitution and its tokens are those of its lines one by one; the fact lines' matches
        are those of their pieces at newlines.  So every distinct line of the group (header,
        rule and marker lines recur in every row) is searched once: one split of all distinct
        lines, joined by newlines, at the entity pattern's matches (a marker, a character no
        line holds, counts each line's matches before the entity token replaces it), then
        every distinct abstracted line (fact lines abstract to a few) is split into tokens
        once.  A row's words, tokens and entities are its lines' ones, gathered with numpy.
        A mention line is a line whose padded form holds the padded name: all fact lines of
        the group are padded at once and tested against their row's name."""
        if not self.tokenwise or "\n" in self.seps or not rows:
            return None
        R = len(rows)
        ftexts = list(map("\n".join, lines_of))
        p_lines = "\n".join(texts).split("\n")
        f_lines = "\n".join(ftexts).split("\n")
        p_n = np.fromiter(map(str.count, texts, repeat("\n")), dtype=np.intp, count=R) + 1
        f_n = np.fromiter(map(str.count, ftexts, repeat("\n")), dtype=np.intp, count=R) + 1
        seen = dict.fromkeys(p_lines)
        seen.update(dict.fromkeys(f_lines))
        distinct = list(seen)
        index = dict(zip(distinct, itertools.count()))
        p_id = np.fromiter(map(index.__getitem__, p_lines), dtype=np.intp, count=len(p_lines))
        f_id = np.fromiter(map(index.__getitem__, f_lines), dtype=np.intp, count=len(f_lines))
        joined = "\n".join(distinct)
        if _MARK in joined:
            return None
        parts = self.entity_split(joined)  # text, match, text, match, ..., text
        found = parts[1::2]
        marked = _MARK.join(parts[0::2]).split("\n")  # matches hold no newline
        n_match = np.fromiter(
            map(str.count, marked, repeat(_MARK)), dtype=np.intp, count=len(distinct)
        )
        # entities: each fact-line piece's matches, as entity numbers, per row
        entity_no = dict(zip(dict.fromkeys(found), itertools.count()))
        match_entity = np.fromiter(
            map(entity_no.__getitem__, found), dtype=np.intp, count=len(found)
        )
        f_row = np.repeat(np.arange(R), f_n)
        x_row, x_at = _expand(f_row, np.cumsum(n_match) - n_match, n_match, f_id)
        E = max(1, len(entity_no))
        pairs = _sorted_unique(x_row * E + match_entity[x_at])
        cols = {"entities": np.bincount(pairs // E, minlength=R)}
        # tokens: each distinct abstracted line split once
        kinds = dict.fromkeys(marked)
        token = self.entity_token
        kind_no = {m: k for k, m in enumerate(kinds)}
        abstracted = [m.replace(_MARK, token) for m in kinds]
        line_kind = np.fromiter(
            map(kind_no.__getitem__, marked), dtype=np.intp, count=len(distinct)
        )
        p_kind = line_kind[p_id]
        words_of = [a.split() for a in abstracted]
        n_tok = np.fromiter(map(len, words_of), dtype=np.intp, count=len(words_of))
        p_row = np.repeat(np.arange(R), p_n)
        t_row, t_at = _expand(p_row, np.cumsum(n_tok) - n_tok, n_tok, p_kind)
        cols["words"] = np.bincount(t_row, minlength=R)
        # characters (UTF-16 code units) and ASCII digits (bytes of the UTF-8 form)
        if all(map(str.isascii, texts)):
            nbytes = np.fromiter(map(len, texts), dtype=np.int64, count=R)
            cols["chars"] = nbytes
            raw = "\n".join(texts).encode("ascii")
        else:
            nbytes = np.fromiter((len(t.encode("utf-8")) for t in texts), dtype=np.int64, count=R)
            cols["chars"] = np.fromiter(
                (len(t) if t.isascii() else len(t.encode("utf-16-le")) // 2 for t in texts),
                dtype=np.int64,
                count=R,
            )
            raw = "\n".join(texts).encode("utf-8")
        is_digit = np.subtract(np.frombuffer(raw, dtype=np.uint8), 48, dtype=np.uint8) < 10
        starts = np.concatenate(([0], np.cumsum(nbytes + 1)[:-1]))
        # a row's digits: the digit positions inside its span (digits are few, and a running
        # count over every byte of the group cost more than the rest of this pass)
        at = np.flatnonzero(is_digit)
        cols["digits"] = np.searchsorted(at, starts + nbytes) - np.searchsorted(at, starts)
        # mention lines: every fact-line piece padded with separators (each separator mapped
        # to the first, as the translation table does), tested against its row's padded name
        sep = self.sep
        facts = "\n".join(ftexts)
        for ch in self.seps[1:]:
            facts = facts.replace(ch, sep)
        padded = (sep + facts.replace("\n", sep + "\n" + sep) + sep).split("\n")
        piece_k = np.arange(len(padded)) - np.repeat(np.cumsum(f_n) - f_n, f_n)
        reps = f_n.tolist()
        for who, names in (
            ("subject", [r.subject for r in rows]),
            ("destination", [r.destination for r in rows]),
        ):
            # a name holding a separator (or empty) is never a whole token
            whole = np.fromiter(map(len, names), dtype=np.intp, count=R)
            kept = np.fromiter(
                map(len, map(str.translate, names, repeat(self.sep_delete))),
                dtype=np.intp,
                count=R,
            )
            can = (whole > 0) & (whole == kept)
            needles = chain.from_iterable(map(repeat, [sep + n + sep for n in names], reps))
            hit = np.fromiter(
                map(operator.contains, padded, needles), dtype=bool, count=len(padded)
            )
            hit &= can[f_row]
            h_row = f_row[hit]
            first_pos = np.full(R, -1.0)
            if len(h_row):
                seg = np.flatnonzero(np.diff(h_row, prepend=-1) != 0)
                at = h_row[seg]
                first_pos[at] = piece_k[hit][seg] / denom[at]
            cols[who + "Mentions"] = np.bincount(h_row, minlength=R)
            cols[who + "FirstPos"] = first_pos
        s_first, d_first = cols["subjectFirstPos"], cols["destinationFirstPos"]
        both = (cols["subjectMentions"] > 0) & (cols["destinationMentions"] > 0)
        cols["subjectBeforeDestination"] = np.where(both, (s_first < d_first).astype(np.int64), -1)
        if tokens == "none":
            return cols, None
        # the vocabulary: tokens of the payloads' lines, in sorted order
        present = _sorted_unique(p_kind).tolist()
        vocab = sorted(set(chain.from_iterable(map(words_of.__getitem__, present))))
        column = dict(zip(vocab, itertools.count()))
        K = len(vocab)
        flat_cols = np.fromiter(
            map(column.get, chain.from_iterable(words_of), repeat(-1)),
            dtype=np.intp,
            count=int(n_tok.sum()),
        )
        t_col = flat_cols[t_at]
        if tokens == "lists":
            flat = [vocab[c] for c in t_col.tolist()]
            ends = np.cumsum(cols["words"]).tolist()
            return cols, [flat[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
        T = np.bincount(t_row * K + t_col, minlength=R * K).reshape(R, K)
        return cols, T

    def matrix(self, values: list[list[float]]) -> np.ndarray:
        """Rows of :meth:`scalar_values` as a float64 matrix in sorted-key column order."""
        raw = np.array(values, dtype=np.float64).reshape(len(values), len(self.perm))
        out = np.empty_like(raw)
        out[:, self.perm] = raw
        return out


def _expand(rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray, items: np.ndarray):
    """For a sequence of ``items`` (indexes into a table of runs: run k is ``lengths[k]``
    positions from ``starts[k]``) that belong to ``rows``: the row and the position of every
    element of every item's run, in sequence order."""
    n = lengths[items]
    total = int(n.sum())
    x_row = np.repeat(rows, n)
    x_at = np.repeat(starts[items] - (np.cumsum(n) - n), n) + np.arange(total)
    return x_row, x_at


def _token_counts(toks_of: list[list[str]]) -> np.ndarray:
    """Per row, the count of each token, one column per distinct token in sorted order."""
    vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    ids: list[int] = []
    lens = []
    for toks in toks_of:
        ids.extend(map(vocab.__getitem__, toks))  # new tokens get the next id
        lens.append(len(toks))
    R, K = len(toks_of), len(vocab)
    flat = np.repeat(np.arange(R) * K, lens) + np.array(ids, dtype=np.intp)
    T = np.bincount(flat, minlength=R * K).reshape(R, K)
    return T[:, [vocab[t] for t in sorted(vocab)]]  # keys in sorted order


# -- threshold learners ---------------------------------------------------------------------


@dataclass
class RankedColumns:
    """Columns of a feature matrix as value ranks (per column, ascending) plus value tables."""

    ranks: np.ndarray  # (n, F) int: rank of each value within its column
    width: int  # V: ranks are < V
    values: np.ndarray  # (F, V) float: the value of each rank (padding: nan)

    @classmethod
    def of(cls, M: np.ndarray, integer: bool = False) -> RankedColumns:
        n, F = M.shape
        if F == 0:
            return cls(np.zeros((n, 0), np.intp), 1, np.zeros((0, 1)))
        if integer:
            lo = M.min(axis=0)
            ranks = (M - lo).astype(np.intp)
            width = int(ranks.max()) + 1 if n else 1
            values = lo[:, None] + np.arange(width, dtype=np.float64)[None, :]
            return cls(ranks, width, values)
        cols = []
        uniq = []
        for j in range(F):
            u, inv = np.unique(M[:, j], return_inverse=True)
            uniq.append(u)
            cols.append(inv)
        width = max(len(u) for u in uniq) if n else 1
        values = np.full((F, width), np.nan)
        for j, u in enumerate(uniq):
            values[j, : len(u)] = u
        return cls(np.stack(cols, axis=1).astype(np.intp), width, values)


@dataclass(frozen=True)
class Stump:
    feature: int
    rank: int  # threshold = value of this rank; "ge": rank >= thr ⇒ yes; else rank < thr ⇒ yes
    ge: bool

    def predict(self, ranks: np.ndarray) -> np.ndarray:
        col = ranks[:, self.feature]
        return col >= self.rank if self.ge else col < self.rank


def fit_stump(rc: RankedColumns, rows: np.ndarray, y: np.ndarray) -> Stump:
    """Best single threshold on the training ``rows`` (see the module docstring)."""
    R = rc.ranks[rows]
    yy = y[rows]
    n, F = R.shape
    V = rc.width
    flat = R + (np.arange(F, dtype=np.intp) * V)[None, :]
    cnt_all = np.bincount(flat.ravel(), minlength=F * V).reshape(F, V)
    cnt_pos = np.bincount(flat[yy].ravel(), minlength=F * V).reshape(F, V)
    return _best_stump(cnt_all, cnt_pos, int(yy.sum()), n, V)


def _best_stump(cnt_all: np.ndarray, cnt_pos: np.ndarray, P: int, n: int, V: int) -> Stump:
    """The first best candidate from the (feature, rank) counts of the training rows and of
    their positives (``P`` of the ``n`` rows)."""
    N = n - P
    if P == 0 or N == 0:
        # every candidate scores 0.5: the first one (first key, smallest value, "≥") is kept
        return Stump(0, int(np.flatnonzero(cnt_all[0])[0]), True)
    cnt_neg = cnt_all - cnt_pos
    pos_below = np.cumsum(cnt_pos, axis=1) - cnt_pos
    neg_below = np.cumsum(cnt_neg, axis=1) - cnt_neg
    ba_ge = ((P - pos_below) / P + neg_below / N) / 2
    ba_lt = (pos_below / P + (N - neg_below) / N) / 2
    cand = np.stack([ba_ge, ba_lt], axis=-1)
    cand[cnt_all == 0] = -np.inf
    best = int(np.argmax(cand))
    f, rest = divmod(best, V * 2)
    v, d = divmod(rest, 2)
    return Stump(f, v, d == 0)


class _FoldCounts:
    """The (feature, rank) counts of all rows and of the positives, once per column set: a
    fold's training counts are these less its held-out rows' (integers, so exactly the counts
    of the training rows), which touches a fifth of the matrix instead of four fifths."""

    def __init__(self, rc: RankedColumns, y: np.ndarray):
        n, F = rc.ranks.shape
        self.rc, self.y, self.n, self.F, self.V = rc, y, n, F, rc.width
        self.flat = rc.ranks + (np.arange(F, dtype=np.intp) * rc.width)[None, :]
        size = F * rc.width
        self.all = np.bincount(self.flat.ravel(), minlength=size)
        self.pos = np.bincount(self.flat[y].ravel(), minlength=size)

    def fit(self, tr: np.ndarray, te: np.ndarray) -> Stump:
        """:func:`fit_stump` on ``tr`` when ``tr`` and ``te`` split the rows between them."""
        cover = np.bincount(np.concatenate((tr, te)), minlength=self.n)
        if cover.size != self.n or not (cover == 1).all():
            return fit_stump(self.rc, tr, self.y)  # not a split of the rows
        F, V = self.F, self.V
        held = self.flat[te]
        cnt_all = (self.all - np.bincount(held.ravel(), minlength=F * V)).reshape(F, V)
        cnt_pos = (self.pos - np.bincount(held[self.y[te]].ravel(), minlength=F * V)).reshape(F, V)
        return _best_stump(cnt_all, cnt_pos, int(self.y[tr].sum()), len(tr), V)


def _folds(n: int, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    pos = np.arange(n)
    return [(np.flatnonzero(pos % k != f), np.flatnonzero(pos % k == f)) for f in range(k)]


def cv_stump(rc: RankedColumns, y: np.ndarray, folds, counts: _FoldCounts | None = None):
    """Cross-validated predictions of the single threshold (``folds``: (train, test) index
    pairs, each splitting the rows between them)."""
    counts = counts or _FoldCounts(rc, y)
    pred = np.zeros(len(y), dtype=bool)
    for tr, te in folds:
        pred[te] = counts.fit(tr, te).predict(rc.ranks[te])
    return pred


def cv_tree(rc: RankedColumns, y: np.ndarray, folds, counts: _FoldCounts | None = None):
    counts = counts or _FoldCounts(rc, y)
    pred = np.zeros(len(y), dtype=bool)
    ranks = rc.ranks
    for tr, te in folds:
        root = counts.fit(tr, te)
        col = ranks[:, root.feature]
        hi_tr = col[tr] >= root.rank
        hi_te = col[te] >= root.rank
        out = np.zeros(len(te), dtype=bool)
        for side_tr, side_te in ((tr[hi_tr], hi_te), (tr[~hi_tr], ~hi_te)):
            if len(side_tr) == 0 or not side_te.any():
                continue  # an empty side predicts no
            leaf = fit_stump(rc, side_tr, y)
            out[side_te] = leaf.predict(ranks[te[side_te]])
        pred[te] = out
    return pred


# -- logistic regression, batched over problems ----------------------------------------------


def logistic_batch(problems, steps: int, lr: float, l2: float) -> list[np.ndarray]:
    """Fit and predict many (X_train, y_train, X_test) problems at once (the test rows'
    predictions: yes iff the score of :func:`logistic_scores` is above 0)."""
    return [sc > 0 for sc in logistic_scores(problems, steps, lr, l2)]


def logistic_scores(problems, steps: int, lr: float, l2: float) -> list[np.ndarray]:
    """Fit many (X_train, y_train, X_test) problems at once; the test rows' scores.

    Per problem: z-score with the training mean and population SD (SD 0 ⇒ 1); weights and a
    separate intercept start at 0; each step: score = Z·w + b, p = σ(score), r = rowweight·(p−y)
    (rowweight 0.5/n_pos for yes rows, 0.5/n_neg for no rows), grad = Σ r·x, then
    w ← w − lr·(grad + l2·w) and b ← b − lr·Σ r.  The test score is T·w + b.
    """
    if not problems:
        return []
    B = len(problems)
    F = problems[0][0].shape[1]
    m = max(len(p[1]) for p in problems)
    Z = np.zeros((B, m, F))
    Y = np.zeros((B, m))
    RW = np.zeros((B, m))
    tests = []
    for k, (Xtr, ytr, Xte) in enumerate(problems):
        n = len(ytr)
        mu = Xtr.mean(axis=0)
        sd = np.sqrt(((Xtr - mu) ** 2).mean(axis=0))
        sd[sd == 0] = 1.0
        Z[k, :n] = (Xtr - mu) / sd
        yv = ytr.astype(np.float64)
        Y[k, :n] = yv
        npos = yv.sum()
        nneg = n - npos
        RW[k, :n] = np.where(ytr, 0.5 / npos if npos else 0.0, 0.5 / nneg if nneg else 0.0)
        tests.append((Xte - mu) / sd)
    w = np.zeros((B, F))
    b = np.zeros(B)
    Zt = np.ascontiguousarray(np.swapaxes(Z, 1, 2))
    # the steps below in preallocated arrays, each operation the one of the plain form
    #   s = Z·w + b; p = 1 / (1 + exp(−s)); r = RW·(p − Y); gw = Zᵀ·r; gb = Σ r
    #   w ← w − lr·(gw + l2·w); b ← b − lr·gb
    # (operands of + and · swapped where that is exact: IEEE addition and multiplication
    # commute), so that a step allocates nothing
    S = np.empty((B, m, 1))
    s = S[:, :, 0]
    G = np.empty((B, F, 1))
    gw = G[:, :, 0]
    t = np.empty((B, F))
    gb = np.empty(B)
    wv = w[:, :, None]
    bv = b[:, None]
    for _ in range(steps):
        np.matmul(Z, wv, out=S)
        s += bv
        np.negative(s, out=s)
        np.exp(s, out=s)
        s += 1.0
        np.divide(1.0, s, out=s)
        s -= Y
        s *= RW  # r
        np.matmul(Zt, S, out=G)
        np.sum(s, axis=1, out=gb)
        np.multiply(w, l2, out=t)
        t += gw
        t *= lr
        w -= t
        gb *= lr
        b -= gb
    return [T @ w[k] + b[k] for k, T in enumerate(tests)]


# -- the audit ------------------------------------------------------------------------------


@dataclass
class Group:
    key: str
    gated: bool
    rows: list[Row]  # sorted by id
    y: np.ndarray
    X: np.ndarray  # scalar features
    tokens: RankedColumns
    scalar_rc: RankedColumns | None = None


def audit_score(y, pred, decimals: int) -> float:
    """Balanced accuracy (TPR + TNR)/2 of boolean labels and predictions (0.5 when a class is
    absent) rounded half-up to ``decimals`` on its exact value, as the float of that decimal."""
    from fractions import Fraction

    from prereg.stats.compare import round_half_up as exact_round

    yy = np.asarray(y, dtype=bool)
    pp = np.asarray(pred, dtype=bool)
    n_pos = int(yy.sum())
    n_neg = int(yy.size) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float(exact_round(Fraction(1, 2), decimals))
    tpr = Fraction(int((pp & yy).sum()), n_pos)
    tnr = Fraction(int((~pp & ~yy).sum()), n_neg)
    return float(exact_round((tpr + tnr) / 2, decimals))


def _within(score: float, limit) -> bool:
    """Whether a (rounded) learner score is at most the audit's limit, decided exactly."""
    from prereg.stats.compare import compare

    return compare(score, "le", limit)


class ShortcutAudit:
    def __init__(self, ec: EngineConfig):
        self.ec = ec
        a = ec.audit
        self.fx = FeatureExtractor(ec)
        self.limit = a["limit"]
        self.folds = a["folds"]
        self.decimals = a["decimals"]
        lg = a["logistic"]
        self.steps, self.lr, self.l2 = lg["steps"], lg["learningRate"], lg["l2"]
        self.pc_message = a["positiveControl"]["hashMessage"]

    def groups(self, rows: list[Row]) -> list[Group]:
        ec = self.ec
        split = ec.audit["split"]
        by: dict[str, list[Row]] = {}
        gated: dict[str, bool] = {}
        for r in rows:
            if r.cell.split.word != split:
                continue
            key = ec.audit["groupKey"].format(
                layout=r.cell.layout.word, pool=r.cell.pool.id, hops=r.cell.hops
            )
            by.setdefault(key, []).append(r)
            gated[key] = r.cell.layout.audit_gated
        out = []
        for key in sorted(by):
            grp = sorted(by[key], key=lambda r: r.id)
            y = np.array([r.label == ec.label_yes for r in grp], dtype=bool)
            X, T = self.fx.group_features(grp)
            out.append(Group(key, gated[key], grp, y, X, RankedColumns.of(T, integer=True)))
        return out

    def _score(self, y, pred) -> float:
        """The balanced accuracy rounded half-up to the registered decimals, exactly: (TPR +
        TNR)/2 as a fraction of the counts (the floats round 57/800 = 0.07125 down to 0.0712)."""
        return audit_score(y, pred, self.decimals)

    def scores(self, groups: list[Group], token_scores: dict[str, float] | None = None):
        """Per group, the four learner scores (token scores may be passed in to reuse)."""
        folds_of = {}
        problems = []
        where = []
        for g in groups:
            folds = _folds(len(g.rows), self.folds)
            folds_of[g.key] = folds
            for tr, te in folds:
                problems.append((g.X[tr], g.y[tr], g.X[te]))
                where.append((g.key, te))
        # one batch per group size (the folds of equal-sized groups have equal shapes)
        logit = {g.key: np.zeros(len(g.rows), dtype=bool) for g in groups}
        sizes = sorted({len(g.rows) for g in groups})
        for size in sizes:
            idx = [k for k, (key, _) in enumerate(where) if len(logit[key]) == size]
            preds = logistic_batch([problems[k] for k in idx], self.steps, self.lr, self.l2)
            for k, p in zip(idx, preds, strict=True):
                key, te = where[k]
                logit[key][te] = p
        result = {}
        for g in groups:
            folds = folds_of[g.key]
            rc = RankedColumns.of(g.X)
            counts = _FoldCounts(rc, g.y)
            if token_scores is not None and g.key in token_scores:
                tok = token_scores[g.key]
            else:
                tok = self._score(g.y, cv_stump(g.tokens, g.y, folds))
            result[g.key] = {
                "scalarThreshold": self._score(g.y, cv_stump(rc, g.y, folds, counts)),
                "tokenThreshold": tok,
                "depth2Tree": self._score(g.y, cv_tree(rc, g.y, folds, counts)),
                "logistic": self._score(g.y, logit[g.key]),
            }
        return result

    def summaries(self, groups: list[Group], scores) -> list[dict[str, Any]]:
        """Per group: key, gated, n, yes and the four learner scores (mergeable across units)."""
        return [
            {
                "group": g.key,
                "gated": g.gated,
                "n": len(g.rows),
                "yes": int(g.y.sum()),
                "scores": {k: scores[g.key][k] for k in LEARNERS},
            }
            for g in groups
        ]

    def audit_object(self, summaries: list[dict[str, Any]]) -> dict[str, Any]:
        """The audit object over group summaries (groups sorted by key)."""
        out_groups = []
        gated_max = []
        control_max = []
        for g in sorted(summaries, key=lambda g: g["group"]):
            sc = g["scores"]
            mx = max(sc[k] for k in LEARNERS)
            passes = _within(mx, self.limit) if g["gated"] else None
            (gated_max if g["gated"] else control_max).append(mx)
            out_groups.append(
                {
                    "group": g["group"],
                    "n": g["n"],
                    "yes": g["yes"],
                    "scores": dict(sc),
                    "max": mx,
                    "passes": passes,
                }
            )
        return {
            "schemaVersion": self.ec.schema_versions["audit"],
            "limit": self.limit,
            "folds": self.folds,
            "groups": out_groups,
            "equalizedPasses": all(_within(mx, self.limit) for mx in gated_max),
            "equalizedMax": max(gated_max) if gated_max else None,
            "controlMax": max(control_max) if control_max else None,
        }

    def run(self, rows: list[Row]) -> tuple[dict[str, Any], list[Group], dict]:
        groups = self.groups(rows)
        scores = self.scores(groups)
        return self.audit_object(self.summaries(groups, scores)), groups, scores

    # -- positive control -------------------------------------------------------------------
    def chain_first(self, row: Row) -> list[str]:
        """Chain lines in chain order, then each remaining line k spliced in by hash."""
        n_chain = len(row.chain_lines)
        out = list(row.chain_lines)
        k = 0
        for ln, src in zip(row.fact_lines, row.fact_order, strict=True):
            if src < n_chain:
                continue
            msg = self.pc_message.format(rowId=row.id, k=k).encode("utf-8")
            v = int.from_bytes(hashlib.sha256(msg).digest()[:4], "big")
            out.insert(v % (len(out) + 1), ln)
            k += 1
        return out

    def positive_control_groups(self, groups: list[Group], scores) -> list[dict[str, Any]]:
        """Chain-first order re-imposed on the gated groups: ``[{group, scores}]``."""
        ec = self.ec
        pc_groups = []
        for g in groups:
            if not g.gated:
                continue
            lines_of = []
            payloads = []
            for r in g.rows:
                lines = self.chain_first(r)
                lines_all = r.payload.split("\n")
                start = lines_all.index(ec.facts_marker) + 1
                payloads.append(
                    "\n".join(lines_all[:start] + lines + lines_all[start + len(r.fact_lines) :])
                )
                lines_of.append(lines)
            X = self.fx.group_matrix(g.rows, lines_of, payloads)[0]
            pc_groups.append(Group(g.key, True, g.rows, g.y, X, g.tokens))
        tok = {g.key: scores[g.key]["tokenThreshold"] for g in pc_groups}
        pc_scores = self.scores(pc_groups, token_scores=tok)
        return [
            {"group": g.key, "scores": {k: pc_scores[g.key][k] for k in LEARNERS}}
            for g in pc_groups
        ]

    def positive_control_object(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        """``{groups (sorted by key), equalizedMax, passes}`` over positive-control groups."""
        out = sorted(parts, key=lambda g: g["group"])
        mx = max((max(g["scores"].values()) for g in out), default=None)
        return {"groups": out, "equalizedMax": mx, "passes": mx is None or _within(mx, self.limit)}

    def positive_control(self, groups: list[Group], scores) -> dict[str, Any]:
        """Re-impose chain-first order on the gated groups and re-score them."""
        return self.positive_control_object(self.positive_control_groups(groups, scores))


def audit_digest(audit: dict[str, Any]) -> str:
    return digest(audit)
