"""Fixtures shared by the whole suite."""

import os

import pytest

from fanout.emulator import control


@pytest.fixture(scope="session")
def emulator(tmp_path_factory):
    """Endpoint URL of a private emulator whose state lives in a temporary FANOUT_HOME."""
    previous = os.environ.get("FANOUT_HOME")
    os.environ["FANOUT_HOME"] = str(tmp_path_factory.mktemp("fanout-home"))
    try:
        yield control.start()
    finally:
        control.stop()
        if previous is None:
            os.environ.pop("FANOUT_HOME", None)
        else:
            os.environ["FANOUT_HOME"] = previous
