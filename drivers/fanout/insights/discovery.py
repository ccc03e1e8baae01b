"""Fields Logs Insights discovers in a log event, reproduced for local evaluation.

System fields, the keys of JSON messages, Lambda's platform lines and the text formats AWS lists
(Lambda text lines, VPC flow logs, Route 53 query logs). The rules, with their sources:
docs/insights.md, *What the local evaluator supports* (Fields, Other formats).
"""

import json
import re

import orjson

from fanout.insights.values import Timestamp, as_number

MAX_JSON_FIELDS = 200
SYSTEM_FIELDS = ("@timestamp", "@message", "@logStream", "@log", "@ingestionTime")
PLATFORM_PREFIXES = ("START RequestId:", "END RequestId:", "REPORT RequestId:")
# REPORT line label -> (field, multiplier to the unit Logs Insights uses)
REPORT_METRICS = {
    "Duration": ("@duration", 1),
    "Billed Duration": ("@billedDuration", 1),
    "Memory Size": ("@memorySize", 1_000_000),
    "Max Memory Used": ("@maxMemoryUsed", 1_000_000),
    "Init Duration": ("@initDuration", 1),
}
# Identifiers on platform lines: the request's, and X-Ray's when the function is traced.
PLATFORM_IDS = {"RequestId": "@requestId", "XRAY TraceId": "@xrayTraceId", "SegmentId": "@xraySegmentId"}
# Space-separated AWS formats: the field name of each value in order (None: not a discovered field).
VPC_FLOW_FIELDS = ("version", "accountId", "interfaceId", "srcAddr", "dstAddr", "srcPort", "dstPort", "protocol",
                   "packets", "bytes", "startTime", "endTime", "action", "logStatus")  # fmt: skip
VPC_FLOW_STATUSES = ("OK", "NODATA", "SKIPDATA")
# The last value of a Route 53 query log line, the EDNS client subnet, is not a discovered field.
ROUTE53_FIELDS = ("version", "queryTimestamp", "hostZoneId", "queryName", "queryType", "responseCode", "protocol",
                  "edgeLocation", "resolverIp", None)  # fmt: skip
LAMBDA_TEXT_PREFIX = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\t[^\t]+\t(?:[A-Z]+\t)?")
_JSON_DECODER = json.JSONDecoder()


def flatten(document: dict) -> dict:
    """Dotted field names for a JSON object, in document order, capped at MAX_JSON_FIELDS."""
    fields: dict = {}

    def visit(prefix: str, value) -> None:
        if len(fields) >= MAX_JSON_FIELDS:
            return
        if isinstance(value, dict):
            for key, item in value.items():
                visit(f"{prefix}.{key}" if prefix else ("@" + key if key.startswith("@") else key), item)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                visit(f"{prefix}.{index}", item)
        elif value is not None:
            fields[prefix] = value

    visit("", document)
    return fields


def json_fields(message: str) -> dict | None:
    """Discovered fields of a JSON-object message, or None when the message is not one.

    The common case (a flat object without @ keys, as Powertools writes) is returned as parsed:
    the checks on the raw text are much cheaper than walking every key of every event.
    """
    if not message.startswith("{"):
        message = message.lstrip()
        if not message.startswith("{"):
            return None
    try:
        document = orjson.loads(message)  # every event goes through here: json is ~3x slower
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    # Single-character scans (memchr speed); a false alarm only sends the event to flatten().
    if len(document) <= MAX_JSON_FIELDS and message.find("{", 1) < 0 and "[" not in message and (
        "@" not in message
    ):
        return document
    return flatten(document)


def embedded_json_fields(message: str) -> dict | None:
    """The fields of the first JSON object after Lambda's text prefix, None without one."""
    prefix = LAMBDA_TEXT_PREFIX.match(message)
    start = message.find("{", prefix.end()) if prefix else -1
    if start < 0:
        return None
    try:  # the stdlib finds where the object ends; orjson reads it as every other message
        _, end = _JSON_DECODER.raw_decode(message, start)
        document = orjson.loads(message[start:end])
    except (ValueError, orjson.JSONDecodeError):
        return None
    return flatten(document) if isinstance(document, dict) else None


def _named_values(values: list, names: tuple) -> dict:
    return {name: value for name, value in zip(names, values) if name and value != "-"}


def flow_log_fields(message: str) -> dict | None:
    """Fields of a VPC flow log line in the default (version 2) format, None for other lines."""
    values = message.split()
    if len(values) == len(VPC_FLOW_FIELDS) and values[0] == "2" and values[-1] in VPC_FLOW_STATUSES:
        return _named_values(values, VPC_FLOW_FIELDS)
    return None


def route53_fields(message: str) -> dict | None:
    """Fields of a Route 53 public DNS query log line, None for other lines."""
    values = message.split()
    if len(values) == len(ROUTE53_FIELDS) and values[0] == "1.0" and values[1].endswith("Z"):
        return _named_values(values, ROUTE53_FIELDS)
    return None


def platform_fields(message: str) -> dict | None:
    """@type, @requestId, the metrics and X-Ray ids of a Lambda START/END/REPORT line, None for
    other lines."""
    if not message.startswith(PLATFORM_PREFIXES):
        return None
    kind, _, rest = message.partition(" ")
    fields = {"@type": kind}
    for part in rest.rstrip("\n").split("\t"):
        label, _, value = part.partition(": ")
        if label in PLATFORM_IDS:
            fields[PLATFORM_IDS[label]] = value.split(" ")[0]
        elif label in REPORT_METRICS:
            name, scale = REPORT_METRICS[label]
            number = as_number(value.split(" ")[0])
            if number is not None:
                fields[name] = number * scale if scale != 1 else number
    return fields


# Discovery for messages that are not JSON objects, tried in turn.
TEXT_FORMATS = (platform_fields, embedded_json_fields, flow_log_fields, route53_fields)


def text_fields(message: str) -> dict:
    """Discovered fields of a message that is not a JSON object (none when no format matches)."""
    for discover in TEXT_FORMATS:
        fields = discover(message)
        if fields is not None:
            return fields
    return {}


def row_builder(system_fields, log: str | None):
    """A function turning one FilterLogEvents event into a row of fields.

    Only the system fields the query uses are set: rows are built a million times per query.
    """
    setters = []
    if "@timestamp" in system_fields:
        setters.append(lambda row, event: row.__setitem__("@timestamp", Timestamp(event["timestamp"])))
    if "@message" in system_fields:
        setters.append(lambda row, event: row.__setitem__("@message", event["message"]))
    if "@logStream" in system_fields:
        setters.append(lambda row, event: row.__setitem__("@logStream", event.get("logStreamName")))
    if "@ingestionTime" in system_fields:
        setters.append(
            lambda row, event: row.__setitem__(
                "@ingestionTime", Timestamp(event["ingestionTime"]) if "ingestionTime" in event else None
            )
        )
    if "@log" in system_fields:  # an exported event carries its own (see `fanout export`)
        setters.append(lambda row, event: row.__setitem__("@log", event.get("log", log)))

    def build(event: dict) -> dict:
        message = event["message"]
        row = json_fields(message)
        if row is None:
            row = text_fields(message)
        for setter in setters:
            setter(row, event)
        return row

    def build_without_system_fields(event: dict) -> dict:
        message = event["message"]
        row = json_fields(message)
        return text_fields(message) if row is None else row

    return build if setters else build_without_system_fields
