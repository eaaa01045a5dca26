"""Statistics oracles as the tests call them.

statsmodels' ``multipletests`` runs a full garbage collection (``gc.collect()``) on every Holm
call. In a test process, which holds every module and test object it has loaded, that is 0.1
to 1 s a call, and a property test of a hundred examples took 98 s. :func:`multipletests` is
statsmodels' own function with ``gc.collect`` made a no-op for the call: the collection frees
memory and changes no figure.
"""

from __future__ import annotations

import gc

from statsmodels.stats.multitest import multipletests as _multipletests


def multipletests(*args, **kwargs):
    real = gc.collect
    gc.collect = lambda generation=2: 0
    try:
        return _multipletests(*args, **kwargs)
    finally:
        gc.collect = real
