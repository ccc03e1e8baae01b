"""The sweep before anything runs: axes and their order, one-line errors that create nothing,
the cost guard on the sweep's totals, and the manifest's resume bookkeeping."""

import dataclasses
import itertools
import json
import subprocess

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from rich.console import Console

from fanout.local import backends
from fanout.common import aws, paths
from fanout.workloads import registry as workloads
from fanout.stages import command_line, study, sweep_axes as axes, sweep
from fanout import cli
from fanout.cloud import costs, credentials, owner, params
from fanout.workloads.download import strategies
from fanout.workloads.download import across as crossrun
from fanout.results import run_folders as runs, run_record, sweep_folders as sweeps
from fanout.common.errors import UsageError
from fanout.workloads.download import driver as download

MIB = 2**20


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """FANOUT_HOME and FANOUT_RESULTS of the test's own."""
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    return tmp_path


def texts(**overrides):
    return {"memory": "1024", "concurrency": "10", "object_size": "256MiB", "architecture": "x86_64",
            "strategy": "download_file"} | overrides  # fmt: skip


def download_axes(**overrides) -> axes.Axes:
    """The axes of a download sweep given `texts(**overrides)` on the command line (on AWS, where
    every strategy runs): the deploy-level ones, and the driver's strategies and pins."""
    argv = [word for name, text in texts(**overrides).items() for word in (f"--{name.replace('_', '-')}", text)]
    return sweep._grid(command_line.texts(cli.build_parser().parse_args(["sweep", "--backend", "aws", *argv])),
                       workloads.get("download"))  # fmt: skip


def option(cells, name: str) -> list:
    """Each cell's download option `name` (strategy, pin)."""
    return [cell.options[name] for cell in cells]


def test_cells_are_the_product_with_deployments_kept_together():
    grid = download_axes(memory="2048 1024", concurrency="1,5 10", strategy="ranged connections=4; stream")
    cells = grid.cells()
    fires = [str(strategies.parse(text)) for text in ("ranged connections=4", "stream")]  # canonical texts
    expected = list(itertools.product((2048, 1024), (1, 5, 10), fires))
    assert [(c.memory, c.concurrency, c.options["strategy"]) for c in cells] == expected  # the order the values were written
    assert grid.varying() == ["memory", "concurrency", "strategy"]
    assert {c.object_size for c in cells} == {256 * MIB}


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_shuffled_order_is_seeded_and_keeps_each_deployment_contiguous(seed):
    grid = download_axes(memory="512 1024 2048", concurrency="1 5 10 50", strategy="stream; download_file")
    shuffled = grid.cells("shuffled", seed)
    assert shuffled == grid.cells("shuffled", seed)  # the seed repeats the order
    assert sorted(shuffled, key=str) == sorted(grid.cells(), key=str)  # every cell once
    deployments = [(cell.memory, cell.concurrency, cell.object_size, cell.architecture) for cell in shuffled]
    runs_of = [key for key, _ in itertools.groupby(deployments)]
    assert len(runs_of) == len(set(deployments)) == 12  # one redeploy per deployment, no more
    assert shuffled != grid.cells()
    # A different seed, a different order (for these seeds; 12! x 2^12 orders).
    assert shuffled != grid.cells("shuffled", seed + 1)


def test_pin_is_a_message_level_axis_recorded_in_the_manifest():
    grid = download_axes(memory="512 1024", pin="auto, 127.0.0.2", strategy="stream; download_file")
    cells = grid.cells()
    canonical = [str(strategies.parse(text)) for text in ("stream", "download_file")]
    fires = list(itertools.product(canonical, ("auto", "127.0.0.2")))
    assert [(c.memory, c.options["strategy"], c.options["pin"]) for c in cells] == [(m, *fire) for m in (512, 1024) for fire in fires]
    assert grid.varying() == ["memory", "strategy", "pin"]
    manifest = sweeps.new_manifest({"backend": "local", "axes": grid.as_dict()}, [c.as_dict() for c in cells])
    reread = json.loads(json.dumps(manifest.to_json()))
    assert axes.Axes.from_dict(reread["axes"]) == grid
    assert [axes.CellParams.from_dict(cell["params"]) for cell in reread["cells"]] == cells
    # A sweep recorded before the options' slot, and before PIN: one unpinned cell per strategy.
    old = {**grid.as_dict(), "strategy": ["stream"], "options": [None]}
    assert [c.options for c in axes.Axes.from_dict(old).cells()] == [{"strategy": "stream", "pin": None}] * 2
    assert option(download_axes().cells(), "pin") == [None]


def test_none_is_the_unpinned_cell_beside_pinned_ones():
    grid = download_axes(pin="none auto 127.0.0.2", strategy="stream; download_file")
    assert grid.varying() == ["strategy", "pin"]
    cells = grid.cells()
    assert option(cells, "pin") == ["none", "auto", "127.0.0.2"] * 2
    assert all(sweep._describe(c).endswith(f", pin {c.options['pin']}") for c in cells)
    # crt resolves and connects itself: it refuses every pinned cell, not the unpinned one.
    assert option(download_axes(pin="none", strategy="stream; crt").cells(), "pin") == ["none", "none"]
    with pytest.raises(UsageError, match="'127.0.0.2' cannot be used with strategy 'crt'"):
        download_axes(pin="none 127.0.0.2", strategy="stream; crt")


def test_an_unpinned_cell_is_neither_pooled_with_runs_fired_without_pin_nor_shown_as_them():
    def run(pin):
        return run_record.RunRecord.from_json({"stack": {"memory": 512, "concurrency": 2, "object_size": MIB, "architecture": "x86_64"},
                "parameters": {"strategy": "stream", "experiment_tag": "t", "pin": pin}})  # fmt: skip
    record = {"memory_size": 512, "concurrency_limit": 2, "object_size": MIB, "strategy": "stream", "experiment_tag": "t"}
    rows = [crossrun.cell_of(record, run(pin)).as_dict() for pin in (None, "none", "127.0.0.2")]
    assert len({tuple(row.values()) for row in rows}) == 3
    assert [crossrun.CELLS.text("pin", row["pin"]) for row in rows] == ["-", "none", "127.0.0.2"]
    assert crossrun.cell_label(rows[1], ["pin"]) == "pin none"


def test_runs_that_differ_only_in_pin_are_different_cells_across_runs():
    def run(pin):
        return run_record.RunRecord.from_json({"stack": {"memory": 512, "concurrency": 2, "object_size": MIB, "architecture": "x86_64"},
                "parameters": {"strategy": "stream", "experiment_tag": "t", "pin": pin}})  # fmt: skip
    record = {"memory_size": 512, "concurrency_limit": 2, "object_size": MIB, "strategy": "stream", "experiment_tag": "t"}
    keys = [crossrun.cell_of(record, run(pin)) for pin in (None, "auto", "127.0.0.2")]
    assert [key.pin for key in keys] == [None, "auto", "127.0.0.2"] and len(set(keys)) == 3
    assert crossrun.varying([key.as_dict() for key in keys]) == ["pin"]


def test_a_sweep_given_no_deploy_inputs_takes_the_defaults_not_the_deployed_stacks(isolated):
    """The Makefile passes only the variables set; a sweep's axes stay its own, whatever is deployed."""
    from fanout.cloud import terraform

    state = {"resources": [{}], "outputs": {"memory": {"value": 512}, "concurrency": {"value": 4}}}
    state_file = paths.stack_dir("local", "s3fanout") / terraform.STATE_FILE
    state_file.parent.mkdir(parents=True)
    state_file.write_text(json.dumps(state))
    chosen = sweep.check(cli.build_parser().parse_args(["sweep"]))
    assert (chosen.axes.memory, chosen.axes.concurrency, chosen.axes.object_size) == ((1024,), (10,), (256 * MIB,))
    assert (chosen.region, chosen.function_timeout) == ("us-east-1", 300)


def test_a_sweep_takes_pins_from_the_command_line_and_checks_them_against_the_backend(isolated, capsys):
    def parse(*argv):
        return sweep.check(cli.build_parser().parse_args(["sweep", "--object-size", "1MiB", *argv]))
    assert option(parse("--pin", "auto 127.0.0.3").axes.cells(), "pin") == ["auto", "127.0.0.3"]
    assert option(parse("--backend", "aws", "--pin", "192.0.2.7").axes.cells(), "pin") == ["192.0.2.7"]
    with pytest.raises(UsageError, match="'192.0.2.7' on the local backend"):
        parse("--backend", "local", "--pin", "auto 192.0.2.7")
    with pytest.raises(UsageError, match="--pin is an option of the download workload"):
        parse("--workload", "latency", "--pin", "auto")


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"memory": "512 99999"}, "'99999'"),
        ({"concurrency": "1 0"}, "'0'"),
        ({"concurrency": "5 five"}, "'five'"),
        ({"object_size": "8MiB 3XB"}, "'3XB'"),
        ({"architecture": "x86_64 sparc"}, "'sparc'"),
        ({"strategy": "stream; teleport"}, "'teleport'"),
        ({"strategy": "stream download_file"}, "'stream download_file'"),  # strategies are separated by ';'
        ({"strategy": "stream; stream chunk_size=256KiB"}, "listed twice"),
        ({"memory": "512 512"}, "512 given twice"),
        ({"memory": " "}, "one or more values"),
        ({"object_size": "1MiB 20GiB", "strategy": "stream; download_file"}, "/tmp"),
        ({"pin": "auto 10.0.0.256"}, "'10.0.0.256'"),
        ({"pin": "auto 127.0.0.2 auto"}, "auto given twice"),
        ({"pin": "none auto none"}, "none given twice"),
        ({"pin": "none None"}, "'None': expected none, auto or an IPv4/IPv6 address"),
        ({"pin": "auto", "strategy": "stream; crt"}, "cannot be used with strategy 'crt'"),
    ],
)
def test_every_bad_value_is_named(overrides, named):
    with pytest.raises(UsageError, match=named.replace("(", r"\(")):
        download_axes(**overrides)


@pytest.mark.parametrize(
    "argv",
    [
        ["--memory", "512 1024 20000"],
        ["--concurrency", "2 4 1001"],
        ["--object-size", "8MiB nope"],
        ["--order", "random"],
        ["--multiplier", "0"],
        ["--tag", "bad\ttag"],
        ["--seed", "-3", "--order", "shuffled"],
        ["--stack", "Bad_Stack"],
        ["--network", "lambda-1999"],
        ["--network-scale", "0"],
        ["--storage", "standard glacier"],
        ["--storage", "express", "--express-az", "us-east-1a"],
        ["--storage", "express", "--express-az", "use1-az4"],  # express on the local backend
    ],
)
def test_a_bad_value_creates_nothing(isolated, capsys, argv):
    code = cli.main(["sweep", "--backend", "local", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("fanout: error: invalid"), err
    # No manifest, no state directory, no emulator, no run.
    assert not (isolated / "results").exists() and not (isolated / "home").exists()


def test_a_network_model_is_refused_on_aws_before_anything_is_created(isolated, capsys):
    code = cli.main(["sweep", "--backend", "aws", "--network", "lambda-2024", "--object-size", "1MiB"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "lambda-2024" in err, err
    assert not (isolated / "results").exists() and not (isolated / "home").exists()


def test_the_cost_guard_applies_to_the_sweeps_total(isolated, capsys):
    """Each cell alone is below fire's thresholds; together they are not: refused without --yes,
    before anything is created, with the estimate per cell and in total."""
    concurrency = " ".join(str(c) for c in range(100, 108))  # 8 cells of 10 x ~100 long downloads
    grid = download_axes(concurrency=concurrency, memory="10240", object_size="1GiB", strategy="stream")
    cells = grid.cells()
    estimates = [download.DownloadDriver().cell_estimate(10 * c.concurrency, c, {"region": "us-east-1"}) for c in cells]
    assert all(costs.refusal(e.messages, e.messages, e.total, False) is None for e in estimates)
    total_messages = sum(10 * c.concurrency for c in cells)
    assert total_messages > costs.CONFIRM_MESSAGES or sum(e.total for e in estimates) > costs.CONFIRM_USD
    settings = sweep.SweepParams("aws", "s3fanout", "us-east-1", grid, multiplier=10, tag="t")
    with pytest.raises(UsageError) as error:
        sweep.preflight(settings, cells, confirmed=False, console=Console())
    assert f"{total_messages:,} messages" in str(error.value) and "--yes" in str(error.value)
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == len(cells)
    total_row = next(line for line in out.splitlines() if line.lstrip().startswith("all"))
    assert f"{total_messages:,}" in total_row and f"{sum(e.total for e in estimates):,.2f}" in total_row
    assert "MiB/s per download" in out and "/GB-s" in out  # the assumptions and prices
    assert max(map(len, out.splitlines())) <= 80
    assert not (isolated / "results").exists() and not (isolated / "home").exists()


def test_the_estimate_counts_each_strategys_gets(capsys):
    """Cells that differ only in strategy cost what their GET requests cost; the table numbers the
    strategies and lists them in full, within 80 columns."""
    grid = download_axes(object_size="64MiB", strategy="stream; ranged chunk_size=1MiB")
    cells = grid.cells()
    settings = sweep.SweepParams("aws", "s", "us-east-1", grid, 10, "t", endpoint="http://localhost:4566")
    sweep.preflight(settings, cells, confirmed=True, console=Console())
    out = capsys.readouterr().out
    gets = [strategies.parse(c.options["strategy"]).gets(c.object_size) for c in cells]
    estimates = [download.DownloadDriver().cell_estimate(100, c, {"region": "us-east-1"}) for c in cells]
    assert gets[0] < gets[1] and estimates[0].s3_gets < estimates[1].s3_gets
    total_row = next(line for line in out.splitlines() if line.lstrip().startswith("all"))
    assert f"{sum(e.total for e in estimates):,.2f}" in total_row
    assert f"o1: {cells[0].options['strategy']}" in out and f"o2: {cells[1].options['strategy']}" in out
    assert max(map(len, out.splitlines())) <= 80


def test_a_local_sweep_refuses_crt_before_anything_is_created(isolated, capsys):
    assert cli.main(["sweep", "--strategy", "stream; crt", "--object-size", "1MiB"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "'crt'" in err and "embedded emulator" in err
    assert not (isolated / "results").exists() and not (isolated / "home").exists()


def test_a_sweep_refuses_a_download_past_the_functions_timeout_before_anything_is_created(isolated, capsys):
    """Its second strategy on its second size: 1,000 GETs of 10 MiB, 10 at a time, 2.7 s of waits and
    9.8 GiB at 75 MiB/s (about 136 s), over a 60 s timeout; the same on 100 KB fits."""
    argv = ["sweep", "--backend", "local", "--strategy", "stream; repeated requests=1000", "--object-size",
            "100KB 10MiB", "--function-timeout", "60"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "strategy 'repeated requests=1000 in_flight=10': 1,000 GETs of 10 MiB" in err
    assert "over the function's timeout of 60 s" in err
    assert not (isolated / "results").exists() and not (isolated / "home").exists()


def test_the_hard_cap_holds_per_run_even_with_yes():
    grid = download_axes(concurrency="1000", strategy="stream")
    settings = sweep.SweepParams("local", "s3fanout", "us-east-1", grid, multiplier=costs.MAX_MESSAGES // 1000 + 1, tag="t")
    with pytest.raises(UsageError, match="even with --yes"):
        sweep.preflight(settings, grid.cells(), confirmed=True, console=Console())


def test_a_small_local_sweep_passes_without_a_word(capsys):
    grid = download_axes(concurrency="2 4 8", memory="512 1024", object_size="8MiB")
    sweep.preflight(sweep.SweepParams("local", "s", "us-east-1", grid, multiplier=10, tag="t"), grid.cells(), False,
                    Console())
    assert capsys.readouterr().out == ""


def manifest_with(statuses: list[str]) -> sweeps.Manifest:
    cells = [{"memory": 512, "concurrency": 2, "object_size": MIB, "architecture": "x86_64", "strategy": "stream"}] * len(statuses)
    manifest = sweeps.new_manifest({"backend": "local"}, cells)
    for cell, status in zip(manifest.cells, statuses):
        manifest = manifest.with_cell(cell.but(status=status, run_id=None if status == "pending" else runs.new_run_id()))
    return manifest


def test_resume_starts_at_the_first_unfinished_cell_and_keeps_the_abandoned_run():
    manifest = manifest_with(["done", "done", "interrupted", "pending"])
    assert manifest.first_unfinished() == 2
    interrupted = manifest.cells[2]
    old = interrupted.run_id
    reopened = interrupted.reopened()
    assert reopened.status == "pending" and reopened.run_id is None
    assert reopened.previous_run_ids == [old]
    assert manifest_with(["done", "done"]).first_unfinished() is None


def test_the_manifest_is_written_atomically_and_latest_follows(isolated):
    manifest = manifest_with(["pending", "pending"])
    path = sweeps.save(manifest)
    assert json.loads(path.read_text()) == manifest.to_json()
    assert sweeps.resolve(sweeps.LATEST) == manifest.sweep_id
    assert not list(path.parent.glob(".*.tmp"))
    sweeps.save(manifest.with_cell(manifest.cells[0].but(status="running")))
    assert sweeps.load("latest").cells[0].status == "running"
    with pytest.raises(UsageError, match="unknown sweep 'nope'"):
        sweeps.load("nope")


def test_deploy_inputs_keep_every_object_size_and_fresh_environments_per_cell_on_aws():
    grid = download_axes(object_size="8MiB 1MiB", strategy="stream; download_file")
    cells = grid.cells()
    for backend, keep_warm in itertools.product(("local", "aws"), (False, True)):
        deployment = sweep._Deployment(sweep.SweepParams(backend, "s", "us-east-1", grid, 10, "t", keep_warm=keep_warm), "id",
                                       Console())
        inputs = [deployment.inputs_for(cell, i) for i, cell in enumerate(cells)]
        assert all(i.object_sizes() == [MIB, 8 * MIB] for i in inputs)  # the role reads both, always
        assert all(i.variables("", "zip", backends.get("local"))["test_object_sizes"] == [MIB, 8 * MIB] for i in inputs)
        same_deployment = [a == b for a, b in zip(inputs, inputs[1:])]
        # The two strategy cells of a size share a deployment unless AWS needs a configuration change
        # to start fresh environments; the local host restarts its environments instead.
        fresh_by_config = backend == "aws" and not keep_warm
        assert same_deployment == [not fresh_by_config, False, not fresh_by_config]
    assert params.DeployParams("s", "us-east-1", 1, 128, 5, "x86_64").object_sizes() == [5]


def test_every_cell_deploys_the_sweeps_storage_classes_and_a_resume_keeps_them(isolated):
    args = cli.build_parser().parse_args(["sweep", "--backend", "aws", "--memory", "512 1024", "--object-size", "1MiB",
                                          "--storage", "standard express", "--express-az", "use1-az4"])  # fmt: skip
    chosen = sweep.check(args)
    for made in (chosen, sweep.SweepParams.from_manifest(sweeps.Manifest.from_json(json.loads(json.dumps(chosen.settings()))))):
        deployment = sweep._Deployment(made, "id", Console())
        inputs = [deployment.inputs_for(cell, i) for i, cell in enumerate(made.axes.cells())]
        assert len(inputs) == 2
        assert [(i.variables("", "zip", backends.get("local"))["storage"], i.variables("", "zip", backends.get("local"))["express_az"]) for i in inputs] == \
            [(["express", "standard"], "use1-az4")] * 2  # fmt: skip
    assert (chosen.settings()["storage"], chosen.settings()["express_az"]) == (["express", "standard"], "use1-az4")


def test_a_sweep_recorded_before_storage_existed_resumes_with_standard_only():
    settings = sweep.SweepParams("local", "s", "us-east-1", download_axes(), 10, "t").settings()
    old = {name: value for name, value in settings.items() if name not in ("storage", "express_az")}
    resumed = sweep.SweepParams.from_manifest(sweeps.Manifest.from_json(old))
    variables = sweep._Deployment(resumed, "id", Console()).inputs_for(resumed.axes.cells()[0], 0).variables("", "zip", backends.get("local"))
    assert (variables["storage"], variables["express_az"]) == (["standard"], "")


def test_make_help_lists_the_sweep_and_its_variables():
    out = subprocess.run(["make", "-s", "help"], cwd=paths.REPO, capture_output=True, text=True, check=True).stdout
    assert any(line.split()[:1] == ["sweep"] for line in out.splitlines())
    for variable in ("RESUME=", "ORDER=", "SEED=", "KEEP_WARM=", "DESTROY_AFTER=", "YES="):
        assert variable in out, variable


def test_a_failing_account_check_deploys_nothing(isolated, monkeypatch, capsys):
    """On AWS (answers played by Stubber): a concurrency quota of 400 cannot host CONCURRENCY 500.
    One error line naming the quota; no state, no manifest."""
    session = boto3.Session(aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1")
    clients = {name: session.client(name) for name in ("sts", "lambda", "service-quotas")}
    stubs = [Stubber(client) for client in clients.values()]
    stubs[0].add_response("get_caller_identity", {"Account": "123456789012", "Arn": "arn:aws:iam::123456789012:user/a"})
    stubs[1].add_response("get_account_settings", {"AccountLimit": {"ConcurrentExecutions": 400,
                                                                    "UnreservedConcurrentExecutions": 400}})  # fmt: skip
    stubs[2].add_response("list_service_quotas", {"Quotas": []})
    for stub in stubs:
        stub.activate()
    credentials.identity.cache_clear()
    monkeypatch.setattr(aws, "client", lambda service, region, *a, **k: clients[service])
    code = cli.main(["sweep", "--backend", "aws", "--concurrency", "10 500", "--object-size", "1MiB"])
    out, err = capsys.readouterr()
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "Concurrent executions" in err and "is 400" in err and "request-service-quota-increase" in err
    assert "estimated AWS cost" in out  # the estimate came first
    assert "AWS account 123456789012" in out and "region us-east-1" in out
    assert not (isolated / "results").exists() and not (isolated / "home" / "stacks").exists()


QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/s3fanout-requests"


def _aws_stack(monkeypatch, sqs, timeout=30, **others):
    """An AWS stack (fanout.cloud.stack.Stack) whose SQS client is `sqs` and other clients
    `others` (by service), answers played by Stubber."""
    from fanout.cloud.stack import Stack

    values = {f.name: f.type() if f.type in (int, str) else None for f in dataclasses.fields(Stack)
              if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}  # fmt: skip
    values.update(backend="aws", region="us-east-1", queue_url=QUEUE_URL, timeout=timeout, function_name="f")
    monkeypatch.setattr(Stack, "client", lambda self, service, **config: {"sqs": sqs, **others}[service])
    return Stack(**values)


@pytest.mark.parametrize("in_progress", [False, True])
def test_a_resumed_cell_fires_only_once_the_purge_is_over(monkeypatch, capsys, in_progress):
    """On AWS a purge takes up to 60 s and may delete messages sent meanwhile (PurgeQueue in
    botocore's sqs model): the cell waits it out, also when a purge was already under way."""
    sqs = boto3.client("sqs", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    stack = _aws_stack(monkeypatch, sqs, cloudwatch=None)  # a 30 s timeout: not asked
    with Stubber(sqs) as stub:
        if in_progress:
            stub.add_client_error("purge_queue", "PurgeQueueInProgress", "Only one PurgeQueue every 60 seconds",
                                  expected_params={"QueueUrl": QUEUE_URL})  # fmt: skip
        else:
            stub.add_response("purge_queue", {}, {"QueueUrl": QUEUE_URL})
        stub.add_response("get_queue_attributes", {"Attributes": {"ApproximateNumberOfMessages": "0",
                                                                  "ApproximateNumberOfMessagesNotVisible": "0"}})  # fmt: skip
        slept = []
        sweep.purge(stack, Console(), sleep=slept.append, clock=lambda: 1e9 + sum(slept))
        stub.assert_no_pending_responses()
    assert slept == [60]  # the function timeout, 30 s, is shorter: no CloudWatch call (fanout.cloud.invocations)
    out = capsys.readouterr().out
    assert ("already in progress" in out) is in_progress and "waiting up to 60 s" in out


def test_a_resumed_cell_waits_for_the_abandoned_invocations_up_to_the_function_timeout(monkeypatch, capsys):
    """The purge drops the messages in flight, not their invocations: with a 300 s function
    timeout and no ConcurrentExecutions point showing 0, the cell waits 300 s after the purge,
    asking CloudWatch every minute once SQS's 60 s are over, and says so."""
    keys = {"region_name": "us-east-1", "aws_access_key_id": "k", "aws_secret_access_key": "s"}
    sqs, cloudwatch = boto3.client("sqs", **keys), boto3.client("cloudwatch", **keys)
    stack = _aws_stack(monkeypatch, sqs, timeout=300, cloudwatch=cloudwatch)
    with Stubber(sqs) as stub, Stubber(cloudwatch) as metrics:
        stub.add_response("purge_queue", {}, {"QueueUrl": QUEUE_URL})
        for _ in range(4):  # at 60, 120, 180 and 240 s
            metrics.add_response("get_metric_statistics", {"Datapoints": []})
        stub.add_response("get_queue_attributes", {"Attributes": {"ApproximateNumberOfMessages": "0",
                                                                  "ApproximateNumberOfMessagesNotVisible": "0"}})  # fmt: skip
        slept = []
        sweep.purge(stack, Console(), sleep=slept.append, clock=lambda: 1e9 + sum(slept))
        metrics.assert_no_pending_responses()
    assert sum(slept) == 300
    out = capsys.readouterr().out
    assert "waiting up to 300 s" in out and "waited 300 s" in out


def test_another_purge_error_is_not_swallowed(monkeypatch):
    sqs = boto3.client("sqs", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    stack = _aws_stack(monkeypatch, sqs)
    with Stubber(sqs) as stub:
        stub.add_client_error("purge_queue", "AccessDenied", "not allowed")
        with pytest.raises(ClientError, match="AccessDenied"):
            sweep.purge(stack, Console(), sleep=lambda seconds: None)


def test_an_older_manifest_is_written_back_as_it_was_and_a_resume_adds_only_what_it_changes(isolated):
    manifest = manifest_with(["done", "interrupted"])
    old = manifest.to_json() | {"retired_setting": 1}  # a key this version does not know
    del old["cells"][1]["timings"]  # a cell written before step timings
    path = sweeps.sweep_dir(old["sweep_id"]) / sweeps.SWEEP_FILE
    path.parent.mkdir(parents=True)
    runs.write_json(path, old)
    before = path.read_bytes()
    loaded = sweeps.load(old["sweep_id"])
    sweeps.save(loaded)
    assert path.read_bytes() == before
    assert loaded.first_unfinished() == 1
    abandoned = loaded.cells[1].run_id
    sweeps.save(loaded.with_cell(loaded.cells[1].reopened()))
    changed = json.loads(path.read_text())
    assert changed["cells"][1] == old["cells"][1] | {"status": "pending", "run_id": None, "previous_run_ids": [abandoned]}
    assert changed["retired_setting"] == 1 and changed["cells"][0] == old["cells"][0]


def test_a_sweep_deployment_is_sized_by_the_cells_it_runs():
    """Its cells share one scale (they compare under one model): the demands of every cell of
    that deployment, and of none of the others."""
    grid = download_axes(memory="512 1024", concurrency="2", object_size="64MiB", strategy="stream; ranged connections=4")
    settings = sweep.SweepParams("local", "s", "us-east-1", grid, 10, "t", network="lambda-2024")
    cells = grid.cells()
    deployment = sweep._Deployment(settings, "id", None, cells)
    for index, cell in enumerate(cells):
        demands = deployment.demands(deployment.inputs_for(cell, index))
        assert sorted(d.connections for d in demands) == [1, 4]  # stream and ranged on 4 connections
        assert {d.down.bytes for d in demands} == {64 * 2**20}
    memories = {deployment.inputs_for(cell, index).memory for index, cell in enumerate(cells)}
    assert memories == {512, 1024}  # two deployments, each with its own two cells


def _deployed(backend: str, stack: str, creator: str | None) -> None:
    """A state of stack `stack` as Terraform writes it; `creator`: the created_by record (None:
    a stack from before the record)."""
    from fanout.cloud import terraform

    resources = [{"type": "aws_sqs_queue", "name": "requests", "instances": [{"attributes": {}}]}]
    if creator:
        record = {"output": {"value": creator, "type": "string"}}  # a dynamic value, as Terraform writes it
        resources.append({"type": "terraform_data", "name": "created_by", "instances": [{"attributes": record}]})
    state_file = paths.stack_dir(backend, stack) / terraform.STATE_FILE
    state_file.parent.mkdir(parents=True)
    state_file.write_text(json.dumps({"resources": resources, "outputs": {}}))


def test_a_sweep_goes_to_its_own_stack_of_its_region_unless_given_one(isolated):
    """Without --stack (the Makefile passes it only when STACK is on the command line) a sweep or
    study runs on the sweeps' own stack of its region, never on the default s3fanout."""
    def stack_of(*argv):
        return sweep.check(cli.build_parser().parse_args(["sweep", *argv])).stack

    assert stack_of() == "s3fanout-sweep-us-east-1"
    assert stack_of("--region", "eu-west-1", "--backend", "aws") == "s3fanout-sweep-eu-west-1"
    assert stack_of("--stack", "mine") == "mine"
    study_args = cli.build_parser().parse_args(["study", "latency-vs-size", "--local"])
    assert study_args.stack is None
    assert study.check(study_args).stack == "s3fanout-sweep-ap-northeast-1"  # the study's region


@pytest.mark.parametrize("creator", [None, "deploy"])
def test_a_sweep_refuses_in_one_line_a_stack_make_deploy_created(isolated, creator, capsys):
    """A stack `make deploy` created (or one from before the record) is the user's: a sweep on it
    is refused before anything runs; the sweeps' own (created by a sweep) or a new name is not."""
    _deployed("local", "mine", creator)
    assert cli.main(["sweep", "--stack", "mine", "--concurrency", "2"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "'mine'" in err and "make deploy" in err, err
    assert "s3fanout-sweep-us-east-1" in err
    assert not paths.results_dir().exists()  # no manifest
    owner.check_sweep_may_deploy("local", "new", "us-east-1")
    _deployed("local", "swept", "sweep")
    owner.check_sweep_may_deploy("local", "swept", "us-east-1")
    assert (owner.created_by("local", "mine"), owner.created_by("local", "swept")) == ("deploy", "sweep")


def test_an_explicit_cell_adds_a_row_the_product_lacks_and_its_objects_are_deployed(isolated):
    """Issue 34: the fio source's 3 GiB row with one job, where 8 or 16 jobs of 3 GiB do not fit
    the function's time limit: a product of the file sizes and the jobs cannot have it."""
    argv = ["sweep", "--workload", "seqread", "--function-timeout", "900", "--memory", "2048", "--object-size", "1KiB",
            "--jobs", "1 8", "--file-size", "500MiB", "--from", "local remote", "--remote-region", "ap-northeast-1",
            "--cell", "jobs=1 file_size=3GiB"]  # fmt: skip
    chosen = sweep.check(cli.build_parser().parse_args(argv))
    cells = [(c.options["source"], c.options["file_size"], c.options["jobs"]) for c in chosen.axes.cells()]
    assert cells == [("local", 500 * MIB, 1), ("local", 500 * MIB, 8), ("remote", 500 * MIB, 1), ("remote", 500 * MIB, 8),
                     ("local", 3 * 1024 * MIB, 1), ("remote", 3 * 1024 * MIB, 1)]  # fmt: skip
    assert chosen.workload_options["job_files"] == "8x500MiB 1x3GiB"  # the 3 GiB file is declared and uploaded
    again = axes.Axes.from_dict(json.loads(json.dumps(chosen.axes.as_dict())))  # as a resume reads the manifest
    assert again.cells() == chosen.axes.cells()
    with pytest.raises(UsageError, match="JOBS=8 x FILE_SIZE=3072MiB .* over the function.s timeout of 900 s"):
        sweep.check(cli.build_parser().parse_args([*argv[:-1], "jobs=8 file_size=3GiB"]))


@pytest.mark.parametrize("cell, named", [
    ("jobs", "'jobs'"), ("region=eu-west-1", "'region=eu-west-1'"), ("colour=red", "'colour=red'"),
    ("jobs=", "'jobs='"), ("", "''"), ("strategy='stream", "No closing quotation"),
])  # fmt: skip
def test_a_bad_explicit_cell_is_one_line_naming_the_word(cell, named):
    argv = ["sweep", "--workload", "seqread", "--jobs", "1", "--cell", cell]
    with pytest.raises(UsageError) as refused:
        sweep.check(cli.build_parser().parse_args(argv))
    assert named in str(refused.value) and "\n" not in str(refused.value)


def test_an_explicit_cell_already_in_the_product_runs_once():
    grid = download_axes(memory="512 1024")
    assert grid.cells() == dataclasses.replace(grid, more=(download_axes(memory="512"),)).cells()


def test_every_cell_deploys_the_sweeps_ephemeral_storage_and_a_resume_keeps_it(isolated):
    args = cli.build_parser().parse_args(["sweep", "--memory", "1024 2048", "--object-size", "1GiB",
                                          "--strategy", "download_file", "--ephemeral-storage", "1200"])  # fmt: skip
    chosen = sweep.check(args)
    resumed = sweep.SweepParams.from_manifest(sweeps.new_manifest(chosen.settings(), []))
    for made in (chosen, resumed):
        deployment = sweep._Deployment(made, "id", Console())
        assert {deployment.inputs_for(c, i).variables("", "zip", backends.get("local"))["ephemeral_storage"]
                for i, c in enumerate(made.axes.cells())} == {1200}  # fmt: skip
    with pytest.raises(UsageError, match="ephemeral storage 1000 MB: strategy download_file needs"):
        sweep.check(cli.build_parser().parse_args(["sweep", "--object-size", "1GiB", "--strategy", "download_file",
                                                       "--ephemeral-storage", "1000"]))  # fmt: skip


def test_a_sweep_deploys_its_first_strategy_as_the_download_workloads_deploy_option(isolated):
    """The stack's default strategy is the download workload's deploy-level option: a sweep of
    strategies deploys its first with every cell, records it, and a resume deploys it again."""
    args = cli.build_parser().parse_args(["sweep", "--strategy", "stream; ranged connections=4", "--memory", "512 1024"])
    chosen = sweep.check(args)
    first = str(strategies.parse("stream"))
    assert chosen.workload_options["strategy"] == chosen.settings()["strategy"] == first
    resumed = sweep.SweepParams.from_manifest(sweeps.new_manifest(chosen.settings(), []))
    for made in (chosen, resumed):
        deployment = sweep._Deployment(made, "id", Console())
        assert {deployment.inputs_for(c, i).variables("", "zip", backends.get("local"))["default_strategy"]
                for i, c in enumerate(made.axes.cells())} == {first}  # fmt: skip


def test_a_manifest_saved_before_the_options_slot_reads_its_download_fields_as_options():
    """tests/fixtures/saved/sweep holds a sweep.json whose axes and cells name the strategy and pin
    beside the deploy-level parameters: they become the download's options, and a resume plans
    the very cells it recorded."""
    (path,) = (paths.REPO / "tests" / "fixtures" / "saved" / "sweep" / "input" / "sweeps").glob("*/sweep.json")
    manifest = sweeps.Manifest.from_json(json.loads(path.read_text()))
    strategy = manifest.axes["strategy"][0]
    cells = [cell.cell_params() for cell in manifest.cells]
    assert [cell.options for cell in cells] == [{"strategy": strategy, "pin": None}] * 2
    planned = sweep.SweepParams.from_manifest(manifest).axes
    assert planned.cells() == cells and planned.varying() == manifest.varying == ["concurrency"]
    assert download.DownloadDriver().sweep_stack_inputs(planned) == {"strategy": strategy}
    resumed = sweep._Deployment(sweep.SweepParams.from_manifest(manifest), "id", Console())
    assert resumed.inputs_for(cells[0], 0).variables("", "zip", backends.get("local"))["default_strategy"] == strategy  # as it was deployed
