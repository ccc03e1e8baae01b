"""A run's typed report summary (fanout.results.summary) at its JSON boundary, and the download
workload's typed cell statistics: the keys and values summary.json, summary.csv and cells.json
have always had."""

import json
from dataclasses import dataclass
from typing import ClassVar

import pytest

from fanout.common.errors import FanoutError
from fanout.results import summary as summaries
from fanout.results.run_record import RunRecord
from fanout.workloads.download import cell_stats
from fanout.workloads.latency import report as latency_report

RUN = RunRecord.from_json({"run_id": "20260101T000000Z-abcdef", "backend": "local", "sent": 3, "failed_seqs": []}).to_json()


@dataclass
class Body:
    LAYOUT: ClassVar[tuple[str, ...]] = ("run", "network", "limits", "counts", "rows", "dead_lettered", "note")
    COUNTS: ClassVar[dict[str, str]] = summaries.count_names("calls")

    rows: list[dict]
    note: str | None = None


def saved(**changes) -> dict:
    """A summary.json as a run's report saved it, with `changes`."""
    counts = {"sent": 3, "seqs_done": 2, "calls": 5, "in_query": 5, "error_records": 1}
    return {"run": RUN, "network": "measured on AWS", "limits": "", "counts": counts, "rows": [{"a": 1}],
            "dead_lettered": [2], "note": "n"} | changes  # fmt: skip


def test_a_summary_read_and_written_again_keeps_its_keys_their_order_and_the_unknown_ones():
    # an older summary: keys sorted, one key today's code no longer knows, no limits, no note
    old = dict(sorted((saved(gone={"kept": True}) | {"counts": dict(sorted(saved()["counts"].items()))}).items()))
    del old["limits"], old["note"]
    summary = summaries.from_json(old, Body)
    assert summary.header.limits is None and summary.body.note is None and summary.extra == {"gone": {"kept": True}}
    assert json.dumps(summaries.to_json(summary)) == json.dumps(old)
    summary.body.note = "added"  # a key it gains is written after the ones it was read with
    assert list(summaries.to_json(summary)) == [*old, "note"]


def test_a_summary_just_built_is_written_in_its_bodys_layout_with_its_counts_names():
    header = summaries.Header(RunRecord.from_json(RUN), "measured on AWS", "", summaries.Counts(3, 2, 5, 5, 1), [2], [])
    written = summaries.to_json(summaries.new(header, Body([{"a": 1}])))
    assert list(written) == list(Body.LAYOUT) and written["note"] is None  # built: every key, None as null
    assert written["counts"] == {"sent": 3, "seqs_done": 2, "calls": 5, "in_query": 5, "error_records": 1}
    assert summaries.from_json(written, Body).header.counts == header.counts


def test_a_summary_without_what_every_run_has_is_refused_in_one_line():
    with pytest.raises(FanoutError, match="saved report summary lacks 'counts'"):
        summaries.from_json({"run": RUN, "network": "n"}, Body)
    with pytest.raises(FanoutError, match="does not fit its workload's"):
        summaries.from_json({key: value for key, value in saved().items() if key != "rows"}, Body)


def test_the_counts_and_warnings_of_a_run_come_from_its_records():
    records = [{"seq": 0, "event": "latency"}, {"seq": 0, "event": "latency", "outcome": "done"},
               {"seq": 1, "event": "latency"}, {"seq": 1, "event": "error", "outcome": "error"}]  # fmt: skip
    fired = RunRecord.from_json(RUN | {"parameters": {"messages": 4}, "failed_seqs": [3]})  # 4 asked for, 3 sent
    header = summaries.header_of(fired, records, "latency", 2, [2])
    assert header.counts == summaries.Counts(sent=3, done=1, measured=3, in_query=2, error_records=1, requested=4)
    unfinished, late = summaries.incomplete(header, "calls")
    assert "only 1 of 3 sent messages are done (1 dead-lettered)" in unfinished and "make wait" in unfinished
    assert "saw 2 calls but the log group holds 3" in late
    assert summaries.unaccounted(header) == 1


def test_records_from_before_outcomes_count_a_seq_done_by_its_workloads_record():
    old = [{"seq": 0, "event": "download"}, {"seq": 1, "event": "error"}, {"seq": 2, "event": "download"}]
    assert summaries.done_seqs(old, "download") == {0, 2}
    assert summaries.done_seqs(old + [{"seq": 3, "event": "download", "outcome": "done"}], "download") == {3}


def test_a_workloads_body_reads_a_summary_saved_by_the_workload():
    body = latency_report.Body("s", "exact", "ci", [], [])
    header = summaries.Header(RunRecord.from_json(RUN), "n", None, summaries.Counts(1, 1, 0, 0, 0), [], [{"seq": 0}])
    again = summaries.as_saved(summaries.new(header, body))
    assert again.body == body and again.header.records == [{"seq": 0}] and again.header.limits is None


def test_cell_statistics_keep_their_column_names_and_order():
    stats = cell_stats.of([1.0, 2.0, 4.0], [10.0, 20.0, 40.0])
    columns = stats.columns()
    assert list(columns) == cell_stats.COLUMNS
    assert columns["seconds_p50"] == stats.seconds.p50 == 2.0 and columns["mb_per_s_max"] == 40.0
    assert columns["mbit_per_s_avg"] == pytest.approx(8 * columns["mb_per_s_avg"])
    assert list(cell_stats.intervals([10.0, 20.0, 40.0]).columns()) == cell_stats.CI_COLUMNS
    assert list(cell_stats.intervals([1.0, 2.0], "seconds").columns()) == cell_stats.SECONDS_CI_COLUMNS


def test_one_download_has_no_interval():
    ends = cell_stats.intervals([5.0]).columns()
    assert set(ends.values()) == {None}
    median = cell_stats.intervals([1.0, 2.0, 3.0, 4.0]).by_statistic["p50"]
    assert median.low is not None and median.high is not None and median.low <= 2.5 <= median.high
