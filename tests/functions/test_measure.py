"""The measurement core without AWS: parsing, byte counting, record arithmetic."""

import json
import random
import threading
import time
from types import SimpleNamespace

import pytest


@pytest.fixture
def measure(load_measure):
    return load_measure()


def test_parse_body_defaults_and_overrides(measure):
    stream = measure.strategies.parse("stream")
    minimal = measure.parse_body(json.dumps({"run_id": "r", "seq": 3}), stream)
    assert (minimal.run_id, minimal.seq, minimal.experiment_tag, minimal.strategy, minimal.inject_failure) == (
        "r", 3, "", stream, False,
    )  # fmt: skip
    full = {"run_id": "r", "seq": 4, "experiment_tag": "t", "strategy": "ranged connections=2", "inject_failure": True}
    parsed = measure.parse_body(json.dumps(full), stream)
    assert parsed.fields() == {
        "run_id": "r", "seq": 4, "experiment_tag": "t", "strategy": "ranged connections=2 chunk_size=8MiB",
        "strategy_name": "ranged", "strategy_connections": 2, "strategy_chunk_size": 8 * 2**20,
    }  # fmt: skip
    assert parsed.inject_failure is True


def test_parse_body_lists_every_problem(measure):
    with pytest.raises(measure.MalformedMessage) as info:
        measure.parse_body(json.dumps({"seq": -1.5, "strategy": "ftp", "experiment_tag": "t"}), None)
    message = str(info.value)
    assert "run_id is missing" in message and "seq=-1.5" in message and "'ftp'" in message
    assert "\n" not in message
    assert info.value.known == {"experiment_tag": "t"}


def test_progress_counts_every_byte_from_many_threads(measure):
    progress = measure.Progress()
    chunks = [[random.randrange(1, 1 << 20) for _ in range(2000)] for _ in range(8)]
    threads = [threading.Thread(target=lambda c=c: [progress(n) for n in c]) for c in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert progress.bytes == sum(map(sum, chunks))
    assert progress.first_chunk_at >= progress.started


def test_progress_first_chunk_ignores_empty_reads(measure):
    progress = measure.Progress()
    progress(0)
    assert progress.first_chunk_at is None
    progress(10)
    assert progress.first_chunk_at is not None and progress.bytes == 10


def test_progress_spreads_each_read_from_its_threads_last_answer_or_read(measure, monkeypatch):
    """A thread's read arrived after that thread's response headers (botocore's
    response-received) or its previous read; a thread that saw no response counts its read
    where it ends."""
    clock = iter([100.0, 100.005, 100.035, 100.050, 100.055])
    monkeypatch.setattr(measure, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    progress = measure.Progress()  # started at 100.0
    progress.answered()  # headers at 100.005
    progress(3000)  # 100.005-100.035: 5, 10, 10 and 5 ms of it in intervals 0-3
    progress(1500)  # 100.035-100.050
    other = threading.Thread(target=progress, args=(700,))  # at 100.055
    other.start()
    other.join()
    assert progress.timeline.counts == [500, 1000, 1000, 1000, 1000, 700]
    assert progress.bytes == 5200 and progress.first_chunk_at == 100.035


def test_bytes_read_again_leave_the_count_but_stay_in_the_timeline(measure, monkeypatch):
    """A body that broke off is taken back (a negative count, as s3transfer and ranged do) and
    read again: the download's bytes count the object once, the timeline keeps what arrived,
    in the interval where it arrived, and the record still encodes. Taken back in a later
    interval than its bytes arrived, it once made that interval negative and the encoder loop
    forever."""
    clock = iter([100.0, 100.001, 100.051, 100.061])
    monkeypatch.setattr(measure, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    progress = measure.Progress()  # started at 100.0
    progress(3000)  # at 100.001
    progress(-3000)  # at 100.051: the body broke off
    progress(4000)  # at 100.061: the part again, whole
    assert progress.bytes == 4000
    assert progress.timeline.counts == [3000, 0, 0, 0, 0, 0, 4000]
    fields = measure.timeline.record_fields(progress.timeline, seconds=0.07)
    assert measure.timeline.decode(fields["timeline"]) == [3000, 0, 0, 0, 0, 0, 4000]


def test_a_download_tells_its_progress_of_each_answer(measure, monkeypatch, s3, test_object, tmp_path):
    """measure.download hands botocore's response-received to its Progress (one per request:
    the HeadObject and each ranged GET), and only while it runs."""
    answers = []
    monkeypatch.setattr(measure.Progress, "answered", lambda self, **_: answers.append(threading.get_ident()))
    choice = measure.strategies.parse("ranged connections=2 chunk_size=4MiB")
    measure.download(s3, test_object.bucket, test_object.key, choice, str(tmp_path))
    assert len(answers) == 1 + choice.gets(test_object.size)
    s3.head_object(Bucket=test_object.bucket, Key=test_object.key)
    assert len(answers) == 1 + choice.gets(test_object.size)


def test_success_record_throughput_units(measure):
    size, seconds = random.randrange(1, 1 << 34), random.uniform(0.01, 100)
    strategy = measure.strategies.parse("stream")
    message = measure.Message(run_id="r", seq=1, experiment_tag="t", strategy=strategy, inject_failure=False)
    requests = {"request_ttfb_ms": [1.5], "requests": 1, "connections": 1}
    result = measure.Download(
        bytes=size, seconds=seconds, ttfb_seconds=seconds / 3, start_ms=1, end_ms=2, s3_request_id="x",
        requests=requests, timeline=measure.timeline.Recorder(0.0), cpu_seconds=seconds / 4,
    )
    record = measure.success_record(message, result, {"env_id": "e"})
    assert record["mbps"] == pytest.approx(size * 8 / 1_000_000 / seconds)
    assert record["mib_per_s"] == pytest.approx(size / (1024 * 1024) / seconds)
    assert record["mbps"] / record["mib_per_s"] == pytest.approx(8 * 1.048576)
    assert record["event"] == "download" and record["env_id"] == "e"
    assert (record["cpu_seconds"], record["cpu_share"]) == (pytest.approx(seconds / 4), pytest.approx(0.25))
    assert record.items() >= (strategy.fields() | requests).items()


@pytest.mark.parametrize("work", ["sleeping", "burning"])
def test_cpu_seconds_are_the_processs_not_the_clocks(measure, monkeypatch, s3, test_object, tmp_path, work):
    """A download that sleeps 0.3 s takes wall time and almost no CPU; one that burns 0.3 s of
    CPU has at least that much (record fields: cpu_seconds, cpu_share)."""

    def sleeping(*_):
        time.sleep(0.3)

    def burning(*_):
        started = time.process_time()
        while time.process_time() - started < 0.3:
            pass

    monkeypatch.setattr(measure.strategies.Choice, "download", {"sleeping": sleeping, "burning": burning}[work])
    choice = measure.strategies.parse("stream")
    result = measure.download(s3, test_object.bucket, test_object.key, choice, str(tmp_path))
    message = measure.Message(run_id="r", seq=1, experiment_tag="t", strategy=choice, inject_failure=False)
    record = measure.success_record(message, result, {})
    assert record["seconds"] >= 0.3 and record["cpu_share"] == pytest.approx(record["cpu_seconds"] / record["seconds"])
    if work == "sleeping":
        assert record["cpu_seconds"] < 0.1
    else:
        assert record["cpu_seconds"] >= 0.3


def test_settings_from_env_rejects_unknown_strategy(measure):
    env = {"FANOUT_BUCKET": "b", "FANOUT_KEY": "k", "FANOUT_EXPECTED_SIZE": "10"}  # the limit is invocation's
    assert str(measure.Settings.from_env(env).default_strategy) == str(measure.strategies.parse("download_file"))
    with pytest.raises(ValueError, match="DOWNLOAD_DEFAULT_STRATEGY='tcp'"):
        measure.Settings.from_env({**env, "DOWNLOAD_DEFAULT_STRATEGY": "tcp"})
    with pytest.raises(ValueError, match="connections='99'"):
        measure.Settings.from_env({**env, "DOWNLOAD_DEFAULT_STRATEGY": "ranged connections=99"})
