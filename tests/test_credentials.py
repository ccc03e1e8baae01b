"""A new user without AWS credentials: every AWS command says in one line how to provide them,
exits 1 and creates nothing, Terraform never runs. The environment holds no AWS_* variable but
AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE naming empty files; commands run in-process
through the CLI's entry point. With credentials (STS answers played by Stubber) the account and
region are printed before anything else happens."""

import dataclasses
import json
import os

import boto3
import pytest
from botocore.stub import Stubber

from fanout.common import aws, paths
from fanout import cli
from fanout.cloud import credentials, terraform
from fanout.results import run_folders as runs, run_record
from fanout.common.errors import FanoutError
from fanout.cloud.stack import Stack

STACK = "nocreds"


def _outputs() -> dict:
    """Outputs of a deployed AWS stack (values only need the right types)."""
    values = {str: "x", int: 2, list: ["x"]}
    fields = [f for f in dataclasses.fields(Stack) if f.name not in ("backend", "workload_outputs")]
    outputs = {f.name: values[f.type] for f in fields}
    return outputs | {"stack": STACK, "region": "eu-west-1", "endpoint": "", "queue_arn": "arn:q", "ephemeral_storage": "auto"}


@pytest.fixture
def no_credentials(tmp_path, monkeypatch):
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name in ("config", "credentials"):
        (tmp_path / name).write_text("")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # a session keeps the credentials it found
    monkeypatch.setattr(terraform, "_run", _no_terraform)
    credentials.identity.cache_clear()
    yield
    credentials.identity.cache_clear()


def _no_terraform(*args, **kwargs):
    raise AssertionError(f"Terraform ran without credentials: {args}")


@pytest.fixture
def deployed(no_credentials):
    """An AWS stack's state (outputs, recorded inputs) and a run fired at it."""
    folder = paths.stack_dir("aws", STACK)
    folder.mkdir(parents=True)
    state = {"resources": [{"type": "aws_sqs_queue"}], "outputs": {k: {"value": v} for k, v in _outputs().items()}}
    (folder / terraform.STATE_FILE).write_text(json.dumps(state))
    (folder / terraform.INPUTS_FILE).write_text(json.dumps({"region": "eu-west-1", "endpoint": ""}))
    record = {"run_id": runs.new_run_id(), "stack": {"backend": "aws", "stack": STACK, "queue_arn": "arn:q"},
              "parameters": {"messages": 1}, "sent": 1, "failed_seqs": [], "first_send_ms": 1}  # fmt: skip
    runs.save(run_record.RunRecord.from_json(record))
    return record["run_id"]


AWS = ["--backend", "aws", "--stack", STACK]
BEFORE_A_DEPLOY = [
    ["deploy", *AWS],
    ["plan", *AWS],
    ["sweep", *AWS, "--concurrency", "2 4"],
]
ON_A_DEPLOYED_STACK = [
    ["destroy", *AWS],
    ["fire", *AWS, "--messages", "1"],
    ["wait", *AWS],
    ["report", *AWS],
    ["insights", "errors", *AWS, "--hours", "1"],
    ["export", *AWS, "--out", "events.jsonl", "--hours", "1"],
]


def _one_line_how_to(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "AWS_PROFILE" in err and "aws sso login" in err and "AWS_ACCESS_KEY_ID" in err, err
    return err


@pytest.mark.parametrize("argv", BEFORE_A_DEPLOY, ids=lambda argv: argv[0])
def test_before_a_deploy_no_credentials_is_one_line_and_nothing_is_created(argv, no_credentials, capsys):
    assert cli.main(argv) == 1
    _one_line_how_to(capsys)
    assert not paths.stack_dir("aws", STACK).exists()
    assert not paths.results_dir().exists()


@pytest.mark.parametrize("argv", ON_A_DEPLOYED_STACK, ids=lambda argv: argv[0])
def test_on_a_deployed_stack_no_credentials_is_one_line(argv, deployed, capsys):
    before = sorted(p.name for p in paths.results_dir().iterdir())
    assert cli.main(argv) == 1
    _one_line_how_to(capsys)
    assert sorted(p.name for p in paths.results_dir().iterdir()) == before  # fire recorded no run
    assert terraform.has_state("aws", STACK)


def test_compare_needs_no_credentials(deployed, capsys):
    """compare reads the runs' files only: without credentials it goes as far as they allow (here,
    to the missing records of a run never reported), never to a credentials error."""
    assert cli.main(["compare", deployed, deployed]) == 1
    err = capsys.readouterr().err
    assert "has no records.jsonl" in err and "AWS_PROFILE" not in err


def _stubbed(monkeypatch, **clients):
    """aws.client returns these clients (real ones, answers played by Stubber), by service."""
    monkeypatch.setattr(aws, "client", lambda service, region, endpoint="", **config: clients[service])
    return [Stubber(client) for client in clients.values()]


def test_deploy_prints_the_account_and_region_then_checks_the_quotas(no_credentials, monkeypatch, capsys):
    """With credentials the account and region are printed; a reservation the account cannot
    grant is refused before Terraform runs, as the sweep refuses it."""
    keys = {"region_name": "eu-west-1", "aws_access_key_id": "a", "aws_secret_access_key": "b"}
    sts, lam, quotas = (boto3.client(name, **keys) for name in ("sts", "lambda", "service-quotas"))
    stubs = _stubbed(monkeypatch, sts=sts, **{"lambda": lam, "service-quotas": quotas})
    stubs[0].add_response("get_caller_identity", {"Account": "123456789012", "Arn": "arn:aws:iam::123456789012:user/a",
                                                  "UserId": "AIDA"})  # fmt: skip
    stubs[1].add_response("get_account_settings", {"AccountLimit": {"ConcurrentExecutions": 400,
                                                                    "UnreservedConcurrentExecutions": 400}})  # fmt: skip
    stubs[2].add_response("list_service_quotas", {"Quotas": []}, {"ServiceCode": "lambda"})
    with stubs[0], stubs[1], stubs[2]:
        assert cli.main(["deploy", *AWS, "--region", "eu-west-1", "--concurrency", "350"]) == 1
        captured = capsys.readouterr()
        assert "AWS account 123456789012 (arn:aws:iam::123456789012:user/a), region eu-west-1" in captured.out
        assert "'Concurrent executions'" in captured.err and "350" in captured.err
        assert credentials.check("eu-west-1") is credentials.check("eu-west-1")  # asked once per process
    assert credentials.check("eu-west-1", "http://localhost:4566") is None
    assert not paths.stack_dir("aws", STACK).exists()


@pytest.mark.parametrize("code", ["InvalidClientTokenId", "ExpiredToken"])
def test_refused_credentials_are_one_line_naming_the_code(code, no_credentials, monkeypatch):
    sts = boto3.client("sts", region_name="eu-west-1", aws_access_key_id="a", aws_secret_access_key="b")
    (stub,) = _stubbed(monkeypatch, sts=sts)
    with stub:
        stub.add_client_error("get_caller_identity", code, "The security token included in the request is invalid")
        with pytest.raises(FanoutError, match=f"{code}.*AWS_PROFILE") as failure:
            credentials.check("eu-west-1")
    assert "\n" not in str(failure.value)


OTHER_ACCOUNT = "222222222222"
STACK_ACCOUNT = "111111111111"


@pytest.mark.parametrize("argv", [["deploy", *AWS], ["sweep", *AWS, "--concurrency", "2 4", "--region", "eu-west-1"]]
                         + ON_A_DEPLOYED_STACK,
                         ids=lambda argv: argv[0])  # fmt: skip
def test_another_accounts_credentials_are_refused_in_one_line(argv, deployed, monkeypatch, capsys):
    """A stack deployed in one account, credentials of another (STS answers played by Stubber):
    every command refuses in one line naming both accounts, Terraform never runs (a deploy
    would create a second stack there) and fire records no run."""
    folder = paths.stack_dir("aws", STACK)
    state = json.loads((folder / terraform.STATE_FILE).read_text())
    valid = {"queue_arn": f"arn:aws:sqs:eu-west-1:{STACK_ACCOUNT}:{STACK}-queue", "default_strategy": "download_file",
             "architecture": "x86_64", "memory": 1024, "object_size": 1024, "sdk": "bundled"}  # a redeploy reads them
    state["outputs"].update({name: {"value": value} for name, value in valid.items()})
    state["resources"].append({"type": "terraform_data", "name": "created_by",  # a sweep may redeploy it
                               "instances": [{"attributes": {"output": {"value": "sweep", "type": "string"}}}]})  # fmt: skip
    (folder / terraform.STATE_FILE).write_text(json.dumps(state))
    sts = boto3.client("sts", region_name="eu-west-1", aws_access_key_id="a", aws_secret_access_key="b")
    (stub,) = _stubbed(monkeypatch, sts=sts)
    stub.add_response("get_caller_identity", {"Account": OTHER_ACCOUNT, "UserId": "AIDA",
                                              "Arn": f"arn:aws:iam::{OTHER_ACCOUNT}:user/b"})  # fmt: skip
    before = sorted(p.name for p in paths.results_dir().iterdir())
    with stub:
        assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert f"deployed in AWS account {STACK_ACCOUNT}" in err and f"account {OTHER_ACCOUNT}'s" in err, err
    assert sorted(p.name for p in paths.results_dir().iterdir()) == before
    assert terraform.has_state("aws", STACK)


def test_the_stacks_own_account_passes(deployed, monkeypatch):
    """The same account's credentials go on (the check compares, it does not refuse AWS)."""
    who = credentials.Identity(STACK_ACCOUNT, f"arn:aws:iam::{STACK_ACCOUNT}:user/a", "eu-west-1")
    credentials.check_account(who, STACK_ACCOUNT, STACK)
    credentials.check_account(None, STACK_ACCOUNT, STACK)  # an endpoint: the emulator's fixed account
    with pytest.raises(FanoutError, match=OTHER_ACCOUNT):
        credentials.check_account(dataclasses.replace(who, account=OTHER_ACCOUNT), STACK_ACCOUNT, STACK)


def test_a_sweep_on_aws_fits_its_reservation_beside_the_users_stack(no_credentials, monkeypatch, capsys):
    """The user's stack (deployed by hand, reserving 200 of an account of 1,000 with 700 left
    unreserved) stays the user's: a sweep of CONCURRENCY 700 without STACK goes to the sweeps'
    own stack, whose reservation must fit beside it (700 would leave 0 of the 100 Lambda keeps
    unreserved), and is refused naming the stack that holds the rest. Nothing is deployed."""
    folder = paths.stack_dir("aws", "s3fanout")
    folder.mkdir(parents=True)
    outputs = {**_outputs(), "stack": "s3fanout", "region": "us-east-1", "concurrency": 200,
               "function_name": "s3fanout-downloader", "queue_arn": f"arn:aws:sqs:us-east-1:{STACK_ACCOUNT}:q"}  # fmt: skip
    state = {"resources": [{"type": "aws_sqs_queue"}], "outputs": {k: {"value": v} for k, v in outputs.items()}}
    (folder / terraform.STATE_FILE).write_text(json.dumps(state))
    keys = {"region_name": "us-east-1", "aws_access_key_id": "a", "aws_secret_access_key": "b"}
    sts, lam, quotas = (boto3.client(name, **keys) for name in ("sts", "lambda", "service-quotas"))
    stubs = _stubbed(monkeypatch, sts=sts, **{"lambda": lam, "service-quotas": quotas})
    stubs[0].add_response("get_caller_identity", {"Account": STACK_ACCOUNT, "UserId": "AIDA",
                                                  "Arn": f"arn:aws:iam::{STACK_ACCOUNT}:user/a"})  # fmt: skip
    stubs[1].add_response("get_account_settings", {"AccountLimit": {"ConcurrentExecutions": 1000,
                                                                    "UnreservedConcurrentExecutions": 700}})  # fmt: skip
    stubs[2].add_response("list_service_quotas", {"Quotas": []}, {"ServiceCode": "lambda"})
    with stubs[0], stubs[1], stubs[2]:
        assert cli.main(["sweep", "--backend", "aws", "--concurrency", "700", "--yes"]) == 1
    out, err = capsys.readouterr()
    assert "stack 's3fanout-sweep-us-east-1'" in out
    assert "CONCURRENCY 700 would leave 0" in err and "other stacks here: 's3fanout' 200" in err, err
    assert len(err.strip().splitlines()) == 1
    assert json.loads((folder / terraform.STATE_FILE).read_text()) == state
    assert not paths.stack_dir("aws", "s3fanout-sweep-us-east-1").exists()
