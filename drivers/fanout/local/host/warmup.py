"""Warm botocore's data once in the fork server, so environments create clients in milliseconds.

The fork server loads botocore's JSON data once into a cache that every later loader shares and
the environments inherit through fork (docs/local-backend.md, *The function host*). Imported
(for its effect) only by the fork server. botocore has no hook to give a session a ready loader
cache (Loader ignores its `cache` argument), hence the replacement of the factory its sessions
call.
"""

import gc

import boto3
import botocore.httpsession
import botocore.session
from botocore.exceptions import BotoCoreError

# The services functions here and typical handlers create clients for; any other service
# still works and is simply read from disk on first use.
SERVICES = ("s3", "sqs", "logs", "sts", "lambda", "dynamodb", "sns", "kms", "ssm", "secretsmanager",
            "cloudwatch", "events")
_create_loader = botocore.session.create_loader
_store: dict = {}


class SharedCache:
    """A loader's cache backed by one store for the process, keyed also by the loader's search
    paths: loaders that look in the same places read the same files, others share nothing."""

    def __init__(self, loader):
        self._loader = loader

    def _key(self, key) -> tuple:
        return tuple(self._loader.search_paths), key

    def __contains__(self, key) -> bool:
        return self._key(key) in _store

    def __getitem__(self, key):
        return _store[self._key(key)]

    def __setitem__(self, key, value) -> None:
        _store[self._key(key)] = value


def create_loader(search_path_string=None):
    """botocore's loader factory, with the shared cache."""
    loader = _create_loader(search_path_string)
    loader._cache = SharedCache(loader)
    return loader


def install() -> None:
    botocore.session.create_loader = create_loader


def warm(services=SERVICES) -> None:
    """Create a client (and resource) of each service once, so their data is in the store.

    Explicit dummy credentials and region: no credential lookup, nothing over the network.
    Whatever fails is skipped: warming only saves time, it must never stop environments from
    starting (an exception here would take the fork server down).
    """
    try:  # the host's AWS_PROFILE, say, may name a profile that does not exist
        session = boto3.Session(aws_access_key_id="warmup", aws_secret_access_key="warmup",
                                region_name="us-east-1")
        resources = set(session.get_available_resources())
    except BotoCoreError:
        return
    for service in services:
        try:
            session.client(service)
            if service in resources:
                session.resource(service)
        except BotoCoreError:
            continue


def resolve_ca_bundle() -> None:
    """botocore takes its CA bundle from certifi when the host has it, and certifi finds the file
    by importing itself, which handlers cannot (certifi is not in the Lambda runtime): resolve
    the path once here, where certifi is importable; environments inherit it."""
    try:
        botocore.httpsession.get_cert_path(True)
    except (ImportError, OSError):  # as in warm(): never take the fork server down
        pass


install()
warm()
resolve_ca_bundle()
# Environments are forked from here: objects the fork server's garbage collector never scans
# are never written to by the environments' collectors, so their pages stay shared.
gc.freeze()
