"""run.json records the model a run was hosted under: by `wait` hosting it, or from the model
`fanout host` publishes while it holds the stack's host lock."""

from types import SimpleNamespace

import pytest
from rich.console import Console

from fanout.local import backends
from fanout.local import hostlock, network
from fanout.results import run_folders as runs, run_record
from fanout.stages import wait
from fanout.local.network import options

RUN = "20260101T000000Z-abcdef"


@pytest.fixture
def record(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    run = {
        "run_id": RUN, "backend": "local", "version": "test", "failed_seqs": [], "sent": 1, "send_rate_per_s": 1.0,
        "first_send_ms": 1, "last_send_ms": 2,
        "parameters": {"messages": 1, "experiment_tag": "t", "mode": "stream", "mode_from": "message",
                       "inject_failures": None},
        "stack": {"stack": STACK.stack, "backend": "local", "region": "us-east-1", "endpoint": "", "memory": 1024,
                  "concurrency": 1, "architecture": "x86_64", "object_size": 1},
    }  # fmt: skip
    runs.save(run_record.RunRecord.from_json(run))
    return run_record.RunRecord.from_json(run)


STACK = SimpleNamespace(backend="local", stack="netstack")


def test_a_hosting_wait_records_its_model(record):
    model = network.load("lambda-2026", 25)
    wait._record_network(Console(), STACK, record, True, model)
    saved = runs.load(RUN)
    assert saved.network == model.describe()
    assert network.label(backends.simulated(saved.backend), saved.network) == "simulated network: lambda-2026, scale 25 (rates / 25, first byte not scaled)"
    assert options.from_record(saved.network) == model


def test_a_hosting_wait_without_a_model_records_none(record):
    wait._record_network(Console(), STACK, record, True, None)
    assert runs.load(RUN).network_label() == "simulated network: none (loopback, not modelled)"


def test_a_wait_that_does_not_host_records_the_running_hosts_model(record):
    model = network.load("lambda-2024", 8)
    with hostlock.held(STACK.backend, STACK.stack), options.published(STACK.backend, STACK.stack, model):
        wait._record_network(Console(), STACK, record, False, None)
    assert runs.load(RUN).network == model.describe()
    assert options.read_published(STACK.backend, STACK.stack) is None  # gone with its host


def test_a_stale_published_model_is_ignored(record):
    model = network.load("lambda-2024", 8)
    with options.published(STACK.backend, STACK.stack, model):  # published, but no host holds the lock
        assert options.read_published(STACK.backend, STACK.stack) is None
