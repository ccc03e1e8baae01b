"""What every invocation shares, whatever its messages' workloads: the S3 client's configuration,
the settings every workload's deployment has, and the execution environment's fields.

The handler builds one of each per execution environment and hands the fields to every record
(docs/workloads.md, "The envelope"). A workload's own settings (its bucket, its object, its
defaults) are read by its own module from the same environment variables.

Stdlib plus the SDK only (it runs in the Lambda runtime).
"""

import importlib.metadata
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import boto3
import botocore
import s3transfer
from botocore.config import Config

import envelope

TASK_ROOT = Path(__file__).resolve().parent  # the function's own code, and the zip's packages


def client_config(connections: int) -> Config:
    """The S3 client's configuration: a pool of `connections` (the registry's largest need: with
    botocore's default of 10, the 11th parallel request would open a connection and drop it after
    each request). Everything else is botocore's default, response checksum validation
    included, so a workload's figures include what the SDK does by default."""
    return Config(max_pool_connections=connections)


@dataclass(frozen=True)
class Settings:
    """What every workload's deployment sets (environment variables of infra/lambda.tf)."""

    concurrency_limit: int

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> "Settings":
        """Raises KeyError/ValueError naming the variable: a deployment bug, so the invocation fails."""
        text = environ["FANOUT_CONCURRENCY_LIMIT"]
        try:
            return cls(concurrency_limit=int(text))
        except ValueError:
            raise ValueError(f"FANOUT_CONCURRENCY_LIMIT={text!r} is not a whole number") from None


class Environment:
    """One execution environment: a random id and whether its first invocation has happened.

    The handler keeps one at module level, which Lambda initialises once per environment.
    """

    def __init__(self) -> None:
        self.env_id = uuid.uuid4().hex
        self.invocations = 0
        self.sdk = sdk_fields()

    def invocation_fields(self, request_id: str, memory_size: int, concurrency_limit: int) -> envelope.Invocation:
        """Fields every record of this invocation carries; the first call is the cold start."""
        self.invocations += 1
        return {
            "request_id": request_id,
            "env_id": self.env_id,
            "cold_start": self.invocations == 1,
            "memory_size": memory_size,
            "concurrency_limit": concurrency_limit,
            **self.sdk,
        }


def sdk_fields() -> envelope.Sdk:
    """The SDK this environment imported: the versions of the modules loaded (the zip's, or the
    runtime's bundled ones, which vary by runtime release and region), awscrt's as installed
    (null without it: crt then fails), and where boto3 came from (`bundled`: the zip, or `runtime`)."""
    try:
        awscrt = importlib.metadata.version("awscrt")
    except importlib.metadata.PackageNotFoundError:
        awscrt = None
    source = "bundled" if Path(boto3.__file__).resolve().is_relative_to(TASK_ROOT) else "runtime"
    return {"boto3_version": boto3.__version__, "botocore_version": botocore.__version__,
            "s3transfer_version": s3transfer.__version__, "awscrt_version": awscrt, "sdk_source": source}  # fmt: skip
