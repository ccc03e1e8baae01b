"""Fixtures shared by the whole suite."""

import pytest

from fanout.local.emulator import control


@pytest.fixture(scope="session")
def emulator():
    """Endpoint URL of a private emulator whose state lives in a temporary FANOUT_HOME."""
    with control.private(prefix="fanout-test-") as endpoint:
        yield endpoint


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Schedule for `make test` (`--dist loadgroup --no-loadscope-reorder`): a module's tests
    stay on one worker, as its module fixtures (a deployed stack) expect, unless a test names its
    own xdist_group; and modules with slow tests come first, so that no long module starts last
    and holds the run up while the other workers sit idle."""
    for item in items:
        if not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow)  # stable: modules stay whole
