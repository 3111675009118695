"""afr_cli.analysis.distributions gives scipy.stats' floats bit for bit (afr's tests compute their t,
chi² and F tails without importing scipy.stats, whose import is slow), over a grid of arguments
and at the edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from afr_cli.analysis.distributions import chi2_sf, f_sf, normal_sf, t_cdf, t_interval, t_ppf, t_sf

# scipy.stats warns of the invalid arguments (a zero scale, NaN) the edge cases pass on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def same(ours: float, ref) -> bool:
    """Equal as floats, NaN equal to NaN (the tests ask for scipy's value exactly, not close)."""
    ref = float(ref)
    return (math.isnan(ours) and math.isnan(ref)) or (ours == ref and math.copysign(1, ours) == math.copysign(1, ref))


XS = [-math.inf, -40.0, -7.3, -2.0, -1e-9, -0.0, 0.0, 1e-12, 0.3, 1.0, 2.228, 5.5, 37.0, math.inf, math.nan]
DFS = [1, 2, 3, 4.5, 10, 29, 198, 1e6, math.inf, 0, -1, math.nan]
LOC_SCALE = [(0.0, 1.0), (0.0123, 0.0045), (-0.4, 2.5), (0.0, 0.0), (0.0, -1.0), (math.nan, 1.0)]


@pytest.mark.parametrize("df", DFS)
@pytest.mark.parametrize("loc,scale", LOC_SCALE)
def test_t_cdf_and_sf_equal_scipy(df, loc, scale):
    for x in XS:
        assert same(t_cdf(x, df, loc, scale), sps.t.cdf(x, df, loc=loc, scale=scale)), (x, df, loc, scale)
        assert same(t_sf(x, df, loc, scale), sps.t.sf(x, df, loc=loc, scale=scale)), (x, df, loc, scale)


QS = [0.0, 1e-300, 1e-12, 0.025, 0.05, 0.3, 0.5, 0.7, 0.95, 0.975, 1 - 1e-12, 1.0, -0.1, 1.1, math.nan]


@pytest.mark.parametrize("df", DFS)
@pytest.mark.parametrize("loc,scale", LOC_SCALE)
def test_t_ppf_and_interval_equal_scipy(df, loc, scale):
    for q in QS:
        assert same(t_ppf(q, df, loc, scale), sps.t.ppf(q, df, loc=loc, scale=scale)), (q, df, loc, scale)
    for level in (0.0, 0.5, 0.9, 0.95, 0.99, 1.0):
        ours = t_interval(level, df, loc, scale)
        ref = sps.t.interval(level, df, loc=loc, scale=scale)
        assert same(ours[0], ref[0]) and same(ours[1], ref[1]), (level, df, loc, scale)


def test_t_interval_refuses_a_level_outside_0_1_as_scipy_does():
    for level in (-0.1, 1.5):
        with pytest.raises(ValueError):
            sps.t.interval(level, 3)
        with pytest.raises(ValueError):
            t_interval(level, 3)


def test_t_functions_at_random_points_equal_scipy():
    rng = np.random.default_rng(35)
    for _ in range(2000):
        df = int(rng.integers(1, 300))
        loc, scale = rng.normal(0, 0.05), rng.uniform(1e-4, 0.1)
        x, q = rng.normal(loc, 4 * scale), rng.uniform()
        assert same(t_cdf(x, df, loc, scale), sps.t.cdf(x, df, loc=loc, scale=scale))
        assert same(t_sf(x, df, loc, scale), sps.t.sf(x, df, loc=loc, scale=scale))
        assert same(t_ppf(q, df, loc, scale), sps.t.ppf(q, df, loc=loc, scale=scale))


def test_normal_sf_equals_scipy():
    for x in [*XS, *np.linspace(-9, 9, 301)]:
        assert same(normal_sf(x), sps.norm.sf(x)), x


@pytest.mark.parametrize("df", DFS)
def test_chi2_sf_equals_scipy(df):
    for x in [*XS, 0.5, 3.84, 11.07, 250.0]:
        assert same(chi2_sf(x, df), sps.chi2.sf(x, df)), (x, df)


@pytest.mark.parametrize("dfn", [1, 2, 3, 7, 0, math.nan])
@pytest.mark.parametrize("dfd", [1, 3, 30, 1000, 0, -2])
def test_f_sf_equals_scipy(dfn, dfd):
    for x in [*XS, 0.5, 2.87, 9.0, 1e4]:
        assert same(f_sf(x, dfn, dfd), sps.f.sf(x, dfn, dfd)), (x, dfn, dfd)


def test_importing_the_module_loads_no_scipy():
    import subprocess
    import sys

    probe = "import sys, afr_cli.analysis.distributions; print(any(m.startswith('scipy') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
