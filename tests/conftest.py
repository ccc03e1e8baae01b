"""Fixtures shared by the whole suite."""

import signal

import pytest
from xdist.scheduler import LoadScopeScheduling

from fanout.local.emulator import control


@pytest.fixture(scope="session")
def emulator():
    """Endpoint URL of a private emulator whose state lives in a temporary FANOUT_HOME."""
    with control.private(prefix="fanout-test-") as endpoint:
        yield endpoint


@pytest.fixture
def ctrl_c_raises():
    """SIGINT as an interactive Python has it: a test runner's worker may ignore it, or an earlier
    test in the worker may have left another handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


# Tests that share nothing with the rest of their module and take minutes: scheduled one by one
# (each benchmark's tiny run is a subprocess of its own; together they would hold one worker).
ON_THEIR_OWN = ("tests/test_bench.py::test_each_benchmark_runs_to_its_end_at_a_tiny_size[",)
# Modules on tests/e2e/conftest.py's shared stack: on one worker, the first creates it and the
# others only update it (a create waits about a minute for the provider's SQS checks).
ON_THE_SHARED_STACK = ("tests/e2e/test_sweep.py", "tests/e2e/test_pin_sweep.py")


class ModulesInOrder(LoadScopeScheduling):
    """A module's tests go to one worker, as its module fixtures (a deployed stack) expect, and
    modules are handed out in collection order, which pytest_collection_modifyitems sets."""

    def _split_scope(self, nodeid: str) -> str:
        if nodeid.startswith(ON_THEIR_OWN):
            return nodeid
        module = nodeid.split("::", 1)[0]
        return "the shared stack" if module in ON_THE_SHARED_STACK else module


@pytest.hookimpl(optionalhook=True)  # xdist's hook: unknown when pytest runs without it
def pytest_xdist_make_scheduler(config, log):
    """Whatever --dist says: module fixtures deploy stacks, so a module split over workers would
    deploy its stack on each."""
    config.option.loadscopereorder = False  # keep the order below, not the largest module first
    return ModulesInOrder(config, log)


# Modules that keep a core busy for 20 CPU-s or more without waiting on anything. Handed out
# among the first, they also keep the run's end short: started late in collection order, the
# Makefile's and the report pages' modules were the last two running, for about 20 s.
COMPUTING = ("tests/test_report.py", "tests/test_plots.py", "tests/test_package.py", "tests/test_makefile.py",
             "tests/test_report_page.py", "tests/infra/test_module.py", "tests/test_types.py")


def pytest_collection_modifyitems(items):
    """Modules with slow tests first, so that no long module starts last and holds the run up
    while the other workers sit idle; among the first, a computing module after each slow one:
    the slow modules start by creating a stack, about a minute of waiting on Terraform's AWS
    provider in which the cores would otherwise idle."""
    modules = list(dict.fromkeys(_module(item) for item in items))
    with_slow_tests = {_module(item) for item in items if item.get_closest_marker("slow")}
    slow = [m for m in modules if m in with_slow_tests]
    computing = [m for m in modules if m in COMPUTING and m not in with_slow_tests]
    paired = [m for pair in zip(slow, computing) for m in pair]
    rank = {m: i for i, m in enumerate(dict.fromkeys([*paired, *slow, *computing, *modules]))}
    items.sort(key=lambda item: rank[_module(item)])  # stable: modules stay whole


def _module(item) -> str:
    return item.nodeid.split("::")[0]
