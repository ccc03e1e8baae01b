"""Random data, random groupings: stats agree with numpy computed on the same values."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fanout import insights

from .support import BASE_MS

values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False) | st.integers(-10**6, 10**6)
records = st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from([1, 2]), values), min_size=1, max_size=60)
percents = st.lists(st.integers(0, 100) | st.floats(0, 100, allow_nan=False), min_size=1, max_size=4)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def events_of(rows):
    return [{"timestamp": BASE_MS + i, "message": json.dumps({"g": g, "h": h, "v": v})} for i, (g, h, v) in enumerate(rows)]


@SETTINGS
@given(rows=records, percents=percents, by=st.sampled_from([(), ("g",), ("g", "h"), ("h", "g")]))
def test_aggregates_match_numpy(rows, percents, by):
    pct_items = ", ".join(f"pct(v, {p}) as p{i}" for i, p in enumerate(percents))
    query = f"stats count(*) as n, sum(v) as total, avg(v) as mean, min(v) as lo, max(v) as hi, {pct_items}"
    query += f" by {', '.join(by)}" if by else ""
    result = insights.evaluate(query, events_of(rows))
    groups = {}
    for g, h, v in rows:
        groups.setdefault(tuple({"g": g, "h": h}[k] for k in by), []).append(v)
    assert len(result.rows) == len(groups)
    for row in result.rows:
        data = np.array(groups[tuple(row[k] for k in by)], dtype=float)
        assert row["n"] == len(data)
        assert row["total"] == pytest.approx(data.sum(), rel=1e-9, abs=1e-6)
        assert row["mean"] == pytest.approx(data.mean(), rel=1e-9, abs=1e-6)
        assert (row["lo"], row["hi"]) == (pytest.approx(data.min()), pytest.approx(data.max()))
        for i, p in enumerate(percents):
            assert row[f"p{i}"] == pytest.approx(np.percentile(data, p), rel=1e-9, abs=1e-6), (p, data)


@SETTINGS
@given(data=st.lists(values, min_size=2, max_size=80))
def test_stddev_is_the_sample_standard_deviation(data):
    (row,) = insights.evaluate("stats stddev(v) as sd", events_of([("a", 1, v) for v in data])).rows
    assert row["sd"] == pytest.approx(np.std(np.array(data, dtype=float), ddof=1), rel=1e-7, abs=1e-6)


@SETTINGS
@given(data=st.lists(st.sampled_from(["x", "y", "z", 1, 2, "1"]), min_size=1, max_size=40))
def test_count_distinct_is_exact(data):
    (row,) = insights.evaluate("stats count_distinct(v) as d", events_of([("a", 1, v) for v in data])).rows
    assert row["d"] == len({str(v) for v in data})  # values are text in Logs Insights: 1 and "1" are one


@SETTINGS
@given(rows=records)
def test_group_counts_partition_the_matched_records(rows):
    result = insights.evaluate("filter v >= 0 | stats count(*) as n by g, h", events_of(rows))
    assert sum(r["n"] for r in result.rows) == sum(1 for _, _, v in rows if v >= 0) == result.statistics["recordsMatched"]
