"""`fanout insights QUERY` (run a Logs Insights query) and `fanout export` (save log events).

`fanout insights` runs against the deployed stack (AWS or local), or offline over events exported
earlier with `fanout export` (--events FILE.jsonl), so logs can be analysed without AWS later.
Offline, --hours/--start/--end select the exported events in that window; without them every
exported event is read. `fanout export` writes one FilterLogEvents event per line plus `log`,
the event's @log (account-id:log-group-name), so offline results have @log as online ones do.
"""

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.table import Table

from fanout import insights
from fanout.common import numerals as numbers
from fanout.workloads import registry as workloads
from fanout.cloud import stack
from fanout.local import backends
from fanout.stages import command_line
from fanout.common.errors import UsageError
from fanout.insights.result import Result
from fanout.insights.values import iso_millis

FORMATS = ("table", "json", "csv")


def register(subparsers: argparse._SubParsersAction) -> None:
    query = subparsers.add_parser(
        "insights", help="run a Logs Insights query on the stack's logs (or on exported events)"
    )
    query.add_argument("query", metavar="QUERY_FILE", help="a .logsinsights file, or the name of a saved query")
    command_line.stack_arguments(query)
    add_window_arguments(query)
    query.add_argument("--events", metavar="FILE.jsonl", type=Path,
                       help="evaluate offline over events saved by `fanout export` (no stack needed)")
    query.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    query.set_defaults(func=run_insights, check=lambda args: (read_query(args.query), window_from_args(args)))

    export = subparsers.add_parser("export", help="save the stack's log events to a JSONL file")
    command_line.stack_arguments(export)
    add_window_arguments(export)
    export.add_argument("--out", metavar="FILE.jsonl", type=Path, required=True)
    export.set_defaults(func=run_export, check=window_from_args)


def add_window_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hours", help=f"window: the last N hours (default: {insights.DEFAULT_HOURS}; "
                                                     "with --events: every exported event)")
    parser.add_argument("--start", help="window start, ISO 8601 (UTC when no offset) or epoch ms")
    parser.add_argument("--end", help="window end, ISO 8601 (UTC when no offset) or epoch ms (default: now)")


def parse_time(text: str, option: str) -> int:
    """Epoch ms from ISO 8601 (naive means UTC) or from a number of epoch milliseconds."""
    if numbers.whole(text) is not None:
        return int(text)
    millis = iso_millis(text)
    if millis is None:
        raise UsageError(f"{option} {text!r} is not a time; use ISO 8601 such as 2024-05-01T12:00:00Z or epoch ms")
    return millis


def window_given(args: argparse.Namespace) -> bool:
    return any(value is not None for value in (args.hours, args.start, args.end))


def window_from_args(args: argparse.Namespace) -> tuple[int, int]:
    hours = insights.DEFAULT_HOURS if args.hours is None else numbers.decimal(args.hours)
    if hours is None or hours <= 0:
        raise UsageError(f"--hours {args.hours!r} must be a positive, finite number of hours")
    end_ms = parse_time(args.end, "--end") if args.end else int(time.time() * 1000)
    start_ms = parse_time(args.start, "--start") if args.start else end_ms - int(hours * 3_600_000)
    return insights.window(start_ms, end_ms)


def read_query(spec: str) -> str:
    path = Path(spec)
    if path.is_file():
        return path.read_text()
    if path.suffix or os.sep in spec:
        raise UsageError(f"query file {spec!r} does not exist")
    return insights.load_query(spec)


def read_events(path: Path) -> list[dict]:
    """Events of a JSONL export; each line needs at least timestamp (ms) and message. Any readable
    file will do, a pipe (`--events <(zcat run.jsonl.gz)`) or /dev/null (no events) included."""
    if not path.exists():
        raise UsageError(f"events file {str(path)!r} does not exist")
    if path.is_dir():
        raise UsageError(f"events file {str(path)!r} is a directory; expected a JSONL file from `fanout export`")
    try:
        return _parse_events(path)
    except UnicodeDecodeError:
        raise UsageError(f"events file {str(path)!r} is not UTF-8 text; expected a JSONL file from `fanout export`") from None
    except OSError as exc:
        raise UsageError(f"events file {str(path)!r} cannot be read: {exc.strerror}") from None


def _parse_events(path: Path) -> list[dict]:
    events = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                raise UsageError(f"{path}:{number} is not a JSON object")
            if not (isinstance(event, dict) and isinstance(event.get("timestamp"), int)
                    and isinstance(event.get("message"), str)):  # fmt: skip
                raise UsageError(f"{path}:{number} needs \"timestamp\" (epoch ms) and \"message\" (string)")
            events.append(event)
    return events


def offline_events(args: argparse.Namespace) -> list[dict]:
    """The exported events, limited to the window when the command line gives one."""
    events = read_events(args.events)
    if not window_given(args):
        return events
    start_ms, end_ms = window_from_args(args)
    return [event for event in events if start_ms <= event["timestamp"] <= end_ms]  # inclusive, as FilterLogEvents


def run_insights(args: argparse.Namespace) -> int:
    query_text = read_query(args.query)
    if args.events:
        result = insights.evaluate(query_text, offline_events(args))
    else:
        start_ms, end_ms = window_from_args(args)
        result = insights.run(stack.acted_on(backends.get(args.backend), args.stack, workloads.stack_fields), query_text, start_ms, end_ms)
    write_result(result, args.format, sys.stdout)
    return 0


def write_result(result: Result, fmt: str, out: TextIO) -> None:
    if fmt == "json":
        json.dump(result.rows, out, indent=2)
        out.write("\n")
    elif fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=result.columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(result.rows)
    else:
        console = Console(file=out)
        for table in tables(result, console):
            console.print(table)
        console.print(statistics_line(result.statistics))


def tables(result: Result, console: Console) -> list[Table]:
    """One table of all rows; when that is wider than the console (a percentile query has
    twenty-odd columns), one field/value table per row instead, so no value is elided."""
    cells = {column: column_cells([row[column] for row in result.rows]) for column in result.columns}
    wide = Table(*result.columns)
    for index in range(len(result.rows)):
        wide.add_row(*(cells[column][index] for column in result.columns))
    if console.measure(wide, options=console.options.update_width(10**6)).maximum <= console.width:
        return [wide]
    per_row = []
    for index in range(len(result.rows)):
        table = Table("field", "value", title=f"row {index + 1}", title_justify="left")
        for column in result.columns:
            table.add_row(column, cells[column][index])
        per_row.append(table)
    return per_row


def column_cells(values: list) -> list[str]:
    """The text of one column's values. When any is a fraction, every number gets four decimals,
    so that a column never shows 2 above 2.5000."""
    fractional = any(isinstance(value, float) for value in values)
    return [cell(value, fractional) for value in values]


def cell(value: object, fractional: bool) -> str:
    if value is None:
        return ""
    if fractional and isinstance(value, (int, float)):
        return f"{value:,.4f}"
    return str(value)


def statistics_line(statistics: dict) -> str:
    matched, scanned = statistics.get("recordsMatched", 0), statistics.get("recordsScanned", 0)
    return f"{matched:,.0f} records matched of {scanned:,.0f} scanned"


def run_export(args: argparse.Namespace) -> int:
    start_ms, end_ms = window_from_args(args)
    target = stack.acted_on(backends.get(args.backend), args.stack, workloads.stack_fields)
    events = insights.fetch_events(target, start_ms, end_ms)
    log = insights.log_identifier(target)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target and renamed into place: an interrupted export leaves no half file.
    with tempfile.NamedTemporaryFile("w", dir=args.out.parent, prefix=".export-", delete=False) as tmp:
        try:
            for event in events:
                tmp.write(json.dumps({**event, "log": log}) + "\n")
        except BaseException:
            os.unlink(tmp.name)
            raise
    os.replace(tmp.name, args.out)
    Console().out(f"exported {len(events):,} events to {args.out}", highlight=False)
    return 0
