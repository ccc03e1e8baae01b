"""Fixtures the end-to-end modules share."""

import pytest

SHARED = "e2e-shared"


@pytest.fixture(scope="session")
def shared_stack(emulator):
    """The name of a stack the modules that need no stack of their own deploy to, in the session's
    emulator: the first deploy of the session creates it, the others only update it (cell by cell
    for a sweep; a Terraform create costs several updates), and it goes with the emulator (as a
    workload's own stack, local_stack.py)."""
    return SHARED
