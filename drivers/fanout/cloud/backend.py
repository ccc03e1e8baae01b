"""The AWS backend (fanout.common.backend.Backend): Lambda hosts the function, the caller's
credentials and account are checked before anything is created, and its figures are measured.
Against --endpoint (an emulator such as LocalStack) the same resources are deployed as on AWS.
"""

from contextlib import nullcontext

from fanout.cloud import account, credentials, invocations, params, stack as stacks, terraform
from fanout.common.backend import NotHosted


class AwsBackend:
    name = "aws"
    simulated = False
    hosts_function = False
    embedded_emulator = False
    # Logs Insights lags on AWS and SQS's counts are approximate: the logs of the last invocations
    # must have arrived before a message counts as lost (docs/experiment.md, *wait*).
    lost_after_s = 300.0
    min_lost_after_s = 60.0
    poll_seconds = 10.0
    dlq_wait_seconds = 1  # a long poll asks every SQS server, a short one a sample of them
    purge_seconds = 60.0  # PurgeQueue: up to 60 s, and it may delete what is sent meanwhile (botocore's sqs model)
    redeploy_minutes = 1.0  # docs/sweep.md
    percentile_method = "Logs Insights pct(), whose method AWS does not document"

    def check_credentials(self, region: str, endpoint: str, stack: str) -> str | None:
        who = credentials.check(region, endpoint)
        credentials.check_account(who, stacks.account_of(terraform.outputs(self.name, stack)), stack)
        return who.line() if who else endpoint

    def check_account(self, region: str, stack: str, concurrency: int, memory: int, endpoint: str) -> list[str]:
        return [] if endpoint else account.check_stack(region, stack, concurrency, memory)

    def endpoint(self, given: str) -> str:
        return given

    def check_stack(self, stack) -> None:
        pass

    def before_destroy(self, name: str, recorded: dict, console) -> bool:
        self.check_credentials(recorded.get("region") or params.DEFAULTS["region"], recorded.get("endpoint", ""), name)
        return False

    def will_start(self) -> bool:
        return False

    def teardown(self, name: str, started: bool, console) -> bool:
        return False

    def after_purge(self, stack, purged_at: float, say, sleep, clock) -> None:
        """At least purge_seconds for SQS, then until the invocations running at the purge must
        have ended (fanout.cloud.invocations)."""
        say(f"SQS may take {self.purge_seconds:g} s to finish the purge")
        invocations.wait_ended(stack.client("cloudwatch"), stack.function_name, purged_at, stack.timeout, say,
                               self.purge_seconds, sleep, clock)  # fmt: skip

    def hosting(self, stack, network, console):
        return nullcontext(NotHosted())  # Lambda runs the function
