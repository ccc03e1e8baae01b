"""wait's accounting against partial query results, its missing-seq output, and the host lock.

Insights is stood in for by a function that evaluates the real saved query, with the real local
evaluator, over records of only some of the seqs at first: what Insights does for a while after
a large run. Everything else (run record, queues, DLQ) is real, in the session's emulator.
"""

import dataclasses
import json
import os
import random
import re
import subprocess
import sys
import uuid

import pytest
from test_fire import make_stack

from fanout.common import aws, queue_state
from fanout.local import backends
from fanout.results import deadletters, run_folders as runs, run_record
from fanout.stages import fire, wait
from fanout.local import hostlock
from fanout import insights
from fanout.common.errors import FanoutError
from fanout.cloud.stack import Stack

COUNT = 20
PARTIAL_ANSWERS = 3


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))


@pytest.fixture
def stack(emulator):
    """A stack whose queue and dead-letter queue are fresh queues of the emulator."""
    sqs = aws.client("sqs", "us-east-1", emulator)
    urls = [sqs.create_queue(QueueName=f"wait-{uuid.uuid4().hex[:8]}")["QueueUrl"] for _ in range(2)]
    yield make_stack(emulator, urls[0], dlq_url=urls[1])
    for url in urls:
        sqs.delete_queue(QueueUrl=url)


def partial_insights(record: dict, answers: list, complete_after: float):
    """An `insights.run` whose first `complete_after` answers hold the even seqs only."""

    def run(stack, query_text, start_ms=None, end_ms=None):
        if "seq >=" in query_text:  # message-outcomes, restricted to the run's seqs
            answers.append(query_text)
        seqs = range(COUNT) if len(answers) > complete_after else range(0, COUNT, 2)
        lines = [{"event": "download", "outcome": "done", "run_id": record.run_id, "seq": seq, "receive_count": 1}
                 for seq in seqs]
        events = [{"timestamp": record.first_send_ms + i, "message": json.dumps(line)} for i, line in enumerate(lines)]
        return insights.evaluate(query_text, events)

    return run


def test_wait_keeps_waiting_while_the_query_returns_part_of_the_records(stack, results, monkeypatch):
    record = fire.fire(stack, fire.FireParams(COUNT, "t", workers=2))
    answers = []
    monkeypatch.setattr(insights, "run", partial_insights(record, answers, complete_after=PARTIAL_ANSWERS))
    monkeypatch.setattr(backends.get("local"), "poll_seconds", 0)
    accounting = wait.wait(stack, record, wait.WaitParams(600))
    assert len(answers) == PARTIAL_ANSWERS + 1  # it did not stop at a partial answer
    assert accounting.done == set(range(COUNT)) and not accounting.in_flight()
    assert runs.load(record.run_id).accounting.done == COUNT


def test_a_wait_that_times_out_lists_what_is_missing(stack, results, monkeypatch, capsys):
    record = fire.fire(stack, fire.FireParams(COUNT, "t", workers=2))
    monkeypatch.setattr(insights, "run", partial_insights(record, [], complete_after=float("inf")))
    monkeypatch.setattr(backends.get("local"), "poll_seconds", 0.05)
    capsys.readouterr()
    accounting = wait.wait(stack, record, wait.WaitParams(0.2))
    odd = list(range(1, COUNT, 2))
    assert accounting.in_flight() == odd
    assert json.loads((runs.run_dir(record.run_id) / wait.MISSING_FILE).read_text()) == odd
    assert f"missing seqs: {runs.seq_ranges(odd)}" in capsys.readouterr().out


def test_peeking_at_the_dead_letter_queue_hides_nothing(stack):
    """More messages than one receive returns, of this run and another: a scan sees all of this
    run's and leaves every message visible, so the next scan (or anyone) sees them again."""
    sqs = stack.client("sqs")
    bodies = [{"run_id": "mine", "seq": seq} for seq in range(25)] + [{"run_id": "other", "seq": 0}]
    for i in range(0, len(bodies), 10):
        entries = [{"Id": str(n), "MessageBody": json.dumps(b)} for n, b in enumerate(bodies[i : i + 10])]
        sqs.send_message_batch(QueueUrl=stack.dlq_url, Entries=entries)
    assert deadletters.peek(stack, "mine") == set(range(25))
    assert deadletters.peek(stack, "mine") == set(range(25))
    hidden = sqs.get_queue_attributes(QueueUrl=stack.dlq_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"])
    assert hidden["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "0"


def _counting_receives(monkeypatch) -> list[int]:
    """ReceiveMessage calls of every client a Stack makes from now on (a botocore event hook)."""
    calls, real = [], Stack.client

    def client(self, service, **config):
        made = real(self, service, **config)
        made.meta.events.register("before-call.sqs.ReceiveMessage", lambda **kwargs: calls.append(1))
        return made

    monkeypatch.setattr(Stack, "client", client)
    return calls


def test_the_dead_letter_scan_reads_no_more_than_the_run_needs(stack, monkeypatch):
    """No receive when the DLQ is empty or no seq is wanted; a scan stops once every wanted seq
    is found, before another run's dead letters sent after them."""
    calls = _counting_receives(monkeypatch)
    assert deadletters.peek(stack, "mine", wanted={1, 2}) == set() and calls == []
    sqs = stack.client("sqs")
    bodies = [{"run_id": "mine", "seq": seq} for seq in range(10)] + [{"run_id": "other", "seq": s} for s in range(50)]
    for i in range(0, len(bodies), 10):
        entries = [{"Id": str(n), "MessageBody": json.dumps(b)} for n, b in enumerate(bodies[i : i + 10])]
        sqs.send_message_batch(QueueUrl=stack.dlq_url, Entries=entries)
    assert deadletters.peek(stack, "mine", wanted=set()) == set() and calls == []
    assert deadletters.peek(stack, "mine", wanted={3, 7}) >= {3, 7}
    assert 1 <= len(calls) < len(bodies) / 10
    calls.clear()
    assert deadletters.peek(stack, "mine") == set(range(10))  # the report's full scan
    assert len(calls) > len(bodies) / 10


def parse_ranges(text: str) -> list[int]:
    seqs = []
    for part in filter(None, text.split(", ")):
        first, _, last = part.partition("-")
        seqs += range(int(first), int(last or first) + 1)
    return seqs


def test_seq_ranges_read_as_ranges():
    assert runs.seq_ranges([12, *range(3, 8), *range(40, 100)]) == "3-7, 12, 40-99"


@pytest.mark.parametrize("seed", range(10))
def test_seq_ranges_round_trip(seed):
    rng = random.Random(seed)
    seqs = rng.sample(range(300), rng.randint(1, 120))
    assert parse_ranges(runs.seq_ranges(seqs, max_chars=10_000)) == sorted(seqs)


def test_long_seq_lists_are_cut_with_a_count_of_the_rest():
    seqs = list(range(0, 5000, 2))  # nothing adjacent: the longest text
    shown, rest = re.fullmatch(r"(.*), \.\.\. \(([\d,]+) more\)", runs.seq_ranges(seqs, max_chars=60)).groups()
    assert len(shown) <= 60
    listed = parse_ranges(shown)
    assert listed == seqs[: len(listed)] and int(rest.replace(",", "")) == len(seqs) - len(listed)


HOLDER = """
import sys
from fanout.local import hostlock
with hostlock.held("local", "locked"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_one_host_per_stack(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    with pytest.raises(FanoutError, match=f"already hosted by process {holder.pid}") as refused:
        with hostlock.held("local", "locked"):
            pass
    assert "\n" not in str(refused.value)
    with hostlock.held("local", "another-stack"), hostlock.held("aws", "locked"):
        pass
    holder.kill()  # however its holder ends, the lock goes with it
    holder.wait()
    with hostlock.held("local", "locked"):
        assert (tmp_path / "stacks" / "local" / "locked" / hostlock.LOCK_FILE).read_text() == f"{os.getpid()}\n"


def _take_all(stack, delete: bool) -> None:
    """Receive every message of the queue, as a host would; delete them or keep holding them."""
    sqs = stack.client("sqs")
    while messages := sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=120).get("Messages"):
        if delete:
            sqs.delete_message_batch(QueueUrl=stack.queue_url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)])


def test_seqs_deleted_without_a_record_are_lost_not_in_flight(stack, results, monkeypatch, capsys):
    record = fire.fire(stack, fire.FireParams(COUNT, "t", workers=2))
    _take_all(stack, delete=True)  # the odd seqs' records never reach the logs
    monkeypatch.setattr(insights, "run", partial_insights(record, [], complete_after=float("inf")))
    monkeypatch.setattr(backends.get("local"), "poll_seconds", 0.05)
    monkeypatch.setattr(backends.get("local"), "lost_after_s", 0.3)
    capsys.readouterr()
    accounting = wait.wait(stack, record, wait.WaitParams(60))
    odd = set(range(1, COUNT, 2))
    assert accounting.lost == odd and accounting.in_flight() == []
    assert runs.load(record.run_id).accounting.lost == sorted(odd)
    assert f"lost seqs: {runs.seq_ranges(odd)}" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(FanoutError, match=re.escape(f"{len(odd)} of {COUNT} messages of run {record.run_id} are lost")) as failure:
        wait.check_accounted(accounting, record.run_id, 60)
    assert runs.seq_ranges(odd) in str(failure.value) and "\n" not in str(failure.value)


def test_seqs_held_by_an_invocation_are_in_flight_not_lost(stack, results, monkeypatch):
    record = fire.fire(stack, fire.FireParams(COUNT, "t", workers=2))
    _take_all(stack, delete=False)  # held (not visible) until their visibility timeout
    monkeypatch.setattr(insights, "run", partial_insights(record, [], complete_after=float("inf")))
    monkeypatch.setattr(backends.get("local"), "poll_seconds", 0.05)
    monkeypatch.setattr(backends.get("local"), "lost_after_s", 0.1)
    accounting = wait.wait(stack, record, wait.WaitParams(1))
    assert accounting.lost == set() and accounting.in_flight() == list(range(1, COUNT, 2))


def test_wait_says_how_long_the_slowest_outcome_takes(stack, results, capsys, monkeypatch):
    record = fire.fire(stack, fire.FireParams(1, "t", workers=1))
    visibility = 7
    stack.client("sqs").set_queue_attributes(QueueUrl=stack.queue_url, Attributes={"VisibilityTimeout": str(visibility)})
    stack = dataclasses.replace(stack, max_receive_count=5)
    _take_all(stack, delete=True)
    monkeypatch.setattr(insights, "run", partial_insights(record, [], complete_after=float("inf")))
    capsys.readouterr()
    wait.wait(stack, record, wait.WaitParams(0.1, chosen_timeout=True))
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert f"after 5 receives x {visibility} s visibility = {5 * visibility} s" in out
    assert "longer than --timeout" in out and "FUNCTION_TIMEOUT" in out


def test_a_default_timeout_nobody_chose_is_not_noted(stack, results, capsys, monkeypatch):
    """The default timeout shorter than the slowest outcome: nothing said while nothing fails
    (every local `make wait` said its 2 h 30 min, inside studies too)."""
    record = fire.fire(stack, fire.FireParams(1, "t", workers=1))
    stack.client("sqs").set_queue_attributes(QueueUrl=stack.queue_url, Attributes={"VisibilityTimeout": "7"})
    stack = dataclasses.replace(stack, max_receive_count=5)
    _take_all(stack, delete=True)
    monkeypatch.setattr(insights, "run", partial_insights(record, [], complete_after=float("inf")))
    capsys.readouterr()
    wait.wait(stack, record, wait.WaitParams(0.1))
    out = " ".join(capsys.readouterr().out.split())
    assert "dead-letter queue after" not in out and "longer than --timeout" not in out


def outcomes_insights(record: dict, answers: list, failing_until: int):
    """An `insights.run` whose records are every seq done but seq 0, which failed on its first
    receive, and is done on the next after `failing_until` answers."""

    def run(stack, query_text, start_ms=None, end_ms=None):
        if "seq >=" in query_text:
            answers.append(query_text)
        lines = [{"outcome": "done", "seq": seq, "receive_count": 1} for seq in range(1, COUNT)]
        lines.append({"outcome": "error", "seq": 0, "receive_count": 1})
        if len(answers) > failing_until:
            lines.append({"outcome": "done", "seq": 0, "receive_count": 2})
        events = [{"timestamp": record.first_send_ms + i, "message": json.dumps({**line, "run_id": record.run_id})}
                  for i, line in enumerate(lines)]  # fmt: skip
        return insights.evaluate(query_text, events)

    return run


@pytest.mark.parametrize("failing_until", [0, 2])
def test_the_slowest_outcome_is_said_only_when_a_message_fails_or_the_timeout_is_shorter(
        stack, results, capsys, monkeypatch, failing_until):
    """Timeout (60 s) longer than the slowest outcome (5 x 7 s): nothing said while every message
    succeeds; said once when one fails with receives left."""
    record = fire.fire(stack, fire.FireParams(COUNT, "t", workers=2))
    stack.client("sqs").set_queue_attributes(QueueUrl=stack.queue_url, Attributes={"VisibilityTimeout": "7"})
    stack = dataclasses.replace(stack, max_receive_count=5)
    monkeypatch.setattr(insights, "run", outcomes_insights(record, [], failing_until))
    monkeypatch.setattr(backends.get("local"), "poll_seconds", 0)
    capsys.readouterr()
    accounting = wait.wait(stack, record, wait.WaitParams(60))
    out = " ".join(capsys.readouterr().out.split())
    assert accounting.done == set(range(COUNT)) and accounting.retrying == set()
    if failing_until:
        assert out.count("1 failing, retries pending: a message failing every time reaches the dead-letter queue "
                         "after 5 receives x 7 s visibility = 35 s") == 1  # fmt: skip
    else:
        assert "dead-letter queue after" not in out
    assert "longer than --timeout" not in out


def test_records_from_before_the_outcome_field_still_complete_a_run(stack, results, monkeypatch):
    """An old download record closes its delivery as done, an old error record on the last
    allowed receive as failed; a record that closes nothing (latency's per-call one) does not."""
    stack = dataclasses.replace(stack, max_receive_count=5)
    record = fire.fire(stack, fire.FireParams(6, "t", workers=1))
    last = stack.max_receive_count
    lines = [{"event": "download", "seq": 0, "receive_count": 1},  # old: done
             {"event": "download", "seq": 1, "receive_count": 2},  # old: done, on a retry
             {"event": "error", "seq": 1, "receive_count": 1},
             {"event": "error", "seq": 2, "receive_count": last},  # old: failed for good
             {"event": "error", "seq": 3, "receive_count": 1},  # old: will be retried
             {"event": "latency", "seq": 4, "receive_count": 1},  # closes nothing
             {"event": "latency", "seq": 5, "receive_count": 1, "outcome": "done"}]  # fmt: skip
    events = [{"timestamp": record.first_send_ms + i, "message": json.dumps({**line, "run_id": record.run_id})}
              for i, line in enumerate(lines)]  # fmt: skip
    monkeypatch.setattr(insights, "run", lambda stack, text, start_ms=None, end_ms=None: insights.evaluate(text, events))
    accounting = wait.account(stack, record)
    assert accounting.done == {0, 1, 5} and accounting.failed == {2} and accounting.retrying == {3}
    assert accounting.in_flight() == [3, 4] and accounting.duplicates == 0


def test_wait_records_the_last_record_and_the_ingestion_lag_and_the_window_ends_there(stack, results, monkeypatch):
    """The records' log times and ingestion times (as Insights reports them) give the run's latest
    record and its longest ingestion lag; once every message is accounted for, the run's window
    ends at that record plus the function timeout and the clock slack, not at "now"."""
    record = fire.fire(stack, fire.FireParams(COUNT, "t", workers=2))
    first = record.first_send_ms
    lags = [1000 + 50 * seq for seq in range(COUNT)]

    def logged(stack, query_text, start_ms=None, end_ms=None):
        lines = [{"outcome": "done", "run_id": record.run_id, "seq": seq, "receive_count": 1} for seq in range(COUNT)]
        events = [{"timestamp": first + 10 * seq, "ingestionTime": first + 10 * seq + lags[seq],
                   "message": json.dumps(line)} for seq, line in enumerate(lines)]  # fmt: skip
        return insights.evaluate(query_text, events)

    monkeypatch.setattr(insights, "run", logged)
    wait.wait(stack, record, wait.WaitParams(60))
    accounting = runs.load(record.run_id).accounting
    assert accounting.last_record_ms == first + 10 * (COUNT - 1)
    assert accounting.ingestion_lag_ms == max(lags)
    start, end = runs.run_window(runs.load(record.run_id))
    assert start == first - runs.CLOCK_SLACK_MS
    assert end == accounting.last_record_ms + stack.timeout * 1000 + runs.CLOCK_SLACK_MS


def test_an_unfinished_run_window_still_ends_now():
    record = run_record.RunRecord.from_json({"first_send_ms": 1_000, "stack": {"timeout": 30},
                                             "accounting": {"last_record_ms": 2_000, "in_flight": [3]}})  # fmt: skip
    before = int(runs.time.time() * 1000)
    assert runs.run_window(record)[1] >= before + runs.CLOCK_SLACK_MS
    record = record.but(accounting=record.accounting.but(in_flight=[]))
    assert runs.run_window(record) == (1_000 - runs.CLOCK_SLACK_MS, 2_000 + 30_000 + runs.CLOCK_SLACK_MS)


@pytest.mark.parametrize("backend, lag_ms, seconds", [
    ("aws", None, 300.0),  # no record yet: the default
    ("aws", 500, 60.0),  # a short lag: the floor
    ("aws", 120_000, 3 * 120 + 10.0),  # a long lag: three times it, plus a poll
    ("local", 0, 5.0),
])  # fmt: skip
def test_the_lost_delay_follows_the_ingestion_lag(backend, lag_ms, seconds):
    assert wait.lost_after(backend, lag_ms) == seconds


def test_a_queue_is_idle_only_with_nothing_visible_in_flight_or_delayed(stack):
    """The one definition wait, the local host and a sweep share (fanout.common.queue_state)."""
    sqs = aws.client("sqs", stack.region, stack.endpoint)
    url = sqs.create_queue(QueueName=f"idle-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    assert queue_state.is_idle(sqs, url)
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=600)
    assert queue_state.messages(sqs, url) == 1 and not queue_state.is_idle(sqs, url)  # delayed
    sqs.send_message(QueueUrl=url, MessageBody="now")
    [received] = sqs.receive_message(QueueUrl=url, VisibilityTimeout=600)["Messages"]
    assert queue_state.messages(sqs, url) == 2  # one in flight, one delayed
    sqs.delete_message(QueueUrl=url, ReceiptHandle=received["ReceiptHandle"])
    sqs.purge_queue(QueueUrl=url)
    assert queue_state.is_idle(sqs, url)


def test_a_delivery_ended_before_the_outcome_field_is_done_by_its_workloads_event():
    """Records from before the outcome field closed a delivery with an event named after the
    workload (download: the only one then); another workload's run never counts that event."""
    old = run_record.RunRecord.from_json({"parameters": {"messages": 1, "mode": "stream"}})  # before the registry
    assert set(wait.done_values(old)) == {"done", "download"}
    latency = run_record.RunRecord.from_json({"parameters": {"messages": 1, "workload": "latency"}})
    assert set(wait.done_values(latency)) == {"done", "latency"}
