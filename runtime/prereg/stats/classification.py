"""Classification scores."""

from __future__ import annotations

import numpy as np


def balanced_accuracy(y_true, y_pred) -> float:
    """(TPR + TNR) / 2 for boolean labels and predictions; 0.5 when a class is absent."""
    y = np.asarray(y_true, dtype=bool)
    p = np.asarray(y_pred, dtype=bool)
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return 0.5
    tpr = int((p & y).sum()) / n_pos
    tnr = int((~p & ~y).sum()) / n_neg
    return (tpr + tnr) / 2
