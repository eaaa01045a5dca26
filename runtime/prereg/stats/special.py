"""scipy.special's compiled functions without the cost of importing the scipy.special package.

``import scipy.special`` runs the package's ``__init__``, whose array-API support imports a
copy of numpy's whole namespace (numpy.f2py, numpy.ma, numpy.testing, numpy.polynomial among
it): about 0.3 s on this machine, where the compiled ufunc module itself loads in a few
hundredths.  The functions prereg uses (``stdtrit``, ``stdtr``, ``ndtr``, ``ndtri``,
``betaincinv``, ``betainccinv``) are numpy ufuncs of ``scipy.special._ufuncs``: the very
objects ``scipy.special`` exports (:func:`function` returns the same object, so every value is
the same bit for bit; the tests check the identity and the values).

:func:`function` loads ``scipy.special._ufuncs`` (and the compiled modules it imports) under a
bare stand-in for its parent package, then takes every module that load added out of
``sys.modules`` again, the stand-in included: a later ``import scipy.special`` runs the real
package as usual (the compiled modules keep their state and hand out the same ufunc objects).
When ``scipy.special`` is already imported, or the light load fails for any reason (another
scipy layout), it is the ordinary ``from scipy.special import name``.
"""

from __future__ import annotations

import sys

_ufuncs = None  # scipy.special._ufuncs, once loaded by _light_ufuncs


def _light_ufuncs():
    """``scipy.special._ufuncs`` loaded without running ``scipy.special/__init__.py``, or
    None when that fails; ``sys.modules`` is left as it was found."""
    global _ufuncs
    if _ufuncs is not None:
        return _ufuncs
    import importlib
    import os
    import types

    import scipy

    before = set(sys.modules)
    stand_in = types.ModuleType("scipy.special")
    stand_in.__path__ = [os.path.join(os.path.dirname(scipy.__file__), "special")]
    sys.modules["scipy.special"] = stand_in
    try:
        _ufuncs = importlib.import_module("scipy.special._ufuncs")
    except Exception:
        _ufuncs = None
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
    return _ufuncs


def function(name: str):
    """scipy.special's ``name`` (a compiled ufunc of ``scipy.special._ufuncs``)."""
    special = sys.modules.get("scipy.special")
    if special is None:
        ufuncs = _light_ufuncs()
        if ufuncs is not None and hasattr(ufuncs, name):
            return getattr(ufuncs, name)
    import scipy.special

    return getattr(scipy.special, name)


# -- one compiled module alone ---------------------------------------------------------------
#
# Some of scipy.special's functions (``ndtr`` and the error functions among them) live in the
# compiled module ``scipy.special._special_ufuncs``, which imports neither the scipy package
# nor the other compiled modules: loaded from its file alone it costs a few million
# instructions, where the scipy package and ``_ufuncs`` cost about seventy. As with
# :func:`function`, nothing is left in ``sys.modules``, and a later ``import scipy.special``
# hands out the same objects (the tests check the identity and the values).

_SPECIAL = "scipy.special._special_ufuncs"
_special = None  # that module, once loaded by _special_ufuncs


def _special_ufuncs():
    """``scipy.special._special_ufuncs`` loaded from its file without its packages, or None
    when that fails; ``sys.modules`` is left as it was found."""
    global _special
    if _special is not None:
        return _special
    import importlib.machinery
    import importlib.util
    import os

    import numpy  # noqa: F401 (the compiled module imports numpy's C API: loaded for good)

    before = set(sys.modules)
    try:
        scipy_spec = importlib.util.find_spec("scipy")
        folder = os.path.join(scipy_spec.submodule_search_locations[0], "special")
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_special_ufuncs" + suffix)
            if os.path.isfile(path):
                break
        else:
            return None
        loader = importlib.machinery.ExtensionFileLoader(_SPECIAL, path)
        spec = importlib.util.spec_from_file_location(_SPECIAL, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except Exception:
        return None
    finally:
        for added in set(sys.modules) - before:  # single-phase init registers the module
            del sys.modules[added]
    _special = module
    return _special


def special_function(name: str):
    """scipy.special's ``name`` from ``_special_ufuncs`` loaded alone (see above), or
    :func:`function` when scipy.special is imported already, the light load fails, or the
    module has no such function."""
    if sys.modules.get("scipy.special") is None:
        module = _special_ufuncs()
        if module is not None and hasattr(module, name):
            return getattr(module, name)
    return function(name)
