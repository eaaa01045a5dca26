"""The reachability-probe engine: synthetic multi-fact reachability corpora (d17-multifact kind).

A row states a chain subject → relays → destination as fact lines ("X <link> Y", "R is
<enabled>"), possibly broken at one link (written with another verb, negated, or absent) or one
relay (disabled), mixed with decoy lines, followed by a rule and a question.  The engine
generates a corpus byte for byte from a seed, re-derives every label with a text oracle,
orders rows for dispatch, audits the corpus for shortcut cues, and prepares the output files.

Modules: :mod:`.config` (checks), :mod:`.draws` (SHA-256 draws), :mod:`.generate`,
:mod:`.oracle`, :mod:`.dispatch`, :mod:`.audit`, :mod:`.pipeline` (in-memory preparation),
:mod:`.seeds`, :mod:`.budget`, :mod:`.review`, :mod:`.commands` (handlers; ``COMMANDS``).
Scoring (observations against the frozen decision rules): :mod:`.scoring` (the rows, the
failure-position attribute, the engine fields gold and calibrated P(yes), ECE, AUROC and the
per-cell report; the attempt policy, derived fields, metrics, estimates, contrasts, gates and
verdicts are the study's registration, evaluated by :mod:`prereg.decide`), :mod:`.simulate` (the registered scenarios, P(yes) drawn as the ``respondents`` constant says),
:mod:`.calibrator` (isotonic calibrator artifacts; validity from the ``calibration`` constant),
:mod:`.score_commands` (``score``, ``simulate``, ``calibrator-fit``; merged into ``COMMANDS``).
The collection hand-off (approval, bundle, the seed ledger of :mod:`prereg.ledger`, the
collector's ``validate_bundle``): :mod:`.handoff`; scoring from the run lineage
(``score --config``): :mod:`.lineage`.  Their constant: ``hand-off``.
Their constants: ``scoring``, ``calibrator-fit``, ``respondents``, ``decision``.

Configuration.  A handler receives the compiled spec's generic config (``ctx.config``, the
generated ENGINE_CONFIG) and maps it with :func:`.config.config_from_spec` onto the engine's own
shape below, checked by :func:`.config.load_config` (:func:`.config.study_config` does both and
caches the result).  Where each engine key comes from in the spec:

- the constants ``generator-id``, ``schema-versions``, ``labels``, ``hashing``, ``record``,
  ``chain``, ``cue-classes``, ``decoys``, ``names``, ``header``, ``templates``, ``rules``,
  ``dispatch``, ``audit``, ``calibration``, ``dev-review`` become ``generatorId`` …
  ``devReview`` unchanged (``config.CONSTANT_KEYS``);
- constant ``factor-roles`` ``{pool, hops, outcome, layout}``: the factor playing each part;
  cells are read through it, and the level codes of those factors are the short codes of
  pools (``letter``), outcomes and layouts;
- constants ``outcomes`` and ``layouts``: as below without ``short`` (taken from the factor);
- section ``splits``: ``word`` = id, ``short`` = code; constant ``split-roles`` ``{split id:
  role}`` gives each split's ``role``;
- section ``pools``: the word of role ``framing`` is ``framing``; every other role becomes a
  pool word, kebab-case turned camelCase (``non-connective`` → ``nonConnective``): the six
  below are required, any other is the study's own note on the pool, read by nothing; the
  pool's ``level`` (``factor:level``) gives its letter;
- section ``cells``: split, rows and the four factor levels (hops as an integer);
- section ``seed_policy`` (``pattern``, ``public_seeds``, ``public_prefixes``,
  ``private_min_hex_run``) and constant ``seed-syntax`` ``{wording, maxLength,
  minDistinctHex, maxCountingRun}``;
- section ``budget`` (items ``calls``, ``tokens``, ``usd``, ``shared-cap-usd``,
  ``floor-study-usd``, ``floor-portfolio-usd``, ``retries-per-request``,
  ``per-request-token-bound``, ``output-allowance``, ``provider-overhead``, ``timeout``,
  ``dispatch-interval``: ``config.BUDGET_KEYS``) and constant
  ``reservation-floor-usd-per-million-tokens``.

The engine's own shape.  Templates use named ``{placeholders}``; pool words are
available in line, rule and line-class templates as ``{link}``, ``{base}``, ``{contrastive}``,
``{nonConnective}``, ``{enabled}``, ``{disabled}``.

- ``generatorId``: provenance generator id.
- ``schemaVersions``: ``gold``, ``audit``, ``devReview`` schema ids.
- ``labels``: ``yes``/``no``: the gold label words.
- ``hashing``: ``seedIdHexChars`` (seedId = that many hex characters of digest(seed));
  ``rowDrawMessage`` (``{split}``, ``{familyId}``, ``{index}`` = row index within its cell,
  ``{counter}``); ``dispatchDrawMessage`` (``{seedDigest}``, ``{counter}``); ``recordIdMessage``
  (``{seed}``, ``{rowIndex}``: row id = hex SHA-256 of it); ``familyId`` (``{seedId}``,
  ``{splitShort}``, ``{poolLetter}``, ``{hops}``, ``{outcomeShort}``, ``{layoutShort}``);
  ``cellKey`` (``{pool}``, ``{hops}``, ``{outcome}``, ``{layout}``).
- ``record``: ``requests`` (list of ``{id, arm, definitionId}``), ``provenanceSeed``
  (``{seed}``, ``{rowIndex}``).
- ``pools``: list of ``{id, letter, framing, words: {link, base, contrastive, nonConnective,
  enabled, disabled, ...notes}}``.
- ``splits``: list of ``{word, short, role}`` (role ``development`` marks dev-review rows).
- ``outcomes``: list of ``{word, short, failure}``; ``failure`` is null (gold yes) or ``{kind:
  link|relay, lineClass: cue class of the broken line or null for an absent line, positions:
  {first, last}}``: position = first + i mod (last − first + 1), counted over links 0..hops or
  relays 0..hops−1, negative values from the end (−1 = the last).
- ``layouts``: list of ``{word, short, rule (a rule id), names: neutral|role-letters,
  equalize (decoys, targets, shuffle), auditGated, positionOverrides: [{outcome, positions}]}``.
- ``cells``: the cells in allocation order: ``{split, splitShort, pool, poolLetter, hops,
  outcome, outcomeShort, layout, layoutShort, rows}`` (short codes are checked against the
  definitions above).
- ``chain``: ``linkClass`` and ``relayClass``: the cue classes of intact links and enabled relays.
- ``cueClasses``: in target-draw and decoy-generation order: ``{name, kind: pair|state,
  template ({a}, {b} for pairs; {a} for states), target: {hops, plus, draw}}`` (target =
  hops·hops + plus + draw(draw)).
- ``decoys``: ``entities`` (decoy names per equalized row) and ``pairs`` (ordered decoy-index
  pairs, used in turn by pair-class decoy lines; state decoys cycle through the entities).
- ``names``: ``neutral {consonants, vowels, digits, distinctPrefixLength}`` and ``roleLetters
  {letters, bound, base, width, pad}``.
- ``header``: ``day`` and ``quantity``: ``{bound, plus}`` (value = draw(bound) + plus).
- ``templates``: ``header`` (``{framing}`` first, ``{day}``, ``{quantity}``), ``factsMarker``,
  ``question`` (``{subject}``, ``{destination}``).
- ``rules``: list of ``{id, semantics: enabled-path|one-enabled-relay, template}``.
- ``dispatch``: ``firstSplits`` (allocation order) and ``permutedSplits`` (Fisher–Yates).
- ``audit``: ``split``, ``groupKey`` (``{layout}``, ``{pool}``, ``{hops}``), ``limit``, ``folds``,
  ``decimals``, ``entityPattern``, ``entityToken``, ``mentionSeparators`` (characters a line is
  split on to find name mentions), ``lineClasses`` (``{name, code}`` in feature order),
  ``otherLineClassCode``, ``lineClassRules`` (first match wins: ``{class, contains|endsWith}``),
  ``logistic {steps, learningRate, l2}``, ``positiveControl {hashMessage ({rowId}, {k})}``.
- ``seedPolicy``: ``pattern``, ``syntax`` (its wording for messages), ``publicSeeds``,
  ``publicPrefixes``, ``privateMinHexRun``, ``maxLength``, ``minDistinctHex`` and
  ``maxCountingRun`` (the entropy rule of a private seed's hex run).
- ``budget``: ``study {calls, tokens, usd}``, ``sharedCapUsd``, ``floorsUsd {study, portfolio}``,
  ``retriesPerRequest``, ``perRequestTokenBound``, ``reservationFloorUsdPerMillionTokens`` and
  informational ``outputAllowanceTokens``, ``providerOverheadTokens``, ``timeoutSeconds``,
  ``dispatchIntervalSeconds`` (see :mod:`.budget` for the arithmetic).
- ``calibration``: ``effectiveAt``, ``validDays``, ``sessionMinutes``.
- ``devReview``: ``perOutcome``: list of ``{outcome, items}`` (see :mod:`.review`).

The package imports its modules on first use (registry discovery imports :mod:`.plugin` only).
"""

from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["COMMANDS", "config_from_spec", "study_config"]


# the handlers' names, those of .handoff, .score_commands and .commands (tested to be exactly
# the names of their tables), so that a name is looked up without importing any of them
HANDLER_NAMES = frozenset(
    {
        "approval_template",
        "bundle",
        "validate_bundle",
        "dry_run_ledger",
        "ledger_freeze",
        "session_start",
        "session_end",
        "ledger_show",
        "diagnose",
        "score",
        "simulate",
        "calibrator_fit",
        "dry_run",
        "prepare",
        "dev_review_material",
        "audit_sweep",
    }
)


class _Commands(Mapping):
    """The handlers by name: those of :mod:`.commands`, overridden by :mod:`.score_commands`'
    and then :mod:`.handoff`'s.  A hand-off handler is found without importing
    :mod:`.score_commands` (numpy, the scoring), and a scoring or hand-off handler without
    :mod:`.commands` (the preparation, its learners and its worker pool): each module is
    imported only for one of its own handlers, or to list them all."""

    def __init__(self) -> None:
        self._handoff: dict[str, Callable[..., Any]] | None = None
        self._light: dict[str, Callable[..., Any]] | None = None
        self._every: dict[str, Callable[..., Any]] | None = None

    def handoff(self) -> dict[str, Callable[..., Any]]:
        if self._handoff is None:
            from .handoff import HANDOFF_COMMANDS

            self._handoff = dict(HANDOFF_COMMANDS)
        return self._handoff

    def light(self) -> dict[str, Callable[..., Any]]:
        if self._light is None:
            from .score_commands import SCORE_COMMANDS

            self._light = {**SCORE_COMMANDS, **self.handoff()}
        return self._light

    def every(self) -> dict[str, Callable[..., Any]]:
        if self._every is None:
            from .commands import COMMANDS

            self._every = {**COMMANDS, **self.light()}
        return self._every

    def __getitem__(self, name: str) -> Callable[..., Any]:
        for table in (self.handoff, self.light, self.every):
            found = table()
            if name in found:
                return found[name]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        """Whether a handler of this name exists, answered without importing a module (compile
        checks a spec's handlers; a test holds :data:`HANDLER_NAMES` to the tables)."""
        return name in HANDLER_NAMES

    def __iter__(self) -> Iterator[str]:
        return iter(self.every())

    def __len__(self) -> int:
        return len(self.every())


def __getattr__(name: str):
    if name == "COMMANDS":
        globals()["COMMANDS"] = commands = _Commands()
        return commands
    if name in ("config_from_spec", "study_config"):
        from . import config

        return getattr(config, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
