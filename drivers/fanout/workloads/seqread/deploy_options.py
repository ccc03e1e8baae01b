"""The seqread workload's deploy-level options, what the driver's deploy hooks (fanout.workloads.base) call:
the remote region (`--remote-region`, region.py) and the objects the stack keeps and its role
reads (`--job-files`, Make JOB_FILES, declared.py). Not given, a redeploy keeps the deployed stack's; a
first deploy has no remote bucket and the default run's objects.
"""

from fanout.workloads.base import DeployPlace, Given
from fanout.workloads.seqread import declared, region

DEPLOY_OPTIONS = ("remote_region", declared.OPTION)


def add_deploy_arguments(parser) -> None:
    kept = "default: the deployed stack's, else"
    parser.add_argument("--remote-region", help="seqread: region of a second bucket that FROM=remote reads, such as "
                        f"us-west-2 ({region.NONE}: no second bucket; {kept} {region.NONE})")
    parser.add_argument("--job-files", help="seqread: the objects the stack keeps in each bucket and its role "
                        "reads, JOBSxFILE_SIZE words such as '4x64MiB 16x1GiB' (jobs 0-3 of 64MiB, 0-15 of 1GiB); "
                        f"{declared.NONE}: none ({kept} {declared.text(declared.DEFAULT)})")


def deploy_options(given: Given, place: DeployPlace) -> dict:
    """The remote region and the declared objects, checked against the role's policy size."""
    remote = region.parse(given.get("remote_region", ""), place.region)
    text = given.get(declared.OPTION)
    objects = declared.DEFAULT if text is None else declared.parse(text)
    declared.check_policy(objects, place.stack, [place.region, *([remote] if remote else [])], "JOB_FILES")
    return {"remote_region": remote, declared.OPTION: declared.text(objects)}


def for_sweep(chosen: dict, given: Given, place: DeployPlace, combos: tuple) -> dict:
    """`chosen` (deploy_options of a sweep) declaring every object the sweep's cells read, with
    those JOB_FILES gives (not given: the cells' only), checked against the policy size."""
    text = given.get(declared.OPTION)
    objects = declared.union(declared.parse(text) if text is not None else {},
                             *(declared.needed(fields) for fields in combos))  # fmt: skip
    remote = chosen["remote_region"]
    declared.check_policy(objects, place.stack, [place.region, *([remote] if remote else [])],
                          "seqread objects (the sweep's JOBS x FILE_SIZE and JOB_FILES)")  # fmt: skip
    return {**chosen, declared.OPTION: declared.text(objects)}


def kept_options(outputs: dict, given: Given) -> dict:
    """The deployed stack's remote region and objects (as their flags write them), those not in `given`."""
    fields = stack_fields(outputs)
    kept = {"remote_region": fields["remote_region"] or region.NONE,
            declared.OPTION: declared.text(declared.from_output(fields[declared.OUTPUT]))}  # fmt: skip
    return {name: value for name, value in kept.items() if name not in given}


def terraform_variables(options: dict) -> dict:
    """infra/'s `remote_region` and `seqread_objects`; absent (a sweep recorded before them), the defaults."""
    objects = declared.parse(options[declared.OPTION]) if declared.OPTION in options else declared.DEFAULT
    return {"remote_region": options.get("remote_region", ""), declared.OUTPUT: declared.to_variable(objects)}


def stack_fields(outputs: dict) -> dict:
    """The stack's `remote_region`, `remote_bucket` and `seqread_objects` outputs; a stack deployed
    before them had no remote bucket, and is taken to declare the default objects."""
    objects = outputs.get(declared.OUTPUT, declared.to_variable(declared.DEFAULT))
    return {**region.stack_fields(outputs), declared.OUTPUT: objects}


def deploy_summary(stack) -> list[str]:
    fields = stack_fields(stack.workload_outputs)
    objects = f"seqread   {declared.text(declared.from_output(fields[declared.OUTPUT]))}"
    remote = f"remote    s3://{fields['remote_bucket']} in {fields['remote_region']}"
    return [objects, *([remote] if fields["remote_bucket"] else [])]
