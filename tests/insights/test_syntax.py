"""Syntax errors name the line, column and token; unsupported syntax is never ignored."""

import pytest

from fanout import insights
from fanout.common.errors import UsageError
from fanout.insights import QuerySyntaxError
from fanout.insights.syntax import parse


def error_of(text: str) -> QuerySyntaxError:
    with pytest.raises(QuerySyntaxError) as caught:
        insights.evaluate(text, [])
    return caught.value


@pytest.mark.parametrize(
    "text, line, column, token",
    [
        ("filter x = | stats count(*)", 1, 12, "|"),
        ("fields a\n| frobnicate b", 2, 3, "frobnicate"),
        ("fields a\n| pattern @message", 2, 3, "pattern"),
        ("stats count(*) by x\n| sort x asc\n| limit 0", 3, 9, "0"),
        ('filter x like "abc', 1, 15, '"'),
        ("stats nosuch(x)", 1, 7, "nosuch"),
        ("fields nosuch(x)", 1, 8, "nosuch"),
        ("fields avg(x)", 1, 8, "avg"),
        ("stats pct(x, 101)", 1, 7, "pct(x, 101)"),
        ("stats count(*) by bin(5parsecs)", 1, 23, "5parsecs"),
        ("fields 5m", 1, 8, "5m"),
        ("parse @message \"no star\" as a", 1, 16, '"no star"'),
        ('parse @message "* *" as a', 1, 16, '"* *"'),
        ("parse @message /(unnamed)/", 1, 27, "end of query"),
        ("filter x =~ /(?<n>/", 1, 13, "/(?<n>/"),
        ("stats count(*) as n | stats count(*) as m | stats count(*)", 1, 45, "stats"),
        ("stats count(*) as n by bin(1m) | stats avg(other)", 1, 44, "other"),
        ("stats count(*) as n by x | stats count(*) by bin(1h)", 1, 46, "@timestamp"),
        ("filter x = 1 |", 1, 15, "end of query"),
        ("", 1, 1, "end of query"),
        ("fields `unterminated", 1, 8, "`"),
        ("fields a ~ b", 1, 10, "~"),
        ("stats count(*) by bin(0s)", 1, 23, "0s"),
        ("fields datefloor(@timestamp, 0mo)", 1, 30, "0mo"),
        ("fields dateceil(@timestamp, 0h) as t", 1, 29, "0h"),
        ("stats count(*) as c, sum(n) as c", 1, 32, "c"),
        ("fields n as a, s as a", 1, 21, "a"),
        ("stats count(*) as kind by kind", 1, 27, "kind"),
        ("fields n, n", 1, 11, "n"),
        ("stats count(*) as n by x | sort n desc | stats avg(n) as m", 1, 28, "sort"),
        ("stats count(*) as n by x\n| limit 5\n| stats avg(n) as m", 2, 3, "limit"),
    ],
)
def test_errors_name_position_and_token(text, line, column, token):
    error = error_of(text)
    assert (error.line, error.column, error.token) == (line, column, token)
    assert f"line {line}, column {column}" in str(error) and repr(token) in str(error)


def test_syntax_errors_are_usage_errors_with_exit_status_2():
    assert isinstance(error_of("filter"), UsageError) and error_of("filter").exit_code == 2


def test_comments_backticks_and_case_insensitive_keywords():
    query = parse("# heading\nFILTER `my-field` = 1 AND x IN [1, 2] # trailing\n| SORT x ASC")
    assert [type(c).__name__ for c in query.commands] == ["Filter", "Sort"]
    assert query.commands[1].keys == (("x", False, True),)


def test_sort_defaults_to_descending_records_what_was_written_and_limit_range():
    assert parse("sort x, y desc, z asc").commands[0].keys == (("x", True, False), ("y", True, True), ("z", False, True))
    with pytest.raises(QuerySyntaxError):
        parse("limit 10001")


def test_two_stats_with_filter_between_and_sort_limit_after_are_accepted():
    text = "stats count(*) as n by x | filter n > 1 | stats avg(n) as m, count(*) as groups | sort m desc | limit 1"
    events = [{"timestamp": 0, "message": f'{{"x": "{x}"}}'} for x in "aabbbcd"]
    counts = {x: "aabbbcd".count(x) for x in "abcd"}
    kept = [n for n in counts.values() if n > 1]
    assert insights.evaluate(text, events).rows == [{"m": sum(kept) / len(kept), "groups": len(kept)}]


def test_hash_inside_strings_and_regexes_is_not_a_comment():
    events = [{"timestamp": 0, "message": "a#b c/d"}]
    assert insights.evaluate('filter @message like "a#b" and @message =~ /c\\/d/', events).rows


def test_restrict_inserts_a_filter_after_leading_comments():
    text = "# what it answers\n\n# more\nfilter a = 1\n| stats count(*)\n"
    restricted = insights.restrict(text, 'run_id = "r-1"')
    assert restricted == '# what it answers\n\n# more\nfilter run_id = "r-1"\n| filter a = 1\n| stats count(*)\n'
    assert len(parse(restricted).commands) == 3


@pytest.mark.parametrize("bad", ['x = 1 | stats count(*)', "x = ", ""])
def test_restrict_takes_exactly_one_expression(bad):
    with pytest.raises(UsageError):
        insights.restrict("stats count(*)", bad)


@pytest.mark.parametrize(
    "regex, matching, not_matching",
    [("^(?i)error", ["ERROR: x", "Error"], ["an error"]),  # after ^, as in queries people share
     ("ab(?i)c|d", ["abC", "D", "xD"], ["aBc", "ABC"]),  # the flag holds to the end, the next alternative too
     ("x(y(?i)z|w)v", ["xyZv", "xWv"], ["xYzv", "xyzV"]),  # ... of its own group only
     ("[(?i)]", ["?"], []), (r"\(?i\)", ["(i)", "i)"], ["(I)"]),  # in a class or escaped: no flag
     ("(?i)all", ["ALL"], [])],
)  # fmt: skip
def test_inline_flags_anywhere_in_a_regex(regex, matching, not_matching):
    events = [{"timestamp": i, "message": text} for i, text in enumerate(matching + not_matching)]
    rows = insights.evaluate(f"filter @message =~ /{regex}/ | fields @message", events).rows
    assert sorted(row["@message"] for row in rows) == sorted(matching)


def test_sort_by_and_double_equals_as_the_lambda_operator_guide_writes_them():
    events = [{"timestamp": i, "message": f'{{"n": {n}, "k": "{k}"}}'} for i, (n, k) in enumerate([(3, "a"), (9, "b"), (5, "a")])]
    rows = insights.evaluate('filter k == "a" | fields n | sort by n desc', events).rows
    assert [row["n"] for row in rows] == [5, 3]
    assert parse("sort by asc").commands[0].keys == (("by", False, True),)  # a field named by still sorts


@pytest.mark.parametrize(
    "text, column, token",
    [("stats x + 1", 7, "x"), ("stats sum(avg(x))", 11, "avg"), ("stats a - 1, count(*) as a", 7, "a"),
     ("stats strlen(x)", 7, "strlen"), ("stats 1 + 2", 7, "1"), ("fields n | dedup n | sort n desc", 22, "sort"),
     ("pattern @message", 1, "pattern"), ("stats count(*) | anomaly", 18, "anomaly"),
     ("parse @message yaml as y", 16, "yaml"), ("parse @message logfmt", 22, "end of query"),
     ("parse @message /(a)(b)/ as x", 16, "/(a)(b)/"), ("parse @message csv x", 20, "x")],
)  # fmt: skip
def test_stats_items_dedup_order_ml_commands_and_parse_modes_errors(text, column, token):
    error = error_of(text)
    assert (error.line, error.column, error.token) == (1, column, token)
