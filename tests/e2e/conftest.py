"""Fixtures the end-to-end modules share."""

import pytest

from fanout.stages import deploy

SWEEP_STACK = "sweep-e2e"


@pytest.fixture(scope="session")
def sweep_stack(emulator):
    """The stack every sweep module deploys its cells to, in the session's emulator: the first
    sweep of the session creates it, the others only update it (a Terraform create costs several
    times an update), and it goes at the session's end."""
    try:
        yield SWEEP_STACK
    finally:
        deploy.destroy("local", SWEEP_STACK)
