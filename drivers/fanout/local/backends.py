"""The backends by name: the one place a name (the `--backend` flag, run.json's "backend")
turns into a backend object (fanout.common.backend.Backend).

The table imports each backend's class, so it sits in the lowest wing that may import both:
this one, above fanout.cloud. Code below it (the cloud wing's stack checks and Terraform
inputs, this wing's network labels) is handed the backend, or what it needs of it, by its
callers and never looks one up by name. Adding a backend: docs/architecture.md, *Adding a
backend*.
"""

from fanout.cloud.backend import AwsBackend
from fanout.common.backend import Backend
from fanout.local.backend import LocalBackend

# Each backend's one object, by its name; the first is the default.
BACKENDS: dict[str, Backend] = {backend.name: backend for backend in (LocalBackend(), AwsBackend())}
NAMES = tuple(BACKENDS)


def get(name: str) -> Backend:
    """The backend called `name` (one of NAMES: argparse and run.json hold only those)."""
    return BACKENDS[name]


def simulated(name: str | None) -> bool:
    """Are the figures of a run on backend `name` simulated? (None: not recorded; such figures are
    never claimed as measured.)"""
    return name is None or get(name).simulated
