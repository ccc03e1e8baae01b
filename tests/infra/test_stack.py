"""infra/ on the emulator: one deploy for the module, read back with boto3, a second plan with
no changes, then destroy leaves nothing behind.

Deploying takes about a minute (the provider confirms each new SQS queue for ~25 s), so every
test shares one deployment and the last test destroys it. Tests run in file order.
"""

import json
import math
import subprocess

import pytest
from botocore.exceptions import ClientError

from fanout.local import backends
from fanout.workloads import registry
from fanout import cli
from fanout.cloud import params, stack, terraform
from fanout.common import paths
from fanout.workloads.download import strategies
from fanout.common.sizes import parse_size

pytestmark = pytest.mark.slow

STACK = "infra-test"
INPUTS = {
    "--concurrency": "1",  # below the event source mapping's minimum of 2
    "--memory": "256",
    "--object-size": "1MiB",
    "--architecture": "arm64",
    "--strategy": "ranged connections=4",
}


def fanout(*argv: str) -> int:
    """The real CLI dispatcher, limited to the lifecycle commands under test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "COMMAND_MODULES", ("fanout.stages.deploy",))
        return cli.main(list(argv))


def target() -> list[str]:
    return ["--backend", "local", "--stack", STACK]


def inputs() -> list[str]:
    return [item for pair in INPUTS.items() for item in pair]


@pytest.fixture(scope="module")
def deployed(emulator):
    assert fanout("deploy", *target(), *inputs()) == 0
    yield stack.load(backends.get("local"), STACK, registry.stack_fields)
    fanout("destroy", *target())  # no-op when the last test already destroyed it


@pytest.fixture(scope="module")
def function(deployed):
    return deployed.client("lambda").get_function_configuration(FunctionName=deployed.function_name)


def test_module_is_formatted():
    result = subprocess.run(["terraform", "fmt", "-check", "-recursive", "-diff"], cwd=paths.INFRA,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_module_validates(deployed):
    result = subprocess.run(["terraform", "validate", "-no-color"], cwd=paths.INFRA, capture_output=True,
                            text=True, env=terraform.environment("local", STACK))
    assert result.returncode == 0, result.stdout + result.stderr


def test_outputs_describe_the_inputs(deployed, emulator):
    assert deployed.endpoint == emulator
    assert deployed.concurrency == int(INPUTS["--concurrency"])
    assert deployed.memory == int(INPUTS["--memory"])
    assert deployed.object_size == parse_size(INPUTS["--object-size"])
    assert deployed.architecture == INPUTS["--architecture"]
    assert deployed.workload_outputs["default_strategy"] == str(strategies.parse(INPUTS["--strategy"]))  # canonical


def test_function_configuration(deployed, function):
    assert function["Runtime"] == "python3.12"
    assert function["Handler"] == "handler.lambda_handler"
    assert function["MemorySize"] == deployed.memory
    assert function["Timeout"] == deployed.timeout
    assert function["Architectures"] == [deployed.architecture]
    needed_mib = math.ceil(deployed.object_size / 2**20) + params.TMP_HEADROOM_MIB
    assert function["EphemeralStorage"]["Size"] == max(512, needed_mib)
    assert function["Environment"]["Variables"] == {
        "FANOUT_BUCKET": deployed.bucket,
        "FANOUT_KEY": deployed.object_key,
        "FANOUT_KEYS": json.dumps([deployed.object_key]),  # KEYS=1: the object alone
        "FANOUT_EXPECTED_SIZE": str(deployed.object_size),
        "DOWNLOAD_DEFAULT_STRATEGY": deployed.workload_outputs["default_strategy"],
        "FANOUT_CONCURRENCY_LIMIT": str(deployed.concurrency),
        "FANOUT_ENVIRONMENT_EPOCH": "",  # only a sweep on AWS sets it
        "LATENCY_BUCKETS": json.dumps({"standard": deployed.bucket}, separators=(",", ":")),
        "SEQREAD_BUCKETS": json.dumps({"local": deployed.bucket}, separators=(",", ":")),  # no REMOTE_REGION
        "SEQREAD_REMOTE_REGION": "",
        "POWERTOOLS_SERVICE_NAME": "s3-fanout",
        "POWERTOOLS_LOG_LEVEL": "INFO",
    }
    reserved = deployed.client("lambda").get_function_concurrency(FunctionName=deployed.function_name)
    assert reserved["ReservedConcurrentExecutions"] == deployed.concurrency


def test_every_resource_is_tagged_with_project_and_stack(deployed, function):
    lam, sqs = deployed.client("lambda"), deployed.client("sqs")
    (mapping,) = lam.list_event_source_mappings(FunctionName=deployed.function_name)["EventSourceMappings"]
    (group,) = deployed.client("logs").describe_log_groups(logGroupNamePrefix=deployed.log_group)["logGroups"]
    tag_sets = {
        "bucket": deployed.client("s3").get_bucket_tagging(Bucket=deployed.bucket)["TagSet"],
        "queue": sqs.list_queue_tags(QueueUrl=deployed.queue_url)["Tags"],
        "dead-letter queue": sqs.list_queue_tags(QueueUrl=deployed.dlq_url)["Tags"],
        "role": deployed.client("iam").list_role_tags(RoleName=function["Role"].rsplit("/", 1)[-1])["Tags"],
        "log group": deployed.client("logs").list_tags_for_resource(resourceArn=group["logGroupArn"])["tags"],
        "function": lam.list_tags(Resource=function["FunctionArn"])["Tags"],
        "queue mapping": lam.list_tags(Resource=mapping["EventSourceMappingArn"])["Tags"],
    }
    for resource, tags in tag_sets.items():
        if isinstance(tags, list):
            tags = {tag["Key"]: tag["Value"] for tag in tags}
        assert {key: tags.get(key) for key in ("project", "stack")} == {"project": "s3-fanout", "stack": STACK}, resource


def test_event_source_mapping(deployed):
    mappings = deployed.client("lambda").list_event_source_mappings()["EventSourceMappings"]
    (mapping,) = [m for m in mappings if m["EventSourceArn"] == deployed.queue_arn]
    assert mapping["FunctionArn"].endswith(f":function:{deployed.function_name}")
    assert mapping["BatchSize"] == deployed.batch_size
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["ScalingConfig"]["MaximumConcurrency"] == max(2, deployed.concurrency)
    # The local function host polls the queue, not the emulator.
    assert mapping["State"] == "Disabled"


def test_queues(deployed):
    sqs = deployed.client("sqs")
    queue = sqs.get_queue_attributes(QueueUrl=deployed.queue_url, AttributeNames=["All"])["Attributes"]
    assert int(queue["VisibilityTimeout"]) == 6 * deployed.timeout
    assert json.loads(queue["RedrivePolicy"]) == {
        "deadLetterTargetArn": deployed.dlq_arn,
        "maxReceiveCount": deployed.max_receive_count,
    }
    assert deployed.max_receive_count >= 5
    dlq = sqs.get_queue_attributes(QueueUrl=deployed.dlq_url, AttributeNames=["All"])["Attributes"]
    for attributes in (queue, dlq):
        assert attributes["SqsManagedSseEnabled"] == "true"


def test_bucket_is_private_encrypted_and_tls_only(deployed):
    s3 = deployed.client("s3")
    block = s3.get_public_access_block(Bucket=deployed.bucket)["PublicAccessBlockConfiguration"]
    assert all(block[flag] for flag in ("BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy",
                                        "RestrictPublicBuckets"))
    rules = s3.get_bucket_encryption(Bucket=deployed.bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    (statement,) = json.loads(s3.get_bucket_policy(Bucket=deployed.bucket)["Policy"])["Statement"]
    assert statement["Effect"] == "Deny"
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert f"arn:aws:s3:::{deployed.bucket}/*" in statement["Resource"]


def test_test_object_is_uploaded(deployed):
    head = deployed.client("s3").head_object(Bucket=deployed.bucket, Key=deployed.object_key)
    assert head["ContentLength"] == deployed.object_size


def configured(expression: str) -> str:
    """`expression` as Terraform evaluates it in the deployed stack's configuration."""
    inputs = paths.stack_dir("local", STACK) / terraform.INPUTS_FILE
    result = subprocess.run(["terraform", "console", f"-var-file={inputs}"], input=expression, cwd=paths.INFRA,
                            env=terraform.environment("local", STACK), capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_log_group_has_the_configured_retention(deployed):
    groups = deployed.client("logs").describe_log_groups(logGroupNamePrefix=deployed.log_group)["logGroups"]
    assert [g["logGroupName"] for g in groups] == [deployed.log_group]
    assert groups[0]["retentionInDays"] == int(configured("var.log_retention_days"))


def test_role_grants_only_the_stacks_resources(deployed, function):
    iam = deployed.client("iam")
    role = function["Role"].rsplit("/", 1)[-1]
    (policy_name,) = iam.list_role_policies(RoleName=role)["PolicyNames"]
    document = iam.get_role_policy(RoleName=role, PolicyName=policy_name)["PolicyDocument"]
    if isinstance(document, str):
        document = json.loads(document)
    granted = {}  # action -> every resource any statement grants it on
    for statement in document["Statement"]:
        assert statement["Effect"] == "Allow"
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        for action in actions:
            granted.setdefault(action, []).extend(resources)
    latency_prefix = f"arn:aws:s3:::{deployed.bucket}/latency/*"  # the latency workload's objects
    transfer_prefix = f"arn:aws:s3:::{deployed.bucket}/transfer/*"  # the transfer workload's
    # The seqread objects a first deploy declares (the default run's, 1x64MiB), read only.
    seqread_object = f"arn:aws:s3:::{deployed.bucket}/seqread/67108864-bytes/0.bin"
    assert sorted(granted.pop("s3:GetObject")) == sorted([f"arn:aws:s3:::{deployed.bucket}/{deployed.object_key}",
                                                          transfer_prefix, seqread_object, latency_prefix])  # fmt: skip
    for action in ("s3:PutObject", "s3:DeleteObject"):
        assert granted.pop(action) == [transfer_prefix, latency_prefix]
    for action in ("s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"):
        assert granted.pop(action) == [transfer_prefix]
    for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"):
        assert granted.pop(action) == [deployed.queue_arn]
    for action in ("logs:CreateLogStream", "logs:PutLogEvents"):
        [resource] = granted.pop(action)
        assert resource.endswith(f":log-group:{deployed.log_group}:*")
    assert granted == {}


def test_second_plan_has_no_changes(deployed):
    assert fanout("plan", *target(), *inputs(), "--detailed-exitcode") == 0


def test_destroy_leaves_nothing(deployed, function, capsys):
    assert fanout("destroy", *target()) == 0
    assert not terraform.has_state("local", STACK)
    assert terraform.outputs("local", STACK) == {}

    assert deployed.bucket not in [b["Name"] for b in deployed.client("s3").list_buckets()["Buckets"]]
    assert deployed.client("sqs").list_queues(QueueNamePrefix=STACK).get("QueueUrls", []) == []
    names = [f["FunctionName"] for f in deployed.client("lambda").list_functions()["Functions"]]
    assert deployed.function_name not in names
    mappings = deployed.client("lambda").list_event_source_mappings()["EventSourceMappings"]
    assert [m for m in mappings if m["EventSourceArn"] == deployed.queue_arn] == []
    groups = deployed.client("logs").describe_log_groups(logGroupNamePrefix=deployed.log_group)
    assert groups["logGroups"] == []
    with pytest.raises(ClientError, match="NoSuchEntity"):
        deployed.client("iam").get_role(RoleName=function["Role"].rsplit("/", 1)[-1])

    capsys.readouterr()
    assert fanout("destroy", *target()) == 0
    assert "Nothing to destroy" in capsys.readouterr().out
