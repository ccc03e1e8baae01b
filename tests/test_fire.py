"""fire: parallel sends that lose nothing, the run record, and its input checks.

Sends go to real queues in the session's emulator. Where a test needs SQS to reject entries,
the real client is wrapped so that chosen entries come back in `Failed` as SQS reports them;
everything else reaches the real queue.
"""

import json
import math
import uuid
from dataclasses import fields
from fractions import Fraction

import pytest

from fanout import aws, cli, fire, runs
from fanout.stack import Stack

REGION = "us-east-1"


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


@pytest.fixture
def queue(emulator):
    sqs = aws.client("sqs", REGION, emulator)
    url = sqs.create_queue(QueueName=f"fire-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    yield sqs, url
    sqs.delete_queue(QueueUrl=url)


def drain(sqs, url) -> list[dict]:
    """Every message body in the queue (received once each, then deleted)."""
    bodies = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        bodies += [json.loads(m["Body"]) for m in messages]
        sqs.delete_message_batch(
            QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
        )
    return bodies


class Rejecting:
    """The real SQS client, except that `reject(seq, attempt)` entries come back as Failed."""

    def __init__(self, client, reject, sender_fault=False):
        self.client, self.reject, self.sender_fault = client, reject, sender_fault
        self.attempts: dict[str, int] = {}

    def send_message_batch(self, QueueUrl, Entries):
        passed, failed = [], []
        for entry in Entries:
            attempt = self.attempts[entry["Id"]] = self.attempts.get(entry["Id"], 0) + 1
            if self.reject(int(entry["Id"]), attempt):
                failed.append({"Id": entry["Id"], "SenderFault": self.sender_fault, "Code": "Throttled", "Message": "slow down"})
            else:
                passed.append(entry)
        response = self.client.send_message_batch(QueueUrl=QueueUrl, Entries=passed) if passed else {}
        return {"Successful": response.get("Successful", []), "Failed": failed + response.get("Failed", [])}


def bodies_for(count, run_id="r1"):
    return [(seq, fire.message_body(run_id, seq, "t", None, False)) for seq in range(count)]


def test_parallel_send_delivers_every_seq_exactly_once(queue):
    sqs, url = queue
    advanced = []
    result = fire.send(sqs, url, bodies_for(95), workers=8, advance=advanced.append)
    seqs = sorted(body["seq"] for body in drain(sqs, url))
    assert seqs == list(range(95))
    assert result.sent == set(range(95)) and not result.failed
    assert sum(advanced) == 95
    assert result.first_send_ms <= result.last_send_ms


def test_rejected_entries_are_retried_until_sent(queue):
    sqs, url = queue
    flaky = Rejecting(sqs, lambda seq, attempt: seq % 3 == 0 and attempt <= 2)
    result = fire.send(flaky, url, bodies_for(30), workers=4)
    assert sorted(body["seq"] for body in drain(sqs, url)) == list(range(30))
    assert result.sent == set(range(30)) and not result.failed
    assert flaky.attempts["0"] == 3


def test_entries_that_keep_failing_are_reported_not_dropped(queue, monkeypatch):
    monkeypatch.setattr(fire, "ATTEMPTS", 3)
    sqs, url = queue
    always = Rejecting(sqs, lambda seq, attempt: seq in (4, 17))
    result = fire.send(always, url, bodies_for(20), workers=4)
    assert sorted(body["seq"] for body in drain(sqs, url)) == [s for s in range(20) if s not in (4, 17)]
    assert set(result.failed) == {4, 17} and "Throttled" in result.failed[4]
    assert always.attempts["4"] == 3


def test_sender_faults_are_not_retried(queue):
    sqs, url = queue
    invalid = Rejecting(sqs, lambda seq, attempt: seq == 2, sender_fault=True)
    result = fire.send(invalid, url, bodies_for(5), workers=2)
    assert set(result.failed) == {2} and invalid.attempts["2"] == 1


@pytest.mark.parametrize("count, fraction", [(40, "1/4"), (37, "0.1"), (10, "1"), (7, "0.5"), (1000, "0.013")])
def test_injected_failures_are_floor_n_f_and_evenly_spread(count, fraction):
    f = Fraction(fraction)
    chosen = fire.injected_seqs(count, f)
    assert len(chosen) == math.floor(count * f)
    for prefix in range(count + 1):  # every prefix holds its share, so the spread is even
        assert len([s for s in chosen if s < prefix]) == math.floor(prefix * f)


def make_stack(emulator, url, **overrides) -> Stack:
    values = {f.name: f.type() if f.type in (int, str) else None for f in fields(Stack)}
    values.update(backend="local", stack="unit", region=REGION, endpoint=emulator, queue_url=url,
                  queue_arn="arn:aws:sqs:us-east-1:123456789012:unit", concurrency=4, memory=512,
                  object_size=2**20, download_mode="download_file", architecture="x86_64", **overrides)
    return Stack(**values)


def test_fire_records_the_run_and_marks_the_bodies(queue, emulator, results):
    sqs, url = queue
    record = fire.fire(make_stack(emulator, url), 25, "exp-1", "stream", Fraction(1, 5), workers=4)
    assert runs.resolve(runs.LATEST) == record["run_id"]
    saved = runs.load(record["run_id"])
    assert saved == record
    assert saved["sent"] == 25 and saved["failed_seqs"] == []
    assert saved["parameters"] | {"mode_from": None} == {
        "messages": 25, "experiment_tag": "exp-1", "mode": "stream", "mode_from": None,
        "inject_failures": "1/5", "send_workers": 4,
    }  # fmt: skip
    assert saved["stack"]["queue_url"] == url and saved["version"]
    bodies = drain(sqs, url)
    assert sorted(b["seq"] for b in bodies) == list(range(25))
    assert {b["run_id"] for b in bodies} == {record["run_id"]}
    assert {b["experiment_tag"] for b in bodies} == {"exp-1"} and {b["mode"] for b in bodies} == {"stream"}
    assert sorted(b["seq"] for b in bodies if b.get("inject_failure")) == saved["injected_seqs"]
    assert len(saved["injected_seqs"]) == 5


def test_a_newer_run_becomes_latest(queue, emulator, results):
    _, url = queue
    first = fire.fire(make_stack(emulator, url), 3, "a", None, None, workers=1)
    second = fire.fire(make_stack(emulator, url), 3, "b", None, None, workers=1)
    assert runs.resolve(runs.LATEST) == second["run_id"] != first["run_id"]
    assert runs.load(first["run_id"])["parameters"]["experiment_tag"] == "a"


def one_line_error(capsys, argv) -> tuple[int, str]:
    code = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    return code, err


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--messages", "0"], "'0'"),
        (["--messages", "-3"], "'-3'"),
        (["--messages", "abc"], "'abc'"),
        (["--messages", "2.5"], "'2.5'"),
        (["--multiplier", "0"], "MULTIPLIER"),
        (["--tag", "has space"], "'has space'"),
        (["--inject-failures", "0"], "--inject-failures"),
        (["--inject-failures", "1.5"], "--inject-failures"),
        (["--workers", "x"], "--workers"),
    ],
)
def test_fire_rejects_bad_values_before_anything_else(capsys, results, extra, named):
    code, err = one_line_error(capsys, ["fire", "--stack", "not-deployed", *extra])
    assert code == 2 and named in err
    assert not results.exists()


def test_fire_without_a_deployed_stack_is_one_line(capsys, results, emulator):
    code, err = one_line_error(capsys, ["fire", "--stack", "not-deployed", "--messages", "5"])
    assert code == 1 and "not-deployed" in err and "make deploy" in err
    assert not results.exists()


@pytest.mark.parametrize("command", ["wait", "report"])
def test_unknown_runs_are_one_line(capsys, results, command):
    code, err = one_line_error(capsys, [command, "--run", "20990101T000000Z-abcdef"])
    assert code == 2 and "20990101T000000Z-abcdef" in err
    code, err = one_line_error(capsys, [command])  # latest, with no runs at all
    assert code == 2 and "no runs" in err
