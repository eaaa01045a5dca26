"""Statistical primitives that generated decision rules call.

Each concern is a small module (proportions, multiplicity, roc, calibration, resampling,
classification, rounding).  No primitive has a statistical default that a spec did not choose:
levels, methods and conventions are arguments.
"""
