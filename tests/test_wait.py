"""wait's accounting against partial query results, its missing-seq output, and the host lock.

Insights is stood in for by a function that evaluates the real saved query, with the real local
evaluator, over records of only some of the seqs at first: what Insights does for a while after
a large run. Everything else (run record, queues, DLQ) is real, in the session's emulator.
"""

import json
import os
import random
import re
import subprocess
import sys
import uuid

import pytest
from test_fire import make_stack

from fanout import aws, fire, hostlock, insights, runs, wait
from fanout.errors import FanoutError

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
        answers.append(query_text)
        seqs = range(COUNT) if len(answers) > complete_after else range(0, COUNT, 2)
        lines = [{"event": "download", "run_id": record["run_id"], "seq": seq, "receive_count": 1} for seq in seqs]
        events = [{"timestamp": record["first_send_ms"] + i, "message": json.dumps(line)} for i, line in enumerate(lines)]
        return insights.evaluate(query_text, events)

    return run


def test_wait_keeps_waiting_while_the_query_returns_part_of_the_records(stack, results, monkeypatch):
    record = fire.fire(stack, fire.FireParams(COUNT, "t", workers=2))
    answers = []
    monkeypatch.setattr(insights, "run", partial_insights(record, answers, complete_after=PARTIAL_ANSWERS))
    monkeypatch.setattr(wait, "POLL_SECONDS", {"local": 0})
    accounting = wait.wait(stack, record, timeout=600)
    assert len(answers) == PARTIAL_ANSWERS + 1  # it did not stop at a partial answer
    assert accounting.done == set(range(COUNT)) and not accounting.in_flight()
    assert runs.load(record["run_id"])["accounting"]["done"] == COUNT


def test_a_wait_that_times_out_lists_what_is_missing(stack, results, monkeypatch, capsys):
    record = fire.fire(stack, fire.FireParams(COUNT, "t", workers=2))
    monkeypatch.setattr(insights, "run", partial_insights(record, [], complete_after=float("inf")))
    monkeypatch.setattr(wait, "POLL_SECONDS", {"local": 0.05})
    capsys.readouterr()
    accounting = wait.wait(stack, record, timeout=0.2)
    odd = list(range(1, COUNT, 2))
    assert accounting.in_flight() == odd
    assert json.loads((runs.run_dir(record["run_id"]) / wait.MISSING_FILE).read_text()) == odd
    assert f"missing seqs: {runs.seq_ranges(odd)}" in capsys.readouterr().out


def test_peeking_at_the_dead_letter_queue_hides_nothing(stack):
    """More messages than one receive returns, of this run and another: a scan sees all of this
    run's and leaves every message visible, so the next scan (or anyone) sees them again."""
    sqs = stack.client("sqs")
    bodies = [{"run_id": "mine", "seq": seq} for seq in range(25)] + [{"run_id": "other", "seq": 0}]
    for i in range(0, len(bodies), 10):
        entries = [{"Id": str(n), "MessageBody": json.dumps(b)} for n, b in enumerate(bodies[i : i + 10])]
        sqs.send_message_batch(QueueUrl=stack.dlq_url, Entries=entries)
    assert wait.peek_dead_letters(stack, "mine") == set(range(25))
    assert wait.peek_dead_letters(stack, "mine") == set(range(25))
    hidden = sqs.get_queue_attributes(QueueUrl=stack.dlq_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"])
    assert hidden["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "0"


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
from fanout import hostlock
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
