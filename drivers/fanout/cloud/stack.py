"""A deployed stack, as its Terraform outputs describe it.

Names flow one way: Terraform outputs -> drivers. Nothing here re-derives a bucket, queue or
function name; every driver gets them from `Stack`.
"""

from collections.abc import Callable
from dataclasses import MISSING, asdict, dataclass, field, fields

from fanout.common import aws
from fanout.cloud import terraform
from fanout.common.backend import Backend
from fanout.common.errors import FanoutError

DEFAULT_STACK = "s3fanout"
# What the workloads read from a stack's outputs (fanout.workloads.registry.stack_fields), handed
# down by the stages: this wing reads no workload's outputs itself and never imports the workloads.
WorkloadFields = Callable[[dict], dict]


def no_workload_fields(outputs: dict) -> dict:
    """For a command that reads no workload's outputs (the local function host)."""
    return {}


@dataclass(frozen=True)
class Stack:
    """The outputs of `infra/` for one deployed stack (see infra/outputs.tf)."""

    backend: str
    stack: str
    region: str
    endpoint: str  # "" on AWS; the emulator's URL on the local backend
    bucket: str
    object_key: str
    object_size: int
    queue_url: str
    queue_arn: str
    dlq_url: str
    dlq_arn: str
    function_name: str
    log_group: str
    concurrency: int
    memory: int
    timeout: int
    batch_size: int
    max_receive_count: int
    architecture: str
    # fanout.cloud.package.SDKS; a stack deployed before the zip bundled the SDK ran on the runtime's.
    sdk: str = "runtime"
    object_keys: list = field(default_factory=list)  # KEYS copies, object_key first; none before KEYS existed
    ephemeral_storage: str = "auto"  # EPHEMERAL_STORAGE: /tmp in MB, or auto (before it was an input: auto)
    # What the registered workloads read from the outputs (fanout.workloads.registry.stack_fields; download:
    # default_strategy; latency: storage, express_bucket, express_az), by output name; run.json holds
    # them beside the rest.
    workload_outputs: dict = field(default_factory=dict)

    @classmethod
    def from_outputs(cls, backend: str, outputs: dict, workload_fields: WorkloadFields) -> "Stack":
        wanted = [f for f in fields(cls) if f.name not in ("backend", "workload_outputs")]
        missing = [f.name for f in wanted if f.name not in outputs and f.default is MISSING and f.default_factory is MISSING]
        if missing:
            raise FanoutError(f"stack outputs lack {', '.join(missing)}; run `make deploy` again")
        # Each field's type is a class here (int, str), which mypy cannot tell from a string annotation.
        values = {f.name: f.type(outputs[f.name]) for f in wanted if f.name in outputs}  # type: ignore[operator]
        return cls(backend=backend, workload_outputs=workload_fields(outputs), **values)

    def as_record(self) -> dict:
        """The stack as run.json holds it: its fields, the workloads' outputs among them."""
        record = asdict(self)
        record.update(record.pop("workload_outputs"))
        return record

    def client(self, service: str, **config):
        """A boto3 client for this stack's region and endpoint."""
        return aws.client(service, self.region, self.endpoint, **config)


def account_of(outputs: dict) -> str:
    """The AWS account of a stack's outputs, from its queue's ARN (arn:aws:sqs:region:account:name);
    "" without one."""
    parts = str(outputs.get("queue_arn", "")).split(":")
    return parts[4] if len(parts) > 4 else ""


def load(backend: Backend, stack: str, workload_fields: WorkloadFields) -> Stack:
    """The deployed stack on `backend`, or a one-line error saying how to deploy it (or that it
    is gone: the local backend's emulator no longer holds it)."""
    outputs = terraform.outputs(backend.name, stack)
    if not outputs:
        raise FanoutError(
            f"no stack {stack!r} is deployed on the {backend.name} backend; "
            f"run `make deploy BACKEND={backend.name} STACK={stack}` first"
        )
    deployed = Stack.from_outputs(backend.name, outputs, workload_fields)
    backend.check_stack(deployed)
    return deployed


def acted_on(backend: Backend, stack: str, workload_fields: WorkloadFields) -> Stack:
    """The stack a command acts on; on AWS, only with usable credentials of the stack's account
    (one line otherwise)."""
    deployed = load(backend, stack, workload_fields)
    backend.check_credentials(deployed.region, deployed.endpoint, deployed.stack)
    return deployed
