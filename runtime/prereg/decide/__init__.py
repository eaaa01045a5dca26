"""The decision machinery every engine shares: rows → counted attempts → derived fields →
metrics over selections → registered estimates and contrasts → families → gates → verdicts.

A study registers what is computed (``metrics[].compute``, ``derived_fields``, ``attempts``)
and its rules (estimates, contrasts, families, gates, hypotheses); engines only supply the
rows (which cell each belongs to, any row attributes and item fields) and, where a study
needs it, extra per-row fields (say a calibrated probability). Interval and test methods come
from the one registry in :mod:`prereg.stats.methods`, by the name the spec writes.

- :mod:`.fields`: field conditions and derived fields over columns of rows
- :mod:`.table`: the registered rows and their cells
- :mod:`.attempts`: which observation record of a row counts
- :mod:`.metrics`: per-row numerators and denominators of each metric
- :mod:`.evaluate`: registered results, gates and verdicts
"""
