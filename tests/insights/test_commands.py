"""Each command and function on small inputs, expectations computed from the inputs directly."""

import math
from datetime import datetime, timezone

import pytest

from fanout import insights

from .support import BASE_MS, event, json_event


def run(text, events):
    return insights.evaluate(text, events).rows


def one(text, record):
    """The single row of `text` over one JSON event."""
    (row,) = run(text, [json_event(record)])
    return row


RECORDS = [{"n": n, "s": f"item-{n}", "kind": "odd" if n % 2 else "even"} for n in range(1, 11)]
EVENTS = [json_event(r, BASE_MS + 1000 * i) for i, r in enumerate(RECORDS)]


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("n + 2", 9), ("n - 10", -3), ("n * 1.5", 10.5), ("n / 2", 3.5), ("n % 4", 3), ("n ^ 2", 49),
        ("-n", -7), ("(n + 1) * 2", 16), ("2 + n * 3", 23), ("2 ^ 3 ^ 2", 512),
        ("abs(-n)", 7), ("ceil(n / 2)", 4), ("floor(n / 2)", 3), ("sqrt(n * 7)", 7), ("log(n)", math.log(7)),
        ("greatest(n, 3, 12)", 12), ("least(n, 3, 12)", 3), ("concat(s, '/', n)", "item-7/7"),
        ("strlen(s)", 6), ("toupper(s)", "ITEM-7"), ("tolower('AbC')", "abc"), ("substr(s, 5)", 7),
        ("substr(s, 0, 4)", "item"), ("replace(s, 'item', 'x')", "x-7"), ("strcontains(s, 'em')", 1),
        ("strcontains(s, 'zz')", 0), ("isempty(missing)", 1), ("isempty(s)", 0), ("isblank('  ')", 1),
        ("ispresent(n)", 1), ("ispresent(missing)", 0), ("coalesce(missing, s)", "item-7"),
        ("tomillis(@timestamp)", BASE_MS), ("frommillis(n * 1000)", "1970-01-01 00:00:07.000"),
        ("datefloor(@timestamp, 1h)", "2024-05-01 12:00:00.000"), ("dateceil(@timestamp + 1, 1d)", "2024-05-02 00:00:00.000"),
    ],
)  # fmt: skip
def test_expressions(expression, expected):
    row = one(f"fields {expression} as value", {"n": 7, "s": "item-7"})
    assert row["value"] == pytest.approx(expected) if isinstance(expected, float) else row["value"] == expected


@pytest.mark.parametrize("expression", ["n / 0", "missing + 1", "s * 2", "sqrt(-1)", "(-8) ^ 0.5", "log(0)"])
def test_impossible_arithmetic_gives_an_absent_value(expression):
    assert one(f"fields {expression} as value, n", {"n": 7, "s": "x"}).get("value") is None


@pytest.mark.parametrize(
    "condition, keep",
    [
        ("n > 5", lambda r: r["n"] > 5), ("n <= 3 or n = 10", lambda r: r["n"] <= 3 or r["n"] == 10),
        ("kind = 'odd' and n != 3", lambda r: r["kind"] == "odd" and r["n"] != 3),
        ("not kind = 'odd'", lambda r: r["kind"] != "odd"), ("n in [2, 4, 99]", lambda r: r["n"] in (2, 4)),
        ("s not in ['item-1', 'item-2']", lambda r: r["s"] not in ("item-1", "item-2")),
        ("s like 'm-1'", lambda r: "m-1" in r["s"]), ("s like /-[2-4]$/", lambda r: 2 <= r["n"] <= 4),
        ("s =~ /(?i)ITEM-5/", lambda r: r["n"] == 5), ("ispresent(missing)", lambda r: False),
        ("not ispresent(missing) and n >= '9'", lambda r: r["n"] >= 9), ("s not like 'item-1'", lambda r: r["n"] != 1 and r["n"] != 10),
    ],
)  # fmt: skip
def test_filter(condition, keep):
    rows = run(f"filter {condition} | fields n | sort n asc", EVENTS)
    assert [row["n"] for row in rows] == [r["n"] for r in RECORDS if keep(r)]


def test_default_columns_sort_limit_and_display():
    rows = run("sort @timestamp desc | limit 3", EVENTS)
    assert [row["@message"] for row in rows] == [e["message"] for e in EVENTS[::-1][:3]]
    assert rows[0]["@timestamp"] == datetime.fromtimestamp((BASE_MS + 9000) / 1000, timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S.000"
    )
    rows = run("fields n, s, kind | sort kind asc, n desc | display s", EVENTS)
    expected = sorted(RECORDS, key=lambda r: (r["kind"], -r["n"]))
    assert rows == [{"s": r["s"]} for r in expected]


def test_sort_puts_absent_values_last_both_ways():
    events = EVENTS[:3] + [json_event({"other": 1})]
    for direction in ("asc", "desc"):
        rows = run(f"fields n, other | sort n {direction}", events)
        assert rows[-1]["n"] is None


def test_dedup_keeps_the_first_row_per_value_in_sort_order():
    rows = run("fields kind, n | sort n desc | dedup kind", EVENTS)
    assert [(r["kind"], r["n"]) for r in rows] == [("even", 10), ("odd", 9)]


def test_parse_glob_and_regex_leave_non_matching_events_alone():
    events = [event("user=alice took 12 ms"), event("unrelated line"), event("user=bob took 7 ms")]
    rows = run('parse @message "user=* took * ms" as user, took | sort @timestamp asc', events)
    assert [(r.get("user"), r.get("took")) for r in rows] == [("alice", 12), (None, None), ("bob", 7)]
    rows = run("parse @message /user=(?<user>\\w+) took (?<took>\\d+)/ | stats sum(took) as total, count(user) as users", events)
    assert rows == [{"total": 19, "users": 2}]


def test_stats_functions_and_groups():
    rows = run(
        "stats count(*) as all, count() as all2, count(n) as with_n, count_distinct(kind) as kinds, sum(n) as total,"
        " avg(n) as mean, min(n) as lo, max(n) as hi, stddev(n) as sd, pct(n, 50) as median,"
        " percentile(n, 90) as p90, earliest(s) as first, latest(s) as last",
        EVENTS + [json_event({"other": 1}, BASE_MS - 5)],
    )
    values = [r["n"] for r in RECORDS]
    mean = sum(values) / len(values)
    assert rows == [{
        "all": 11, "all2": 11, "with_n": 10, "kinds": 2, "total": sum(values), "mean": mean, "lo": 1, "hi": 10,
        "sd": pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in values) / 9)), "median": 5.5,
        "p90": pytest.approx(9.1), "first": "item-1", "last": "item-10",
    }]  # fmt: skip
    rows = run("stats sum(n) as total by kind | sort kind asc", EVENTS)
    assert rows == [{"kind": "even", "total": 30}, {"kind": "odd", "total": 25}]


@pytest.mark.parametrize(
    "unit, floor",
    [
        ("100ms", lambda d: d.replace(microsecond=d.microsecond // 100_000 * 100_000)),
        ("1s", lambda d: d.replace(microsecond=0)), ("5m", lambda d: d.replace(minute=d.minute // 5 * 5, second=0, microsecond=0)),
        ("2h", lambda d: d.replace(hour=d.hour // 2 * 2, minute=0, second=0, microsecond=0)),
        ("1d", lambda d: d.replace(hour=0, minute=0, second=0, microsecond=0)),
        ("1w", lambda d: (d.replace(hour=0, minute=0, second=0, microsecond=0) - __import__("datetime").timedelta(days=d.weekday()))),
        ("1mo", lambda d: d.replace(day=1, hour=0, minute=0, second=0, microsecond=0)),
        ("1q", lambda d: d.replace(month=(d.month - 1) // 3 * 3 + 1, day=1, hour=0, minute=0, second=0, microsecond=0)),
        ("1y", lambda d: d.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)),
        ("3hours", lambda d: d.replace(hour=d.hour // 3 * 3, minute=0, second=0, microsecond=0)),
    ],
)  # fmt: skip
def test_bin_every_unit(unit, floor):
    stamps = [BASE_MS + k * 7_654_321 for k in range(0, 3000, 37)]
    rows = run(f"stats count(*) as n by bin({unit}) as t", [json_event({"x": 1}, ts) for ts in stamps])
    expected = {}
    for ts in stamps:
        start = floor(datetime.fromtimestamp(ts / 1000, timezone.utc))
        key = start.strftime("%Y-%m-%d %H:%M:%S.") + f"{start.microsecond // 1000:03d}"
        expected[key] = expected.get(key, 0) + 1
    assert {r["t"]: r["n"] for r in rows} == expected


def test_second_stats_aggregates_the_first():
    events = [json_event({"x": i}, BASE_MS + i * 250) for i in range(40)]  # 4 events per second
    rows = run("stats count(*) as per_second by bin(1s) | stats avg(per_second) as mean, max(per_second) as peak", events)
    assert rows == [{"mean": 4, "peak": 4}]


def test_system_fields():
    ev = event('{"a": 1}', BASE_MS, stream="stream-1", ingestion=BASE_MS + 42)
    (row,) = insights.evaluate("fields @logStream, @log, @ingestionTime - @timestamp as lag, @message", [ev], log="1:/g").rows
    assert row == {"@logStream": "stream-1", "@log": "1:/g", "lag": 42, "@message": '{"a": 1}'}


def test_limit_counts_rows_after_sort():
    rows = run("fields n | sort n desc | limit 2", EVENTS)
    assert [r["n"] for r in rows] == [10, 9]
