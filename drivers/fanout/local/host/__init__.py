"""Local function host: runs a function deployed in the emulator under Lambda's SQS rules.

`run()` is the Python entry point (the `fanout host` command and the demo use it): it hosts the
function until its queue is drained and returns a `Summary`. How it works, and why local cold
starts are not comparable with AWS's: docs/local-backend.md, *How it works* and *The function
host*.
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
