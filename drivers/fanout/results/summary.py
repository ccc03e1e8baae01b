"""The report summary of one run: a header of what every run has, collected once by generic code
(`collect`), and the body its workload adds (a dataclass in the workload's report module).

summary.json is `to_json` of a summary less its records (records.jsonl holds those), and a saved
one is read back by `from_json`: the one pair of functions at the JSON boundary. A summary read
back keeps the order of the keys it was read with (an older one wrote them sorted) and the keys
today's code no longer knows, so that a saved report written again is the same file.
"""

import json
from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from fanout import insights
from fanout.common.errors import FanoutError
from fanout.results import deadletters, log_records, run_folders as runs
from fanout.results.run_record import RunRecord

if TYPE_CHECKING:
    from fanout.cloud.stack import Stack

Row = dict[str, Any]  # a saved query's row, or a record of the function's: JSON values by name
HEADER = ("run", "network", "limits", "counts", "dead_lettered")  # the header's keys in summary.json
RECORDS = "records"  # the key under which a summary holds its records (records.jsonl on disk)


@dataclass(frozen=True)
class Counts:
    """How many messages a run sent and finished, and records it logged: `measured` are the
    workload's own records, `in_query` what its saved query counted (Logs Insights indexes late:
    fewer than `measured` says the query's tables are partial), `requested` the messages fire
    was asked for."""

    sent: int
    done: int
    measured: int
    in_query: int
    error_records: int
    requested: int | None = None
    keys: tuple[str, ...] = field(default=(), compare=False)  # the JSON keys' order as read (an older one: sorted)

    def to_json(self, names: Mapping[str, str]) -> dict[str, int | None]:
        """The counts under their workload's JSON `names` (field -> key, in summary.json's order,
        or the order they were read in)."""
        values = {key: getattr(self, name) for name, key in names.items()}
        return {key: values[key] for key in dict.fromkeys([*self.keys, *values]) if key in values}

    @classmethod
    def from_json(cls, data: Mapping[str, int], names: Mapping[str, str]) -> "Counts":
        return cls(**{name: data[key] for name, key in names.items()}, keys=tuple(data))


def count_names(measured: str, done: str = "seqs_done", in_query: str = "in_query") -> dict[str, str]:
    """The JSON names of Counts (field -> key, in order) of a workload that calls its records
    `measured` (calls, messages)."""
    return {"sent": "sent", "done": done, "measured": measured, "in_query": in_query, "error_records": "error_records"}


class Body(Protocol):
    """A workload's summary body: a dataclass of its own fields (raw JSON values or types it
    reads itself), with summary.json's key order (LAYOUT, the header's keys among them) and its
    counts' JSON names (COUNTS, count_names)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    LAYOUT: ClassVar[tuple[str, ...]]
    COUNTS: ClassVar[dict[str, str]]


B = TypeVar("B", bound=Body)


@dataclass
class Header:
    """What every run's summary has: its run record, the labels of how its figures were made
    (network; Lambda's limits as the local host held them, None in a summary saved before they
    were recorded), the counts, the seqs found dead-lettered and the run's records."""

    run: RunRecord
    network: str
    limits: str | None
    counts: Counts
    dead_lettered: list[int]
    records: list[Row]

    def label_columns(self) -> dict[str, str]:
        """The labels as a CSV's columns beside its rows: limits empty where none were recorded
        (AWS, or a summary saved before them)."""
        return {"network": self.network, "limits": self.limits or ""}


@dataclass
class RunSummary(Generic[B]):
    """A run's report summary: the header and its workload's `body`. `keys` is summary.json's key
    order (the one it was read with, or the body's LAYOUT); `extra` the keys read that neither
    knows, written back as they were."""

    header: Header
    body: B
    keys: tuple[str, ...] = ()
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return self.header.run.run_id


@dataclass(frozen=True)
class Collected:
    """What every report reads of a run's logs: its time window (epoch ms), the log events in it,
    the run's records, the rows of the workload's saved query restricted to the run, and the
    header made of them."""

    window: tuple[int, int]
    events: list[Row]
    records: list[Row]
    rows: list[Row]
    header: Header

    def of_event(self, event: str) -> list[Row]:
        """The records whose event is `event` (a workload's own)."""
        return [r for r in self.records if r.get("event") == event]


def collect(stack: "Stack", record: RunRecord, event: str, query: str, counted: str) -> Collected:
    """The run's window, events and records, its saved `query` (whose column `counted` counts the
    workload's records), the dead letters among the seqs not done and the counts, for a workload
    whose records are `event`."""
    window = runs.run_window(record)
    events = insights.fetch_events(stack, *window)
    records = log_records.run_records(events, record.run_id)
    rows = insights.run_saved(stack, query, f'run_id = "{record.run_id}"', *window)
    dead = deadletters.peek(stack, record.run_id, set(record.sent_seqs()) - done_seqs(records, event))
    header = header_of(record, records, event, sum(int(row[counted]) for row in rows), sorted(dead))
    return Collected(window, events, records, rows, header)


def header_of(record: RunRecord, records: list[Row], event: str, in_query: int, dead_lettered: list[int]) -> Header:
    """The header of a run whose `records` were read from its logs, its workload's being `event`,
    `in_query` of them counted by its saved query and the seqs `dead_lettered` found."""
    counts = Counts(sent=len(record.sent_seqs()), done=len(done_seqs(records, event)),
                    measured=sum(r.get("event") == event for r in records), in_query=in_query,
                    error_records=sum(r.get("event") == "error" for r in records), requested=record.parameters.messages)  # fmt: skip
    return Header(record, record.network_label(), record.limits_label(), counts, dead_lettered, records)


def done_seqs(records: list[Row], event: str) -> set[int]:
    """The seqs the function finished: those with a record whose outcome is done (a message's
    last record says it), or, in a run logged before records had an outcome, those with a
    record of the workload's own `event`."""
    if any("outcome" in r for r in records):
        return {r["seq"] for r in records if r.get("outcome") == "done"}
    return {r["seq"] for r in records if r.get("event") == event}


def new(header: Header, body: B) -> RunSummary[B]:
    """A summary just built, its keys in the body's LAYOUT."""
    return RunSummary(header, body, type(body).LAYOUT)


def to_json(summary: RunSummary[B]) -> dict[str, object]:
    """summary.json of `summary` (its records left out): its keys in their order, then those it
    gained since it was read (a key an older summary lacks is written once it has a value)."""
    body, h = summary.body, summary.header
    values: dict[str, object] = {"run": h.run.to_json(), "network": h.network, "limits": h.limits,
                                 "counts": h.counts.to_json(type(body).COUNTS), "dead_lettered": h.dead_lettered,
                                 **{f.name: getattr(body, f.name) for f in fields(body)}, **summary.extra}  # fmt: skip
    order = dict.fromkeys([*summary.keys, *type(body).LAYOUT, *values])
    return {key: values[key] for key in order if key in values and (key in summary.keys or values[key] is not None)}


def from_json(data: Mapping[str, Any], body_type: type[B]) -> RunSummary[B]:
    """The summary of summary.json's `data` (with its records under RECORDS, when read with
    them); a FanoutError naming a missing key the header needs."""
    known = {f.name for f in fields(body_type)}
    try:
        header = Header(RunRecord.from_json(data["run"]), data["network"], data.get("limits"),
                        Counts.from_json(data["counts"], body_type.COUNTS), list(data.get("dead_lettered", [])),
                        list(data.get(RECORDS, [])))  # fmt: skip
    except KeyError as exc:
        raise FanoutError(f"saved report summary lacks {exc}: it is not one of a run's reports") from None
    try:
        body = body_type(**{key: value for key, value in data.items() if key in known})
    except TypeError as exc:
        raise FanoutError(f"saved report summary does not fit its workload's: {exc}") from None
    extra = {key: value for key, value in data.items() if key not in known and key not in (*HEADER, RECORDS)}
    return RunSummary(header, body, tuple(key for key in data if key != RECORDS), extra)


def as_saved(summary: RunSummary[B]) -> RunSummary[B]:
    """`summary` as `write`'s files give it back (tuples as lists, other values as text), so that
    a report drawn from the logs and one drawn later from its saved files are the same."""
    data = json.loads(json.dumps({**to_json(summary), RECORDS: summary.header.records}, default=str))
    return from_json(data, type(summary.body))


def write(summary: RunSummary[B]) -> list[Path]:
    """A report's records.jsonl and summary.json in the folder of its run; returns their paths.
    Keys keep their order (no sort): the tables draw their columns in the order the queries gave
    them, and a report re-rendered from these files must come out the same."""
    folder = runs.make_folder(runs.run_dir(summary.run_id))
    records = "".join(json.dumps(record, default=str) + "\n" for record in summary.header.records)
    rest = json.dumps(to_json(summary), indent=2, default=str) + "\n"
    return [runs.write_text(folder / runs.RECORDS_FILE, records), runs.write_text(folder / runs.SUMMARY_FILE, rest)]


def load(run_id: str, body_type: type[B]) -> RunSummary[B] | None:
    """The run's saved report (summary.json with the records of records.jsonl), or None when it
    has none."""
    data = runs.load_summary(run_id)
    return None if data is None else from_json(data, body_type)


def unaccounted(header: Header) -> int:
    """How many sent messages of a report's run had neither finished nor been dead-lettered when
    the report was made: a report saved before the run ended, which is never reused."""
    return max(0, header.counts.sent - header.counts.done - len(header.dead_lettered))


def incomplete(header: Header, noun: str) -> list[str]:
    """What makes a run's report incomplete: sent messages neither done nor dead-lettered yet, and
    a saved query that saw another number of `noun` than the log group holds (Logs Insights
    indexes late). The way out of both is reading the logs again (runs.refresh_hint)."""
    c, dead, again = header.counts, len(header.dead_lettered), runs.refresh_hint(header.run.run_id)
    result = []
    if c.done + dead < c.sent:
        result.append(f"only {c.done} of {c.sent} sent messages are done ({dead} dead-lettered): this report is "
                      f"incomplete; run `make wait`, then {again}")  # fmt: skip
    if c.in_query != c.measured:
        result.append(f"the saved query saw {c.in_query} {noun} but the log group holds {c.measured}: "
                      f"the query results are partial; in a minute, {again}")  # fmt: skip
    return result
