"""Storage classes (`fanout deploy --storage ... --express-az ...`): parsed into one canonical
form, the directory bucket's zone required exactly when express is chosen, express refused on the
local backend before anything runs, and the choice carried to Terraform and back from its outputs."""

import pytest

from fanout.local import backends
from fanout.workloads import registry
from fanout import cli
from fanout.stages import deploy
from fanout.cloud import params
from fanout.local.emulator import control
from fanout.workloads.latency import storage
from fanout.common.errors import UsageError
from fanout.cloud.stack import Stack


@pytest.mark.parametrize("text", ["express standard", "standard express", " express  standard express "])
def test_classes_come_out_once_in_definition_order(text):
    assert storage.parse(text) == tuple(c for c in storage.CLASSES if c in text.split())


@pytest.mark.parametrize("name", storage.CLASSES)
def test_each_class_alone(name):
    assert storage.parse(name) == (name,)


@pytest.mark.parametrize("text, named", [("glacier", "'glacier'"), ("standard Express", "'Express'"), ("", "''")])
def test_unknown_or_no_class_names_the_value_and_the_choices(text, named):
    with pytest.raises(UsageError) as raised:
        storage.parse(text)
    message = str(raised.value)
    assert named in message and all(c in message for c in storage.CLASSES)


@pytest.mark.parametrize("zone", ["use1-az4", "usw2-az1", "apne1-az1", "euc1-az3", "cac1-az2"])
def test_zone_ids_are_accepted_with_express(zone):
    assert storage.express_az(zone, ("standard", "express")) == zone


@pytest.mark.parametrize("zone", ["us-east-1a", "use1", "USE1-AZ4", "use1-az", "use1-az4 ", "az4"])
def test_zone_names_and_malformed_ids_are_refused(zone):
    with pytest.raises(UsageError, match="availability zone ID such as use1-az4"):
        storage.express_az(zone, ("express",))


def test_express_needs_a_zone_and_a_zone_needs_express():
    with pytest.raises(UsageError, match="express needs the availability zone"):
        storage.express_az("", ("express",))
    with pytest.raises(UsageError, match="add express to --storage"):
        storage.express_az("use1-az4", ("standard",))
    assert storage.express_az("", ("standard",)) == ""


def deploy_inputs(*extra: str) -> params.DeployParams:
    return deploy.inputs_from(cli.build_parser().parse_args(["deploy", *extra]))


def test_the_default_is_standard_only():
    inputs = deploy_inputs()
    assert inputs.workload_options["storage"] == list(storage.DEFAULT) == ["standard"]
    variables = inputs.variables("", "/x.zip", backends.get("aws"))
    assert variables["storage"] == ["standard"] and variables["express_az"] == ""


def test_the_choice_reaches_terraforms_variables():
    inputs = deploy_inputs("--backend", "aws", "--storage", "express standard", "--express-az", "usw2-az1",
                           "--region", "us-west-2")
    variables = inputs.variables("", "/x.zip", backends.get("aws"))
    assert variables["storage"] == ["express", "standard"]
    assert variables["express_az"] == "usw2-az1"


def test_express_is_refused_on_the_local_backend_only():
    with pytest.raises(UsageError, match="with --backend local") as raised:
        storage.check_backend(("standard", "express"), "local")
    assert "\n" not in str(raised.value) and "docs/storage.md" in str(raised.value)
    storage.check_backend(("standard", "express"), "aws")
    storage.check_backend(("standard",), "local")


def test_deploy_refuses_local_express_before_the_emulator_or_terraform(monkeypatch, capsys):
    started = []
    monkeypatch.setattr(control, "start", lambda: started.append("emulator"))
    monkeypatch.setattr(deploy.terraform, "apply", lambda *a: started.append("terraform"))
    assert cli.main(["deploy", "--storage", "express", "--express-az", "use1-az4"]) == 2
    err = capsys.readouterr().err
    assert "class 'express' with --backend local" in err and len(err.strip().splitlines()) == 1
    assert started == []


STANDARD_OUTPUTS = {
    "region": "us-east-1", "endpoint": "", "stack": "t", "bucket": "b", "object_key": "k", "object_size": 1,
    "queue_url": "q", "queue_arn": "qa", "dlq_url": "d", "dlq_arn": "da", "function_name": "f",
    "log_group": "/aws/lambda/f", "concurrency": 1, "memory": 128, "timeout": 60, "batch_size": 1,
    "max_receive_count": 5, "architecture": "x86_64", "default_strategy": "stream",
}  # fmt: skip


# seqread's outputs of a stack deployed before them: no remote bucket, the default run's objects;
# download's default strategy, which every stack has.
SEQREAD_BEFORE = {"remote_region": "", "remote_bucket": "", "seqread_objects": {"67108864": 1},
                  "default_strategy": "stream"}  # fmt: skip


def test_stack_reads_the_storage_outputs():
    outputs = STANDARD_OUTPUTS | {"storage": ["express", "standard"], "express_bucket": "t-1--use1-az4--x-s3",
                                  "express_az": "use1-az4"}  # fmt: skip
    deployed = Stack.from_outputs("aws", outputs, registry.stack_fields)
    assert storage.deployed(deployed) == ["express", "standard"]
    assert deployed.workload_outputs == {"storage": ["express", "standard"], "express_bucket": "t-1--use1-az4--x-s3",
                                         "express_az": "use1-az4", **SEQREAD_BEFORE}  # fmt: skip
    # run.json holds them beside the stack's other outputs, as before the registry carried them.
    assert {name: deployed.as_record()[name] for name in outputs} == outputs


def test_a_stack_deployed_before_storage_existed_is_standard_only():
    deployed = Stack.from_outputs("aws", STANDARD_OUTPUTS, registry.stack_fields)
    assert deployed.workload_outputs == {"storage": list(storage.DEFAULT), "express_bucket": "", "express_az": "",
                                         **SEQREAD_BEFORE}  # fmt: skip


def test_the_deploy_summary_says_what_the_latency_workload_measures_and_where():
    express = STANDARD_OUTPUTS | {"storage": ["express", "standard"], "express_bucket": "t-1--use1-az4--x-s3",
                                  "express_az": "use1-az4"}  # fmt: skip
    for outputs, line in [(STANDARD_OUTPUTS, "storage   standard\n"),
                          (express, "storage   express standard: s3://t-1--use1-az4--x-s3 in use1-az4\n")]:  # fmt: skip
        assert line in deploy.summary(Stack.from_outputs("aws", outputs, registry.stack_fields), 1.0)


def test_the_express_zone_table_holds_zone_ids_of_its_own_regions():
    """Each listed zone is a zone ID (not a zone name) whose prefix abbreviates its region, e.g.
    use1 for us-east-1: a typo in the table would refuse a valid zone or accept another region's."""
    for region, zones in storage.EXPRESS_ZONES.items():
        area, direction, number = region.split("-")
        for zone in zones:
            assert storage.AZ_ID_PATTERN.fullmatch(zone), zone
            prefix = zone.split("-")[0]
            assert prefix[: len(area)] == area and prefix.endswith(number) and prefix[len(area)] == direction[0], zone


def test_a_listed_zone_is_accepted_only_in_its_region():
    storage.check_zone_in_region("use1-az4", "us-east-1")
    with pytest.raises(UsageError, match="use1-az5, use1-az6"):
        storage.check_zone_in_region("use1-az1", "us-east-1")
    with pytest.raises(UsageError, match="us-east-1, us-east-2"):
        storage.check_zone_in_region("mes1-az1", "me-south-1")


def test_the_local_backend_refuses_express_before_asking_for_its_zone(capsys):
    """docs/storage.md: express is refused on the local backend whatever else is given, so the
    first line is that refusal, not a request for EXPRESS_AZ that could never be used."""
    with pytest.raises(UsageError, match="invalid storage class 'express' with --backend local"):
        deploy_inputs("--storage", "express")
    with pytest.raises(UsageError, match="invalid storage class 'express' with --backend local"):
        deploy_inputs("--storage", "standard express", "--express-az", "us-east-1a")
