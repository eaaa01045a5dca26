"""Compile-time checks of registered analyses (a hypothesis' ``analyses``).

An analysis names a method of the catalogue (:mod:`prereg.stats.catalogue`); the method's
input shape says which inputs it reads (:data:`prereg.decide.shapes.INPUTS`) and which metric
kinds feed it (:data:`prereg.decide.shapes.METRIC_KINDS`), and its entry lists its options,
every one of which the spec registers.  Each problem is reported with its JSON pointer.
"""

from __future__ import annotations

import difflib
import json

from prereg.compiler.semantic import (
    Reporter,
    _expansions,
    check,
    contrast_ids,
    fill,
    fill_options,
    group_ids,
    items,
    named_groups,
    whole_placeholder,
)

#: options a method took without being written before it had them, and what a spec written
#: then meant: a spec compiled by an older prereg reads as it did once it writes that value
_OPTIONS_ADDED = {
    ("cochran-mantel-haenszel", "alternative"): (
        "a spec written before it was an option meant the two-sided test; write"
        " alternative: two-sided for the figures it gave"
    ),
    **{
        (m, "missing_prediction"): (
            "a spec written before it was an option refused a null prediction; write"
            " missing_prediction: refuse for that, or wrong to count a refusal as a miss of"
            " its true class"
        )
        for m in ("precision", "recall", "f1-score")
    },
}


def _two_raters_field(spec: dict, an: dict, ptr: str, what: str, report) -> None:
    """A rater field that is no factor and allows other than two values cannot give the two
    raters two-raters compares: most often a wide log (gold and judge on one row) written as
    if each row were one rating."""
    name = an.get("rater")
    of = an.get("of") if isinstance(an.get("of"), dict) else {}
    if any(isinstance(w, dict) and w.get("factor") == name for w in of.get("where") or []):
        return  # the selection picks the raters by that name
    for c in spec.get("record_contracts") or []:
        for f in (c.get("fields") or []) if isinstance(c, dict) else []:
            if not isinstance(f, dict) or f.get("name") != name or f.get("factor") is not None:
                continue
            allowed = f.get("allowed")
            if isinstance(allowed, list) and len(allowed) != 2:
                shown = ", ".join(map(str, allowed))
                report(
                    f"{ptr}/rater",
                    f"{what}: two-raters compares exactly two raters, and rater {name!r} allows"
                    f" {len(allowed)} values ({shown}); when each row holds both ratings (gold"
                    " and judge side by side), name the two code fields as rating and b_rating"
                    " and leave rater out",
                )
            return


def _methods_fitting(kind: str | None, entries) -> list[str]:
    from prereg.decide.shapes import METRIC_KINDS

    return [name for name, e in entries.items() if kind in (METRIC_KINDS[e.shape] or ())]


def _among_choices(value: str, description: str) -> bool:
    """Whether a word option's value is one its description lists, when the description is
    a list of choices (words joined by ``|``, or quoted); True when it is not a list."""
    import re

    if "|" not in description and description.count('"') < 4:
        return True  # not a list of choices: the method checks the value
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", description) is not None


def custom_entries(spec: dict) -> dict:
    """The study's own statistics (``statistics``) as catalogue entries (shape and options;
    prereg.custom calls their functions), by id."""
    from prereg.stats.catalogue import SHAPES, Entry

    out = {}
    for s in spec.get("statistics") or []:
        if not isinstance(s, dict) or str(s.get("shape")) not in SHAPES:
            continue  # reported by build.custom_problems
        out[str(s.get("id"))] = Entry(
            name=str(s.get("id")),
            family="custom",
            function="",
            shape=str(s["shape"]),
            summary=str(s.get("summary") or ""),
            options={str(o): "an option of the study's statistic" for o in s.get("options") or []},
        )
    return out


def _kind_words(kinds) -> str:
    return " or ".join(kinds)


def _registers_analyses(spec: dict) -> bool:
    """Whether any hypothesis registers an analysis: the checks of analyses read the catalogue,
    whose families import numpy, only for a spec that does (compile stays light otherwise)."""
    return any(isinstance(h, dict) and h.get("analyses") for _, h in items(spec, "hypotheses"))


@check
def analyses_well_formed(spec: dict, report: Reporter) -> None:
    from prereg.compiler.vocabulary import all_fields
    from prereg.decide.shapes import (
        ALL_INPUTS,
        FIELD_INPUTS,
        INPUTS,
        METRIC_KINDS,
        required_options,
        shape_inputs_text,
    )
    from prereg.stats.catalogue import entries as catalogue

    if not _registers_analyses(spec):
        return
    entries = {**catalogue(), **custom_entries(spec)}
    kinds = {m.get("id"): (m.get("compute") or {}).get("kind") for m in spec.get("metrics") or []}
    factors = {str(f.get("id")) for f in spec.get("factors") or []}
    fields = all_fields(spec)
    ids = contrast_ids(spec)
    contrasts = {
        fill(str(c.get("id")), b)
        for h in spec.get("hypotheses") or []
        for c in h.get("contrasts") or []
        for b in _expansions(c)
    }
    earlier: set[str] = set()
    for hptr, hyp in items(spec, "hypotheses"):
        for i, an in enumerate(hyp.get("analyses") or []):
            ptr = f"{hptr}/analyses/{i}"
            aid = str(an.get("id"))
            what = f"analysis {aid!r}"
            own = [fill(aid, b) for b in _expansions(an)]
            method = an.get("method")
            entry = entries.get(str(method))
            if entry is None:
                close = difflib.get_close_matches(str(method), list(entries), n=3, cutoff=0.5)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                report(
                    f"{ptr}/method",
                    f"{what}: {method!r} is not a method of the catalogue{hint} (the methods are"
                    " listed in docs/analyses.md) nor a statistic of the study's own (registered"
                    " under statistics)",
                )
                earlier.update(own)
                continue
            shape = entry.shape
            need = INPUTS[shape]
            present = [w for w in ALL_INPUTS if an.get(w) is not None]
            if shape == "clustered-sample":
                arms = an.get("a") is not None or an.get("b") is not None
                allowed = ("cluster", "a", "b") if arms else ("cluster", "of")
                required = allowed
            elif shape == "two-raters" and an.get("b_rating") is not None:
                # a wide log: both ratings on one row, the second in b_rating (no rater)
                allowed = required = ("of", "unit", "rating", "b_rating")
            else:
                allowed = required = need
            for w in required:
                if an.get(w) is None:
                    report(
                        ptr,
                        f"{what}: method {method} (shape {shape}) needs {w}; it reads"
                        f" {shape_inputs_text(shape)}",
                    )
            for w in present:
                if w not in allowed:
                    paired = _PAIRED.get(str(method)) if w == "pair_by" else None
                    report(
                        f"{ptr}/{w}",
                        f"{what}: method {method} (shape {shape}) does not read {w}; it reads"
                        f" {shape_inputs_text(shape)}"
                        + (f"; the same items under both arms: {paired}" if paired else ""),
                    )
            # the metric and its kind
            fit = METRIC_KINDS[shape]
            metric = an.get("metric")
            if fit == ():
                if metric is not None:
                    report(
                        f"{ptr}/metric",
                        f"{what}: method {method} adjusts P values and reads no metric",
                    )
            elif metric is None:
                report(ptr, f"{what}: method {method} needs the metric whose rows feed it")
            elif metric in kinds and kinds[metric] is not None and fit is not None:
                kind = kinds[metric]
                if kind not in fit:
                    names = [
                        n for n in _methods_fitting(kind, entries) if entries[n].shape != "p-values"
                    ]
                    report(
                        f"{ptr}/metric",
                        f"{what}: method {method} (shape {shape}) takes a {_kind_words(fit)}"
                        f" metric, and {metric!r} is a {kind}; the methods that fit a {kind}"
                        f" metric are {', '.join(names) or 'none'} (and those that read fields"
                        " only: agreement, labels, answers per problem)"
                        + (
                            _AS_NUMBERS
                            if kind in ("proportion", "coverage") and "mean" in fit
                            else ""
                        ),
                    )
            elif metric in kinds and kinds[metric] is None and fit is not None:
                report(
                    f"{ptr}/metric",
                    f"{what}: metric {metric!r} has no compute block, so no rows feed the method",
                )
            other = an.get("b_metric")
            if other is not None:
                paired = ("paired-binary", "paired-samples", "paired-probabilities")
                if shape not in paired:
                    report(
                        f"{ptr}/b_metric",
                        f"{what}: b_metric is read on b's rows of a paired method (shapes"
                        f" {', '.join(paired)}); method {method} (shape {shape}) reads one metric",
                    )
                elif other not in kinds:
                    report(f"{ptr}/b_metric", f"{what}: b_metric names unknown metric {other!r}")
                elif kinds.get(metric) != kinds[other]:
                    report(
                        f"{ptr}/b_metric",
                        f"{what}: b_metric {other!r} is a {kinds[other]} and metric {metric!r}"
                        f" a {kinds.get(metric)}; a and b are compared on metrics of one kind",
                    )
            # fields and factors
            for w in FIELD_INPUTS:
                name = an.get(w)
                if name is not None and name not in fields:
                    report(
                        f"{ptr}/{w}",
                        f"{what}: {w} names unknown field {name!r} (a field of the item manifest,"
                        " the observations or a derived field)",
                    )
            for slot in ("rating", "b_rating"):
                rating = an.get(slot)
                if shape not in ("two-raters", "ratings") or rating not in fields:
                    continue
                from prereg.compiler.vocabulary import _not_numeric

                why = _not_numeric(spec, rating)
                if why is not None:
                    report(
                        f"{ptr}/{slot}",
                        f"{what}: method {method} reads integer category codes (or numbers),"
                        f" and rating {rating!r} is {why}; register a derived field that gives"
                        " each label its code (derived_fields: [{id: code, cases: [{when:"
                        f" [{{field: {rating}, op: eq, value: low}}], value: 1}}, ...]}}) and"
                        " name it as the rating",
                    )
            if shape == "two-raters" and an.get("rater") is not None:
                _two_raters_field(spec, an, ptr, what, report)
            if an.get("strata") is not None and str(an["strata"]) not in factors:
                report(f"{ptr}/strata", f"{what}: strata names unknown factor {an['strata']!r}")
            groups = an.get("groups")
            if groups is not None and len(groups) < 2:
                report(f"{ptr}/groups", f"{what}: groups lists at least two selections")
            elif groups is not None and method == "correlation-difference" and len(groups) != 3:
                report(
                    f"{ptr}/groups",
                    f"{what}: method correlation-difference reads three groups (the reference,"
                    f" then the two whose correlations with it are compared), got {len(groups)}",
                )
            for b in _expansions(an)[:1] or [{}]:
                gids = group_ids(an, b)
                for j, gid in enumerate(gids):
                    if gid is not None and gid in gids[:j]:
                        report(
                            f"{ptr}/groups/{j}/id",
                            f"{what}: two groups are named {gid!r}; a group's id names one group",
                        )
            for j, ref in enumerate(an.get("of_analyses") or []):
                for b in _expansions(an):
                    rid = fill(str(ref), b)
                    if rid not in ids:
                        report(
                            f"{ptr}/of_analyses/{j}",
                            f"{what}: names unknown analysis or contrast {rid!r}",
                        )
                        break
                    if rid not in contrasts and rid not in earlier:
                        report(
                            f"{ptr}/of_analyses/{j}",
                            f"{what}: analysis {rid!r} is registered after it; an analysis of"
                            " P values reads contrasts and earlier analyses",
                        )
                        break
            # options
            options = an.get("options")
            listed = (
                "; ".join(f"{o}: {entry.options[o]}" for o in required_options(entry)) or "none"
            )
            if not isinstance(options, dict):
                report(
                    f"{ptr}/options",
                    f"{what}: options is an object of the method's options ({listed})",
                )
            else:
                names = {str(ex.get("name")) for ex in an.get("expand") or []}
                names |= {str(n) for ex in an.get("expand") or [] for n in ex.get("names") or []}
                for o, value in options.items():
                    whole = whole_placeholder(value)
                    if whole is not None and whole not in names:
                        report(
                            f"{ptr}/options/{o}",
                            f"{what}: option {o} is the placeholder {{{whole}}}, which expand"
                            f" does not name (its placeholders: {', '.join(sorted(names)) or 'none'})",
                        )
                        continue
                    text = "" if whole is not None else json.dumps(value)
                    held = sorted(n for n in names if "{" + n + "}" in text)
                    if held:
                        report(
                            f"{ptr}/options/{o}",
                            f"{what}: option {o} holds the placeholder {{{held[0]}}} inside its"
                            f" value; an option takes a placeholder only as its whole value"
                            f' ({o}: "{{{held[0]}}}")',
                        )
                expected = required_options(entry)
                missing = [o for o in expected if o not in options]
                unknown = [o for o in options if o not in expected]
                other = _written_for(entries, entry, options) if unknown else []
                hint = (
                    f" (the options written are those of method {' and '.join(other)}, which"
                    " reads the same inputs)"
                    if other
                    else ""
                )
                if missing:
                    before = [
                        f"; {o} is new to {method}: {_OPTIONS_ADDED[method, o]}"
                        for o in missing
                        if (method, o) in _OPTIONS_ADDED
                    ]
                    report(
                        f"{ptr}/options",
                        f"{what}: method {method} needs option(s) {', '.join(missing)}{hint}"
                        f" (its options, every one registered: {listed}){''.join(before)}",
                    )
                # each expansion's options (a placeholder option takes each value in turn)
                seen: set[str] = set()
                for binding in _expansions(an) or [{}]:
                    filled, unnamed = named_groups(
                        an, fill_options(options, binding), entry.group_options, binding
                    )
                    for o, words in unnamed:
                        report(f"{ptr}/options/{o}", f"{what}: {words}")
                    key = json.dumps(filled, sort_keys=True, default=str)
                    if key in seen:
                        continue
                    seen.add(key)
                    for o in expected:
                        value = filled.get(o)
                        if isinstance(value, str) and not _among_choices(value, entry.options[o]):
                            report(
                                f"{ptr}/options/{o}",
                                f"{what}: option {o} of method {method} is {value!r}, which is"
                                f" not one of its values ({o}: {entry.options[o]})",
                            )
                    if entry.family != "custom":
                        _per_input_lengths(an, filled, entry, f"{ptr}/options", what, report)
                        if not missing and not unknown:
                            _options_refused(an, filled, entry, f"{ptr}/options", what, report)
                for o in unknown:
                    filled = o in entry.options
                    report(
                        f"{ptr}/options/{o}",
                        f"{what}: method {method} has no option {o!r}"
                        + (" to write (the inputs give it)" if filled else hint)
                        + f" (its options: {listed})",
                    )
            earlier.update(own)


#: What a spec writing ``pair_by`` to a method of independent arms means instead.
_PAIRED = {
    "welch-t": "method paired-t",
    "student-t": "method paired-t",
    "mann-whitney": "method wilcoxon-signed-rank (or sign-test)",
    "hodges-lehmann": "method wilcoxon-signed-rank (or sign-test)",
    "tost-means": "method tost-paired",
    "equivalence-interval-means": "method equivalence-interval-paired",
    "noninferiority-means": "method paired-t with its margin, or tost-paired",
    "bootstrap-mean-difference": "method bootstrap-paired-mean-difference",
    "permutation-mean-difference": "method permutation-paired-mean-difference",
    "ratio-of-geometric-means": "a contrast on the geometric_mean metric with pair_by,"
    " interval t and test paired-t (the paired t of the log ratios, exponentiated; a"
    " non-inferiority claim reads its upper or lower bound)",
    "noninferiority-ratio-means": "a contrast on the geometric_mean metric with pair_by,"
    " interval t and test paired-t (the paired t of the log ratios, exponentiated; a"
    " non-inferiority claim reads its upper or lower bound)",
    "pass-at-k-difference": "it pairs the problems by unit",
}
for _m in ("wald-difference", "newcombe-hybrid", "agresti-caffo", "miettinen-nurminen"):
    _PAIRED[_m] = "method newcombe-paired (an interval) or tango-test, mcnemar-exact (a test)"
for _m in ("pooled-z", "wald-difference-test", "farrington-manning", "miettinen-nurminen-test"):
    _PAIRED[_m] = "method tango-test (with a margin) or mcnemar-exact"
for _m in ("fisher-exact", "barnard-exact", "boschloo-exact", "noninferiority-proportions"):
    _PAIRED[_m] = "method mcnemar-exact, or tango-test with a margin"


def _written_for(entries, entry, options) -> list[str]:
    """The other methods of ``entry``'s shape whose options are exactly those written (a
    bootstrap's options given to the t method of the same inputs)."""
    from prereg.decide.shapes import required_options

    written = set(options)
    return [
        name
        for name, other in entries.items()
        if other is not entry
        and other.shape == entry.shape
        and set(required_options(other)) == written
    ]


#: Options that hold one entry per item of an input (a trend's scores: one per group), with
#: what the entry is called, so a length that can never fit is refused at compile time rather
#: than when the data are scored.
_PER_INPUT = {
    "scores": ("groups", "number", "group"),
    "coefficients": ("groups", "number", "group"),
    "weights": ("of_analyses", "weight", "P value"),
}


#: List options whose entries may be exact fractions written as strings ("1/3"): a linear
#: contrast's coefficients (an average of three groups is 1/3 each, which no decimal is).
_FRACTION_WORDS = frozenset({"coefficients"})


def _per_input_lengths(an: dict, options: dict, entry, ptr: str, what: str, report) -> None:
    """A list option with one entry per group (or per P value) must have as many entries as
    the input lists; a transition matrix is m x m over the m P values."""
    from prereg.decide.shapes import INPUTS

    reads = INPUTS[entry.shape]
    for o, (inp, noun, per) in _PER_INPUT.items():
        if o not in entry.options or o not in options or inp not in reads:
            continue
        value, listed = options[o], an.get(inp)
        if not isinstance(listed, list):
            continue
        if not isinstance(value, list):
            report(
                f"{ptr}/{o}",
                f"{what}: option {o} of method {entry.name} is a list of {len(listed)}, one"
                f" {noun} per {per} of {inp}, in the registered order",
            )
        elif len(value) != len(listed):
            report(
                f"{ptr}/{o}",
                f"{what}: option {o} of method {entry.name} has {len(value)} {noun}(s), and"
                f" {inp} lists {len(listed)}: one {noun} per {per}, in the registered order",
            )
        elif noun == "number":
            from prereg.stats.compare import beyond_a_double, is_fraction_word

            for j, v in enumerate(value):
                if o in _FRACTION_WORDS and is_fraction_word(v):
                    continue  # an exact fraction, "1/3"
                if beyond_a_double(v):
                    shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:40] + "…"
                    report(
                        f"{ptr}/{o}/{j}",
                        f"{what}: option {o} of method {entry.name} holds {shown}, beyond the"
                        " largest number a figure can hold (about 1.8e308; a fraction's sides"
                        " of at most 4,300 digits)",
                    )
                    continue
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    said = (
                        "write a decimal, 0.25, or an exact fraction as a string, '1/3'"
                        if o in _FRACTION_WORDS
                        else "write a decimal: 0.25, not '1/4'"
                    )
                    report(
                        f"{ptr}/{o}/{j}",
                        f"{what}: option {o} of method {entry.name} holds {v!r}, which is not a"
                        f" number ({said})",
                    )
    m = an.get("of_analyses")
    value = options.get("transitions")
    if "transitions" in entry.options and isinstance(m, list) and isinstance(value, list):
        if len(value) != len(m) or any(not isinstance(r, list) or len(r) != len(m) for r in value):
            report(
                f"{ptr}/transitions",
                f"{what}: option transitions of method {entry.name} is the {len(m)} x {len(m)}"
                " matrix over the P values of of_analyses (a row per P value, an entry per"
                " P value in each row)",
            )


def _synthetic(shape: str, an: dict, options: dict):
    """Small inputs of a shape that every method takes, on which a method's checks of its
    options run at compile time; None for the shapes not tried (their inputs depend on the
    option values themselves: labels). The inputs have no spread (every outcome
    alike, every number 2), so that most methods return before any distribution tail (scipy)
    once their options are checked."""
    import numpy as np

    g = len(an.get("groups") or []) or 2
    x = np.full(8, 2.0)
    y = np.full(8, 2.0)
    k = options.get("k")
    n = max(10, k) if isinstance(k, int) and not isinstance(k, bool) and k < 10**6 else 10
    shapes = {
        "binomial": lambda: (0, 10),
        "two-binomial": lambda: (0, 10, 0, 10),
        "paired-binary": lambda: (5, 0, 0, 5),
        "binomial-groups": lambda: (np.zeros(g, dtype=int), np.full(g, 10)),
        "strata-2x2": lambda: tuple(np.array(v) for v in ([0, 0], [10, 10], [0, 0], [10, 10])),
        "sample": lambda: (x,),
        "two-samples": lambda: (x, y),
        "paired-samples": lambda: (x, y),
        "samples-groups": lambda: ([x + j for j in range(g)],),
        "sample-blocks": lambda: (np.full((4, g), 2.0),),
        "samples-per-problem": lambda: (np.full(4, n), np.zeros(4, dtype=int)),
        "paired-samples-per-problem": lambda: (
            np.full(4, n),
            np.zeros(4, dtype=int),
            np.full(4, n),
            np.zeros(4, dtype=int),
        ),
        "probabilities": lambda: (np.array([1, 0, 1, 1, 0, 0, 1, 0]), x / 4.0),
        "paired-probabilities": lambda: (
            np.array([1, 0, 1, 1, 0, 0, 1, 0]),
            x / 4.0,
            np.array([1, 0, 1, 1, 0, 0, 1, 0]),
            y / 4.0,
        ),
    }
    if shape in ("two-raters", "ratings"):
        # every rating the first category (a whole number, else 0): the method checks its
        # options (categories, weights, a level) before it reads a rating
        cats = options.get("categories")
        c = cats[0] if isinstance(cats, list) and cats else 0
        c = c if isinstance(c, int) and not isinstance(c, bool) else 0
        if shape == "two-raters":
            return (np.full(4, c), np.full(4, c)), {}
        return (np.full((4, 2), float(c)),), {}
    if shape == "clustered-sample":
        cluster = np.array(["c1", "c1", "c2", "c2", "c3", "c3", "c4", "c4"] * 2, dtype=object)
        if an.get("a") is not None:
            arm = np.array(["a"] * 8 + ["b"] * 8, dtype=object)
            return (np.concatenate([x, y]), cluster, arm), {"arms": ("a", "b")}
        return (np.concatenate([x, y]), cluster, None), {"arms": None}
    make = shapes.get(shape)
    return None if make is None else (make(), {})


def _options_refused(an: dict, options: dict, entry, ptr: str, what: str, report) -> None:
    """Run the method once on small inputs of its shape: a refusal that names one of its
    options (a level of 95, a margin of proportions outside (-1, 1), a k of 0) is a
    registration that could never be scored, and is reported here rather than when the data
    are in. Refusals of the inputs themselves, and any other failure, are left to score."""
    from prereg.stats.methods import MethodError

    made = _synthetic(entry.shape, an, options)
    if made is None:
        return
    args, filled = made
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entry.load()(*args, **{**options, **filled})
    except MethodError as exc:
        message = str(exc)
        head = message.split(" ", 1)[0].split("[", 1)[0]
        if len(message) > 300:  # a value of thousands of characters is not echoed whole
            message = message[:299] + "…"
        if head in options:
            report(
                f"{ptr}/{head}",
                f"{what}: method {entry.name} refuses option {head}: {message}",
            )
    except Exception:  # noqa: BLE001 - the inputs here are ours; score decides on the data
        return


BEGIN = (
    "<!-- methods: generated from the catalogue by prereg.compiler.analyses.methods_reference -->"
)
END = "<!-- end of methods -->"

#: How a method of numbers reads right/wrong outcomes (added to the refusal of a proportion).
_AS_NUMBERS = (
    "; to give this method the right/wrong outcomes as numbers (clustered or paired 0/1"
    " outcomes, say), register a derived field that is 1 when the row is right and 0"
    " otherwise (derived_fields: [{id: right_n, cases: [{when: [<the metric's where>], value:"
    " 1}, {value: 0}]}]) and a mean metric of it ({kind: mean, field: right_n}); see"
    " docs/analyses.md, Picking a method"
)


def methods_reference() -> str:
    """The reference part of docs/analyses.md: every method of the catalogue with the shape it
    reads, the inputs and metric kinds an analysis gives it, its options and what it reports
    (rendered from the catalogue's entries, so it cannot drift from them)."""
    from prereg.decide.shapes import METRIC_KINDS, required_options, shape_inputs_text
    from prereg.stats.catalogue import FAMILIES, SHAPES, entries

    def kinds(shape: str) -> str:
        k = METRIC_KINDS[shape]
        if k is None:
            return "any (its counted rows)"
        return "none" if k == () else ", ".join(k)

    def cell(text: str) -> str:
        return " ".join(str(text).split()).replace("|", "\\|")

    all_entries = entries()
    lines = [BEGIN, "", "## Every method", ""]
    lines += [
        "| method | family | shape | inputs | metric kinds | options |",
        "|---|---|---|---|---|---|",
    ]
    for name, e in all_entries.items():
        opts = ", ".join(f"`{o}`" for o in required_options(e)) or "none (`options: {}`)"
        lines.append(
            f"| [`{name}`](#{name}) | {e.family} | {e.shape} | {shape_inputs_text(e.shape)} |"
            f" {kinds(e.shape)} | {opts} |"
        )
    lines += ["", "## Shapes", "", "| shape | what the method reads | an analysis writes |"]
    lines.append("|---|---|---|")
    for shape, text in SHAPES.items():
        lines.append(f"| {shape} | {cell(text)} | {shape_inputs_text(shape)} |")
    for family in FAMILIES:
        members = [e for e in all_entries.values() if e.family == family]
        if not members:
            continue
        lines += ["", f"## {family.replace('_', ' ')}", ""]
        for e in members:
            lines += [f"### {e.name}", "", cell(e.summary), ""]
            lines.append(
                f"- shape `{e.shape}`: write {shape_inputs_text(e.shape)}; metric kinds:"
                f" {kinds(e.shape)}"
            )
            opts = required_options(e)
            if opts:
                lines.append("- options (every one required):")
                lines += [f"  - `{o}`: {cell(e.options[o])}" for o in opts]
            else:
                lines.append("- options: none (`options: {}`)")
            filled = [o for o in e.options if o not in opts]
            if filled:
                lines.append("- given by the inputs, not written:")
                lines += [f"  - `{o}`: {cell(e.options[o])}" for o in filled]
            if e.reports:
                lines.append(f"- reports: {', '.join(e.reports)}")
            for label, text in (
                ("formula", e.formula),
                ("reference", e.reference),
                ("checked against", e.oracle),
                ("decided exactly", e.exactness),
            ):
                if text:
                    lines.append(f"- {label}: {cell(text)}")
            lines.append("")
    while lines[-1] == "":
        lines.pop()
    return "\n".join([*lines, "", END]) + "\n"


_ANALYSIS_ONLY = ("se", "statistic", "df")
_QUANTITIES = ("estimate", "se", "statistic", "df", "lower", "upper", "p")


def _compares(cond, ptr: str):
    """(pointer, compare body) of every comparison in a condition tree."""
    if isinstance(cond, dict):
        if isinstance(cond.get("compare"), dict):
            yield f"{ptr}/compare", cond["compare"]
        for key, value in cond.items():
            if key != "compare":
                yield from _compares(value, f"{ptr}/{key}")
    elif isinstance(cond, list):
        for i, value in enumerate(cond):
            yield from _compares(value, f"{ptr}/{i}")


@check
def analysis_quantities_read_analyses(spec: dict, report: Reporter) -> None:
    """se, statistic and df are figures of analyses: a comparison reading them names one."""
    import re

    analyses = {
        fill(str(a.get("id")), b)
        for h in spec.get("hypotheses") or []
        for a in h.get("analyses") or []
        for b in _expansions(a)
    }
    conditions = []
    for hptr, hyp in items(spec, "hypotheses"):
        conditions.append((f"{hptr}/rule", hyp.get("rule")))
        for i, v in enumerate(hyp.get("verdicts") or []):
            conditions.append((f"{hptr}/verdicts/{i}/when", v.get("when")))
    for i, r in enumerate((spec.get("decision") or {}).get("rules") or []):
        conditions.append((f"/decision/rules/{i}/when", r.get("when")))
    for ptr, cond in conditions:
        for cptr, body in _compares(cond, ptr):
            if body.get("quantity") not in _ANALYSIS_ONLY:
                continue
            target = str(body.get("target"))
            parts = re.split(r"\{[^}]*\}", target)
            rx = re.compile("^" + ".+".join(map(re.escape, parts)) + "$")
            if not any(rx.match(a) for a in analyses):
                report(
                    f"{cptr}/quantity",
                    f"quantity {body['quantity']} is a figure of an analysis, and {target!r} is"
                    " not one (an estimate or a contrast has estimate, abs_estimate, lower,"
                    " upper, p and adjusted_p)",
                )


def _conditions(spec: dict) -> list[tuple[str, object]]:
    out = []
    for hptr, hyp in items(spec, "hypotheses"):
        out.append((f"{hptr}/rule", hyp.get("rule")))
        for i, v in enumerate(hyp.get("verdicts") or []):
            out.append((f"{hptr}/verdicts/{i}/when", v.get("when")))
    for i, r in enumerate((spec.get("decision") or {}).get("rules") or []):
        out.append((f"/decision/rules/{i}/when", r.get("when")))
    return out


#: The Result field a comparison's quantity reads.
_FIELD = {"abs_estimate": "estimate", "adjusted_p": "p"}


def _reported(entry) -> frozenset[str]:
    """The figures an analysis of catalogue method ``entry`` can have (its ``reports``; a
    procedure over P values also has the number it rejects, its estimate)."""
    out = set(entry.reports)
    if entry.shape == "p-values":
        out.add("estimate")
    return frozenset(out)


@check
def analysis_figures_exist(spec: dict, report: Reporter) -> None:
    """A comparison of a figure an analysis' method never reports (the P value of an estimator
    such as brier-score or pass-at-k; the se, statistic, df or a bound of a method that has
    none, by the catalogue's ``reports``) could never be met: the verdict would be decided by a
    figure that is always missing."""
    import re

    from prereg.stats.catalogue import entries as catalogue

    if not _registers_analyses(spec):
        return
    methods = catalogue()
    entry_of = {}
    for h in spec.get("hypotheses") or []:
        for a in h.get("analyses") or []:
            entry = methods.get(str(a.get("method")))
            for b in _expansions(a):
                entry_of[fill(str(a.get("id")), b)] = entry
    contrasts = set(contrast_ids(spec)) - set(entry_of)
    for ptr, cond in _conditions(spec):
        for cptr, body in _compares(cond, ptr):
            quantity = body.get("quantity")
            figure = _FIELD.get(str(quantity), quantity)
            if figure not in _QUANTITIES:
                continue
            target = str(body.get("target"))
            parts = re.split(r"\{[^}]*\}", target)
            rx = re.compile("^" + ".+".join(map(re.escape, parts)) + "$")
            read = [a for a in entry_of if rx.match(a)]
            if not read or any(rx.match(c) for c in contrasts):
                continue
            lacking = [
                a for a in read if entry_of[a] is not None and figure not in _reported(entry_of[a])
            ]
            if len(lacking) < len(read):
                continue  # some analysis it reads has the figure (or is the study's own)
            entry = entry_of[lacking[0]]
            shown = ", ".join(f for f in _QUANTITIES if f in _reported(entry)) or "no figure"
            if figure == "p":
                report(
                    f"{cptr}/quantity",
                    f"analysis {lacking[0]!r} (method {entry.name}) has no P value, so a"
                    f" comparison of its {quantity} is never met; it reports {shown} (compare"
                    " one of those, or register a method with a test)",
                )
            else:
                kin = [
                    m.name
                    for m in methods.values()
                    if m.shape == entry.shape and figure in _reported(m)
                ]
                hint = (
                    f"; method{'s' if len(kin) > 1 else ''} {', '.join(kin)} of its shape"
                    f" {entry.shape} report{'' if len(kin) > 1 else 's'} {figure}"
                    if kin
                    else ""
                )
                report(
                    f"{cptr}/quantity",
                    f"analysis {lacking[0]!r} (method {entry.name}) never reports {figure}, so"
                    f" a comparison of its {quantity} is never met; method {entry.name} reports"
                    f" {shown} (its entry in the methods catalogue, docs/analyses.md){hint}",
                )


def _target_figures(kind: str, item: dict) -> frozenset[str] | None:
    """The quantities an estimate or a contrast has (None: an analysis, checked by its
    method): no P value for an estimate or a contrast without a test, no bounds without an
    interval, no adjusted P outside a family."""
    if kind == "analysis":
        return None
    out = {"estimate", "abs_estimate", "lower", "upper"}
    if item.get("interval") == "none":
        out -= {"lower", "upper"}
    if kind == "contrast" and item.get("test") not in (None, "none"):
        out.add("p")
        if item.get("family") is not None:
            out.add("adjusted_p")
    return frozenset(out)


_WHY = {
    "p": "has no test, so no P value",
    "adjusted_p": "is in no family (or has no test), so no adjusted P",
    "lower": "has no interval (interval: none), so no bounds",
    "upper": "has no interval (interval: none), so no bounds",
}


@check
def target_figures_exist(spec: dict, report: Reporter) -> None:
    """A comparison of a figure an estimate or a contrast never has (the P value of an
    estimate or of a contrast without a test, a bound without an interval, the adjusted P of
    a contrast in no family) could never be met."""
    import re

    from prereg.compiler.semantic import _targets

    has: dict[str, tuple[str, frozenset[str] | None]] = {}
    for kind, _, item in _targets(spec):
        for b in _expansions(item):
            has.setdefault(fill(str(item.get("id")), b), (kind, _target_figures(kind, item)))
    for ptr, cond in _conditions(spec):
        for cptr, body in _compares(cond, ptr):
            quantity = str(body.get("quantity"))
            if quantity not in _WHY:
                continue
            target = str(body.get("target"))
            parts = re.split(r"\{[^}]*\}", target)
            rx = re.compile("^" + ".+".join(map(re.escape, parts)) + "$")
            read = [t for t in has if rx.match(t)]
            if not read or any(has[t][1] is None or quantity in has[t][1] for t in read):
                continue
            kind = has[read[0]][0]
            if kind == "estimate" and quantity in ("p", "adjusted_p"):
                why = "is an estimate, which has no test, so no P value"
            else:
                why = _WHY[quantity]
            report(
                f"{cptr}/quantity",
                f"{kind} {read[0]!r} {why}: a comparison of its {quantity} is never met"
                " (compare a figure it has, or register what gives this one)",
            )
