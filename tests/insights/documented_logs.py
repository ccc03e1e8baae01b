"""Synthetic log events in the formats AWS's documented queries run on, with the records they
were made from, so that tests compute each documented answer from the records, not the evaluator.

Formats: Lambda START/END/REPORT lines and application lines with Lambda's text prefix
(`<time>\\t<request id>\\t<LEVEL>\\t{json}`), VPC flow logs (default version 2 format), Route 53
public DNS query logs, CloudTrail JSON records, and an application's JSON and text lines.
"""

import json
import random
from datetime import datetime, timezone
from typing import NamedTuple

from .support import BASE_MS, event, report_line

MINUTE = 60_000


def iso(millis: int) -> str:
    """A time as Lambda and Route 53 write it: ISO 8601, milliseconds, Z."""
    moment = datetime.fromtimestamp(millis / 1000, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


class Logs(NamedTuple):
    events: list  # FilterLogEvents-shaped events
    records: list  # one dict per logical record, with the values the lines were made from


def lambda_logs(seed: int = 13) -> Logs:
    """Invocations over two hours: START, an application line with Lambda's text prefix, END and
    REPORT. Some use all their memory, some have an Init Duration, some log an error, some time
    out or exit early (a platform line before END)."""
    rng = random.Random(seed)
    events, records = [], []
    for i in range(150):
        ts = BASE_MS + i * 47_000 + rng.randint(0, 999)
        request = f"{rng.getrandbits(32):08x}-{i:04x}-4a5b-9c8d-{rng.getrandbits(48):012x}"
        memory = rng.choice((128, 1024))
        used = memory if i % 11 == 0 else rng.randint(60, memory - 1)
        duration = round(rng.uniform(20, 3000), 2)
        record = dict(ts=ts, request=request, memory=memory, used=used, duration=duration,
                      billed=int(duration) + 1, init=round(rng.uniform(100, 900), 2) if i % 6 == 0 else None,
                      level="ERR" if i % 9 == 4 else "INF", text=f"step {i} done",
                      ending=("timeout" if i % 13 == 5 else "exited" if i % 17 == 3 else None))  # fmt: skip
        records.append(record)
        app = {"Timestamp": iso(ts + 1), "LogLevel": record["level"], "Message": record["text"]}
        level = "ERROR" if record["level"] == "ERR" else "INFO"
        events.append(event(f"START RequestId: {request} Version: $LATEST\n", ts))
        events.append(event(f"{iso(ts + 1)}\t{request}\t{level}\t{json.dumps(app)}\n", ts + 1))
        if record["ending"] == "timeout":
            events.append(event(f"{iso(ts + 2)} {request} Task timed out after 3.00 seconds\n", ts + 2))
        elif record["ending"] == "exited":
            events.append(event(f"RequestId: {request} Process exited before completing request\n", ts + 2))
        events.append(event(f"END RequestId: {request}\n", ts + 2))
        events.append(event(report_line(request, duration, record["billed"], memory, used, record["init"]), ts + 3))
    return Logs(events, records)


SUBNET_SOURCES = ("192.0.2.10", "192.0.2.77", "192.0.2.200")
OTHER_SOURCES = ("198.51.100.5", "198.51.100.9", "203.0.113.40", "203.0.113.41", "2001:db8::7")
DESTINATIONS = ("10.0.1.5", "10.0.1.6", "10.0.2.8", "172.31.16.21")
INTERFACE, FLOW_STREAM = "eni-0123456789abcdef0", "vpc-flow-logs"  # as the examples page names them


def vpc_flow_logs(seed: int = 17) -> Logs:
    """Flow log records of one interface, plus NODATA and SKIPDATA records whose values are `-`."""
    rng = random.Random(seed)
    events, records = [], []
    for i in range(240):
        ts = BASE_MS + i * 41_000
        record = dict(ts=ts, version="2", accountId="123456789012", interfaceId=INTERFACE,
                      srcAddr=rng.choice(SUBNET_SOURCES + OTHER_SOURCES), dstAddr=rng.choice(DESTINATIONS),
                      srcPort=str(rng.randint(1024, 65535)), dstPort=rng.choice(("22", "80", "443", "3306")),
                      protocol=rng.choice(("6", "6", "17")), packets=str(rng.randint(1, 900)),
                      bytes=str(rng.randint(40, 2_000_000)), startTime=str(ts // 1000 - 60),
                      endTime=str(ts // 1000), action=rng.choice(("ACCEPT", "ACCEPT", "REJECT")),
                      logStatus="OK")  # fmt: skip
        if i % 40 == 7:  # no traffic, or records skipped: every value but the times is "-"
            status = "NODATA" if i % 80 == 7 else "SKIPDATA"
            for name in ("srcAddr", "dstAddr", "srcPort", "dstPort", "protocol", "packets", "bytes", "action"):
                record[name] = "-"
            record["logStatus"] = status
        order = ("version", "accountId", "interfaceId", "srcAddr", "dstAddr", "srcPort", "dstPort", "protocol",
                 "packets", "bytes", "startTime", "endTime", "action", "logStatus")  # fmt: skip
        events.append(event(" ".join(record[name] for name in order), ts, stream=FLOW_STREAM))
        records.append(record)
    return Logs(events, records)


def route53_logs(seed: int = 19) -> Logs:
    """Public DNS query log lines; resolver k answers k + 1 queries, so counts never tie."""
    rng = random.Random(seed)
    resolvers = [f"192.168.{k}.{k + 1}" for k in range(12)]
    plan = [resolver for k, resolver in enumerate(resolvers) for _ in range(k + 1)]
    rng.shuffle(plan)
    events, records = [], []
    for i, resolver in enumerate(plan):
        ts = BASE_MS + i * 97_000
        record = dict(ts=ts, version="1.0", queryTimestamp=iso(ts), hostZoneId="Z123412341234",
                      queryName=rng.choice(("example.com", "www.example.com", "api.example.com")),
                      queryType=rng.choice(("A", "AAAA", "MX", "CNAME")),
                      responseCode=rng.choice(("NOERROR", "NOERROR", "NXDOMAIN", "SERVFAIL")), protocol="UDP",
                      edgeLocation=rng.choice(("FRA6", "IAD89")), resolverIp=resolver)  # fmt: skip
        fields = [record[k] for k in ("version", "queryTimestamp", "hostZoneId", "queryName", "queryType",
                                      "responseCode", "protocol", "edgeLocation", "resolverIp")]  # fmt: skip
        events.append(event(" ".join(fields + ["-"]), ts))
        records.append(record)
    return Logs(events, records)


def cloudtrail_logs(seed: int = 23) -> Logs:
    """CloudTrail records as JSON: API calls with regions, TLS details, users created, errors."""
    rng = random.Random(seed)
    calls = (("ec2.amazonaws.com", "StartInstances"), ("ec2.amazonaws.com", "StopInstances"),
             ("ec2.amazonaws.com", "DescribeInstances"), ("iam.amazonaws.com", "CreateUser"),
             ("cloudtrail.amazonaws.com", "UpdateTrail"), ("s3.amazonaws.com", "GetObject"))  # fmt: skip
    events, records = [], []
    for i in range(180):
        ts = BASE_MS + i * 23_000
        source, name = rng.choice(calls)
        region = rng.choice(("us-east-1", "us-east-2", "eu-west-1"))
        record = {
            "eventVersion": "1.08", "eventTime": iso(ts), "eventSource": source, "eventName": name,
            "awsRegion": region, "sourceIPAddress": "203.0.113.7", "userAgent": rng.choice(("aws-cli/2.15", "Boto3/1.34")),
            "userIdentity": {"type": "IAMUser", "accountId": rng.choice(("111122223333", "444455556666"))},
            "recipientAccountId": "111122223333",
            "tlsDetails": {"tlsVersion": rng.choice(("TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3")),
                           "cipherSuite": rng.choice(("ECDHE-RSA-AES128-GCM-SHA256", "TLS_AES_128_GCM_SHA256"))},
        }  # fmt: skip
        if name == "CreateUser":
            user = f"user{i}"
            record["requestParameters"] = {"userName": user}
            record["responseElements"] = {"user": {"arn": f"arn:aws:iam::111122223333:user/{user}"}}
        if name == "UpdateTrail" and i % 3:
            record["errorCode"] = rng.choice(("TrailNotFoundException", "AccessDenied"))
            record["errorMessage"] = f"cannot update trail ({record['errorCode']})"
        events.append(event(json.dumps(record), ts))
        records.append(dict(record, ts=ts))
    return Logs(events, records)


SERVERS = ("web-1", "web-2", "db-1")
SEVERITIES = ("INFO", "WARN", "ERROR")
EXCEPTIONS = ("ResourceNotFoundException", "ThrottlingException", "InvalidParameterValueException")


def application_logs(seed: int = 29) -> Logs:
    """An application's lines: JSON records (server, severity, message, statusCode), request
    lines `user=..., method:..., latency := ...`, `<time> [LEVEL] text` lines with exceptions,
    url lines; log streams named env/service/instance/shard."""
    rng = random.Random(seed)
    events, records = [], []
    for i in range(160):
        ts = BASE_MS + i * 61_000 + rng.randint(0, 500)
        stream = "/".join((rng.choice(("prod", "test")), rng.choice(("api", "worker")), f"i-{i % 5}", f"s{i % 3}"))
        kind = i % 4
        record = {"ts": ts, "stream": stream, "kind": kind}
        if kind == 0:
            body = {"server": rng.choice(SERVERS), "severity": rng.choice(SEVERITIES),
                    "message": f"request {i}", "statusCode": rng.choice((200, 300, 400, 500))}  # fmt: skip
            record.update(body)
            message = json.dumps(body)
        elif kind == 1:
            record.update(user=rng.choice(("alice", "bob")), method=rng.choice(("GET", "PUT")),
                          latency=rng.randint(1, 900))  # fmt: skip
            message = f"user={record['user']}, method:{record['method']}, latency := {record['latency']}"
        elif kind == 2:
            record.update(level=rng.choice(("ERROR", "INFO")), exception=rng.choice(EXCEPTIONS + (None,)))
            detail = f"call failed: {record['exception']}" if record["exception"] else "all fine"
            record.update(text=f"handler {i} {detail}", loggingTime=iso(ts))
            message = f"{record['loggingTime']} [{record['level']}] {record['text']}"
        else:
            record.update(version=rng.choice(("v1", "v2")), userId=str(rng.randint(1, 50)))
            message = f"GET url=/api/{record['version']}/users/{record['userId']}"
        record["message_text"] = message
        events.append(event(message, ts, stream=stream))
        records.append(record)
    return Logs(events, records)


def structured_text_logs(seed: int = 31) -> Logs:
    """logfmt lines (`level=... msg="..." duration=... host=...`), CSV lines of two shapes
    (time, level, message / host, method, path, status, duration) and lines citing IP addresses."""
    rng = random.Random(seed)
    events, records = [], []
    for i in range(120):
        ts = BASE_MS + i * 29_000
        kind = ("logfmt", "csv-log", "csv-request", "addresses")[i % 4]
        record = {"ts": ts, "kind": kind}
        if kind == "logfmt":
            record.update(level=rng.choice(("error", "info")), msg=rng.choice(("connection failed", "started", 'said "hi"')),
                          duration=str(rng.randint(1, 500)), host=rng.choice(("web-1", "web-2", "db-1")))  # fmt: skip
            quoted = record["msg"].replace('"', '\\"')
            message = f'level={record["level"]} msg="{quoted}" duration={record["duration"]} host={record["host"]}'
        elif kind == "csv-log":
            record.update(timestamp=iso(ts), level=rng.choice(("ERROR", "INFO")), message=f"event {i}, with a comma")
            message = f'{record["timestamp"]},{record["level"]},"{record["message"]}"'
        elif kind == "csv-request":
            record.update(host=rng.choice(("web-1", "web-2")), method=rng.choice(("GET", "POST")), path=f"/api/items/{i}",
                          status="200", duration=str(rng.randint(1, 900)))  # fmt: skip
            message = ",".join(record[k] for k in ("host", "method", "path", "status", "duration"))
        else:
            record["addresses"] = [f"10.0.{rng.randint(0, 2)}.{rng.randint(1, 3)}" for _ in range(rng.randint(0, 3))]
            message = "peers: " + " ".join(record["addresses"]) if record["addresses"] else "no peers"
        record["message_text"] = message
        events.append(event(message, ts))
        records.append(record)
    return Logs(events, records)


def api_gateway_logs(seed: int = 37) -> Logs:
    """API Gateway access logs in JSON, values as the $context variables write them (text)."""
    rng = random.Random(seed)
    events, records = [], []
    for i in range(150):
        ts = BASE_MS + i * 13_000
        record = {"requestId": f"req-{i}", "ip": f"198.51.100.{rng.randint(1, 9)}",
                  "httpMethod": rng.choice(("GET", "POST")), "path": rng.choice(("/items", "/items/1", "/users", "/")),
                  "status": rng.choice(("200", "200", "200", "404", "403", "500")),
                  "responseLatency": str(rng.randint(5, 3000) * 7 + i % 7),  # distinct: i % 7 breaks ties
                  "integrationLatency": str(rng.randint(1, 2000))}  # fmt: skip
        events.append(event(json.dumps(record), ts))
        records.append(dict(record, ts=ts))
    return Logs(events, records)


def apache_logs(seed: int = 41) -> Logs:
    """Apache access and error records as JSON (remoteIP, request, status, filename, method; and
    function, process, message for the error log)."""
    rng = random.Random(seed)
    events, records = [], []
    for i in range(90):
        ts = BASE_MS + i * 17_000
        if i % 3:
            filename = rng.choice(("/var/www/html/admin", "/var/www/html/index.html"))
            record = {"remoteIP": f"203.0.113.{rng.randint(1, 20)}", "method": rng.choice(("GET", "POST")),
                      "request": f"GET {filename[13:] or '/'} HTTP/1.1", "status": rng.choice(("200", "404")),
                      "filename": filename}  # fmt: skip
        else:
            record = {"function": "mpm_prefork:notice", "process": str(1000 + i),
                      "message": rng.choice(("AH00163: Apache configured -- resuming normal operations",
                                             "AH00169: caught SIGTERM, shutting down"))}  # fmt: skip
        events.append(event(json.dumps(record), ts))
        records.append(dict(record, ts=ts))
    return Logs(events, records)


def eventbridge_logs(seed: int = 43) -> Logs:
    """EventBridge events delivered to a log group (JSON with a `detail-type`)."""
    rng = random.Random(seed)
    kinds = ["EC2 Instance State-change Notification"] * 9 + ["AWS API Call via CloudTrail"] * 5 + ["Scheduled Event"] * 2
    rng.shuffle(kinds)
    events, records = [], []
    for i, kind in enumerate(kinds):
        ts = BASE_MS + i * 5_000
        record = {"version": "0", "id": f"ev-{i}", "detail-type": kind, "source": "aws.ec2", "region": "us-east-1",
                  "detail": {"state": rng.choice(("running", "stopped"))}}  # fmt: skip
        events.append(event(json.dumps(record), ts))
        records.append(dict(record, ts=ts))
    return Logs(events, records)


def session_logs(seed: int = 47) -> Logs:
    """Requests of web sessions (JSON: session_id, client_ip, client_platform, and the fields
    myfield1..3 of the stats page's time series examples); some sessions change address."""
    rng = random.Random(seed)
    events, records = [], []
    for i in range(200):
        ts = BASE_MS + i * 11_000
        session = f"s-{rng.randint(0, 24)}"
        record = {"session_id": session, "client_platform": ("ios", "android", "web")[int(session[2:]) % 3],
                  "client_ip": f"203.0.113.{int(session[2:]) + rng.choice((0, 0, 0, 100))}",
                  "myfield1": rng.randint(0, 100), "myfield2": rng.uniform(0, 1), "myfield3": rng.randint(-50, 50)}  # fmt: skip
        events.append(event(json.dumps(record), ts, stream=f"host-{i % 4}"))
        records.append(dict(record, ts=ts, stream=f"host-{i % 4}", message_text=json.dumps(record)))
    return Logs(events, records)


def filter_page_logs() -> Logs:
    """JSON events with the filter page's fields f1, f2, f3: f1 holds Exception in several cases
    and places, f3 words with and without a leading E (one event has no f3)."""
    values = [("Exception", "Error"), ("exception", "event"), ("an Exception here", "warn"), ("EXCEPTION", "Ex"),
              ("none", ""), ("xException", None), ("Exceptions", "ERROR"), ("fine", "end")]  # fmt: skip
    events, records = [], []
    for i, (f1, f3) in enumerate(values):
        record = {"f1": f1, "f2": i}
        if f3 is not None:
            record["f3"] = f3
        events.append(event(json.dumps(record), BASE_MS + i * 1000))
        records.append(dict(record, ts=BASE_MS + i * 1000))
    return Logs(events, records)


def upload_logs(seed: int = 53) -> Logs:
    """The operator guide's logsInsightsJSON function: each invocation logs a JSON object after
    Lambda's text prefix (INFO level), some invocations an ERROR line instead."""
    rng = random.Random(seed)
    events, records = [], []
    for i in range(160):
        ts = BASE_MS + i * 9_000
        request = f"5e0c1a2b-{i:04x}-4c3d-8e9f-{rng.getrandbits(48):012x}"
        if i % 10 == 9:
            record = {"ts": ts, "level": "ERROR", "text": f"upload {i} failed"}
            message = f"{iso(ts)}\t{request}\tERROR\t{record['text']}\n"
        else:
            body = {"uploadedBytes": rng.randint(10_000, 3_000_000), "uploadTimeMS": rng.randint(100, 3000),
                    "invocation": 1 + i % 4}  # fmt: skip
            record = {"ts": ts, "level": "INFO", **body}
            message = f"{iso(ts)}\t{request}\tINFO\t{json.dumps(body)}\n"
        record["message_text"] = message
        events.append(event(message, ts))
        records.append(record)
    return Logs(events, records)
