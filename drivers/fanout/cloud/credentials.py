"""Whose AWS account a command acts on, asked before anything touches AWS.

Every command of the AWS backend first calls STS GetCallerIdentity, which needs no permission,
so missing credentials are one line saying how to provide them, with nothing created, instead
of Terraform's page of errors or a traceback half-way through a sweep. Against an endpoint the
fixed test credentials apply. Details: docs/aws.md (its opening paragraph).
"""

import functools
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, PartialCredentialsError

from fanout.common import aws
from fanout.common.errors import FanoutError

HOW = (
    "set AWS_PROFILE to a profile of your AWS configuration (after `aws sso login --profile NAME` for an "
    "SSO profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or run `aws configure`"
)


@dataclass(frozen=True)
class Identity:
    account: str
    arn: str
    region: str

    def line(self) -> str:
        return f"AWS account {self.account} ({self.arn}), region {self.region}"


def check(region: str, endpoint: str = "") -> Identity | None:
    """Who the credentials are (None against an endpoint); FanoutError saying how to provide them."""
    return None if endpoint else identity(region)


def check_account(who: Identity | None, account: str, stack: str) -> None:
    """Refuse to act on stack `stack`, deployed in AWS account `account` (its ARNs say which; ""
    when unknown), with another account's credentials: Terraform would plan it as missing there
    and create a second stack, and every other command would find none of its resources."""
    if who is not None and account and who.account != account:
        raise FanoutError(f"stack {stack!r} was deployed in AWS account {account}, but the credentials are account "
                          f"{who.account}'s ({who.arn}): use the credentials of account {account}, or another STACK")


@functools.cache
def identity(region: str) -> Identity:
    """STS GetCallerIdentity in `region`, once per process (a sweep loads its stack at every cell)."""
    try:
        answer = aws.client("sts", region).get_caller_identity()
    except (NoCredentialsError, PartialCredentialsError) as exc:
        raise FanoutError(f"no usable AWS credentials ({exc}): {HOW}") from None
    except ClientError as exc:  # expired or unknown keys: InvalidClientTokenId, ExpiredToken...
        error = exc.response["Error"]
        raise FanoutError(f"AWS refused the credentials ({error.get('Code')}: {error.get('Message')}): {HOW}") from None
    except BotoCoreError as exc:  # an expired SSO token, an unreachable STS endpoint...
        raise FanoutError(f"could not check the AWS credentials ({exc}): {HOW}") from None
    return Identity(answer["Account"], answer["Arn"], region)
