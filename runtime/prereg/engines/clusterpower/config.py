"""The vocabulary the cluster-power-freeze engine reads a study by."""

from __future__ import annotations

#: The roles of the calibration input's fields (the record contract with role ``calibration``).
FIELD_ROLES = ("stage", "repository", "task", "class", "statistic")
