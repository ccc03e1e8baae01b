"""Queries published in AWS's Logs Insights documentation and the Lambda operator guide, run on
synthetic logs in the formats they were written for (documented_logs), each answer computed here
from the records the logs were made from: plain Python and numpy, never the evaluator.

Each entry names the page it comes from. The query text is as published (its misspellings, such
as `provisonedMemoryMB`, included). ML-based commands cannot run offline and must say so.
"""

import json
import math
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import Callable, NamedTuple

import numpy as np
import pytest

from fanout import insights
from fanout.insights import QuerySyntaxError

from . import documented_logs as logs

DOCS = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/"
EXAMPLES = DOCS + "CWL_QuerySyntax-examples.html"
STATS = DOCS + "CWL_QuerySyntax-Stats.html"
PARSE = DOCS + "CWL_QuerySyntax-Parse.html"
DEDUP = DOCS + "CWL_QuerySyntax-Dedup.html"
UNMASK = DOCS + "CWL_QuerySyntax-Unmask.html"
PATTERN = DOCS + "CWL_QuerySyntax-Pattern.html"
ANOMALY = DOCS + "CWL_QuerySyntax-Anomaly.html"
WHERE = DOCS + "CWL_QuerySyntax-Where.html"
FILTER = DOCS + "CWL_QuerySyntax-Filter.html"
PARSE_LOGS = "https://docs.aws.amazon.com/lambda/latest/operatorguide/parse-logs.html"
OPERATOR_GUIDE = "https://serverlessland.com/content/service/lambda/guides/aws-lambda-operator-guide/useful-queries"
STREAM = "2024/05/01/[$LATEST]abc"  # the stream support.event gives every event


class Documented(NamedTuple):
    source: str
    query: str
    logs: Callable  # () -> Logs
    expect: Callable  # records -> expected rows
    order: tuple = ()  # () for any order, ("*",) for exactly this order, else the sort keys (desc)


# -- helpers computing answers from records ---------------------------------------------------


def shown(millis: int) -> str:
    """A time as Logs Insights shows it."""
    moment = datetime.fromtimestamp(millis / 1000, timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{millis % 1000:03d}"


def binned(millis: int, minutes: int) -> str:
    width = minutes * 60_000
    return shown(millis // width * width)


def grouped(records, key):
    groups = defaultdict(list)
    for record in records:
        groups[key(record)].append(record)
    return groups


def pct(values, p):
    return float(np.percentile(values, p))  # numpy's default is the linear (type 7) definition


def subset(make, keep):
    """A log set restricted to the records `keep` accepts (events and records are parallel)."""

    def build():
        made = make()
        pairs = [(e, r) for e, r in zip(made.events, made.records) if keep(r)]
        return logs.Logs([e for e, _ in pairs], [r for _, r in pairs])

    return build


REPORT_TS = 3  # the REPORT line's offset from the invocation's START (documented_logs)


def report_mb(record, name):
    """@memorySize / @maxMemoryUsed as the query's divisions give them, from the MB written."""
    return record[name] * 1_000_000


# -- Lambda ----------------------------------------------------------------------------------


def overprovisioned(records):
    provisioned = max(report_mb(r, "memory") / 1000 / 1000 for r in records)
    used = [report_mb(r, "used") / 1000 / 1000 for r in records]
    return [{"provisonedMemoryMB": provisioned, "smallestMemoryRequestMB": min(used),
             "avgMemoryUsedMB": sum(used) / len(used), "maxMemoryUsedMB": max(used),
             "overProvisionedMB": provisioned - max(used)}]  # fmt: skip


def latency_report(records):
    rows = []
    for key, group in grouped(records, lambda r: binned(r["ts"] + REPORT_TS, 5)).items():
        durations = [r["duration"] for r in group]
        rows.append({"bin(5m)": key, "avg(@duration)": sum(durations) / len(durations),
                     "max(@duration)": max(durations), "min(@duration)": min(durations)})  # fmt: skip
    return rows


def slow_invocations(records):
    slow = sorted((r for r in records if r["duration"] > 1000), key=lambda r: -r["ts"])[:20]
    return [{"@timestamp": shown(r["ts"] + REPORT_TS), "@requestId": r["request"],
             "@message": report_message(r), "@logStream": STREAM} for r in slow]  # fmt: skip


def report_message(record):
    return logs.report_line(record["request"], record["duration"], record["billed"], record["memory"], record["used"],
                            record["init"])  # fmt: skip


def last_errors(records):
    errors = sorted((r for r in records if r["level"] == "ERR"), key=lambda r: -r["ts"])[:100]
    return [{"Timestamp": logs.iso(r["ts"] + 1), "LogLevel": "ERR", "Message": r["text"]} for r in errors]


def highest_billed(records):
    ordered = sorted(records, key=lambda r: -r["billed"])[:100]  # stable: ties stay in time order
    return [{"@requestId": r["request"], "@billedDuration": r["billed"]} for r in ordered]


def cold_start_percentage(records):
    rows = []
    for key, group in grouped(records, lambda r: binned(r["ts"] + REPORT_TS, 5)).items():
        cold = sum(r["init"] is not None for r in group)
        rows.append({"bin(5m)": key, "coldStartPct": 100 * cold / len(group),
                     "avg(@duration)": sum(r["duration"] for r in group) / len(group)})  # fmt: skip
    return rows


def billed_percentiles(records):
    rows = []
    for key, group in grouped(records, lambda r: binned(r["ts"] + REPORT_TS, 30)).items():
        billed = [r["billed"] for r in group]
        rows.append({"bin(30m)": key, "Average": sum(billed) / len(billed), "NinetyNinth": pct(billed, 99),
                     "NinetyFifth": pct(billed, 95), "Ninetieth": pct(billed, 90)})  # fmt: skip
    return rows


def memory_percentiles(records):
    used = [report_mb(r, "used") / 1024 / 1024 for r in records]
    return [{"mean_MemoryUsed": sum(used) / len(used), "min_MemoryUsed": min(used), "max_MemoryUsed": max(used),
             "Percentile95": pct(used, 95)}]  # fmt: skip


def full_memory(records):
    full = [r for r in records if r["used"] == r["memory"]]
    return [{"bin(30m)": key, "count_distinct(@requestId)": len({r["request"] for r in group})}
            for key, group in grouped(full, lambda r: binned(r["ts"] + REPORT_TS, 30)).items()]  # fmt: skip


def memory_statistics(records):
    rows = []
    for key, group in grouped(records, lambda r: binned(r["ts"] + REPORT_TS, 30)).items():
        used = [report_mb(r, "used") / 1024 / 1024 for r in group]
        provisioned = max(report_mb(r, "memory") / 1024 / 1024 for r in group)
        mean = sum(used) / len(used)
        rows.append({"bin(30m)": key, "maxMemMB": max(used), "avgMemMB": mean, "minMemMB": min(used),
                     "avgMemUsedPct": mean / provisioned * 100,
                     "avgDurationMS": sum(r["billed"] for r in group) / len(group)})  # fmt: skip
    return rows


def endings_per_half_hour(ending):
    def expect(records):
        counts = Counter(binned(r["ts"] + 2, 30) for r in records if r["ending"] == ending)
        return [{"bin(30m)": key, "count()": n} for key, n in counts.items()]

    return expect


def overprovisioned_mib(records):
    provisioned = max(report_mb(r, "memory") / 1024 / 1024 for r in records)
    used = [report_mb(r, "used") / 1024 / 1024 for r in records]
    return [{"provisonedMemMB": provisioned, "smallestMemReqMB": min(used), "avgMemUsedMB": sum(used) / len(used),
             "maxMemUsedMB": max(used), "overProvisionedMB": provisioned - max(used)}]  # fmt: skip


# -- VPC flow logs ---------------------------------------------------------------------------


def flow_totals(records, value, name, by, top):
    totals = Counter()
    for r in records:
        if r[value] != "-":
            totals[tuple(r[k] for k in by)] += int(r[value])
    ranked = sorted(totals.items(), key=lambda item: -item[1])[:top]
    return [dict(zip(by, key), **{name: total}) for key, total in ranked]


def in_subnet_24(address):
    parts = address.split(".")
    return len(parts) == 4 and parts[:3] == ["192", "0", "2"]


def subnet_bytes(records):
    return flow_totals([r for r in records if in_subnet_24(r["srcAddr"])], "bytes", "bytesTransferred", ("dstAddr",), 15)


def udp_sources(records):
    counts = Counter(r["srcAddr"] for r in records if r["protocol"] == "17")
    return [{"srcAddr": address, "count(*)": n} for address, n in counts.items()]


def skipped_per_hour(records):
    counts = Counter(binned(r["ts"], 60) for r in records if r["logStatus"] == "SKIPDATA")
    return [{"t": hour, "count(*)": n} for hour, n in sorted(counts.items(), reverse=True)]


def interfaces(records):
    return [{"NetworkInterface": r["interfaceId"], "@message": message_of_flow(r)} for r in records]


def message_of_flow(record):
    order = ("version", "accountId", "interfaceId", "srcAddr", "dstAddr", "srcPort", "dstPort", "protocol", "packets",
             "bytes", "startTime", "endTime", "action", "logStatus")  # fmt: skip
    return " ".join(record[name] for name in order)


# -- Route 53 --------------------------------------------------------------------------------


def queries_per_type_and_hour(records):
    counts = Counter((r["queryType"], binned(r["ts"], 60)) for r in records)
    return [{"queryType": kind, "bin(1h)": hour, "count(*)": n} for (kind, hour), n in counts.items()]


def busiest_resolvers(records):
    ranked = sorted(Counter(r["resolverIp"] for r in records).items(), key=lambda item: -item[1])[:10]
    return [{"resolverIp": ip, "numRequests": n} for ip, n in ranked]


def servfail_names(records):
    counts = Counter(r["queryName"] for r in records if r["responseCode"] == "SERVFAIL")
    return [{"queryName": name, "count(*)": n} for name, n in counts.items()]


# -- CloudTrail ------------------------------------------------------------------------------


def calls_per_service(records):
    counts = Counter((r["eventSource"], r["eventName"], r["awsRegion"]) for r in records)
    return [{"eventSource": s, "eventName": e, "awsRegion": a, "count(*)": n} for (s, e, a), n in counts.items()]


def ec2_start_stop(records):
    kept = [r for r in records if r["eventName"] in ("StartInstances", "StopInstances") and r["awsRegion"] == "us-east-2"]
    return [{"@timestamp": shown(r["ts"]), "@message": trail_message(r)} for r in kept]


def trail_message(record):
    return json.dumps({k: v for k, v in record.items() if k != "ts"})


def created_users(records):
    return [{"awsRegion": r["awsRegion"], "requestParameters.userName": r["requestParameters"]["userName"],
             "responseElements.user.arn": r["responseElements"]["user"]["arn"]}
            for r in records if r["eventName"] == "CreateUser"]  # fmt: skip


def update_trail_errors(records):
    counts = Counter((r["errorCode"], r["errorMessage"]) for r in records if r["eventName"] == "UpdateTrail" and "errorCode" in r)
    return [{"errorCode": c, "errorMessage": m, "count(*)": n} for (c, m), n in counts.items()]


def outdated_tls(records):
    return [r for r in records if r["tlsDetails"]["tlsVersion"] in ("TLSv1", "TLSv1.1")]


def outdated_tls_per_service(records):
    counts = Counter(r["eventSource"] for r in outdated_tls(records))
    return [{"eventSource": s, "numOutdatedTlsCalls": n} for s, n in counts.items()]


def outdated_tls_detail(records):
    keys = ("userIdentity.accountId", "recipientAccountId", "eventSource", "eventName", "awsRegion",
            "tlsDetails.tlsVersion", "tlsDetails.cipherSuite", "userAgent")  # fmt: skip

    def value(record, dotted):
        for part in dotted.split("."):
            record = record[part]
        return record

    counts = Counter(tuple(value(r, k) for k in keys) for r in outdated_tls(records))
    rows = [dict(zip(keys, key), numOutdatedTlsCalls=n) for key, n in counts.items()]
    for row in rows:  # account ids are numeric text: results read them as numbers (docs/insights.md)
        row["userIdentity.accountId"], row["recipientAccountId"] = int(row["userIdentity.accountId"]), int(row["recipientAccountId"])
    return rows


# -- application logs ------------------------------------------------------------------------


def latest_25(records):
    return [{"@timestamp": shown(r["ts"]), "@message": r["message_text"]} for r in sorted(records, key=lambda r: -r["ts"])[:25]]


def exceptions_per_hour(records):
    counts = Counter(binned(r["ts"], 60) for r in records if "Exception" in r["message_text"])
    return [{"bin(1h)": hour, "exceptionCount": n} for hour, n in counts.items()]


def not_exceptions(records):
    return [{"@message": r["message_text"]} for r in records if "Exception" not in r["message_text"]]


def first_per(records, names, newest_first=True):
    """dedup in (@timestamp) order: the first record per value of `names`; records lacking one are all kept."""
    seen, rows = set(), []
    for r in sorted(records, key=lambda r: -r["ts"] if newest_first else r["ts"]):
        key = tuple(r.get(n) for n in names)
        if None in key or key not in seen:
            seen.add(key)
            rows.append({"@timestamp": shown(r["ts"]), **{n: r[n] for n in ("server", "severity", "message") if n in r}})
    return rows


def latency_per_user(records):
    return [{"@method": method, "@user": user, "avg(@latency)": sum(r["latency"] for r in group) / len(group)}
            for (method, user), group in grouped(records, lambda r: (r["method"], r["user"])).items()]  # fmt: skip


def streams(records):
    counts = Counter(tuple(r["stream"].split("/")[:2]) for r in records)
    return [{"env": env, "service": service, "count(*)": n} for (env, service), n in counts.items()]


def api_users(records):
    return [{"apiVersion": r["version"], "userId": int(r["userId"])} for r in records]


def with_error(records):
    return [{"@timestamp": shown(r["ts"]), "@message": r["message_text"]} for r in records if "error" in r["message_text"]]


def f_fields(keep):
    return lambda records: [{k: r[k] for k in ("f1", "f2", "f3") if k in r} for r in records if keep(r)]


def newest_errors(records):
    errors = sorted((r for r in records if "ERROR" in r["message_text"]), key=lambda r: -r["ts"])
    return [{"@timestamp": shown(r["ts"]), "@message": r["message_text"]} for r in errors]


def large_slow_uploads(records):
    kept = [r for r in records if r["level"] == "INFO" and r["uploadedBytes"] > 1_000_000 and r["uploadTimeMS"] > 1000
            and r["invocation"] != 1]  # fmt: skip
    rows = []
    for minute, group in grouped(kept, lambda r: binned(r["ts"], 1)).items():
        sizes = [r["uploadedBytes"] for r in group]
        rows.append({"bin (1m)": minute, "min(uploadedBytes)": min(sizes), "avg(uploadedBytes)": sum(sizes) / len(sizes),
                     "max(uploadedBytes)": max(sizes)})  # fmt: skip
    return rows


def ingest_peaks(records):
    per_bin = Counter()
    for r in records:
        per_bin[binned(r["ts"], 5)] += len(r["message_text"])
    mb = [total / 1024 / 1024 for total in per_bin.values()]
    return [{"peak_ingest_mb": max(mb), "min_ingest_mb": min(mb), "avg_ingest_mb": sum(mb) / len(mb)}]


def unmasked(records):
    return [{"@timestamp": shown(r["ts"]), "@message": r["message_text"], "unmask(@message)": r["message_text"]}
            for r in records]  # fmt: skip


def logfmt_errors(records):
    return [{"lf.msg": r["msg"], "lf.duration": int(r["duration"])}
            for r in records if r["kind"] == "logfmt" and r["level"] == "error"]  # fmt: skip


def logfmt_hosts(records):
    counts = Counter(r["host"] for r in records if r["kind"] == "logfmt")
    return [{"lf.host": host, "count(*)": n} for host, n in counts.items()]


def csv_errors(records):
    return [{"timestamp": r["timestamp"], "message": r["message"]}
            for r in records if r["kind"] == "csv-log" and r["level"] == "ERROR"]  # fmt: skip


def csv_durations(records):
    requests = [r for r in records if r["kind"] == "csv-request"]
    return [{"method": method, "avg(duration)": sum(int(r["duration"]) for r in group) / len(group)}
            for method, group in grouped(requests, lambda r: r["method"]).items()]  # fmt: skip


def addresses(records):
    counts = Counter(a for r in records if r["kind"] == "addresses" for a in r["addresses"])
    return [{"ip_addr": ip, "count(*)": n} for ip, n in counts.items()]


def nat_top(records, keep):
    return flow_totals([r for r in records if keep(r)], "bytes", "bytesTransferred", ("srcAddr", "dstAddr"), 10)


NAT_IP, VPC_PREFIX = "10.0.1.5", "192.0."  # the page's x.x.x.x and y.y., replaced as its note says


def last_4xx(records):
    errors = sorted((r for r in records if 400 <= int(r["status"]) <= 499), key=lambda r: -r["ts"])[:10]
    return [{"@timestamp": shown(r["ts"]), "status": int(r["status"]), "ip": r["ip"], "path": r["path"],
             "httpMethod": r["httpMethod"]} for r in errors]  # fmt: skip


def slowest_requests(records):
    slow = sorted(records, key=lambda r: -int(r["responseLatency"]))[:10]
    return [{"@timestamp": shown(r["ts"]), "status": int(r["status"]), "ip": r["ip"], "path": r["path"],
             "httpMethod": r["httpMethod"], "responseLatency": int(r["responseLatency"])} for r in slow]  # fmt: skip


def popular_paths(records):
    ranked = sorted(Counter(r["path"] for r in records).items(), key=lambda item: -item[1])[:10]
    return [{"path": path, "requestCount": n} for path, n in ranked]


def integration_latency(records):
    rows = []
    for minute, group in grouped([r for r in records if r["status"] == "200"], lambda r: binned(r["ts"], 1)).items():
        values = [int(r["integrationLatency"]) for r in group]
        rows.append({"bin(1m)": minute, "avg(integrationLatency)": sum(values) / len(values),
                     "max(integrationLatency)": max(values), "min(integrationLatency)": min(values)})  # fmt: skip
    return rows


def admin_traffic(records):
    admin = sorted((r for r in records if r.get("filename") == "/var/www/html/admin"), key=lambda r: -r["ts"])[:20]
    return [{"@timestamp": shown(r["ts"]), "remoteIP": r["remoteIP"], "request": r["request"], "status": int(r["status"]),
             "filename": r["filename"]} for r in admin]  # fmt: skip


def apache_restarts(records):
    restarts = sorted((r for r in records if "resuming normal operations" in r.get("message", "")), key=lambda r: -r["ts"])
    return [{"@timestamp": shown(r["ts"]), "function": r["function"], "process": int(r["process"]), "message": r["message"]}
            for r in restarts[:20]]  # fmt: skip


def events_per_type(records):
    counts = Counter(r["detail-type"] for r in records)
    return [{"detail-type": kind, "numberOfEvents": n} for kind, n in sorted(counts.items(), key=lambda item: -item[1])]


def typed_messages(records):
    return [{"loggingMessage": r["text"], "isError": int(r["level"] == "ERROR")}
            for r in records if r["kind"] == 2 and r["level"] in ("ERROR", "INFO")]  # fmt: skip


def per_destination(records, *aggregates):
    rows = []
    for address, group in grouped(records, lambda r: r["dstAddr"]).items():
        values = [int(r["bytes"]) for r in group]
        computed = {"avg": sum(values) / len(values), "max": max(values)}
        rows.append({"dstAddr": address, **{f"{a}(bytes)": computed[a] for a in aggregates}})
    return rows


def per_query_type(records):
    return [{"queryType": kind, "count(*)": n} for kind, n in Counter(r["queryType"] for r in records).items()]


def multiple_ip_sessions(records):
    sessions = grouped(records, lambda r: (r["session_id"], r["client_platform"]))
    shared = [((sid, platform), group) for (sid, platform), group in sessions.items()
              if len({r["client_ip"] for r in group}) > 1]  # fmt: skip
    rows = []
    for platform, items in grouped(shared, lambda item: item[0][1]).items():
        requests = [len(group) for _, group in items]
        rows.append({"client_platform": platform, "multiple_ip_sessions": len(items),
                     "avg_session_requests": sum(requests) / len(requests)})  # fmt: skip
    return rows


def ingest_per_ten_minutes(records):
    per_bin = Counter()
    for r in records:
        per_bin[r["ts"] // 300_000 * 300_000] += len(r["message_text"])
    blocks = defaultdict(list)
    for start, total in per_bin.items():
        end = -(-start // 600_000) * 600_000  # dateceil: the start itself when it starts a block
        blocks[shown(end)].append(total / 1024 / 1024)
    return [{"dateceil(@t, 10m)": key, "peak_ingest_mb": max(mb), "min_ingest_mb": min(mb),
             "avg_ingest_mb": sum(mb) / len(mb)} for key, mb in blocks.items()]  # fmt: skip


def ingest_per_stream(records):
    streams = grouped(records, lambda r: r["stream"])
    blocks = defaultdict(list)
    for group in streams.values():
        latest = max(r["ts"] for r in group)
        blocks[shown(-(-latest // 300_000) * 300_000)].append(sum(len(r["message_text"]) for r in group))
    return [{"dateceil(@t, 5m)": key, "avg(ingested_bytes)": sum(v) / len(v)} for key, v in blocks.items()]


def series(records, *items):
    rows = []
    for key, group in grouped(records, lambda r: binned(r["ts"], 5)).items():
        row = {"bin(5m)": key}
        for name, field in items:
            values = [r[field] for r in group]
            row[f"{name}({field})"] = {"avg": sum(values) / len(values), "min": min(values), "max": max(values)}[name]
        rows.append(row)
    return rows


LAMBDA = logs.lambda_logs  # records per invocation; the queries pick the REPORT lines themselves
APP = logs.application_logs
FLOWS = logs.vpc_flow_logs
TRAIL = logs.cloudtrail_logs
ROUTE53 = logs.route53_logs
TEXTS = logs.structured_text_logs
FILTER_SET = logs.filter_page_logs
SESSIONS = logs.session_logs
FLOWS_WITH_DATA = subset(FLOWS, lambda r: r["logStatus"] == "OK")  # NODATA lines have no dstAddr
API = logs.api_gateway_logs
APACHE = logs.apache_logs

CASES = [
    # Lambda: the examples page and the Lambda operator guide's useful queries.
    Documented(EXAMPLES, 'filter @type = "REPORT"\n| stats max(@memorySize / 1000 / 1000) as provisonedMemoryMB,\n'
               "    min(@maxMemoryUsed / 1000 / 1000) as smallestMemoryRequestMB,\n"
               "    avg(@maxMemoryUsed / 1000 / 1000) as avgMemoryUsedMB,\n"
               "    max(@maxMemoryUsed / 1000 / 1000) as maxMemoryUsedMB,\n"
               "    provisonedMemoryMB - maxMemoryUsedMB as overProvisionedMB", LAMBDA, overprovisioned),
    Documented(EXAMPLES, 'filter @type = "REPORT" |\n    stats avg(@duration), max(@duration), min(@duration) by bin(5m)',
               LAMBDA, latency_report),
    Documented(EXAMPLES, 'fields @timestamp, @requestId, @message, @logStream\n| filter @type = "REPORT" and '
               "@duration > 1000\n| sort @timestamp desc\n| dedup @requestId\n| limit 20", LAMBDA,
               slow_invocations, ("*",)),
    Documented(OPERATOR_GUIDE, 'fields Timestamp, LogLevel, Message\n| filter LogLevel == "ERR"\n'
               "| sort @timestamp desc\n| limit 100", LAMBDA, last_errors, ("*",)),
    Documented(OPERATOR_GUIDE, 'filter @type = "REPORT"\n| fields @requestId, @billedDuration\n'
               "| sort by @billedDuration desc\n| limit 100", LAMBDA, highest_billed, ("*",)),
    Documented(OPERATOR_GUIDE, 'filter @type = "REPORT"\n| stats sum(strcontains(@message, "Init Duration"))/count(*) '
               "* 100 as\n  coldStartPct, avg(@duration)\n  by bin(5m)", LAMBDA, cold_start_percentage),
    Documented(OPERATOR_GUIDE, 'filter @type = "REPORT"\n| stats\n    avg(@billedDuration) as Average,\n'
               "    percentile(@billedDuration, 99) as NinetyNinth,\n    percentile(@billedDuration, 95) as "
               "NinetyFifth,\n    percentile(@billedDuration, 90) as Ninetieth\n    by bin(30m)", LAMBDA,
               billed_percentiles),
    Documented(OPERATOR_GUIDE, 'filter @type="REPORT"\n| stats avg(@maxMemoryUsed/1024/1024) as mean_MemoryUsed,\n'
               "    min(@maxMemoryUsed/1024/1024) as min_MemoryUsed,\n    max(@maxMemoryUsed/1024/1024) as "
               "max_MemoryUsed,\n    percentile(@maxMemoryUsed/1024/1024, 95) as Percentile95", LAMBDA,
               memory_percentiles),
    Documented(OPERATOR_GUIDE, 'filter @type = "REPORT" and @maxMemoryUsed=@memorySize\n| stats\n'
               "    count_distinct(@requestId)\n    by bin(30m)", LAMBDA, full_memory),
    Documented(OPERATOR_GUIDE, 'filter @type = "REPORT"\n| stats\n    max(@maxMemoryUsed / 1024 / 1024) as '
               "maxMemMB,\n    avg(@maxMemoryUsed / 1024 / 1024) as avgMemMB,\n    min(@maxMemoryUsed / "
               "1024 / 1024) as minMemMB,\n    (avg(@maxMemoryUsed / 1024 / 1024) / max(@memorySize / 1024 / "
               "1024)) * 100 as avgMemUsedPct,\n    avg(@billedDuration) as avgDurationMS\n    by bin(30m)",
               LAMBDA, memory_statistics),
    Documented(OPERATOR_GUIDE, "filter @message like /Process exited/\n| stats count() by bin(30m)", LAMBDA,
               endings_per_half_hour("exited")),
    Documented(OPERATOR_GUIDE, "filter @message like /Task timed out/\n| stats count() by bin(30m)", LAMBDA,
               endings_per_half_hour("timeout")),
    Documented(OPERATOR_GUIDE, 'filter @type = "REPORT"\n| stats avg(@duration), max(@duration), min(@duration)\n'
               "  by bin(5m)", LAMBDA, latency_report),
    Documented(OPERATOR_GUIDE, 'filter @type = "REPORT"\n| stats max(@memorySize / 1024 / 1024) as provisonedMemMB,\n'
               "        min(@maxMemoryUsed / 1024 / 1024) as smallestMemReqMB,\n        avg(@maxMemoryUsed / 1024 / "
               "1024) as avgMemUsedMB,\n        max(@maxMemoryUsed / 1024 / 1024) as maxMemUsedMB,\n        "
               "provisonedMemMB - maxMemUsedMB as overProvisionedMB", LAMBDA, overprovisioned_mib),
    # The operator guide's structured logging page: JSON after Lambda's text prefix is discovered.
    Documented(PARSE_LOGS, "fields @timestamp, @message | filter @message like /ERROR/ | sort @timestamp desc",
               logs.upload_logs, newest_errors, ("*",)),
    Documented(PARSE_LOGS, "fields @message\n| filter @message like /INFO/\n| filter uploadedBytes > 1000000\n"
               "| filter uploadTimeMS > 1000\n| filter invocation != 1\n| stats min(uploadedBytes), "
               "avg(uploadedBytes), max(uploadedBytes) by bin (1m)", logs.upload_logs, large_slow_uploads),
    # VPC flow logs (default format) on the examples page and the parse page.
    Documented(EXAMPLES, "stats sum(packets) as packetsTransferred by srcAddr, dstAddr\n"
               "| sort packetsTransferred  desc\n| limit 15",
               FLOWS, lambda rs: flow_totals(rs, "packets", "packetsTransferred", ("srcAddr", "dstAddr"), 15),
               ("packetsTransferred",)),
    Documented(EXAMPLES, 'filter isIpv4InSubnet(srcAddr, "192.0.2.0/24")\n| stats sum(bytes) as bytesTransferred '
               "by dstAddr\n| sort bytesTransferred desc\n| limit 15", FLOWS, subnet_bytes, ("bytesTransferred",)),
    Documented(EXAMPLES, "filter protocol=17 | stats count(*) by srcAddr", FLOWS, udp_sources),
    Documented(EXAMPLES, 'filter logStatus="SKIPDATA"\n| stats count(*) by bin(1h) as t\n| sort t', FLOWS,
               skipped_per_hour, ("*",)),
    Documented(EXAMPLES, f"filter (dstAddr like '{NAT_IP}' and srcAddr like '{VPC_PREFIX}')\n| stats sum(bytes) as "
               "bytesTransferred by srcAddr, dstAddr\n| sort bytesTransferred desc\n| limit 10", FLOWS,
               lambda rs: nat_top(rs, lambda r: NAT_IP in r["dstAddr"] and VPC_PREFIX in r["srcAddr"]), ("bytesTransferred",)),
    Documented(EXAMPLES, f"filter (dstAddr like '{NAT_IP}' and srcAddr not like '{VPC_PREFIX}')\n| stats sum(bytes) as "
               "bytesTransferred by srcAddr, dstAddr\n| sort bytesTransferred desc\n| limit 10", FLOWS,
               lambda rs: nat_top(rs, lambda r: NAT_IP in r["dstAddr"] and VPC_PREFIX not in r["srcAddr"]),
               ("bytesTransferred",)),
    Documented(PARSE, "parse @message /(?<NetworkInterface>eni-.*?) / | display NetworkInterface, @message", FLOWS,
               interfaces),
    # Route 53 query logs.
    Documented(STATS, "stats count(*) by queryType, bin(1h)", ROUTE53, queries_per_type_and_hour),
    Documented(EXAMPLES, "stats count(*) as numRequests by resolverIp\n| sort numRequests desc\n| limit 10", ROUTE53,
               busiest_resolvers, ("*",)),
    Documented(EXAMPLES, 'filter responseCode="SERVFAIL" | stats count(*) by queryName', ROUTE53, servfail_names),
    # CloudTrail.
    Documented(EXAMPLES, "stats count(*) by eventSource, eventName, awsRegion", TRAIL, calls_per_service),
    Documented(EXAMPLES, 'filter (eventName="StartInstances" or eventName="StopInstances") and awsRegion="us-east-2"',
               TRAIL, ec2_start_stop),
    Documented(EXAMPLES, 'filter eventName="CreateUser"\n| fields awsRegion, requestParameters.userName, '
               "responseElements.user.arn", TRAIL, created_users),
    Documented(EXAMPLES, 'filter eventName="UpdateTrail" and ispresent(errorCode)\n| stats count(*) by errorCode, '
               "errorMessage", TRAIL, update_trail_errors),
    Documented(EXAMPLES, 'filter tlsDetails.tlsVersion in [ "TLSv1", "TLSv1.1" ]\n| stats count(*) as '
               "numOutdatedTlsCalls by eventSource\n| sort numOutdatedTlsCalls desc", TRAIL, outdated_tls_per_service,
               ("numOutdatedTlsCalls",)),
    Documented(EXAMPLES, 'filter tlsDetails.tlsVersion in [ "TLSv1", "TLSv1.1" ]\n| stats count(*) as '
               "numOutdatedTlsCalls by userIdentity.accountId, recipientAccountId, eventSource, eventName, "
               "awsRegion, tlsDetails.tlsVersion, tlsDetails.cipherSuite, userAgent\n| sort eventSource, eventName, "
               "awsRegion, tlsDetails.tlsVersion", TRAIL, outdated_tls_detail,
               ("eventSource", "eventName", "awsRegion", "tlsDetails.tlsVersion")),
    # General queries, dedup, parse, multiple stats, unmask.
    Documented(EXAMPLES, "fields @timestamp, @message\n| sort @timestamp desc\n| limit 25", APP, latest_25, ("*",)),
    Documented(EXAMPLES, "filter @message like /Exception/\n| stats count(*) as exceptionCount by bin(1h)\n"
               "| sort exceptionCount desc", APP, exceptions_per_hour, ("exceptionCount",)),
    Documented(EXAMPLES, "fields @message | filter @message not like /Exception/", APP, not_exceptions),
    Documented(EXAMPLES, "fields @timestamp, server, severity, message\n| sort @timestamp asc\n| dedup server", APP,
               lambda rs: first_per(rs, ("server",), newest_first=False), ("*",)),  # the oldest: docs/insights.md
    Documented(DEDUP, "fields @timestamp, server, severity, message \n| sort @timestamp desc \n| dedup server",
               APP, lambda rs: first_per(rs, ("server",)), ("*",)),
    Documented(EXAMPLES, "fields @timestamp, server, severity, message\n| sort @timestamp desc\n"
               "| dedup server, severity", APP, lambda rs: first_per(rs, ("server", "severity")), ("*",)),
    Documented(DEDUP, "fields @timestamp, server, severity, message | dedup server", APP,
               lambda rs: first_per(rs, ("server",)), ("*",)),  # no sort: newest first, as the page says
    Documented(PARSE, 'parse @message "user=*, method:*, latency := *" as @user,\n    @method, @latency | stats '
               "avg(@latency) by @method, @user", subset(APP, lambda r: r["kind"] == 1), latency_per_user),
    Documented(PARSE, 'parse @logStream "*/*/*/*" as env, service, instance, shard\n| stats count(*) by env, service',
               APP, streams),
    Documented(PARSE, 'parse @message "url=*" as url\n| parse url "/api/*/users/*" as apiVersion, userId\n'
               "| display apiVersion, userId", subset(APP, lambda r: r["kind"] == 3), api_users),
    Documented(STATS, "stats avg(bytes) by dstAddr", FLOWS_WITH_DATA, lambda rs: per_destination(rs, "avg")),
    Documented(STATS, "stats avg(bytes), max(bytes) by dstAddr", FLOWS_WITH_DATA,
               lambda rs: per_destination(rs, "avg", "max")),
    Documented(STATS, "stats count(*) by queryType", ROUTE53, per_query_type),
    Documented(STATS, "stats avg(myfield1) by bin(5m)", SESSIONS, lambda rs: series(rs, ("avg", "myfield1"))),
    Documented(STATS, "stats avg(myfield1), min(myfield2), max(myfield3) by bin(5m)", SESSIONS,
               lambda rs: series(rs, ("avg", "myfield1"), ("min", "myfield2"), ("max", "myfield3"))),
    Documented(STATS, "STATS count_distinct(client_ip) AS session_ips,\n      count(*) AS requests BY session_id, "
               "client_platform\n| FILTER session_ips > 1\n| STATS count(*) AS multiple_ip_sessions,\n        "
               "sum(requests) / count(*) AS avg_session_requests BY client_platform", SESSIONS, multiple_ip_sessions),
    Documented(STATS, "FIELDS strlen(@message) AS message_length\n| STATS sum(message_length) / 1024 / 1024 AS logs_mb "
               "BY BIN(5m) as @t\n| STATS max(logs_mb) AS peak_ingest_mb,\n        min(logs_mb) AS min_ingest_mb,\n"
               "        avg(logs_mb) AS avg_ingest_mb BY dateceil(@t, 10m)", SESSIONS, ingest_per_ten_minutes),
    Documented(STATS, "FIELDS strlen(@message) AS message_length\n | STATS sum(message_length) AS ingested_bytes, "
               "max(@timestamp) as @t BY @logStream\n | STATS avg(ingested_bytes) BY dateceil(@t, 5m)", SESSIONS,
               ingest_per_stream),
    Documented(STATS, "FIELDS strlen(@message) AS message_length\n| STATS sum(message_length)/1024/1024 as logs_mb "
               "BY bin(5m)\n| STATS max(logs_mb) AS peak_ingest_mb,\n        min(logs_mb) AS min_ingest_mb,\n"
               "        avg(logs_mb) AS avg_ingest_mb", APP, ingest_peaks),
    Documented(UNMASK, "fields @timestamp, @message, unmask(@message)", APP, unmasked),
    Documented(WHERE, "fields @timestamp, @message\n| where @message like /error/", TEXTS, with_error),
    # The filter page's matching examples, case-sensitive unless (?i).
    Documented(FILTER, "fields f1, f2, f3 | filter f1 like /Exception/", FILTER_SET, f_fields(lambda r: "Exception" in r["f1"])),
    Documented(FILTER, "fields f1, f2, f3 | filter f1 =~ /Exception/", FILTER_SET, f_fields(lambda r: "Exception" in r["f1"])),
    Documented(FILTER, 'fields f1, f2, f3 | filter f1 like "Exception"', FILTER_SET,
               f_fields(lambda r: "Exception" in r["f1"])),
    Documented(FILTER, "fields f1, f2, f3 | filter f1 like /(?i)Exception/ ", FILTER_SET,
               f_fields(lambda r: "exception" in r["f1"].lower())),
    Documented(FILTER, "fields f1, f2, f3 | filter f1 =~ /^(?i)Exception$/", FILTER_SET,
               f_fields(lambda r: r["f1"].lower() == "exception")),
    Documented(FILTER, 'fields f1, f2, f3 \n| filter f1 not like "Exception"', FILTER_SET,
               f_fields(lambda r: "Exception" not in r["f1"])),
    Documented(EXAMPLES, 'FIELDS @message\n    | PARSE @message "* [*] *" as loggingTime, loggingType, loggingMessage\n'
               '    | FILTER loggingType IN ["ERROR", "INFO"]\n    | DISPLAY loggingMessage, loggingType = "ERROR" as isError',
               APP, typed_messages),
    # API Gateway access logs, Apache, EventBridge.
    Documented(EXAMPLES, "fields @timestamp, status, ip, path, httpMethod\n| filter status>=400 and status<=499\n"
               "| sort @timestamp desc\n| limit 10", API, last_4xx, ("*",)),
    Documented(EXAMPLES, "fields @timestamp, status, ip, path, httpMethod, responseLatency\n| sort responseLatency desc\n"
               "| limit 10", API, slowest_requests, ("*",)),
    Documented(EXAMPLES, "stats count(*) as requestCount by path\n| sort requestCount desc\n| limit 10", API, popular_paths,
               ("requestCount",)),
    Documented(EXAMPLES, "filter status=200\n| stats avg(integrationLatency), max(integrationLatency),\n"
               "min(integrationLatency) by bin(1m)", API, integration_latency),
    Documented(EXAMPLES, 'fields @timestamp, remoteIP, request, status, filename| sort @timestamp desc\n'
               '| filter filename="/var/www/html/admin"\n| limit 20', APACHE, admin_traffic, ("*",)),
    Documented(EXAMPLES, 'fields @timestamp, function, process, message\n| filter message like "resuming normal '
               'operations"\n| sort @timestamp desc\n| limit 20', APACHE, apache_restarts, ("*",)),
    Documented(EXAMPLES, "fields @timestamp, @message\n| stats count(*) as numberOfEvents by `detail-type`\n"
               "| sort numberOfEvents desc", logs.eventbridge_logs, events_per_type, ("*",)),
    # The parse page's other modes: logfmt, CSV and regex multi-match.
    Documented(PARSE, 'parse @message logfmt as lf\n| filter lf.level = "error"\n| display lf.msg, lf.duration',
               subset(TEXTS, lambda r: r["kind"] == "logfmt"), logfmt_errors),
    Documented(PARSE, "parse @message logfmt as lf\n| stats count(*) by lf.host",
               subset(TEXTS, lambda r: r["kind"] == "logfmt"), logfmt_hosts),
    Documented(PARSE, 'parse @message csv as timestamp, level, message\n| filter level = "ERROR"\n'
               "| display timestamp, message", subset(TEXTS, lambda r: r["kind"] == "csv-log"), csv_errors),
    Documented(PARSE, "parse @message csv as host, method, path, status, duration\n| stats avg(duration) by method",
               subset(TEXTS, lambda r: r["kind"] == "csv-request"), csv_durations),
    Documented(PARSE, "parse @message /(\\d+\\.\\d+\\.\\d+\\.\\d+)/ as ip_addr multi\n| stats count(*) by ip_addr",
               subset(TEXTS, lambda r: r["addresses"] if r["kind"] == "addresses" else False), addresses),
]


def same(actual, expected) -> bool:
    """Rows equal, floats to 1e-9 relative (sums may add in another order); a None cell is a
    value the row does not have."""
    actual = {name: value for name, value in actual.items() if value is not None}
    if actual.keys() != expected.keys():
        return False
    for name, value in expected.items():
        got = actual[name]
        if isinstance(value, float) or isinstance(got, float):
            if not (isinstance(got, (int, float)) and math.isclose(got, value, rel_tol=1e-9)):
                return False
        elif got != value:
            return False
    return True


def assert_rows(rows, expected, order):
    """The rows are the expected ones: in this order (`("*",)`), as a multiset otherwise, sorted
    descending on `order`'s keys when it names them (ties may come in any order)."""
    assert len(rows) == len(expected), (rows, expected)
    if order == ("*",):
        mismatched = [(a, e) for a, e in zip(rows, expected) if not same(a, e)]
        assert not mismatched, mismatched[:3]
        return
    remaining = list(expected)
    for row in rows:
        match = next((i for i, e in enumerate(remaining) if same(row, e)), None)
        assert match is not None, (row, remaining[:3])
        remaining.pop(match)
    keys = [tuple(row[k] for k in order) for row in rows]
    assert keys == sorted(keys, reverse=True)


@pytest.mark.parametrize("case", CASES, ids=[f"{i:02d}" for i in range(len(CASES))])
def test_documented_query_gives_the_documented_answer(case):
    made = case.logs()
    expected = case.expect(made.records)
    assert expected, "a documented query must have something to answer on these logs"
    rows = insights.evaluate(case.query, made.events).rows
    assert_rows(rows, expected, case.order)


def test_the_corpus_covers_every_format_and_several_dozen_queries():
    assert len(CASES) >= 35
    assert {case.logs for case in CASES} >= {LAMBDA, FLOWS, TRAIL, ROUTE53, APP}


@pytest.mark.parametrize(
    "source, query, construct",
    [
        (PATTERN, "pattern @message", "pattern"),
        (ANOMALY, "fields @timestamp, @message\n| pattern @message\n| anomaly", "pattern"),
        (ANOMALY, "stats count(*) by bin(5m) | anomaly", "anomaly"),
    ],
)
def test_machine_learning_commands_are_refused_offline(source, query, construct):
    with pytest.raises(QuerySyntaxError) as caught:
        insights.evaluate(query, logs.application_logs().events)
    message = str(caught.value)
    assert caught.value.token == construct and "not available offline" in message and "\n" not in message


def test_the_parse_page_nested_json_example_matches_nothing_as_written():
    """The parse page says this glob extracts fld and array; its `['*']` needs `['` in the
    message, which has `[{`, so it cannot match (docs/insights.md): the fields stay absent."""
    message = "{'fieldsA': 'logs', 'fieldsB': [{'fA': 'a1'}, {'fA': 'a2'}]}"
    assert "'fieldsB': ['" not in message
    query = "parse @message \"'fieldsA': '*', 'fieldsB': ['*']\" as fld, array"
    (row,) = insights.evaluate(query, [logs.event(message, logs.BASE_MS)]).rows
    assert row == {"@timestamp": shown(logs.BASE_MS), "@message": message}


def test_the_parse_page_named_group_example_as_written():
    """The parse page's regex example groups by `@method2, @user2`, fields nothing creates (its
    groups are method2 and user2), and its last group `(?<latency2>.*?)` ends the pattern, so the
    lazy match is empty: every event lands in one group without a latency (docs/insights.md)."""
    made = subset(APP, lambda r: r["kind"] == 1)()
    query = ("parse @message /user=(?<user2>.*?), method:(?<method2>.*?),\n    latency := (?<latency2>.*?)/ | "
             "stats avg(latency2) by @method2,\n    @user2")  # fmt: skip
    assert insights.evaluate(query, made.events).rows == [{}]  # one group, no value in any column
    fields = "parse @message /user=(?<user2>.*?), method:(?<method2>.*?), latency := (?<latency2>.*?)/ | display user2, method2, latency2"
    rows = insights.evaluate(fields, made.events).rows
    assert sorted((r["user2"], r["method2"], r["latency2"]) for r in rows) == sorted(
        (r["user"], r["method"], "") for r in made.records
    )


SINGLE_RECORD = ("fields @timestamp, srcAddr, dstAddr, srcPort, dstPort, protocol, bytes\n| filter {stream} = 'vpc-flow-logs' "
                 "and interfaceId = 'eni-0123456789abcdef0'\n| sort @timestamp desc\n| dedup srcAddr, dstAddr, srcPort, "
                 "dstPort, protocol\n| limit 20")  # fmt: skip
CONNECTION = ("srcAddr", "dstAddr", "srcPort", "dstPort", "protocol")


def test_the_single_record_per_connection_example_filters_on_a_field_no_event_has():
    """The examples page filters on `logStream`, not `@logStream`: no flow log event has such a
    field, so as written the query returns nothing (docs/insights.md). With @logStream it keeps
    the newest record of each connection; records lacking a dedup field (NODATA, SKIPDATA) all stay."""
    made = FLOWS()
    assert insights.evaluate(SINGLE_RECORD.format(stream="logStream"), made.events).rows == []
    seen, expected = set(), []
    for r in sorted(made.records, key=lambda r: -r["ts"]):
        key = tuple(r[k] for k in CONNECTION)
        if "-" in key or key not in seen:
            seen.add(key)
            shown_fields = {k: r[k] if k.endswith("Addr") else int(r[k]) for k in CONNECTION + ("bytes",) if r[k] != "-"}
            expected.append({"@timestamp": shown(r["ts"]), **shown_fields})
    rows = insights.evaluate(SINGLE_RECORD.format(stream="@logStream"), made.events).rows
    assert_rows(rows, expected[:20], ("*",))


def test_the_apache_example_with_an_unquoted_url_is_a_syntax_error():
    """`referrer= http://34.250.27.141/` on the examples page is not valid syntax (a URL must be
    quoted): the evaluator refuses it with one line naming the position, never a guess."""
    query = ('fields @timestamp, remoteIP, method, status\n| filter status="200" and referrer= http://34.250.27.141/ '
             'and method= "GET"\n| stats count_distinct(remoteIP) as UniqueVisits\n| limit 10')  # fmt: skip
    with pytest.raises(QuerySyntaxError) as caught:
        insights.evaluate(query, APACHE().events)
    assert caught.value.line == 2 and caught.value.token == ":" and "\n" not in str(caught.value)


def test_the_operator_guides_average_memory_query_is_a_fragment():
    """The operator guide's "Average memory used across invocations" shows only the end of a
    query (`avgMemoryUsedPERC, avg(@billedDuration) as avgDurationMS by bin(5m)`): refused with
    one line naming where, never run as something else (docs/insights.md)."""
    with pytest.raises(QuerySyntaxError) as caught:
        insights.evaluate("avgMemoryUsedPERC,\n    avg(@billedDuration) as avgDurationMS\n    by bin(5m)", LAMBDA().events)
    assert (caught.value.line, caught.value.column) == (1, 1) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "query, construct",
    [("FIELDS @message\n| STATS SUM(Fault) by Operation\n# You can only reference `SUM(Fault)` or Operation at this "
      "point\n| STATS MAX(strlen(@message)) AS MaxMessageSize # Invalid reference to @message", "@message"),
     ("FIELDS strlen(@message) AS message_length\n | STATS sum(message_length) AS ingested_bytes BY @logStream\n"
      " | STATS avg(ingested_bytes) BY bin(5m) # Invalid reference to @timestamp field", "@timestamp")],
)  # fmt: skip
def test_the_stats_pages_invalid_examples_are_refused(query, construct):
    """The stats page shows these as invalid: a second stats may only use the first's output."""
    with pytest.raises(QuerySyntaxError) as caught:
        insights.evaluate(query, SESSIONS().events)
    assert caught.value.token == construct and "\n" not in str(caught.value)


FUNCTIONS_PAGE = DOCS + "CWL_QuerySyntax-operations-functions.html"


def recent_events():
    """Lines over the last six hours, none within two minutes of the examples' 2 h and 5 h limits
    (now() is read when the query starts, a second or so from this clock)."""
    now_ms = int(time.time() * 1000)
    events, records = [], []
    for i in range(72):
        ts = now_ms - 5 * 60_000 * i - 30_000
        if min(abs(now_ms - ts - limit) for limit in (7_200_000, 18_000_000)) < 120_000:
            continue
        code = (200, 404, 403, 500, 451)[i % 5]
        word = ("all good", "an Error occurred", "FAILURE of disk", "ok")[i % 4]
        message = f"Status Code: {code}; {word}"
        events.append(logs.event(message, ts))
        records.append({"ts": ts, "code": code, "message": message})
    return events, records, now_ms


def test_the_now_examples_of_the_functions_page():
    events, records, now_ms = recent_events()
    printed = ('parse @message "Status Code: *;" as statusCode\\n\n| filter statusCode >= 400 and statusCode <= 499  \\n\n'
               "| filter toMillis(@timestamp) >= (now() * 1000 - 7200000)")  # fmt: skip
    with pytest.raises(QuerySyntaxError) as caught:  # the page prints a literal \n at two line ends
        insights.evaluate(printed, events)
    assert caught.value.token == "\\"
    rows = insights.evaluate(printed.replace("\\n", ""), events).rows
    expected = [r for r in records if 400 <= r["code"] <= 499 and r["ts"] >= now_ms - 7_200_000]
    assert sorted(row["@message"] for row in rows) == sorted(r["message"] for r in expected) and expected
    query = ("fields @timestamp, @message\n| filter @message like /(?i)(error|failure)/\n"
             "| filter toMillis(@timestamp) >= (now() * 1000 - 18000000)")  # fmt: skip
    rows = insights.evaluate(query, events).rows
    lowered = [r for r in records if ("error" in r["message"].lower() or "failure" in r["message"].lower())]
    expected = [r for r in lowered if r["ts"] >= now_ms - 18_000_000]
    assert sorted(row["@message"] for row in rows) == sorted(r["message"] for r in expected) and expected


def test_the_filter_pages_e_star_example_matches_every_event_with_f3():
    """The filter page says `filter f3 like /E*/` finds words that begin with E; the regex `E*`
    matches the empty string, so every event that has f3 passes (docs/insights.md)."""
    made = FILTER_SET()
    rows = insights.evaluate("fields f1, f2, f3\n| filter f3 like /E*/", made.events).rows
    assert [row["f2"] for row in rows] == [r["f2"] for r in made.records if "f3" in r]
    assert any(not r["f3"].startswith("E") for r in made.records if "f3" in r)
