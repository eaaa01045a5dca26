"""Operating characteristics of a study's registered decision rules, by simulation.

``prereg <study> diagnose --scenario NAME ... --simulations N --seed S --out FILE`` simulates
N complete studies under each registered scenario (``scenarios`` in the language), with the
registered cells and row counts, scores each with the study's own rules through
:mod:`prereg.decide` (``registered_results`` and ``decide_all``, as ``score`` does), and
reports per hypothesis the share of each verdict, per contrast its rejection rates, per
estimate and contrast the bias and interval coverage against the scenario's truth, and the
share of runs a gate failed; it also checks every registered sizing claim (``claims``).

The simulation works on counts, not rows.  An engine describes its registered rows as *row
groups* (a cell, crossed with the engine's row attributes such as d17's failure position) and
what each kind of row contributes to each metric (:mod:`.design`): under a scenario a row is
unobserved (dropped by coverage), or observed with its outcome right or wrong, at its first
attempt or after a failed one.  The engine finds each kind's contribution by scoring one
prototype row of each kind per group through its own scoring code, so the counts path and the
row path agree by construction (the tests check that they do).  A simulated study is then the
number of rows of each kind per group, a few binomial draws (:mod:`.model`), and its metrics
are those counts times the contributions: one row per group for :mod:`prereg.decide`.

Rules the counts cannot give (a method of the catalogue or a statistic of the study's own, a
mean or geometric mean of numbers a scenario draws, a confidence drawn by a calibration curve,
an ECE or AUROC, a paired contrast, a scenario pairing the rows of an item) take the *row path*
(:mod:`.rows`) when the engine gives its design a row model: each simulated study is the
observation records of every registered row, drawn as ``simulate`` writes them and scored by
the engine's own scoring code, then by ``registered_results``, ``decide_all`` and the
decision, as ``score`` does.

Randomness is drawn per block of simulations (``numpy.random.SeedSequence(seed,
spawn_key=(stream, block))``, the stream named by the scenario and effect size), so the output
bytes depend on neither the batch, the number of worker processes nor the scheduler
(:mod:`.runner`).

- :mod:`.design`: row groups, the kinds of row and their metric contributions; the rules.
- :mod:`.model`: a scenario at one effect size; drawing a block of simulated studies.
- :mod:`.run`: the plan shipped to workers; scoring a block through prereg.decide.
- :mod:`.rows`: the row path: whole simulated studies of records, scored as score scores them.
- :mod:`.runner`: blocks in this process, in local worker processes, or on a Dask cluster.
- :mod:`.summary`: the operating characteristics of each scenario.
- :mod:`.claims`: checking the registered sizing claims.
- :mod:`.redesign`: ``--vary`` and ``--target``: the diagnosis at other row counts, alphas
  or margins.
- :mod:`.command`: the ``diagnose`` command every engine that supports it declares.
"""
