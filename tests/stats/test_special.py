"""prereg.stats.special: scipy.special's ufuncs loaded without the scipy.special package are
scipy.special's own objects, give its values bit for bit, and leave a later
``import scipy.special`` working as usual.

Each check runs in a fresh interpreter: in the test process scipy.special is usually imported
already, and then :func:`prereg.stats.special.function` is the ordinary import.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

NAMES = ["stdtrit", "stdtr", "ndtr", "ndtri", "betaincinv", "betainccinv"]


def run_fresh(code: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_light_load_does_not_import_the_package_and_hands_out_scipys_objects():
    out = run_fresh(
        f"""
        import json, sys
        from prereg.stats.special import function
        names = {NAMES!r}
        light = {{n: function(n) for n in names}}
        after_light = sorted(m for m in sys.modules if m.startswith("scipy.special"))
        import scipy.special
        import scipy.stats
        same = {{n: light[n] is getattr(scipy.special, n) for n in names}}
        subs = {{n: hasattr(scipy.special, n) for n in ("_ufuncs", "_basic", "_orthogonal")}}
        t = [float(scipy.stats.t.ppf(0.975, 11)), float(light["stdtrit"](11, 0.975))]
        print(json.dumps({{"after_light": after_light, "same": same, "subs": subs, "t": t}}))
        """
    )
    # the light load leaves no scipy.special module behind (the stand-in parent included)
    assert out["after_light"] == []
    assert out["same"] == dict.fromkeys(NAMES, True)
    # the real package imported afterwards is whole, and scipy.stats works on top of it
    assert out["subs"] == {"_ufuncs": True, "_basic": True, "_orthogonal": True}
    assert out["t"][0] == out["t"][1]
    assert abs(out["t"][0] - 2.2010) < 1e-4  # printed tables


def test_power_plan_t_quantiles_equal_scipy_stdtrit_bit_for_bit():
    # every df a plan can meet up to 5000 (G − 1 and n − 1), at the shipped level (0.95, so
    # q = 0.975) and at other two-sided levels; the light path first, scipy.special after
    out = run_fresh(
        """
        import json
        import numpy as np
        from prereg.stats.resampling import t_quantile, two_sided_quantile
        levels = [0.8, 0.9, 0.95, 0.98, 0.99, 0.999]
        dfs = np.arange(1, 5001)
        qs = [two_sided_quantile(lv) for lv in levels]
        light = {q: [t_quantile(q, int(d)) for d in dfs] for q in qs}
        light_vec = {q: t_quantile(q, dfs).tolist() for q in qs}
        import scipy.special
        ref = {q: scipy.special.stdtrit(dfs.astype(float), q).tolist() for q in qs}
        eq = {repr(q): [float(v).hex() for v in light[q]] == [v.hex() for v in ref[q]]
              for q in qs}
        eq_vec = {repr(q): [v.hex() for v in light_vec[q]] == [v.hex() for v in ref[q]]
                  for q in qs}
        print(json.dumps({"eq": eq, "eq_vec": eq_vec, "n": len(dfs)}))
        """
    )
    assert out["n"] == 5000
    assert set(out["eq"].values()) == {True}
    assert set(out["eq_vec"].values()) == {True}
    assert "0.975" in out["eq"]


def test_special_ufuncs_load_alone_and_hand_out_scipys_objects():
    """ndtr (and the error functions) from scipy.special's ``_special_ufuncs`` alone: neither
    the scipy package nor another scipy module is imported or left in sys.modules, and the
    package imported afterwards hands out the same object, giving the same values."""
    out = run_fresh(
        """
        import json, sys
        import numpy as np
        from prereg.stats.special import special_function
        ndtr = special_function("ndtr")
        after = sorted(m for m in sys.modules if m.split(".")[0] == "scipy")
        x = np.linspace(-40, 40, 200_001)
        light = ndtr(x)
        import scipy.special
        print(json.dumps({
            "after": after,
            "same": ndtr is scipy.special.ndtr,
            "erf": special_function("erf") is scipy.special.erf,
            "values": light.tobytes() == scipy.special.ndtr(x).tobytes(),
        }))
        """
    )
    assert out == {"after": [], "same": True, "erf": True, "values": True}
