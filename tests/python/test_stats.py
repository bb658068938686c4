"""Statistics across seeds: Student-t intervals, and saying so when runs are too few."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from airsched import stats


def test_interval_is_student_t() -> None:
    # n = 3: mean 2, s = 1, t(0.975, 2) = 4.302652729749464 (tables of Student's t).
    n, mean, std, half = stats.mean_ci([1.0, 2.0, 3.0])
    assert (n, mean, std) == (3, 2.0, 1.0)
    assert half == pytest.approx(4.302652729749464 / math.sqrt(3), rel=1e-9)
    # 90 %: t(0.95, 2) = 2.919985580355516.
    assert stats.mean_ci([1.0, 2.0, 3.0], 0.9)[3] == pytest.approx(2.919985580355516 / math.sqrt(3), rel=1e-9)
    # Many runs: close to the normal 1.96.
    xs = [float(i % 2) for i in range(1000)]
    assert stats.mean_ci(xs)[3] == pytest.approx(1.9623 * stats.mean_ci(xs)[2] / math.sqrt(1000), rel=1e-3)


def test_too_few_runs_give_no_interval() -> None:
    n, mean, std, half = stats.mean_ci([5.0, float("nan")])
    assert (n, mean) == (1, 5.0) and math.isnan(std) and math.isnan(half)
    df = pd.DataFrame({"q": ["a", "a", "b"], "x": [1.0, 3.0, 7.0]})
    s = stats.summarize(df, ["q"], ["x"])
    assert list(s["too_few"]) == [False, True]
    assert s.loc[0, "ci_low"] == pytest.approx(2.0 - 12.706204736174698 * 1.4142135623730951 / math.sqrt(2), rel=1e-9)
    assert stats.format_mean_ci(7.0, float("nan")) == "7.000 (n<2)"
    table = stats.stats_table(s, ["q"], "t")
    assert "no confidence interval" in table.caption


def test_summarize_names_missing_columns() -> None:
    with pytest.raises(ValueError, match="no column"):
        stats.summarize(pd.DataFrame({"a": [1]}), ["b"], ["a"])
