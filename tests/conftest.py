"""Fixtures shared by the whole suite."""

import pytest

from fanout.local.emulator import control


@pytest.fixture(scope="session")
def emulator():
    """Endpoint URL of a private emulator whose state lives in a temporary FANOUT_HOME."""
    with control.private(prefix="fanout-test-") as endpoint:
        yield endpoint
