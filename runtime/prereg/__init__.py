"""prereg: a compiler for study preregistrations.

A study's preregistration is a YAML spec (spec/studies/<id>.yaml).  ``prereg compile``
validates it and renders Python modules, JSON Schemas and a readable PREREG.md into
generated/<id>/; the engines in :mod:`prereg.engines` run the compiled study.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
