"""The seqread objects a stack declares (JOB_FILES, fanout.workloads.seqread.declared): written and
read back, kept by a redeploy unless given, their ARNs counted against the role's policy size
and refused with the arithmetic, fire refusing a run whose objects the stack lacks, and a sweep
deploying what its cells read; the remote bucket's objects uploaded, or copied server-side from
the stack's bucket (in the session's emulator) with the copy's cost stated."""

import uuid
from types import SimpleNamespace

import pytest

from fanout import cli
from fanout.local import backends
from fanout.cloud import params
from fanout.common.errors import UsageError
from fanout.cloud.random_objects import size_of
from fanout.common import aws, function_modules
from fanout.stages import deploy, fire as fire_stage, sweep
from fanout.workloads.seqread import declared, objects
from fanout.workloads.seqread.driver import SeqreadDriver, parse

MiB, GiB = 2**20, 2**30
seqread = function_modules.load("seqread")


def deploy_args(*given: str):
    return cli.build_parser().parse_args(["deploy", "--backend", "aws", "--stack", "s3fanout", *given])


def sweep_args(*given: str):
    return cli.build_parser().parse_args(["sweep", "--workload", "seqread", "--concurrency", "2", "--memory",
                                          "1024", "--object-size", "1MiB", "--strategy", "stream", *given])  # fmt: skip


DEPLOYED = {"stack": "s3fanout", "region": "us-east-1", "concurrency": 4, "memory": 512, "object_size": MiB,
            "architecture": "x86_64", "default_strategy": "stream", "timeout": 60,
            "seqread_objects": {str(64 * MiB): 4}}  # fmt: skip


def test_a_declaration_is_jobs_by_file_size_and_reads_back_as_written():
    objects = declared.parse("2x1MiB 1x64MiB 1x1MiB 3x1GB")
    assert objects == {MiB: 2, 64 * MiB: 1, 10**9: 3}  # a size given twice keeps its most jobs
    assert declared.text(objects) == "2x1MiB 1x64MiB 3x1000000000"
    assert declared.parse(declared.text(objects)) == objects
    assert declared.parse("none") == {} and declared.text({}) == "none"
    # The keys are the function's own, jobs 0 to JOBS-1 of each size.
    assert declared.keys({MiB: 2, 64 * MiB: 1}) == [seqread.object_key(MiB, 0), seqread.object_key(MiB, 1),
                                                     seqread.object_key(64 * MiB, 0)]  # fmt: skip
    assert seqread.object_key(MiB, 1) == "seqread/1048576-bytes/1.bin"  # as stacks deployed before keep them


@pytest.mark.parametrize("text, named", [
    ("4x", "FILE_SIZE ''"), ("64MiB", "'64MiB' is not JOBSxFILE_SIZE"), ("0x1MiB", "JOBS '0'"),
    ("65x1MiB", "JOBS '65'"), ("4x6GiB", "FILE_SIZE '6GiB'"), ("", "nothing declared"),
    ("none 4x1MiB", "'none' is not JOBSxFILE_SIZE"),
])  # fmt: skip
def test_a_bad_declaration_is_one_line_naming_it(text, named):
    with pytest.raises(UsageError) as refused:
        declared.parse(text)
    message = str(refused.value)
    assert message.startswith(f"invalid JOB_FILES {text!r}: ") and named in message and "\n" not in message


def test_the_arns_are_counted_as_the_policy_writes_them():
    # infra/mock-tests/aws.tftest.hcl's declaration: plan-test-123456789012-us-east-1 (and
    # -us-west-2) is 32 characters, "arn:aws:s3:::" 13, "/seqread/1048576-bytes/0.bin" 28, the
    # 64 MiB key one more: 4 ARNs of 73 and 2 of 74 = 440, quoted (12), 5 commas, 2 brackets.
    assert declared.policy_chars({MiB: 2, 64 * MiB: 1}, "plan-test", ["us-east-1", "us-west-2"]) == 459
    # In cn-north-1 the partition is aws-cn ("arn:aws-cn:s3:::", 16) and the bucket 33 characters:
    # ARNs of 77, 77 and 78, quoted (6), 2 commas, 2 brackets.
    assert declared.policy_chars({MiB: 2, 64 * MiB: 1}, "plan-test", ["cn-north-1"]) == 242
    assert declared.policy_chars({}, "plan-test", ["us-east-1"]) == 0  # no statement


def test_a_declaration_over_the_policy_share_is_refused_with_the_arithmetic():
    # s3fanout-123456789012-us-east-1 is 31 characters: 64 MiB keys make ARNs of 73 (jobs 0-9) and
    # 74 characters, 1 GiB keys 75 and 76; 10 x 73 + 54 x 74 + 10 x 75 + 54 x 76 = 9580, plus
    # 128 x 3 quotes and commas + 1 = 9965, over 10,240 - 2,560.
    with pytest.raises(UsageError) as refused:
        deploy.inputs_from(deploy_args("--job-files", "64x64MiB 64x1GiB"), {})
    message = str(refused.value)
    assert message.startswith("invalid JOB_FILES '64x64MiB 64x1GiB': 128 objects x 1 bucket(s) = 128 ARNs of "
                              "9,965 characters") and "over the 7,680 seqread may take" in message  # fmt: skip
    assert "10,240 per role" in message and "\n" not in message
    # One size fits (4,919 characters); with the remote bucket it is twice as many ARNs.
    assert deploy.inputs_from(deploy_args("--job-files", "64x64MiB"), {}).workload_options["job_files"] == "64x64MiB"
    with pytest.raises(UsageError, match="64 objects x 2 bucket"):
        deploy.inputs_from(deploy_args("--job-files", "64x64MiB", "--remote-region", "us-west-2"), {})


def test_a_first_deploy_declares_the_default_run_and_a_redeploy_keeps_the_stacks():
    assert deploy.inputs_from(deploy_args(), {}).variables("", "/x.zip", backends.get("aws"))["seqread_objects"] == {str(64 * MiB): 1}
    kept = deploy.inputs_from(deploy_args(), DEPLOYED)
    assert kept.variables("", "/x.zip", backends.get("aws"))["seqread_objects"] == {str(64 * MiB): 4}
    given = deploy.inputs_from(deploy_args("--job-files", "2x1MiB 8x64MiB"), DEPLOYED)
    assert given.variables("", "/x.zip", backends.get("aws"))["seqread_objects"] == {str(MiB): 2, str(64 * MiB): 8}
    assert params.changes(kept, given) == ["job files: 4x64MiB -> 2x1MiB 8x64MiB"]
    assert deploy.inputs_from(deploy_args("--job-files", "none"), DEPLOYED).variables("", "/x.zip", backends.get("aws"))[
        "seqread_objects"] == {}  # fmt: skip


def test_fire_refuses_a_run_whose_objects_the_stack_does_not_declare():
    stack = SimpleNamespace(stack="s", region="us-east-1", timeout=300, memory=2048, concurrency=10,
                            architecture="x86_64", object_size=MiB,
                            workload_outputs={"remote_region": "", "remote_bucket": "",
                                              "seqread_objects": {str(64 * MiB): 4}})  # fmt: skip
    SeqreadDriver().plan(stack, parse({"jobs": "3"}), 1)  # jobs 0-2 of 64 MiB: declared
    with pytest.raises(UsageError) as refused:
        SeqreadDriver().plan(stack, parse({"jobs": "2", "file_size": "1GiB"}), 1)
    assert str(refused.value) == ("invalid seqread run: JOBS=2 x FILE_SIZE=1GiB reads objects stack 's' does not "
                                  "declare (it has 4x64MiB); deploy with JOB_FILES='4x64MiB 2x1GiB' first")  # fmt: skip
    with pytest.raises(UsageError, match="JOB_FILES='8x64MiB'"):
        SeqreadDriver().plan(stack, parse({"jobs": "8"}), 1)


def test_fire_refuses_job_files_that_are_not_the_stacks():
    fire = cli.build_parser().parse_args(["fire", "--stack", "s3fanout", "--workload", "seqread", "--job-files",
                                          "8x64MiB"])  # fmt: skip
    assert fire_stage.deploy_mismatches(deploy.given_of(fire), DEPLOYED) == [
        "JOB_FILES=8x64MiB is set at deploy: stack 's3fanout' has 4x64MiB"]
    same = cli.build_parser().parse_args(["fire", "--stack", "s3fanout", "--job-files", "4x64MiB"])
    assert fire_stage.deploy_mismatches(deploy.given_of(same), DEPLOYED) == []


def test_a_sweep_deploys_every_object_its_cells_read_before_the_first():
    settings = sweep.check(sweep_args("--jobs", "1 4", "--file-size", "64MiB 1GiB", "--from", "local remote",
                                          "--remote-region", "us-west-2"))  # fmt: skip
    assert settings.workload_options["job_files"] == "4x64MiB 4x1GiB"
    deployment = sweep._Deployment(settings, "sw", console=None)
    first = deployment.inputs_for(settings.axes.cells()[0], 0)
    assert first.variables("", "/x.zip", backends.get("aws"))["seqread_objects"] == {str(64 * MiB): 4, str(GiB): 4}
    # With JOB_FILES, those too; a download sweep deploys the default run's.
    given = sweep.check(sweep_args("--jobs", "2", "--file-size", "1GiB", "--job-files", "16x1MiB 1x1GiB"))
    assert given.workload_options["job_files"] == "16x1MiB 2x1GiB"
    download = cli.build_parser().parse_args(["sweep", "--concurrency", "2", "--object-size", "1MiB"])
    assert sweep.check(download).workload_options["job_files"] == "1x64MiB"


def test_a_sweep_too_large_for_the_policy_is_refused_before_anything_is_made():
    with pytest.raises(UsageError, match=r"invalid seqread objects \(the sweep's JOBS x FILE_SIZE and JOB_FILES\) "
                                         r"'64x1MiB 64x2MiB': 128 objects x 2 bucket"):  # fmt: skip
        sweep.check(sweep_args("--jobs", "1 64", "--file-size", "1MiB 2MiB", "--remote-region", "us-west-2"))


def test_a_sweep_recorded_before_job_files_deploys_the_default_run():
    driver = SeqreadDriver()
    assert driver.terraform_variables({"remote_region": ""})["seqread_objects"] == {str(64 * MiB): 1}


@pytest.fixture
def buckets(emulator):
    """A stack whose bucket (us-east-1) and remote bucket (us-west-2) are fresh buckets of the
    session's emulator, which serves every region at one endpoint."""
    from test_fire import make_stack

    names = {region: f"seqread-{uuid.uuid4().hex[:8]}-{region}" for region in ("us-east-1", "us-west-2")}
    for region, name in names.items():
        extra = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        aws.client("s3", region, emulator).create_bucket(Bucket=name, **extra)
    outputs = {"remote_region": "us-west-2", "remote_bucket": names["us-west-2"]}
    yield make_stack(emulator, "", bucket=names["us-east-1"], workload_outputs=outputs)
    for region, name in names.items():
        s3 = aws.client("s3", region, emulator)
        for item in s3.list_objects_v2(Bucket=name).get("Contents", []):
            s3.delete_object(Bucket=name, Key=item["Key"])
        s3.delete_bucket(Bucket=name)


def _body(stack, region: str, bucket: str, key: str) -> bytes:
    return aws.client("s3", region, stack.endpoint).get_object(Bucket=bucket, Key=key)["Body"].read()


def test_remote_objects_copied_server_side_are_the_stack_buckets_bytes(buckets):
    """With copy, the remote bucket's objects are copies of the stack bucket's (the same random
    bytes; an upload would make new ones), made there first, and the line states the copy's
    inter-region cost; without, they are uploaded and the copy is offered with that cost."""
    said = []
    made = objects.ensure(buckets, "remote", 2 * MiB, 2, said.append, copy=True)
    remote = buckets.workload_outputs["remote_bucket"]
    assert made == ["seqread/2097152-bytes/0.bin", "seqread/2097152-bytes/1.bin"]
    for key in made:
        original = _body(buckets, "us-east-1", buckets.bucket, key)
        assert len(original) == 2 * MiB and _body(buckets, "us-west-2", remote, key) == original
    cost = f"{4 * MiB / 1e9:,.2f} GB x $0.02/GB"  # the us-east-1 -> us-west-2 transfer price
    assert any("copied 2 object(s)" in line and "server-side" in line for line in said), said
    assert any(cost in line and "no transfer charge" in line for line in said), said
    said.clear()
    assert objects.ensure(buckets, "remote", MiB, 1, said.append) == ["seqread/1048576-bytes/0.bin"]
    stack_s3 = aws.client("s3", "us-east-1", buckets.endpoint)
    assert size_of(stack_s3, buckets.bucket, "seqread/1048576-bytes/0.bin") is None  # uploaded to the remote only
    assert any("uploaded 1 object(s)" in line for line in said)
    assert any("REMOTE_COPY=1" in line and "$0.02/GB" in line for line in said), said


def test_the_copy_cost_is_the_pairs_transfer_price_or_said_unknown():
    assert objects.copy_cost("us-east-1", "us-west-2", 64 * 10**9).endswith("64.00 GB x $0.02/GB = $1.28")
    assert "no transfer price known for eu-west-1 -> us-west-2" in objects.copy_cost("eu-west-1", "us-west-2", 1)
