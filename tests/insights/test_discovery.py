"""Field discovery: JSON flattening rules and Lambda platform lines."""

import json

import pytest

from fanout import insights
from fanout.insights.discovery import MAX_JSON_FIELDS, flatten, json_fields, platform_fields, text_fields

from .support import event, report_line


def test_nested_objects_arrays_and_at_keys():
    message = json.dumps({"a": {"b": {"c": 1}}, "items": [{"x": "p"}, {"x": "q"}], "@meta": 2, "flag": True, "none": None})
    fields = json_fields(message)
    assert fields == {"a.b.c": 1, "items.0.x": "p", "items.1.x": "q", "@@meta": 2, "flag": True}
    (row,) = insights.evaluate("fields `a.b.c` as c, items.1.x as second, `@@meta` as meta, flag", [event(message)]).rows
    assert row == {"c": 1, "second": "q", "meta": 2, "flag": 1}  # booleans show as 1/0


def test_field_cap_keeps_the_first_fields_in_document_order():
    document = {f"k{i}": i for i in range(MAX_JSON_FIELDS + 50)}
    fields = json_fields(json.dumps(document))
    assert list(fields) == [f"k{i}" for i in range(MAX_JSON_FIELDS)]
    nested = {"n": {f"k{i}": i for i in range(MAX_JSON_FIELDS + 5)}}
    assert len(flatten(nested)) == MAX_JSON_FIELDS


@pytest.mark.parametrize("message", ["not json", "{broken", "[1, 2]", "", "  "])
def test_non_objects_discover_nothing(message):
    assert json_fields(message) is None


def test_leading_whitespace_and_strings_with_brackets_still_parse():
    assert json_fields('  {"a": "[x] {y} @z"}') == {"a": "[x] {y} @z"}


def test_report_line_fields_in_aws_units():
    line = report_line("abc-123", 26.73, 27, 128, 75, init=130.49)
    assert platform_fields(line) == {
        "@type": "REPORT", "@requestId": "abc-123", "@duration": 26.73, "@billedDuration": 27,
        "@memorySize": 128_000_000, "@maxMemoryUsed": 75_000_000, "@initDuration": 130.49,
    }  # fmt: skip
    assert "@initDuration" not in platform_fields(report_line("w", 1.5, 2, 128, 70))


def test_start_and_end_lines():
    assert platform_fields("START RequestId: r1 Version: $LATEST\n") == {"@type": "START", "@requestId": "r1"}
    assert platform_fields("END RequestId: r1\n") == {"@type": "END", "@requestId": "r1"}
    assert platform_fields("REPORTED something") is None


def test_report_fields_are_queryable():
    events = [event(report_line(f"r{i}", 10.0 * i, 10 * i + 1, 512, 100 + i, init=50.0 if i == 0 else None)) for i in range(5)]
    rows = insights.evaluate(
        "filter @type = 'REPORT' | stats count(@initDuration) as cold, max(@maxMemoryUsed) as peak, "
        "sum(@billedDuration) as billed by @memorySize", events).rows
    assert rows == [{"@memorySize": 512_000_000, "cold": 1, "peak": 104_000_000, "billed": sum(10 * i + 1 for i in range(5))}]


LAMBDA_PREFIX = "2024-05-01T12:00:00.123Z\t3f2a9c1e-0b7d-4e2a-9f00-1234567890ab\t"


@pytest.mark.parametrize(
    "message, fields",
    [(LAMBDA_PREFIX + 'INFO\t{"a": 1, "b": {"c": "x"}}\n', {"a": 1, "b.c": "x"}),
     (LAMBDA_PREFIX + '{"a": 2}\n', {"a": 2}),  # no level, as print() or older runtimes write
     (LAMBDA_PREFIX + 'ERROR\tfailed: {"a": 3} then {"a": 4} and more\n', {"a": 3}),  # the first JSON only
     (LAMBDA_PREFIX + "INFO\tplain text, no JSON\n", {}), (LAMBDA_PREFIX + "INFO\t{broken\n", {}),
     ('text before {"a": 5}', {})],  # without Lambda's prefix, JSON inside text is not discovered
)  # fmt: skip
def test_json_after_lambdas_text_prefix(message, fields):
    assert text_fields(message) == fields


def test_vpc_flow_log_fields_and_dashes_as_absent():
    accepted = "2 123456789010 eni-1235b8ca123456789 172.31.16.139 172.31.16.21 20641 22 6 20 4249 1418530010 1418530070 ACCEPT OK"
    names = ("version", "accountId", "interfaceId", "srcAddr", "dstAddr", "srcPort", "dstPort", "protocol", "packets",
             "bytes", "startTime", "endTime", "action", "logStatus")  # fmt: skip
    assert text_fields(accepted) == dict(zip(names, accepted.split()))
    nodata = "2 123456789010 eni-1235b8ca123456789 - - - - - - - 1431280876 1431280934 - NODATA"
    assert text_fields(nodata) == {"version": "2", "accountId": "123456789010", "interfaceId": "eni-1235b8ca123456789",
                                   "startTime": "1431280876", "endTime": "1431280934", "logStatus": "NODATA"}  # fmt: skip
    assert text_fields(accepted.replace(" OK", " MAYBE")) == {}


def test_route53_query_log_fields():
    line = "1.0 2017-12-13T08:15:50.235Z Z123412341234 example.com AAAA NOERROR UDP FRA6 192.168.1.1 -"
    assert text_fields(line) == {
        "version": "1.0", "queryTimestamp": "2017-12-13T08:15:50.235Z", "hostZoneId": "Z123412341234",
        "queryName": "example.com", "queryType": "AAAA", "responseCode": "NOERROR", "protocol": "UDP",
        "edgeLocation": "FRA6", "resolverIp": "192.168.1.1",
    }  # fmt: skip
    rows = insights.evaluate("stats count(*) by queryType", [event(line), event(line.replace("AAAA", "MX"))]).rows
    assert sorted((r["queryType"], r["count(*)"]) for r in rows) == [("AAAA", 1), ("MX", 1)]


def test_route53_resolver_query_logs_are_json_with_nested_answers():
    record = {"version": "1.100000", "account_id": "111122223333", "region": "us-east-1", "vpc_id": "vpc-0abc",
              "query_timestamp": "2024-05-01T12:00:00Z", "query_name": "example.com.", "query_type": "A",
              "query_class": "IN", "rcode": "NOERROR", "answers": [{"Rdata": "192.0.2.44", "Type": "A", "Class": "IN"}],
              "srcaddr": "10.0.0.12", "srcport": "53210", "transport": "UDP", "srcids": {"instance": "i-0123"}}  # fmt: skip
    events = [event(json.dumps(record)), event(json.dumps(dict(record, rcode="NXDOMAIN", answers=[])))]
    rows = insights.evaluate("filter rcode = 'NOERROR' | fields query_name, answers.0.Rdata as ip, srcids.instance", events).rows
    assert rows == [{"query_name": "example.com.", "ip": "192.0.2.44", "srcids.instance": "i-0123"}]


def test_report_lines_of_traced_functions_give_the_xray_ids():
    line = report_line("r1", 12.5, 13, 128, 70).rstrip("\t\n") + "\tXRAY TraceId: 1-5e1b4151-5ac6c58f5e9d\tSegmentId: 0a9b8c7d6e5f4a3b\tSampled: true\t\n"
    fields = platform_fields(line)
    assert (fields["@xrayTraceId"], fields["@xraySegmentId"], fields["@requestId"]) == ("1-5e1b4151-5ac6c58f5e9d", "0a9b8c7d6e5f4a3b", "r1")
    assert "@xrayTraceId" not in platform_fields(report_line("r2", 1.0, 1, 128, 70))
