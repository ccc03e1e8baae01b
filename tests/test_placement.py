"""Where a stack's resources are is checked before Terraform runs (issue 33, item 5): a region
botocore does not list is refused, and a deployed stack keeps its region and its remote region
(docs/aws.md, *Regions*)."""

import io
import json
import shutil
import subprocess
import sys

import pytest
from rich.console import Console

from fanout import cli
from fanout.cloud import owner, params, terraform
from fanout.common import paths
from fanout.common.errors import UsageError
from fanout.results import sweep_folders as sweeps
from fanout.stages import sweep

REFUSED = "destroy first or use another STACK"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("fanout.stages.deploy", "fanout.stages.sweep"))


def test_a_region_that_matches_the_pattern_but_botocore_does_not_list_is_refused():
    """`us-east-99` has a region's shape (botocore's own pattern accepts it) but no endpoint: the
    emulator answered it with HTTP 500 after a minute and a half of Terraform."""
    assert "us-east-99" not in params.known_regions() and "us-east-1" in params.known_regions()
    with pytest.raises(UsageError, match=r"^invalid region 'us-east-99': expected an S3 region botocore knows") as bad:
        params.region("us-east-99")
    assert "\n" not in str(bad.value)
    assert params.region("eu-west-1") == "eu-west-1"


@pytest.mark.parametrize("command", ["deploy", "plan"])
def test_deploy_to_an_unknown_region_is_one_line_and_creates_nothing(command, capsys):
    assert cli.main([command, "--region", "us-east-99"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fanout: error: invalid region 'us-east-99'") and len(err.strip().splitlines()) == 1
    assert not paths.home().exists()  # no emulator started, no state


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_deploy_to_an_unknown_region_fails_in_one_line(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "FANOUT_HOME": str(tmp_path / "home"), "PYTHONPATH": str(paths.REPO / "drivers")}
    result = subprocess.run(["make", "--no-print-directory", "-o", "venv", f"FANOUT={sys.executable} -m fanout.cli",
                             "deploy", "REGION=us-east-99"], cwd=paths.REPO, capture_output=True, text=True, env=env,
                            timeout=120)  # fmt: skip
    assert result.returncode != 0
    said = [line for line in result.stderr.splitlines() if line.startswith("fanout:")]
    assert len(said) == 1 and said[0].startswith("fanout: error: invalid region 'us-east-99'"), result.stderr
    assert not (tmp_path / "home").exists()


def deployed(backend: str, region: str, remote_region: str = "", stack: str = "s3fanout",
             created_by: str = owner.DEPLOY) -> dict:
    """A stack as a finished apply leaves it: state with resources (what created it among them)
    and outputs, and its inputs."""
    folder = paths.stack_dir(backend, stack)
    folder.mkdir(parents=True)
    outputs = {"stack": stack, "region": region, "remote_region": remote_region, "concurrency": 4, "memory": 512}
    creator = {"type": "terraform_data", "name": owner.VARIABLE,
               "instances": [{"attributes": {"output": {"value": created_by, "type": "string"}}}]}
    state = {"resources": [{"type": "aws_sqs_queue"}, creator],
             "outputs": {k: {"value": v} for k, v in outputs.items()}}
    (folder / terraform.STATE_FILE).write_text(json.dumps(state))
    (folder / terraform.INPUTS_FILE).write_text(json.dumps({"region": region, "remote_region": remote_region}))
    return {path.name: path.read_bytes() for path in folder.iterdir()}


@pytest.mark.parametrize("given, make, value", [
    (["--region", "eu-west-1"], "REGION", "eu-west-1"),
    (["--remote-region", "none"], "REMOTE_REGION", "none"),
    (["--remote-region", "eu-west-1"], "REMOTE_REGION", "eu-west-1"),
])  # fmt: skip
@pytest.mark.parametrize("backend", ["local", "aws"])
@pytest.mark.parametrize("command", ["deploy", "plan"])
def test_a_deployed_stack_keeps_its_region_and_remote_region(command, backend, given, make, value, capsys):
    """REMOTE_REGION=none pointed the remote provider back at the stack's region, where Terraform
    could neither refresh nor delete the remote bucket."""
    before = deployed(backend, "us-east-1", "us-west-2")
    assert cli.main([command, "--backend", backend, *given]) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"fanout: error: invalid {make} {value!r}: stack 's3fanout' is deployed with "
                            f"{make}={'us-east-1' if make == 'REGION' else 'us-west-2'}, where Terraform keeps "
                            f"reaching its resources; {REFUSED}\n")  # fmt: skip
    assert captured.out == ""
    folder = paths.stack_dir(backend, "s3fanout")
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before  # Terraform never ran


def test_a_redeploy_that_keeps_them_or_adds_a_remote_region_passes_the_check():
    """Adding a remote region moves nothing: without one the remote provider held no resource."""
    from fanout.stages import deploy

    deployed("aws", "us-east-1", "")
    args = cli.build_parser().parse_args(["deploy", "--backend", "aws", "--memory", "1024"])
    assert deploy.check_inputs(args).region == "us-east-1"
    added = cli.build_parser().parse_args(["deploy", "--backend", "aws", "--remote-region", "us-west-2"])
    assert deploy.check_inputs(added).workload_options["remote_region"] == "us-west-2"


def test_another_stack_name_is_the_way_to_another_region():
    from fanout.stages import deploy

    deployed("aws", "us-east-1", "us-west-2")
    elsewhere = cli.build_parser().parse_args(["deploy", "--backend", "aws", "--stack", "other", "--region", "eu-west-1"])
    assert deploy.check_inputs(elsewhere).region == "eu-west-1"


def test_a_sweep_in_another_region_is_refused_before_its_manifest(capsys):
    """A sweep's region is its own (the Makefile's default, not the stack's): on a stack deployed
    elsewhere it planned against the old bucket (HeadBucket 301). Its own stack is one per region,
    so this happens on a stack given by name, one a sweep created."""
    deployed("local", "eu-west-1", created_by=owner.SWEEP)
    args = cli.build_parser().parse_args(["sweep", "--stack", "s3fanout", "--memory", "512", "--concurrency", "2",
                                          "--multiplier", "1"])  # fmt: skip
    with pytest.raises(UsageError, match=f"invalid REGION 'us-east-1': stack 's3fanout' is deployed with "
                                         f"REGION=eu-west-1.*{REFUSED}$"):  # fmt: skip
        sweep.run_sweep(sweep.check(args), console=Console(file=io.StringIO()))
    assert not sweeps.sweeps_dir().exists()
