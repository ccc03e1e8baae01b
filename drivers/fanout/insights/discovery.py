"""Fields Logs Insights discovers in a log event, reproduced for local evaluation.

System fields (@timestamp, @message, @logStream, @log, @ingestionTime) come from the event;
a message that is a JSON object contributes its keys (nested keys joined with dots, array items
indexed, keys starting with @ shown as @@key, at most 200 fields); Lambda START/END/REPORT lines
contribute @type, @requestId and the REPORT metrics. Memory sizes are in bytes (MB x 1,000,000)
as Logs Insights reports them.
"""

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


def flatten(document: dict) -> dict:
    """Dotted field names for a JSON object, in document order, capped at MAX_JSON_FIELDS."""
    fields = {}

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


def platform_fields(message: str) -> dict | None:
    """@type, @requestId and the metrics of a Lambda START/END/REPORT line, None for other lines."""
    if not message.startswith(PLATFORM_PREFIXES):
        return None
    kind, _, rest = message.partition(" ")
    fields = {"@type": kind}
    for part in rest.rstrip("\n").split("\t"):
        label, _, value = part.partition(": ")
        if label == "RequestId":
            fields["@requestId"] = value.split(" ")[0]
        elif label in REPORT_METRICS:
            name, scale = REPORT_METRICS[label]
            number = as_number(value.split(" ")[0])
            if number is not None:
                fields[name] = number * scale if scale != 1 else number
    return fields


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
            row = platform_fields(message) or {}
        for setter in setters:
            setter(row, event)
        return row

    def build_without_system_fields(event: dict) -> dict:
        message = event["message"]
        row = json_fields(message)
        return platform_fields(message) or {} if row is None else row

    return build if setters else build_without_system_fields
