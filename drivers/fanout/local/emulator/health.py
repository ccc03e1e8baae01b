"""Is a local stack still there? The embedded emulator keeps every resource in memory: once it
stops, or stops and starts again, the stacks deployed to it are gone although their Terraform
state remains. Every command that acts on a local stack checks this first (stack.load), and
connection errors met later (the emulator dying mid-command) become the same one-line advice
(cli.main), instead of tracebacks and answers about a stack that no longer exists.
"""

from botocore.exceptions import ClientError

from fanout.local.emulator import control
from fanout.common.errors import FanoutError

GONE_QUEUE = ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist")


def check_stack(stack) -> None:
    """FanoutError unless the emulator that `stack` was deployed to still runs and holds it."""
    running = control.running_endpoint()
    if running is None:
        raise FanoutError(not_running(stack.stack))
    if running != stack.endpoint or not _queue_exists(stack):
        raise FanoutError(
            f"the embedded emulator was restarted since stack {stack.stack!r} was deployed, and its "
            f"resources went with the old one; run `make deploy STACK={stack.stack}` to deploy it again"
        )


def not_running(stack_name: str | None = None) -> str:
    what = f"stack {stack_name!r}" if stack_name else "every local stack"
    fix = f"make deploy STACK={stack_name}" if stack_name else "make deploy"
    return (f"the embedded emulator is not running, and {what} went with it (it keeps everything in "
            f"memory); run `{fix}` to start it and deploy again")


def unreachable(endpoint: str, error: Exception) -> str:
    """One line for a connection error to `endpoint`: the embedded emulator stopped, or another
    endpoint does not answer."""
    if endpoint and control.running_endpoint() != endpoint and endpoint.startswith(f"http://{control.HOST}:"):
        return f"lost the embedded emulator at {endpoint} mid-command: {not_running()}"
    return f"cannot reach {endpoint or 'AWS'}: {error}"


def _queue_exists(stack) -> bool:
    try:
        stack.client("sqs").get_queue_attributes(QueueUrl=stack.queue_url, AttributeNames=["QueueArn"])
    except ClientError as exc:
        if exc.response["Error"]["Code"] in GONE_QUEUE:
            return False
        raise
    return True
