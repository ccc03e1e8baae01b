"""How much work one SQS call does at depth: the speed patches, tested without timing.

Stock moto walks the whole queue several times per message and reads the clock twice per
message on each walk. These tests count walks over the queue's message list and clock readings
in-process, so they hold on any machine; bench/sqs_throughput.py measures the effect.
"""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from moto import backends
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.utils import unix_time_millis
from moto.sqs import models as sqs_models
from moto.sqs.models import Queue, sqs_backends

from fanout.local.emulator import patches

DEPTH = 100


class CountingList(list):
    """A queue's message list that counts the walks over it."""

    walks = 0

    def __iter__(self):
        self.walks += 1
        return super().__iter__()


@pytest.fixture
def backend(patched_moto):
    return sqs_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]


@pytest.fixture
def queue(backend, unique):
    """A queue holding DEPTH messages: visible, in flight and delayed ones."""
    queue = backend.create_queue(unique)
    for seq in range(DEPTH):
        backend.send_message(unique, str(seq), delay_seconds=60 if seq % 10 == 0 else 0)
    backend.receive_message(unique, 10, 0, 60)
    queue._messages = CountingList(queue._messages)
    yield queue
    backend.delete_queue(unique)


def test_scans_agree_with_each_message_state(queue):
    messages = list(queue._messages)
    assert queue.messages == [m for m in messages if m.visible and not m.delayed]
    assert queue.approximate_number_of_messages_not_visible == sum(not m.visible for m in messages)
    assert queue.approximate_number_of_messages_delayed == sum(m.delayed for m in messages)
    assert (len(queue.messages), queue.approximate_number_of_messages_not_visible) == (DEPTH - 20, 10)


def test_scans_read_the_clock_once(queue, monkeypatch):
    readings = []

    def clock():
        readings.append(1)
        return unix_time_millis()

    monkeypatch.setattr(sqs_models, "unix_time_millis", clock)
    monkeypatch.setattr(patches, "unix_time_millis", clock)
    queue.messages
    queue.approximate_number_of_messages_not_visible
    queue.approximate_number_of_messages_delayed
    assert len(readings) == 3


def test_send_does_not_walk_the_queue(backend, queue):
    backend.send_message(queue.name, "one more")
    backend.send_message_batch(
        queue.name, {"a": {"Id": "a", "MessageBody": "x", "MessageAttributes": {}, "DelaySeconds": None}}
    )
    assert queue._messages.walks == 0
    assert len(queue._messages) == DEPTH + 2


def test_receive_walks_once_and_builds_no_attributes(backend, queue, monkeypatch):
    built = []
    attributes = Queue.attributes.fget
    monkeypatch.setattr(Queue, "attributes", property(lambda q: built.append(1) or attributes(q)))
    received = backend.receive_message(queue.name, 10, 0, 60)
    assert len(received) == 10
    assert (queue._messages.walks, len(built)) == (1, 0)


def test_delete_walks_once(backend, queue):
    (message,) = backend.receive_message(queue.name, 1, 0, 60)
    messages = queue._messages
    messages.walks = 0
    backend.delete_message(queue.name, message.receipt_handle)
    assert messages.walks == 1
    assert message.id not in {m.id for m in queue._messages}


def test_routing_does_not_list_the_package_directory(patched_moto, monkeypatch):
    expected = set(backends.list_of_moto_modules())

    def no_listing(path):
        raise AssertionError(f"listed {path}")

    monkeypatch.setattr(backends.os, "listdir", no_listing)
    assert set(backends.list_of_moto_modules()) == expected
    assert {"sqs", "awslambda", "logs"} <= expected


def test_concurrent_receives_never_hand_out_the_same_message(backend, unique, monkeypatch):
    """Receivers racing on one queue: each message goes to exactly one of them.

    Marking a message received is slowed down so that, without the patch's lock, the window
    between the visibility check and the mark is wide enough for the race to show every time.
    """
    backend.create_queue(unique)
    for seq in range(40):
        backend.send_message(unique, str(seq))
    stock_mark = sqs_models.Message.mark_received

    def slow_mark(message, *args, **kwargs):
        time.sleep(0.005)
        return stock_mark(message, *args, **kwargs)

    monkeypatch.setattr(sqs_models.Message, "mark_received", slow_mark)
    with ThreadPoolExecutor(max_workers=8) as pool:
        batches = list(pool.map(lambda _: backend.receive_message(unique, 10, 0, 60), range(8)))
    ids = [message.id for batch in batches for message in batch]
    assert sorted(ids) == sorted(set(ids))
    assert len(ids) == 40
    backend.delete_queue(unique)
