"""Operators, functions and values, each expectation computed in plain Python from the inputs."""

import math
import time
from datetime import datetime, timedelta, timezone

import pytest

from fanout import insights
from fanout.insights.values import parse_result_value

from .support import BASE_MS, json_event

N, S = 7, "item-7"  # the record every expression below is evaluated on
UTC = timezone.utc


def one(text, record, timestamp=BASE_MS):
    """The single row of `text` over one JSON event."""
    (row,) = insights.evaluate(text, [json_event(record, timestamp)]).rows
    return row


def shown(moment: datetime) -> str:
    """A time as Logs Insights shows it: UTC, milliseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


BASE = datetime.fromtimestamp(BASE_MS / 1000, UTC)


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("n + 2", N + 2), ("n - 10", N - 10), ("n * 1.5", N * 1.5), ("n / 2", N / 2), ("n % 4", N % 4),
        ("n ^ 2", N**2), ("-n", -N), ("(n + 1) * 2", (N + 1) * 2), ("2 + n * 3", 2 + N * 3),
        ("2 ^ 3 ^ 2", 2 ** (3**2)), ("n ^ 0.5", N**0.5), ("2 ^ 62 + 1", 2.0**62 + 1),
        # a leading minus applies to the whole power, as in Python; an exponent may carry a sign
        ("-2 ^ 2", -(2**2)), ("-n ^ 2", -(N**2)), ("(-n) ^ 2", (-N) ** 2), ("2 ^ -1", 2**-1), ("n * -2 ^ 2", N * -(2**2)),
        # the remainder takes the sign of the dividend
        ("-n % 3", math.fmod(-N, 3)), ("n % -3", math.fmod(N, -3)), ("-n % 2.5", math.fmod(-N, 2.5)),
        ("n * 4294967296 * 4294967296", float(N * 2**64)),  # beyond 64 bits: a float, as orjson reads it
        ("abs(-n)", abs(-N)), ("ceil(n / 2)", math.ceil(N / 2)), ("floor(n / 2)", math.floor(N / 2)),
        ("sqrt(n * 7)", math.sqrt(N * 7)), ("log(n)", math.log(N)), ("greatest(n, 3, 12)", max(N, 3, 12)),
        ("least(n, 3, 12)", min(N, 3, 12)), ("concat(s, '/', n)", f"{S}/{N}"), ("strlen(s)", len(S)),
        ("toupper(s)", S.upper()), ("tolower('AbC')", "abc"), ("substr(s, 2)", S[2:]), ("substr(s, 0, 4)", S[0:4]),
        ("replace(s, 'item', 'x')", S.replace("item", "x")), ("strcontains(s, 'em')", int("em" in S)),
        ("strcontains(s, 'zz')", int("zz" in S)), ("isempty(missing)", 1), ("isempty(s)", int(S == "")),
        ("isblank('  ')", 1), ("ispresent(n)", 1), ("ispresent(missing)", 0), ("coalesce(missing, s)", S),
        ("tomillis(@timestamp)", BASE_MS), ("frommillis(n * 1000)", shown(datetime.fromtimestamp(N, UTC))),
        ("datefloor(@timestamp, 1h)", shown(BASE.replace(minute=0, second=0, microsecond=0))),
        ("dateceil(@timestamp + 1, 1d)", shown(BASE.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1))),
    ],
)  # fmt: skip
def test_expressions(expression, expected):
    row = one(f"fields {expression} as value", {"n": N, "s": S})
    assert row["value"] == pytest.approx(expected) if isinstance(expected, float) else row["value"] == expected


@pytest.mark.parametrize(
    "expression",
    ["n / 0", "missing + 1", "s * 2", "sqrt(-1)", "(-8) ^ 0.5", "log(0)", "0 ^ -1", "n % 0",
     # ^ is computed in floating point: what overflows is absent, and never hangs or crashes
     "9 ^ 9 ^ 9", "10 ^ 5000", "10 ^ 400 * 1.0", "-(10 ^ 400)", "n ^ 400 ^ 2",
     "frommillis(10 ^ 30)", "datefloor(n * 10 ^ 15, 1mo)", "dateceil(253402300799999, 1y)"],
)  # fmt: skip
def test_impossible_arithmetic_gives_an_absent_value(expression):
    assert one(f"fields {expression} as value, n", {"n": N, "s": "x"}).get("value") is None


def test_text_times_work_like_timestamps():
    """toMillis, datefloor and dateceil read ISO 8601 text (UTC without an offset)."""
    moment = datetime(2024, 5, 1, 12, 34, 56, 789_000, tzinfo=UTC)
    millis = int(moment.timestamp()) * 1000 + moment.microsecond // 1000
    floor = moment.replace(minute=0, second=0, microsecond=0)
    for text in ("2024-05-01 12:34:56,789+0000", "2024-05-01T12:34:56.789Z", "2024-05-01 12:34:56.789",
                 "2024-05-01T14:34:56.789+02:00"):  # fmt: skip
        row = one("fields tomillis(t) as ms, datefloor(t, 1h) as hour, dateceil(t, 1h) as next", {"t": text})
        assert row == {"ms": millis, "hour": shown(floor), "next": shown(floor + timedelta(hours=1))}, text
    assert one("fields tomillis(t) as ms, n", {"t": "yesterday", "n": 1}) == {"n": 1}


def month_start(index: int) -> datetime:
    """The first instant of month number `index` (year * 12 + month - 1)."""
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def calendar_ceil(moment: datetime, months: int) -> datetime:
    """The start of the next `months`-month period (periods aligned on year 0), or `moment` itself
    when it starts one."""
    first = (moment.year * 12 + moment.month - 1) // months * months
    return moment if month_start(first) == moment else month_start(first + months)


@pytest.mark.parametrize("unit, months", [("1mo", 1), ("1q", 3), ("1y", 12), ("2mo", 2), ("6mo", 6)])
@pytest.mark.parametrize(
    "moment",
    [datetime(2024, 7, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 5, 17, 8, 30, tzinfo=UTC),
     datetime(2024, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC), datetime(2024, 2, 1, 0, 0, 0, 1000, tzinfo=UTC)],
)  # fmt: skip
def test_dateceil_calendar_periods_and_exact_boundaries(unit, months, moment):
    millis = int(moment.timestamp()) * 1000 + moment.microsecond // 1000
    row = one(f"fields dateceil(@timestamp, {unit}) as ceil", {"x": 1}, timestamp=millis)
    assert row["ceil"] == shown(calendar_ceil(moment, months))


@pytest.mark.parametrize("unit, width", [("1h", timedelta(hours=1)), ("15m", timedelta(minutes=15)), ("1d", timedelta(days=1))])
def test_dateceil_at_an_exact_boundary_is_the_boundary(unit, width):
    boundary = BASE.replace(hour=0, minute=0, second=0, microsecond=0)
    millis = int(boundary.timestamp() * 1000)
    for offset_ms, expected in ((0, boundary), (1, boundary + width), (-1, boundary)):
        row = one(f"fields dateceil(@timestamp, {unit}) as ceil", {"x": 1}, timestamp=millis + offset_ms)
        assert row["ceil"] == shown(expected), (unit, offset_ms)


@pytest.mark.parametrize(
    "text, kind",
    [("0", int), ("42", int), ("-42", int), ("18446744073709551615", int), ("1.5", float), ("2.50", float),
     ("-0.25", float), ("1e-05", float), ("4.611686018427388e+18", float), ("2.5E-5", float), ("1024.0", float),
     # text that a number would change stays text
     ("007", str), ("-007", str), ("00", str), ("00.5", str), (".5", str), ("123456789012345678901", str),
     ("0.12345678901234567891", str), ("1e999", str), ("inf", str), ("12ab", str), ("", str)],
)  # fmt: skip
def test_result_values_become_numbers_only_when_nothing_is_lost(text, kind):
    value = parse_result_value(text)
    assert type(value) is kind and value == kind(text)


def test_leading_zero_codes_stay_text_through_the_local_evaluator():
    events = [json_event({"code": code}) for code in ("007", "7", "007", "0")]
    rows = insights.evaluate("stats count(*) as n by code | sort n desc", events).rows
    assert sorted((str(r["code"]), r["n"]) for r in rows) == [("0", 1), ("007", 2), ("7", 1)]


@pytest.mark.parametrize(
    "address, valid, v4, v6",
    [("192.0.2.1", 1, 1, 0), ("255.255.255.255", 1, 1, 0), ("2001:db8::1", 1, 0, 1), ("::ffff:192.0.2.1", 1, 0, 1),
     ("256.1.1.1", 0, 0, 0), ("192.0.2", 0, 0, 0), ("not an ip", 0, 0, 0), ("", 0, 0, 0), ("2001:db8::g", 0, 0, 0)],
)  # fmt: skip
def test_ip_validity(address, valid, v4, v6):
    row = one("fields isValidIp(a) as ip, isValidIpV4(a) as v4, isValidIpV6(a) as v6, isValidIp(missing) as none",
              {"a": address})  # fmt: skip
    assert row == {"ip": valid, "v4": v4, "v6": v6, "none": 0}


@pytest.mark.parametrize(
    "address, subnet, any_version, v4, v6",
    [("192.0.2.77", "192.0.2.0/24", 1, 1, 0), ("192.0.3.1", "192.0.2.0/24", 0, 0, 0),
     ("10.1.2.3", "10.0.0.0/8", 1, 1, 0), ("2001:db8::7", "2001:db8::/32", 1, 0, 1),
     ("2001:db9::7", "2001:db8::/32", 0, 0, 0), ("192.0.2.77", "2001:db8::/32", 0, 0, 0),
     ("192.0.2.77", "not a subnet", 0, 0, 0), ("nonsense", "192.0.2.0/24", 0, 0, 0)],
)  # fmt: skip
def test_ip_in_subnet(address, subnet, any_version, v4, v6):
    row = one("fields isIpInSubnet(a, s) as any, isIpv4InSubnet(a, s) as v4, isIpv6InSubnet(a, s) as v6",
              {"a": address, "s": subnet})  # fmt: skip
    assert row == {"any": any_version, "v4": v4, "v6": v6}


@pytest.mark.parametrize(
    "expression, expected",
    [("trim(t)", "a b"), ("ltrim(t)", "a b  "), ("rtrim(t)", "  a b"), ("trim(x, 'x-')", "core"),
     ("ltrim(x, 'x')", "-core-x"), ("rtrim(x, '-x')", "xx-core"), ("unmask(t)", "  a b  ")],
)  # fmt: skip
def test_trim_family_and_unmask(expression, expected):
    assert one(f"fields {expression} as value", {"t": "  a b  ", "x": "xx-core-x"})["value"] == expected


def test_now_is_the_query_start_in_epoch_seconds_for_every_event():
    before = int(time.time())
    rows = insights.evaluate("fields now() as started", [json_event({"i": i}, BASE_MS + i) for i in range(50)]).rows
    after = int(time.time())
    assert len({row["started"] for row in rows}) == 1 and before <= rows[0]["started"] <= after


@pytest.mark.parametrize(
    "written, capped",
    [("300s", "60s"), ("90m", "60m"), ("48h", "24h"), ("1500ms", "1000ms"), ("60s", "1m"), ("24h", "1d")],
)
def test_periods_above_their_units_cap_use_the_cap(written, capped):
    """The datetime functions page: the cap is 1000 for ms, 60 for s and m, 24 for h;
    `bin(300s)` runs as 60 seconds. Days and longer have no cap."""
    events = [json_event({"i": i}, BASE_MS + i * 7_919_000) for i in range(40)]  # about 3.5 days
    for function in ("bin({})", "datefloor(@timestamp, {})", "dateceil(@timestamp, {})"):
        query = "stats count(*) as n by {} as t | sort t asc"
        assert insights.evaluate(query.format(function.format(written)), events).rows == insights.evaluate(
            query.format(function.format(capped)), events).rows, function
    days = insights.evaluate("stats count(*) as n by bin(2d) as t", events).rows
    assert len(days) == len({(BASE_MS + i * 7_919_000) // (2 * 86_400_000) for i in range(40)})


def test_the_trim_examples_of_the_functions_page():
    row = one('fields ltrim("xyZxyfooxyZ","xyZ") as l, rtrim("xyZfooxyxyZ","xyZ") as r, '
              'trim("xyZxyfooxyxyZ","xyZ") as t, substr("xyZfooxyZ",3, 3) as s', {"x": 1})  # fmt: skip
    assert row == {"l": "fooxyZ", "r": "xyZfoo", "t": "foo", "s": "foo"}
