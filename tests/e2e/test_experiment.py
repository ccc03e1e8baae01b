"""The user's loop on the local backend: fire, wait (hosting the function), report, through the CLI.

One stack for the module (deploying takes about a minute). Its function timeout is 1 s, so the
queue's visibility timeout is 6 s and a failing message reaches the dead-letter queue after its
5 receives in about half a minute; a 1 MiB object downloads far inside that timeout.

`make demo` runs alongside the module's deploy and tests, in a home and emulator of its own,
and is interrupted with Ctrl-C during run-and-wait (see InterruptedDemo): a real demo, whose
minute of deploy the suite then barely notices.
"""

import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from fanout.local import backends
from fanout.workloads import registry
from fanout import cli, insights
from fanout.cloud import costs, package, params, stack, terraform
from fanout.stages import demo, deploy, report as reporting, upload, wait
from fanout.local import hostlock
from fanout.local.host import config as function_config, credentials
from fanout.common import aws
from fanout.common import paths
from fanout.workloads.download import strategies
from fanout.workloads.download import report
from fanout.results import log_records as run_logs, run_folders as runs
from fanout.common.errors import FanoutError

pytestmark = pytest.mark.slow

STACK = "e2e"
CONCURRENCY = 4
TIMEOUT_S = 1
# Loopback: these tests check the flow, not a model (the default for a stack is lambda-2024).
NO_MODEL = ["--network", "none"]
WAIT = ["--timeout", "240", *NO_MODEL]


@pytest.fixture(scope="module")
def deployed(emulator, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FANOUT_RESULTS", str(tmp_path_factory.mktemp("results")))
        inputs = params.parse(STACK, "us-east-1", CONCURRENCY, 256, "1MiB", "x86_64", TIMEOUT_S,
                              deploy.workload_deploy({"strategy": str(strategies.parse("download_file"))}))  # fmt: skip
        variables = inputs.variables(emulator, package.build(function="runner"), backends.get("local"))
        try:
            terraform.apply("local", STACK, variables)
            deployed = stack.load(backends.get("local"), STACK, registry.stack_fields)
            upload.ensure_object(deployed)
            yield deployed
        finally:
            terraform.destroy("local", STACK)


class InterruptedDemo:
    """`fanout demo` in a subprocess with its own FANOUT_HOME (so it starts its own emulator),
    sent SIGINT on its process group, as a terminal's Ctrl-C is, once it reaches run-and-wait."""

    SCRIPT = (  # a shell may start background jobs with SIGINT ignored; Ctrl-C must work here
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from fanout import cli; sys.exit(cli.main(['demo']))"
    )

    def __init__(self, root: Path):
        self.home, self.results = root / "home", root / "results"
        env = dict(os.environ, FANOUT_HOME=str(self.home), FANOUT_RESULTS=str(self.results), PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen([sys.executable, "-c", self.SCRIPT], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
        self.output: list[str] = []
        self.emulator_pid = None
        self.watcher = threading.Thread(target=self._watch, daemon=True)
        self.watcher.start()

    def _watch(self):
        for line in self.process.stdout:
            self.output.append(line)
            if "run and wait" in line and self.emulator_pid is None:
                self.emulator_pid = int((self.home / "emulator" / "pid").read_text())
                os.killpg(self.process.pid, signal.SIGINT)

    def exit_code(self) -> int:
        code = self.process.wait(timeout=300)
        self.watcher.join()
        return code

    def stop(self):
        """For a module run that never reached the demo's test: Ctrl-C it wherever it is."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # it may end meanwhile
                os.killpg(self.process.pid, signal.SIGINT)
        self.exit_code()


@pytest.fixture(scope="module", autouse=True)
def interrupted_demo(request, tmp_path_factory):
    """Starts with the module, so that both deploys run at once; in a fresh checkout only after
    the module's deploy: two first `terraform init`s would both write infra's lock file."""
    if not (paths.INFRA / ".terraform.lock.hcl").exists():
        request.getfixturevalue("deployed")
    started = InterruptedDemo(tmp_path_factory.mktemp("demo"))
    yield started
    started.stop()


def fanout(*argv: str) -> int:
    return cli.main([*argv[:1], "--backend", "local", "--stack", STACK, *argv[1:]])


def one_line_error(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = fanout(*argv)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return code, err


def summary_of(run_id: str) -> dict:
    return json.loads((runs.run_dir(run_id) / "summary.json").read_text())


def test_every_message_of_a_run_is_accounted_for(deployed):
    assert fanout("fire", "--messages", "40", "--tag", "e2e") == 0
    run_id = runs.resolve(runs.LATEST)
    assert fanout("wait", "--run", run_id, *WAIT) == 0
    assert runs.load(run_id).accounting.done == 40
    assert fanout("report", "--run", run_id) == 0

    summary = summary_of(run_id)
    counts = summary["counts"]
    assert counts["sent"] == counts["in_percentile_table"] == counts["download_records"] == counts["seqs_downloaded"] == 40
    (cell,) = summary["cells"]
    assert (cell["memory_size"], cell["concurrency_limit"], cell["experiment_tag"]) == (256, CONCURRENCY, "e2e")
    assert 1 <= cell["peak_concurrency"] <= CONCURRENCY
    assert cell["steady_mean_concurrency"] <= CONCURRENCY
    records = [json.loads(line) for line in (runs.run_dir(run_id) / "records.jsonl").read_text().splitlines()]
    assert sorted(r["seq"] for r in records if r["event"] == "download") == list(range(40))
    for name in ("summary.csv", "report.md", "throughput.png", "concurrency.png", "seconds_cdf.png"):
        assert (runs.run_dir(run_id) / name).stat().st_size > 0


def test_a_run_under_a_network_model(deployed, tmp_path, capsys):
    """`wait` hosts under a model file: run.json records it, every report output names it, and
    the downloads keep to its rate (8 MB/s at scale 2: 4 MB/s per environment). The endpoint
    answers on two addresses and PIN=auto spreads the messages over both: the report's
    per-address table has each with half the downloads."""
    path = tmp_path / "tiny.toml"
    path.write_text('sustained_mb_per_s = 8\nconnection_mb_per_s = 8\nfirst_byte_ms = 5\n'
                    '[addresses]\n"127.0.0.2" = 1\n"127.0.0.3" = 1\n')
    assert fanout("fire", "--messages", "8", "--tag", "modelled", "--pin", "auto") == 0
    run_id = runs.resolve(runs.LATEST)
    assert fanout("wait", "--run", run_id, "--timeout", "240", "--network", str(path), "--network-scale", "2") == 0
    network, limits = runs.load(run_id).network, runs.load(run_id).limits
    assert (network["profile"], network["scale"], network["parameters"]["sustained_mb_per_s"]) == ("tiny", 2, 8)
    # How the host held the environments to Lambda's limits: 256 MB buys 0.145 vCPU, halved by the scale.
    assert set(limits) == {"memory (256 MB)", "CPU share", "/tmp (512 MB)"}
    assert limits["CPU share"].startswith(("0.072 vCPU", "not enforced: "))
    capsys.readouterr()
    assert fanout("report", "--run", run_id) == 0
    label = "simulated network: tiny, scale 2 (rates / 2, first byte not scaled)"
    assert label in capsys.readouterr().out
    assert summary_of(run_id)["network"] == label
    assert label in (runs.run_dir(run_id) / "report.md").read_text()
    assert label in (runs.run_dir(run_id) / "summary.csv").read_text()
    stated = runs.load(run_id).limits_label()
    assert stated.startswith("Lambda's limits: /tmp (512 MB): ") and "; memory (256 MB): enforced by " in stated
    assert summary_of(run_id)["limits"] == stated and f"**{stated}**" in (runs.run_dir(run_id) / "report.md").read_text()
    records = [json.loads(line) for line in (runs.run_dir(run_id) / "records.jsonl").read_text().splitlines()]
    downloads = [r for r in records if r["event"] == "download"]
    assert len(downloads) == 8
    assert all(r["bytes"] / r["seconds"] <= 4e6 * 1.05 for r in downloads)  # a cap: load only slows them
    # That the function sees the injected latency is a wall-clock figure, checked by the tests
    # marked timing (tests/network/test_shaping.py, test_first_bytes.py), not beside the suite's
    # other work: here it once came out at 2.9 ms of 5 with six workers on two cores.
    # The host logged every request the proxy held for that latency, and the report found them.
    [first_byte] = [row for row in summary_of(run_id)["ground_truth"] if row["parameter"] == "first_byte_seconds"]
    assert first_byte["requests"] == sum(r["requests"] for r in downloads) >= first_byte["late"] >= 0
    assert all(r["endpoint_ip"] == r["pinned_ip"] == ["127.0.0.2", "127.0.0.3"][r["seq"] % 2] for r in downloads)
    by_address = {row["endpoint_ip"]: row["downloads"] for row in summary_of(run_id)["endpoint_ips"]}
    assert by_address == {"127.0.0.2": 4, "127.0.0.3": 4}
    assert "Throughput by endpoint address" in (runs.run_dir(run_id) / "report.md").read_text()


def test_injected_failures_end_in_the_dead_letter_queue(deployed):
    assert fanout("fire", "--messages", "12", "--tag", "failing", "--inject-failures", "0.25") == 0
    record = runs.load(runs.LATEST)
    injected = record.injected_seqs
    assert len(injected) == 3
    assert fanout("wait", "--run", record.run_id, *WAIT) == 0
    accounting = runs.load(record.run_id).accounting
    assert accounting.dead_lettered == injected and accounting.done == 12 - len(injected)
    assert accounting.in_flight == [] and accounting.failed == []

    assert fanout("report", "--run", record.run_id) == 0
    summary = summary_of(record.run_id)
    assert summary["dead_lettered"] == injected
    (errors,) = summary["errors"]
    assert errors["error_type"] == "InjectedFailure" and errors["messages"] == len(injected)
    assert summary["counts"]["seqs_downloaded"] == 12 - len(injected)

    # Read the DLQ directly (this hides its messages for a while: after wait and report).
    sqs = deployed.client("sqs")
    in_dlq = []
    while messages := sqs.receive_message(QueueUrl=deployed.dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=30).get("Messages"):
        in_dlq += [json.loads(m["Body"]) for m in messages]
    assert sorted(b["seq"] for b in in_dlq if b["run_id"] == record.run_id) == injected


def test_report_across_runs_and_compare_on_real_runs(deployed, capsys):
    """The two runs above (tags e2e and failing), as `fanout report` left them, in one report."""
    by_tag = {}
    for path in sorted(paths.results_dir().glob(f"*/{runs.RUN_FILE}")):
        record = json.loads(path.read_text())
        by_tag.setdefault(record["parameters"]["experiment_tag"], record["run_id"])
    ok, failing = by_tag["e2e"], by_tag["failing"]
    assert fanout("report", "--runs", f"{ok},{failing}") == 0
    folder = reporting.across_dir([ok, failing])
    cells = {c["experiment_tag"]: c for c in json.loads((folder / "cells.json").read_text())["cells"]}
    injected = runs.load(failing).injected_seqs
    assert (cells["e2e"]["n_all"], cells["e2e"]["sent"], cells["e2e"]["complete"]) == (40, 40, True)
    assert (cells["failing"]["done"], cells["failing"]["dead_lettered"]) == (12 - len(injected), len(injected))
    assert all(c["memory_size"] == 256 and c["object_size"] == 2**20 for c in cells.values())
    capsys.readouterr()
    # Tiny downloads on the local host overlap little: compare every download, whatever it ran at.
    assert cli.main(["compare", ok, failing, "--at-target", "0.01"]) == 0
    assert "simulated network: none (loopback, not modelled)" in capsys.readouterr().out.replace("\n", "")


def test_bad_inputs_are_one_line_errors(deployed, capsys):
    latest = runs.resolve(runs.LATEST)
    code, err = one_line_error(capsys, "fire", "--messages", "0")
    assert code == 2 and "'0'" in err
    assert fanout("fire", "--messages", "100000000", "--yes") == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "--yes" in err and f"{costs.MAX_MESSAGES:,}" in err
    assert "GB-s" in out  # the estimate
    code, err = one_line_error(capsys, "fire", "--messages", str(costs.CONFIRM_MESSAGES + 1))
    assert code == 2 and "--yes" in err and "$" in err
    assert runs.resolve(runs.LATEST) == latest  # nothing was sent or recorded
    code, err = one_line_error(capsys, "wait", "--run", "20990101T000000Z-000000")
    assert code == 2 and "20990101T000000Z-000000" in err
    code, err = one_line_error(capsys, "report", "--run", "no-such-run")
    assert code == 2 and "no-such-run" in err
    code, err = one_line_error(capsys, "wait", "--timeout", "-1")
    assert code == 2 and "--timeout" in err
    code, err = one_line_error(capsys, "fire", "--messages", "5", "--strategy", "crt")  # needs the stack: exit 2
    assert code == 2 and "runs only against AWS" in err
    code, err = one_line_error(capsys, "fire", "--messages", "5", "--strategy", "ranged connections=99")
    assert code == 2 and "connections='99'" in err
    assert runs.resolve(runs.LATEST) == latest
    capsys.readouterr()
    assert cli.main(["fire", "--backend", "local", "--stack", "absent", "--messages", "5"]) == 1
    assert "absent" in capsys.readouterr().err


def test_make_run_then_wait_without_hosting(deployed):
    """The issue's chain: deploy, fire, `make run` (the host, until the queue stays empty), then
    `make wait HOST=0`; every record lands in the function's log group."""
    strategy = "ranged chunk_size=256KiB connections=3"  # a message-level choice: no redeploy
    assert fanout("fire", "--messages", "12", "--tag", "hosted", "--strategy", strategy) == 0
    run_id = runs.resolve(runs.LATEST)
    assert fanout("host", "--idle", "1", *NO_MODEL) == 0
    assert fanout("wait", "--run", run_id, "--no-host", *WAIT) == 0
    assert runs.load(run_id).accounting.done == 12
    events = insights.fetch_events(deployed, *runs.run_window(runs.load(run_id)))
    downloads = [r for r in run_logs.run_records(events, run_id) if r["event"] == "download"]
    assert sorted(r["seq"] for r in downloads) == list(range(12))
    canonical = strategies.parse(strategy)
    assert all(r.items() >= canonical.fields().items() for r in downloads)
    assert all(r["requests"] == canonical.gets(deployed.object_size) + 1 for r in downloads)  # + its HeadObject


def test_wait_times_out_with_the_missing_seqs(deployed, capsys):
    assert fanout("fire", "--messages", "30", "--tag", "unhosted") == 0
    record = runs.load(runs.LATEST)
    try:
        capsys.readouterr()
        code = fanout("wait", "--run", record.run_id, "--no-host", "--timeout", "1")  # nothing hosts
        out, err = capsys.readouterr()
    finally:
        deployed.client("sqs").purge_queue(QueueUrl=deployed.queue_url)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "30 of 30" in err
    assert f"missing seqs: {runs.seq_ranges(range(30))}" in out
    assert json.loads((runs.run_dir(record.run_id) / wait.MISSING_FILE).read_text()) == list(range(30))
    # A demo whose wait ends like this fails (after its teardown), saying how many were lost.
    with pytest.raises(FanoutError, match="30 of 30 messages"):
        demo.check_accounted(wait.Accounting(sent=record.sent_seqs()), record.run_id)


def test_a_second_host_is_refused(deployed, capsys):
    assert fanout("fire", "--messages", "2", "--tag", "locked") == 0
    run_id = runs.resolve(runs.LATEST)
    with hostlock.held("local", STACK):  # as `make run` in another terminal holds it
        code, err = one_line_error(capsys, "wait", "--run", run_id, *WAIT)
        assert code == 1 and f"already hosted by process {os.getpid()}" in err and "HOST=0" in err
        code, err = one_line_error(capsys, "host", "--idle", "1", *NO_MODEL)  # `make run` beside `make wait`
        assert code == 1 and f"already hosted by process {os.getpid()}" in err
    assert fanout("wait", "--run", run_id, *WAIT) == 0  # the lock went with its holder


def _running(pid: int) -> bool:
    """Is `pid` a live process (not gone, not a zombie no one has reaped yet)?"""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_ctrl_c_during_the_demo_still_tears_down(interrupted_demo):
    code = interrupted_demo.exit_code()
    output = "".join(interrupted_demo.output)
    assert code == 130, output
    assert "teardown" in output and "stopped the emulator this command started" in output, output
    assert interrupted_demo.emulator_pid and not _running(interrupted_demo.emulator_pid)
    stack_dir = interrupted_demo.home / "stacks" / "local" / demo.DEMO_STACK
    assert not (stack_dir / terraform.STATE_FILE).exists()
    assert "Apply complete!" in (stack_dir / terraform.LOG_FILE).read_text()  # the log outlives the state
    group = [p for p in Path("/proc").glob("[0-9]*") if _in_group(p, interrupted_demo.process.pid)]
    assert not [p.name for p in group if _running(int(p.name))]  # nothing the demo started runs on
    record = json.loads((interrupted_demo.results / runs.LATEST / runs.RUN_FILE).read_text())
    assert record["send_status"] == "complete" and record["sent"] == record["parameters"]["messages"]


def _in_group(proc: Path, pgid: int) -> bool:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[2]) == pgid
    except (FileNotFoundError, ProcessLookupError):
        return False


# Operations whose IAM action has another name; every other operation is its own action.
IAM_ACTION_OF = {"HeadObject": "s3:GetObject", "DeleteMessageBatch": "sqs:DeleteMessage",
                 "ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility", "DeleteObjects": "s3:DeleteObject",
                 **dict.fromkeys(("CreateMultipartUpload", "UploadPart", "UploadPartCopy", "CompleteMultipartUpload",
                                  "CopyObject"), "s3:PutObject"),
                 "ListParts": "s3:ListMultipartUploadParts"}  # fmt: skip


def granted_actions(deployed) -> set[str]:
    """Every action the function's role is granted, read back from the deployed role."""
    role = deployed.client("lambda").get_function(FunctionName=deployed.function_name)["Configuration"]["Role"]
    iam, name = deployed.client("iam"), role.rsplit("/", 1)[1]
    actions = set()
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        document = iam.get_role_policy(RoleName=name, PolicyName=policy)["PolicyDocument"]
        if isinstance(document, str):
            document = json.loads(document)
        for statement in document["Statement"]:
            listed = statement["Action"]
            actions |= {listed} if isinstance(listed, str) else set(listed)
    assert not iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]
    return actions


def test_the_role_grants_exactly_the_actions_a_run_uses(deployed, tmp_path, monkeypatch):
    """Every strategy the local backend runs and the latency workload, hosted as `make run` hosts
    them (the mapping's idle check included)."""
    trace = tmp_path / "calls.txt"
    monkeypatch.setenv("FANOUT_HOST_TRACE_CALLS", str(trace))
    within_timeout = {"repeated": "repeated requests=3 in_flight=3"}  # the stack's 1 s timeout
    for name in [name for name, strategy in strategies.STRATEGIES.items() if not strategy.aws_only]:
        spec = within_timeout.get(name, name)
        assert fanout("fire", "--messages", "4", "--tag", f"iam-{name}", "--strategy", spec) == 0
    # and the latency workload's writes and deletes (fanout.workloads.registry)
    assert fanout("fire", "--messages", "2", "--tag", "iam-latency", "--workload", "latency", "--sizes", "1",
                  "--reps", "1") == 0  # fmt: skip
    # and the transfer workload's: FAN's shared upload (its ListParts), a copy
    assert fanout("fire", "--messages", "2", "--tag", "iam-transfer", "--workload", "transfer", "--size", "10MiB",
                  "--part-size", "5MiB", "--fan", "2") == 0  # fmt: skip
    assert fanout("fire", "--messages", "1", "--tag", "iam-copy", "--workload", "transfer", "--operation", "copy",
                  "--size", "1KB", "--method", "copy-object") == 0  # fmt: skip
    assert fanout("host", "--idle", "1", *NO_MODEL) == 0
    used = {IAM_ACTION_OF.get(op, f"{service}:{op}")
            for service, op in (line.split(":") for line in trace.read_text().splitlines())}
    granted = granted_actions(deployed)
    assert used - granted == set(), "used but not granted"
    # AbortMultipartUpload runs only when a transfer fails (tests/functions/test_transfer.py)
    assert granted - used - {"s3:AbortMultipartUpload"} == set(), "granted but never used"


def error_code(call, **params) -> str:
    with pytest.raises(ClientError) as error:
        call(**params)
    return error.value.response["Error"]["Code"]


def test_the_functions_credentials_are_held_to_its_role(deployed):
    """The credentials the host hands the function (an AssumeRole of the deployed role) may read
    the test object but not write it, and are told 403 for a missing key (no s3:ListBucket);
    the default credentials, which Terraform, fanout and the host itself use, may do both."""
    function = function_config.load(deployed.function_name, deployed.endpoint, deployed.region)
    keys = {name.lower(): value for name, value in credentials.role_variables(function).items()}
    as_role = boto3.Session(**keys).client("s3", region_name=deployed.region, endpoint_url=deployed.endpoint,
                                           config=Config(s3={"addressing_style": "path"}))
    default = aws.client("s3", deployed.region, deployed.endpoint)
    body = as_role.get_object(Bucket=deployed.bucket, Key=deployed.object_key)["Body"].read()
    missing = "transfer/missing"  # the role may GetObject under transfer/ (infra/transfer.tf), not list
    assert error_code(as_role.put_object, Bucket=deployed.bucket, Key=deployed.object_key, Body=body) == "AccessDenied"
    assert error_code(as_role.get_object, Bucket=deployed.bucket, Key=missing) == "AccessDenied"
    assert error_code(as_role.head_object, Bucket=deployed.bucket, Key=missing) == "403"
    default.put_object(Bucket=deployed.bucket, Key=deployed.object_key, Body=body)  # the same bytes back
    assert error_code(default.get_object, Bucket=deployed.bucket, Key=missing) == "NoSuchKey"


# Each kind of fault but hang must happen at least once: drawn per GetObject, over the 400 or so
# downloads after the kill, a rate of 3% never comes up with a chance of 0.97**400, about 5e-6.
FAULT_RATES = {"s3_500": 0.03, "s3_503": 0.03, "slow": 0.03, "crash": 0.03, "hang": 0.01}
FAULT_COUNT = 600


def _records(deployed, record) -> list[dict]:
    return run_logs.run_records(insights.fetch_events(deployed, *runs.run_window(record)), record.run_id)


def test_faults_and_a_host_kill_lose_nothing(deployed, tmp_path, monkeypatch):
    """600 messages, 1% failing on purpose (to the DLQ). `make run` hosts a third of them and is
    killed outright; `make wait` then hosts the rest through S3 500s and 503s, slow S3 answers,
    environments killed mid-download and downloads stalled past the timeout."""
    assert fanout("fire", "--messages", str(FAULT_COUNT), "--tag", "faults", "--inject-failures", "0.01") == 0
    record = runs.load(runs.LATEST)
    run_id, injected_seqs = record.run_id, set(record.injected_seqs)

    host = subprocess.Popen([sys.executable, "-m", "fanout.cli", "host", "--backend", "local", "--stack", STACK,
                             "--idle", "600", *NO_MODEL], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while len(_records(deployed, record)) < FAULT_COUNT // 3:  # each look reads the run's logs whole
            assert host.poll() is None and time.monotonic() < deadline
            time.sleep(2)
    finally:
        os.killpg(host.pid, signal.SIGKILL)
        host.wait()

    log = tmp_path / "faults.log"
    rates = ",".join(f"{kind}={rate}" for kind, rate in FAULT_RATES.items())
    monkeypatch.setenv("FANOUT_HOST_FAULTS", f"{rates},slow_s=0.2,log={log}")
    assert fanout("wait", "--run", run_id, "--timeout", "600", *NO_MODEL) == 0

    accounting = runs.load(run_id).accounting
    done, failed, dead = accounting.done, set(accounting.failed), set(accounting.dead_lettered)
    records = _records(deployed, record)
    downloaded = {r["seq"] for r in records if r["event"] == "download"}
    assert len(downloaded) == done and not downloaded & (failed | dead) and not failed & dead
    assert downloaded | failed | dead == set(range(FAULT_COUNT))  # each seq exactly once
    assert accounting.lost == [] and accounting.in_flight == []
    assert injected_seqs <= dead
    downloads = sum(r["event"] == "download" for r in records)
    assert accounting.duplicate_download_records == downloads - len(downloaded)

    injected = collections.Counter(log.read_text().split())
    summary = report.build(deployed, runs.load(run_id))
    errors = {row["error_type"]: row["errors"] for row in summary.body.errors}
    s3_errors = [r for r in summary.header.records if r["event"] == "error" and r["error_type"] == "ClientError"]
    assert errors.get("ClientError", 0) == len(s3_errors) == injected["s3_500"] + injected["s3_503"]
    assert sum("(InternalError)" in r["error_message"] for r in s3_errors) == injected["s3_500"]
    assert sum("(SlowDown)" in r["error_message"] for r in s3_errors) == injected["s3_503"]
    assert {r["seq"] for r in summary.header.records if r.get("error_type") == "InjectedFailure"} == injected_seqs
    platform = {row["error_type"]: row["errors"] for row in summary.body.platform_errors}
    # Every injected crash and stall is there; a download may also outlast the 1 s timeout on its
    # own (a 256 MB environment has 0.145 vCPU, and a loaded machine less), never the reverse.
    for counted in (platform, accounting.platform_errors):  # the report's and wait's accounting
        assert set(counted) <= {"Runtime.ExitError", "Task timed out"}
        assert counted.get("Runtime.ExitError", 0) == injected["crash"]
        assert counted.get("Task timed out", 0) >= injected["hang"]
    assert injected["slow"] > 0 and min(injected[k] for k in ("s3_500", "s3_503", "crash")) > 0
    print(f"\nsent {FAULT_COUNT}, done {done}, failed {len(failed)}, DLQ {len(dead)}, lost {len(accounting.lost)}, "
          f"duplicates {accounting.duplicate_download_records}")


def test_a_saved_report_outlives_its_stack_byte_for_byte(deployed, capsys):
    """Last in the module, as it destroys the stack: a run reported above is redrawn from its
    saved files once the stack is gone, every file byte for byte, and reading the logs again
    is refused without touching one (tests/test_report.py: the same with no emulator at all)."""
    by_tag = {runs.load(path.parent.name).parameters.experiment_tag: path.parent.name
              for path in sorted(paths.results_dir().glob(f"*/{runs.RUN_FILE}"))}  # fmt: skip
    run_id = by_tag["e2e"]
    assert fanout("report", "--run", run_id) == 0  # from its saved records, or its logs the first time
    folder = runs.run_dir(run_id)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert {"records.jsonl", "summary.json", "summary.csv", "report.md", "throughput.png"} <= set(before)
    assert terraform.destroy("local", STACK)
    capsys.readouterr()
    assert fanout("report", "--run", run_id) == 0
    assert "logs not read" in capsys.readouterr().out
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    assert fanout("report", "--run", run_id, "--refresh") == 1
    assert f"no stack {STACK!r} is deployed" in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
