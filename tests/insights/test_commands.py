"""Each command on small inputs, expectations computed from the inputs directly (plain Python, numpy)."""

import random
from collections import Counter
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from fanout import insights
from fanout.insights.extract import EXTRACTORS
from fanout.insights.syntax import PARSE_MODES

from .support import BASE_MS, event, json_event


def run(text, events):
    return insights.evaluate(text, events).rows


RECORDS = [{"n": n, "s": f"item-{n}", "kind": "odd" if n % 2 else "even"} for n in range(1, 11)]
EVENTS = [json_event(r, BASE_MS + 1000 * i) for i, r in enumerate(RECORDS)]


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


def test_the_last_display_wins():
    rows = run("fields n, s, kind | display s | sort n asc | display kind, n", EVENTS)
    assert rows == [{"kind": r["kind"], "n": r["n"]} for r in RECORDS]


def test_limit_without_sort_keeps_the_first_events_read():
    assert [r["n"] for r in run("fields n | limit 3", EVENTS)] == [r["n"] for r in RECORDS[:3]]


def test_limit_counts_rows_after_sort():
    rows = run("fields n | sort n desc | limit 2", EVENTS)
    assert [r["n"] for r in rows] == sorted((r["n"] for r in RECORDS), reverse=True)[:2]


# AWS's example of an ascending sort (CWL_QuerySyntax-Sort): text before numbers, text in natural
# order (runs of digits by length, then value; everything else by code point).
AWS_ASCENDING = ["!:", "#", "*%04", "0#", "5A", "111A", "2345_", "@", "@_", "A", "A9876fghj", "a12345hfh",
                 "0", "01", "1", "2", "3"]  # fmt: skip


@pytest.mark.parametrize("direction, expected", [("asc", AWS_ASCENDING), ("desc", AWS_ASCENDING[::-1])])
def test_sort_order_is_the_documented_natural_order(direction, expected):
    values = AWS_ASCENDING[:]
    random.Random(5).shuffle(values)
    events = [json_event({"v": v}, BASE_MS + i) for i, v in enumerate(values)] + [json_event({"other": 1})]
    rows = run(f"fields v | sort v {direction}", events)
    assert [str(row["v"]) for row in rows[:-1]] == expected  # "01" stays text, the others read back as typed
    assert rows[-1]["v"] is None  # absent values last either way


def test_sort_orders_json_numbers_numerically_after_text():
    values = [10, 9.5, "b10", -3, "b9", 100, "B"]
    events = [json_event({"v": v}) for v in values]
    rows = run("fields v | sort v asc", events)
    assert [row["v"] for row in rows] == ["B", "b9", "b10"] + sorted(v for v in values if not isinstance(v, str))


def test_sort_puts_absent_values_last_both_ways():
    events = EVENTS[:3] + [json_event({"other": 1})]
    for direction in ("asc", "desc"):
        rows = run(f"fields n, other | sort n {direction}", events)
        assert rows[-1]["n"] is None


def test_dedup_keeps_the_first_row_per_value_in_sort_order():
    rows = run("fields kind, n | sort n desc | dedup kind", EVENTS)
    first = {}
    for r in sorted(RECORDS, key=lambda r: -r["n"]):
        first.setdefault(r["kind"], r["n"])
    assert [(r["kind"], r["n"]) for r in rows] == list(first.items())


def test_dedup_on_several_fields_keeps_every_row_lacking_one():
    records = [{"a": 1, "b": "x", "i": 0}, {"a": 1, "b": "x", "i": 1}, {"a": 1, "b": "y", "i": 2}, {"a": 2, "i": 3},
               {"a": 2, "i": 4}, {"b": "x", "i": 5}, {"a": "1", "b": "x", "i": 6}, {"a": 2, "b": "x", "i": 7}]  # fmt: skip
    rows = run("fields i | dedup a, b", [json_event(r) for r in records])
    seen, expected = set(), []
    for r in records:
        key = (str(r.get("a")), r.get("b"))
        if "a" not in r or "b" not in r or key not in seen:  # 1 and "1" are the same value as text
            expected.append(r["i"])
            seen.add(key)
    assert [row["i"] for row in rows] == expected


def test_parse_glob_and_regex_leave_non_matching_events_alone():
    lines = [("alice", 12), None, ("bob", 7)]
    events = [event(f"user={u[0]} took {u[1]} ms" if u else "unrelated line", BASE_MS + i) for i, u in enumerate(lines)]
    rows = run('parse @message "user=* took * ms" as user, took | sort @timestamp asc', events)
    assert [(r.get("user"), r.get("took")) for r in rows] == [u or (None, None) for u in lines]
    rows = run("parse @message /user=(?<user>\\w+) took (?<took>\\d+)/ | stats sum(took) as total, count(user) as users", events)
    matched = [u for u in lines if u]
    assert rows == [{"total": sum(took for _, took in matched), "users": len(matched)}]


def test_parse_glob_star_before_text_is_shortest_and_a_trailing_star_takes_the_rest():
    message = '{"k": "a", "v": 3} then "k": "b" and the rest'
    rows = run("""parse @message '"k": "*"' as kk | parse @message '"v": * then * and *' as vv, ww, rest""",
               [event(message)])  # fmt: skip
    after_k = message.partition('"k": "')[2]
    after_v = message.partition('"v": ')[2]
    vv, _, tail = after_v.partition(" then ")
    ww, _, rest = tail.partition(" and ")
    assert rows[0]["kk"] == after_k.partition('"')[0]  # not up to the last quote of the message
    assert (rows[0]["vv"], rows[0]["ww"], rows[0]["rest"]) == (vv, ww, rest)


def test_stats_functions_and_groups():
    extra = json_event({"other": 1}, BASE_MS - 5)
    rows = run(
        "stats count(*) as all, count() as all2, count(n) as with_n, count_distinct(kind) as kinds, sum(n) as total,"
        " avg(n) as mean, min(n) as lo, max(n) as hi, stddev(n) as sd, pct(n, 50) as median,"
        " percentile(n, 90) as p90, earliest(s) as first, latest(s) as last",
        EVENTS + [extra],
    )
    values = np.array([r["n"] for r in RECORDS], dtype=float)
    assert rows == [{
        "all": len(EVENTS) + 1, "all2": len(EVENTS) + 1, "with_n": len(RECORDS),
        "kinds": len({r["kind"] for r in RECORDS}), "total": values.sum(), "mean": pytest.approx(values.mean()),
        "lo": values.min(), "hi": values.max(), "sd": pytest.approx(values.std(ddof=1)),
        "median": pytest.approx(np.percentile(values, 50)), "p90": pytest.approx(np.percentile(values, 90)),
        "first": RECORDS[0]["s"], "last": RECORDS[-1]["s"],
    }]  # fmt: skip
    rows = run("stats sum(n) as total by kind | sort kind asc", EVENTS)
    totals = Counter()
    for r in RECORDS:
        totals[r["kind"]] += r["n"]
    assert rows == [{"kind": kind, "total": totals[kind]} for kind in sorted(totals)]


def test_earliest_and_latest_follow_timestamps_not_reading_order():
    rng = random.Random(11)
    stamps = rng.sample(range(BASE_MS, BASE_MS + 100_000), 40)
    events = [json_event({"v": f"v{i}", "g": i % 3} if i % 5 else {"g": i % 3}, ts) for i, ts in enumerate(stamps)]
    rows = run("stats earliest(v) as first, latest(v) as last by g | sort g asc", events)
    expected = []
    for g in sorted({i % 3 for i in range(len(stamps))}):
        having = [(ts, f"v{i}") for i, ts in enumerate(stamps) if i % 3 == g and i % 5]
        expected.append({"g": g, "first": min(having)[1], "last": max(having)[1]})
    assert rows == expected


@pytest.mark.parametrize(
    "unit, floor",
    [
        ("100ms", lambda d: d.replace(microsecond=d.microsecond // 100_000 * 100_000)),
        ("1s", lambda d: d.replace(microsecond=0)), ("5m", lambda d: d.replace(minute=d.minute // 5 * 5, second=0, microsecond=0)),
        ("2h", lambda d: d.replace(hour=d.hour // 2 * 2, minute=0, second=0, microsecond=0)),
        ("1d", lambda d: d.replace(hour=0, minute=0, second=0, microsecond=0)),
        ("1w", lambda d: (d.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=d.weekday()))),
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
    stamps = [BASE_MS + int(i * 1000 / (1 + i % 4)) for i in range(40)]
    events = [json_event({"x": i}, ts) for i, ts in enumerate(stamps)]
    rows = run("stats count(*) as per_second by bin(1s) | stats avg(per_second) as mean, max(per_second) as peak", events)
    per_second = Counter(ts // 1000 for ts in stamps)
    assert rows == [{"mean": pytest.approx(np.mean(list(per_second.values()))), "peak": max(per_second.values())}]


def test_system_fields():
    ev = event('{"a": 1}', BASE_MS, stream="stream-1", ingestion=BASE_MS + 42)
    (row,) = insights.evaluate("fields @logStream, @log, @ingestionTime - @timestamp as lag, @message", [ev], log="1:/g").rows
    assert row == {"@logStream": "stream-1", "@log": "1:/g", "lag": ev["ingestionTime"] - ev["timestamp"],
                   "@message": ev["message"]}  # fmt: skip
    (row,) = insights.evaluate("fields @log", [{**ev, "log": "2:/exported"}], log="1:/g").rows
    assert row == {"@log": "2:/exported"}  # an exported event's own @log wins



def test_stats_items_over_aggregates_and_earlier_items():
    rows = run("stats sum(n) / count(*) as mean, max(n) - min(n) as spread, mean * 2 as double, count(*) as c, "
               "c + spread as mixed, sum(n) / 1024 by kind | sort kind asc", EVENTS)  # fmt: skip
    for row, kind in zip(rows, ("even", "odd")):
        values = [r["n"] for r in RECORDS if r["kind"] == kind]
        spread = max(values) - min(values)
        assert row == {"kind": kind, "mean": sum(values) / len(values), "spread": spread,
                       "double": sum(values) / len(values) * 2, "c": len(values), "mixed": len(values) + spread,
                       "sum(n) / 1024": sum(values) / 1024}  # fmt: skip
    assert len(rows) == 2


def test_display_computes_expressions_and_aliases():
    rows = run("fields n, s | sort n asc | display n * 2 as double, concat(s, '!'), kind", EVENTS)
    assert rows == [{"double": r["n"] * 2, "concat(s, '!')": r["s"] + "!", "kind": r["kind"]} for r in RECORDS]


def test_dedup_without_sort_keeps_the_newest_row_per_value():
    rows = run("fields kind, n | dedup kind", EVENTS)  # EVENTS are oldest first
    newest = {}
    for r in reversed(RECORDS):
        newest.setdefault(r["kind"], r["n"])
    assert [(r["kind"], r["n"]) for r in rows] == list(newest.items())
    assert len(run("fields kind | dedup kind | limit 1", EVENTS)) == 1  # limit may follow dedup


def test_sorts_first_and_last_follow_the_documented_sort_order():
    ordered = ["!:", "#", "*%04", "0#", "5A", "111A", "2345_", "@", "@_", "A", "A9876fghj", "a12345hfh", "0", "01", "1", "2", "3"]
    shuffled = ordered[:]
    random.Random(5).shuffle(shuffled)
    events = [json_event({"v": v, "g": i % 2}, BASE_MS + i) for i, v in enumerate(shuffled)] + [json_event({"g": 0})]
    rows = run("stats sortsFirst(v) as first, sortsLast(v) as last", events)
    assert rows == [{"first": ordered[0], "last": int(ordered[-1])}]


def test_min_max_and_percentiles_of_timestamp_are_times():
    rows = run("stats min(@timestamp) as first, max(@timestamp) as last, pct(@timestamp, 0) as p0, "
               "count(*) as n", EVENTS)  # fmt: skip
    shown = [datetime.fromtimestamp(e["timestamp"] / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.000") for e in EVENTS]
    assert rows == [{"first": min(shown), "last": max(shown), "p0": min(shown), "n": len(EVENTS)}]


def test_every_parse_mode_has_an_extractor_and_the_field_defaults_to_message():
    assert set(EXTRACTORS) == set(PARSE_MODES)
    events = [event("level=warn code=7", BASE_MS), event("a,b", BASE_MS + 1)]
    rows = run("parse logfmt as lf | parse csv as x, y | sort @timestamp asc | display lf.level, lf.code, x, y", events)
    assert rows == [{"lf.level": "warn", "lf.code": 7, "x": "level=warn code=7", "y": None},
                    {"lf.level": None, "lf.code": None, "x": "a", "y": "b"}]  # fmt: skip
