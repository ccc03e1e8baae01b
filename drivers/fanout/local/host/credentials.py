"""The function's credentials, got as Lambda gets them: STS AssumeRole of its execution role.

Lambda assumes the role the function is configured with and hands the runtime the session's
keys as AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, named after the function.
Against the emulator the same call makes the function's requests those of the role's session,
which the emulator holds to the role's policies (docs/emulator.md, IAM); the host's own calls
(polling the queue, delivering logs) keep the emulator's test credentials.
"""

import functools

from botocore.exceptions import BotoCoreError, ClientError

from fanout.common import aws
from fanout.common.errors import FanoutError
from fanout.local.host.config import FunctionConfig


def role_variables(config: FunctionConfig) -> dict[str, str]:
    """The session's keys as the runtime's variables; one session per host and function."""
    return dict(_assume(config.region, config.endpoint, config.role, config.name))


@functools.cache
def _assume(region: str, endpoint: str, role_arn: str, session_name: str) -> tuple[tuple[str, str], ...]:
    try:
        answer = aws.client("sts", region, endpoint).assume_role(RoleArn=role_arn, RoleSessionName=session_name)
    except (BotoCoreError, ClientError) as exc:
        raise FanoutError(f"cannot assume role {role_arn!r} of function {session_name!r}: "
                          f"{str(exc).splitlines()[0]}") from None
    keys = answer["Credentials"]
    return (("AWS_ACCESS_KEY_ID", keys["AccessKeyId"]), ("AWS_SECRET_ACCESS_KEY", keys["SecretAccessKey"]),
            ("AWS_SESSION_TOKEN", keys["SessionToken"]))
