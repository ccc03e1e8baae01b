"""fire: parallel sends that lose nothing, the run record, and its input checks.

Sends go to real queues in the session's emulator. Where a test needs SQS to reject entries,
the real client is wrapped so that chosen entries come back in `Failed` as SQS reports them;
everything else reaches the real queue.
"""

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import MISSING, asdict, fields
from fractions import Fraction
from importlib import metadata

import pytest
from rich.console import Console

from fanout.common import aws, paths
from fanout.workloads import registry as workloads
from fanout import cli
from fanout.cloud import costs, params
from fanout.stages import deploy, fire
from fanout.results import run_folders as runs
from fanout.workloads.download import strategies
from fanout.common.errors import FanoutError, UsageError
from fanout.cloud.stack import Stack
from fanout.workloads.download import costs as download_costs, driver as download
from tests.harness.read_only import read_only

REGION = "us-east-1"


def check_cost(stack, count: int, strategy, confirmed: bool) -> None:
    """fire's check of a download run's estimate, as fire.run makes it."""
    fire.check_estimate(stack, count, download_costs.estimate(count, stack, strategy), confirmed, Console())


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


def make_stack(emulator, url, default_strategy="download_file", **overrides) -> Stack:
    values = {f.name: f.type() if f.type in (int, str) else None for f in fields(Stack)
              if f.default is MISSING and f.default_factory is MISSING}
    values.update(backend="local", stack="unit", region=REGION, endpoint=emulator, queue_url=url,
                  queue_arn="arn:aws:sqs:us-east-1:123456789012:unit", concurrency=4, memory=512,
                  object_size=2**20, architecture="x86_64", timeout=300)
    values.update(overrides)
    values["workload_outputs"] = {"default_strategy": default_strategy, **values.get("workload_outputs", {})}
    return Stack(**values)


def test_fire_records_the_run_and_marks_the_bodies(queue, emulator, results):
    sqs, url = queue
    before_ms = time.time_ns() // 1_000_000
    record = fire.fire(make_stack(emulator, url), fire.FireParams(25, "exp-1", Fraction(1, 5), workers=4,
                                                                  options={"strategy": "stream chunk_size=256KiB", "pin": "auto"}))  # fmt: skip
    after_ms = time.time_ns() // 1_000_000
    assert runs.resolve(runs.LATEST) == record.run_id
    saved = runs.load(record.run_id)
    assert saved == record
    bodies = drain(sqs, url)
    assert saved.sent == len(bodies) == 25 and saved.failed_seqs == [] and saved.send_status == "complete"
    assert saved.backend == "local" and saved.stack.queue_url == url
    assert before_ms <= saved.first_send_ms <= saved.last_send_ms <= after_ms
    assert saved.parameters.to_json() == {
        "messages": 25, "experiment_tag": "exp-1", "inject_failures": "1/5", "send_workers": 4, "workload": "download",
        "workload_options": {"strategy": "stream chunk_size=256KiB", "strategy_from": "fire --strategy", "pin": "auto"},
    }  # fmt: skip
    assert saved.version.startswith(metadata.version("s3-fanout"))
    assert sorted(b["seq"] for b in bodies) == list(range(25))
    assert {b["run_id"] for b in bodies} == {record.run_id}
    assert {b["experiment_tag"] for b in bodies} == {"exp-1"}
    assert {b["workload"] for b in bodies} == {workloads.DEFAULT}  # every body names its workload
    assert {b["strategy"] for b in bodies} == {"stream chunk_size=256KiB"}
    assert {b["pin"] for b in bodies} == {"auto"}
    assert sorted(b["seq"] for b in bodies if b.get("inject_failure")) == saved.injected_seqs
    assert len(saved.injected_seqs) == 5


def test_a_download_body_without_strategy_carries_the_stacks_default_and_no_pin(queue, emulator, results):
    sqs, url = queue
    deployed = make_stack(emulator, url, default_strategy="stream chunk_size=64KiB")
    fire.fire(deployed, fire.FireParams(3, "t", workers=1))
    bodies = drain(sqs, url)
    assert [set(body) for body in bodies] == [{"run_id", "seq", "experiment_tag", "workload", "strategy"}] * 3
    assert {(body["workload"], body["strategy"]) for body in bodies} == {(workloads.DEFAULT, deployed.workload_outputs["default_strategy"])}


def test_run_json_records_the_storage_classes_for_the_report(queue, emulator, results):
    _, url = queue
    deployed = make_stack(emulator, url, workload_outputs={"storage": ["standard", "express"], "express_az": "use1-az4",
                                                           "express_bucket": "unit-1--use1-az4--x-s3"})  # fmt: skip
    saved = runs.load(fire.fire(deployed, fire.FireParams(1, "t", workers=1)).run_id)
    assert saved.stack.extra["storage"] == ["standard", "express"]
    assert (saved.stack.extra["express_bucket"], saved.stack.extra["express_az"]) == ("unit-1--use1-az4--x-s3", "use1-az4")


@pytest.mark.skipif(shutil.which("git") is None or not (paths.REPO / ".git").exists(), reason="needs a git checkout")
def test_run_json_names_the_commit(queue, emulator, results):
    _, url = queue
    record = fire.fire(make_stack(emulator, url), fire.FireParams(1, "t", workers=1))
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=paths.REPO, capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    assert f"+g{commit}" in record.version


# Fires at a queue of the test's emulator in a process of its own, so that it can be signalled.
FIRE_SCRIPT = """
import json, signal, sys
from fanout.stages import fire
from fanout.cloud.stack import Stack
from fanout.workloads import registry
signal.signal(signal.SIGINT, signal.default_int_handler)  # a shell may start jobs with it ignored
fire.fire(Stack.from_outputs("local", json.loads(sys.argv[1]), registry.stack_fields), fire.FireParams(int(sys.argv[2]), "t", workers=1))
"""


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stopped_fire_records_exactly_what_reached_the_queue(queue, emulator, results, stop):
    sqs, url = queue
    outputs = {k: v for k, v in asdict(make_stack(emulator, url)).items() if k != "backend"}
    count = 50_000  # far more than one worker sends before the signal lands
    process = subprocess.Popen([sys.executable, "-c", FIRE_SCRIPT, json.dumps(outputs), str(count)],
                               env=dict(os.environ, FANOUT_RESULTS=str(results)), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not queue_length(sqs, url) or not (results / runs.LATEST).exists():
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, "fire sent nothing within a minute"
            time.sleep(0.05)
        assert runs.load(runs.LATEST).send_status == "sending"  # a record exists while sending
    except BaseException:
        process.kill()
        raise
    process.send_signal(stop)
    process.wait(timeout=60)
    record = runs.load(runs.LATEST)
    seqs = sorted(body["seq"] for body in drain(sqs, url))
    assert record.send_status == "interrupted"
    assert 0 < record.sent == len(seqs) < count
    assert record.sent_seqs() == seqs
    assert record.failed_seqs == sorted(set(range(count)) - set(seqs))
    assert record.first_send_ms <= record.last_send_ms


def queue_length(sqs, url) -> int:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def test_every_aws_fire_prints_the_estimate(capsys, emulator):
    download_file = strategies.parse("download_file")
    check_cost(make_stack(emulator, "", backend="aws"), 100, download_file, confirmed=False)
    lines = capsys.readouterr().out.splitlines()  # the console is 80 columns wide here
    assert len(lines) == len(costs.describe(costs.estimate(100, costs.Deployment(512, 4), 2**20, 1)))  # none wrapped
    assert lines[0].startswith("estimated AWS cost $") and any("drivers/fanout/cloud/costs.py" in line for line in lines)
    check_cost(make_stack(emulator, ""), 100, download_file, confirmed=False)
    assert capsys.readouterr().out == ""  # the local backend costs nothing


def test_yes_confirms_a_large_or_costly_run(emulator):
    many = make_stack(emulator, "")
    costly = make_stack(emulator, "", memory=10240, object_size=10 * 2**30)
    few = 1000
    stream = strategies.parse("stream")
    assert costs.estimate(few, costs.Deployment(costly.memory, costly.concurrency), costly.object_size, 1).total > costs.CONFIRM_USD
    for stack, count in ((many, costs.CONFIRM_MESSAGES + 1), (costly, few)):
        with pytest.raises(UsageError, match="without --yes"):
            check_cost(stack, count, stream, confirmed=False)
        check_cost(stack, count, stream, confirmed=True)


def test_no_run_above_the_cap_even_with_yes(emulator):
    with pytest.raises(UsageError, match=f"at most {costs.MAX_MESSAGES:,} per run, even with --yes"):
        check_cost(make_stack(emulator, ""), costs.MAX_MESSAGES + 1, strategies.parse("stream"), confirmed=True)
    check_cost(make_stack(emulator, ""), costs.MAX_MESSAGES, strategies.parse("stream"), confirmed=True)


def test_a_newer_run_becomes_latest(queue, emulator, results):
    _, url = queue
    first = fire.fire(make_stack(emulator, url), fire.FireParams(3, "a", workers=1))
    second = fire.fire(make_stack(emulator, url), fire.FireParams(3, "b", workers=1))
    assert runs.resolve(runs.LATEST) == second.run_id != first.run_id
    assert runs.load(first.run_id).parameters.experiment_tag == "a"


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
        (["--tag", "has\ttab"], "'has\\ttab'"),
        (["--tag", " leading space"], "' leading space'"),
        (["--inject-failures", "0"], "--inject-failures"),
        (["--inject-failures", "1.5"], "--inject-failures"),
        (["--workers", "x"], "--workers"),
        (["--strategy", "ftp"], "unknown strategy 'ftp'"),
        (["--strategy", "ranged connections=0"], "connections='0' is out of range"),
        (["--strategy", "ranged chunk_size=8XB"], "chunk_size='8XB'"),
        (["--strategy", "stream; ranged"], "sweep axis"),
        (["--strategy", "repeated requests=0"], "requests='0' is out of range: expected a whole number from 1 to 1000"),
        (["--strategy", "repeated in_flight=ten"], "in_flight='ten' is not a whole number from 1 to 64"),
        (["--mode", "mmap"], "'mmap'"),  # the old name of --strategy
    ],
)
def test_fire_rejects_bad_values_before_anything_else(capsys, results, extra, named):
    code, err = one_line_error(capsys, ["fire", "--stack", "not-deployed", *extra])
    assert code == 2 and named in err
    assert not results.exists()


def test_the_run_strategy_is_checked_against_the_stack(emulator):
    local, aws_stack = make_stack(emulator, ""), make_stack(emulator, "", backend="aws", endpoint="")
    assert str(download.check_strategy(local, None)) == str(strategies.parse(local.workload_outputs["default_strategy"]))
    with pytest.raises(UsageError, match="runs only against AWS") as info:
        download.check_strategy(local, strategies.parse("crt"))
    assert emulator in str(info.value) and "\n" not in str(info.value)
    assert download.check_strategy(aws_stack, strategies.parse("crt")).name == "crt"
    too_big = (params.MAX_EPHEMERAL_MIB - params.TMP_HEADROOM_MIB) * 2**20 + 1
    huge = make_stack(emulator, "", object_size=too_big)
    with pytest.raises(UsageError, match="/tmp with strategy download_file"):
        download.check_strategy(huge, strategies.parse("download_file"))
    assert download.check_strategy(huge, strategies.parse("ranged")).name == "ranged"


def test_a_download_past_the_functions_timeout_or_memory_is_refused_in_one_line(emulator):
    """repeated: 10,000 GETs at the assumed 27 ms, one at a time, plus their bytes at 75 MiB/s:
    270 s + 13 s > 60 s; ten at a time, 27 s + 13 s fits."""
    stack = make_stack(emulator, "", object_size=100_000, timeout=60)
    with pytest.raises(UsageError) as info:
        download.check_strategy(stack, strategies.parse("repeated requests=10000 in_flight=1"))
    assert "10,000 GETs" in str(info.value) and "takes 283 s, over the function's timeout of 60 s" in str(info.value)
    assert "\n" not in str(info.value)
    assert download.check_strategy(stack, strategies.parse("repeated requests=10000 in_flight=10")).name == "repeated"
    small = make_stack(emulator, "", object_size=100_000, memory=128, timeout=900)
    with pytest.raises(UsageError) as info:  # 100 MB of runtime and 4 KiB a GET: 100 + 40 MB
        download.check_strategy(small, strategies.parse("repeated requests=10000 in_flight=10"))
    assert "needs a function of at least 140 MB, the stack has 128 MB: redeploy with MEMORY=140" in str(info.value)
    assert download.check_strategy(small, strategies.parse("repeated requests=5000 in_flight=10")).name == "repeated"
    big = make_stack(emulator, "", object_size=10 * 2**30, timeout=60)  # 137 s at 75 MiB/s
    with pytest.raises(UsageError, match="10 GiB at 75 MiB/s takes 137 s, over the function's timeout of 60 s"):
        download.check_strategy(big, strategies.parse("stream"))


def test_fire_without_a_deployed_stack_is_one_line(capsys, results, emulator):
    code, err = one_line_error(capsys, ["fire", "--stack", "not-deployed", "--messages", "5"])
    assert code == 1 and "not-deployed" in err and "make deploy" in err
    assert not results.exists()


@pytest.mark.parametrize("command", ["wait", "report"])
def test_wait_and_report_without_the_stack_are_one_line(capsys, queue, emulator, results, command):
    _, url = queue
    fire.fire(make_stack(emulator, url), fire.FireParams(2, "t", workers=1))  # a run of stack "unit", never deployed
    code, err = one_line_error(capsys, [command, "--stack", "unit"])
    assert code == 1 and "no stack 'unit'" in err and "make deploy" in err


@pytest.mark.parametrize("command", ["wait", "report"])
def test_unknown_runs_are_one_line(capsys, results, command):
    code, err = one_line_error(capsys, [command, "--run", "20990101T000000Z-abcdef"])
    assert code == 2 and "20990101T000000Z-abcdef" in err
    code, err = one_line_error(capsys, [command])  # latest, with no runs at all
    assert code == 2 and "no runs" in err


def test_a_fire_that_sends_nothing_records_nothing(queue, emulator, results, capsys):
    sqs, url = queue
    fire.fire(make_stack(emulator, url), fire.FireParams(2, "t", workers=1))
    latest = runs.resolve(runs.LATEST)
    gone = sqs.create_queue(QueueName=f"gone-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    sqs.delete_queue(QueueUrl=gone)  # every send to it fails
    record = fire.fire(make_stack(emulator, gone), fire.FireParams(5, "t", workers=1))
    assert record.sent == 0
    assert not runs.run_dir(record.run_id).exists()
    assert runs.resolve(runs.LATEST) == latest
    assert "no run recorded" in capsys.readouterr().out


def test_a_fire_into_a_results_folder_it_cannot_write_sends_nothing(queue, emulator, results):
    """It sent every message and then crashed writing run.json: queued work no record names.
    Now it checks first: an error naming the folder, not a message sent, nothing left."""
    sqs, url = queue
    results.mkdir()
    with read_only(results), pytest.raises(FanoutError, match=f"^cannot write {results}/[^ ]+: .*writable"):
        fire.fire(make_stack(emulator, url), fire.FireParams(2, "t", workers=1))
    assert queue_length(sqs, url) == 0 and list(results.iterdir()) == []


def test_a_tag_with_spaces_reaches_the_bodies_and_the_run_record(queue, emulator, results):
    """`experiment 01` (the published study's tag) is a valid tag, carried as given
    (tests/insights/test_saved_queries.py groups records by it)."""
    sqs, url = queue
    tag = fire.check_tag("experiment 01")
    record = fire.fire(make_stack(emulator, url), fire.FireParams(3, tag, workers=1))
    assert {body["experiment_tag"] for body in drain(sqs, url)} == {tag}
    assert runs.load(record.run_id).parameters.experiment_tag == tag


def test_a_deploy_input_that_is_not_the_stacks_is_refused_before_anything_is_sent(capsys, queue, emulator, results,
                                                                                   monkeypatch):  # fmt: skip
    """`make fire MEMORY=2048` on a 512 MB stack would run at 512 MB: refused, naming both; the
    stack's own values (however written) pass."""
    sqs, url = queue
    stack = make_stack(emulator, url, timeout=300)
    monkeypatch.setattr(fire.stacks, "acted_on", lambda backend, name, fields: stack)
    code, err = one_line_error(capsys, ["fire", "--messages", "3", "--memory", "2048", "--concurrency", "4",
                                        "--object-size", "2MiB"])  # fmt: skip
    assert code == 2
    assert "MEMORY=2048 is set at deploy: stack 'unit' has 512" in err
    assert "OBJECT_SIZE=2 MiB is set at deploy: stack 'unit' has 1 MiB" in err
    assert "CONCURRENCY" not in err  # 4 is the stack's
    assert queue_length(sqs, url) == 0 and not results.exists()
    assert cli.main(["fire", "--messages", "3", "--memory", "0512", "--object-size", "1MiB", "--architecture", "x86_64",
                     "--region", REGION, "--function-timeout", "300"]) == 0  # fmt: skip
    assert queue_length(sqs, url) == 3


def test_a_deploy_only_option_of_a_workload_is_checked_too(capsys, emulator, results, monkeypatch):
    """EXPRESS_AZ is latency's deploy-level option that fire does not take: given to fire, it is
    compared with the stack's like MEMORY (a stack on AWS with express in use1-az4)."""
    express = {"storage": ["express", "standard"], "express_bucket": "b--use1-az4--x-s3", "express_az": "use1-az4"}
    stack = make_stack(emulator, "", backend="aws", timeout=300, workload_outputs=express)
    monkeypatch.setattr(fire.stacks, "acted_on", lambda backend, name, fields: stack)
    code, err = one_line_error(capsys, ["fire", "--backend", "aws", "--messages", "3", "--express-az", "use1-az6"])
    assert code == 2 and "EXPRESS_AZ=use1-az6 is set at deploy: stack 'unit' has use1-az4" in err
    args = cli.build_parser().parse_args(["fire", "--backend", "aws", "--express-az", "use1-az4"])
    fire.check_deployed(deploy.given_of(args), stack)  # the stack's own zone passes
