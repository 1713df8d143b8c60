"""ICC against published values and against pingouin's ``intraclass_corr``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspect_empathy.stats._agreement import icc

SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                 [6, 2, 4, 7]]  # fmt: skip
"""Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges."""


def test_shrout_fleiss_published_values() -> None:
    """Their Table 4: ICC(2,1) .29, ICC(3,1) .71, ICC(2,4) .62, ICC(3,4) .91 (McGraw & Wong's
    A,1 / C,1 / A,k / C,k)."""
    out = icc(SHROUT_FLEISS)
    assert out["icc_a1"] == pytest.approx(0.29, abs=0.005)
    assert out["icc_c1"] == pytest.approx(0.71, abs=0.005)
    assert out["icc_ak"] == pytest.approx(0.62, abs=0.005)
    assert out["icc_ck"] == pytest.approx(0.91, abs=0.005)
    assert out["icc_n"] == 6


PINGOUIN = {"c1": ("ICC(C,1)", "ICC3"), "a1": ("ICC(A,1)", "ICC2"), "ck": ("ICC(C,k)", "ICC3k"),
            "ak": ("ICC(A,k)", "ICC2k")}  # fmt: skip
"""Our names and pingouin's (since 0.7, and before)."""


@pytest.mark.parametrize(("n", "k", "seed"), [(6, 4, None), (40, 2, 1), (25, 3, 2), (200, 2, 3)])
def test_matches_pingouin(n: int, k: int, seed: int | None) -> None:
    pingouin = pytest.importorskip("pingouin")
    import pandas as pd

    if seed is None:
        data = np.array(SHROUT_FLEISS, float)
    else:  # a judge (shifted, noisier) beside people's means, on 1-5
        rng = np.random.default_rng(seed)
        truth = rng.normal(3, 0.8, n)
        data = np.column_stack([truth + rng.normal(0.3 * r, 0.6, n) for r in range(k)])
        data = np.clip(np.round(data * 2) / 2, 1, 5)
    long = pd.DataFrame(
        [(t, r, data[t, r]) for t in range(len(data)) for r in range(data.shape[1])],
        columns=["target", "rater", "rating"],
    )
    table = pingouin.intraclass_corr(long, "target", "rater", "rating").set_index("Type")
    out = icc(data)
    for kind, names in PINGOUIN.items():
        name = next(n for n in names if n in table.index)
        assert out[f"icc_{kind}"] == pytest.approx(table.loc[name, "ICC"], abs=1e-9)
        # pingouin rounds its bounds to 2 decimals (column "CI95%" before 0.7, "CI95" since)
        low, high = table.loc[name, next(c for c in table.columns if c.startswith("CI95"))]
        assert out[f"icc_{kind}_low"] == pytest.approx(low, abs=0.005 + 1e-9)
        assert out[f"icc_{kind}_high"] == pytest.approx(high, abs=0.005 + 1e-9)


def test_missing_rows_left_out_and_undefined_is_nan() -> None:
    data = np.array(SHROUT_FLEISS, float)
    with_gap = np.vstack([data, [np.nan, 1, 2, 3]])
    assert icc(with_gap) == icc(data)
    assert math.isnan(icc([[3, 3]])["icc_c1"])
    assert math.isnan(icc([[3, 3], [3, 3]])["icc_a1"])
