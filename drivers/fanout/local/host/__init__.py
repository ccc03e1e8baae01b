"""Local function host: runs a function deployed in the emulator under Lambda's SQS rules.

`run()` is the Python entry point (the `fanout host` command and the demo use it): it hosts the
function until its queue is drained and returns a `Summary`.

Local cold starts are not comparable with AWS's: environments are forked from a process that has
already imported boto3 and parsed botocore's data, so a local Init Duration is far below what
the same function shows on Lambda, where the runtime starts from nothing.

FANOUT_HOST_SHARED_TMP=1 makes environments share /tmp (and leaves the task root writable), as
happens on systems without private mount namespaces; the tests use it to exercise that fallback.
"""

from fanout.local.host.config import FunctionConfig, load
from fanout.local.host.service import ACCOUNT_CONCURRENCY, DEFAULT_IDLE_SECONDS, Host, Summary


def run(target, *, idle_seconds: float = DEFAULT_IDLE_SECONDS, max_envs: int = ACCOUNT_CONCURRENCY,
        progress=None, **options) -> Summary:
    """Host `target` (a fanout.cloud.stack.Stack or a FunctionConfig) until its queue stays empty.

    `progress(summary)` is called a few times a second with a snapshot; `options` go to Host.
    """
    config = target if isinstance(target, FunctionConfig) else load(target.function_name, target.endpoint,
                                                                    target.region)
    return Host(config, idle_seconds=idle_seconds, max_envs=max_envs, progress=progress, **options).run()


__all__ = ["FunctionConfig", "Host", "Summary", "load", "run"]
