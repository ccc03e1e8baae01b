"""Network models: profiles, files, scale, memory tables, labels and the one-line errors."""

import json
import os
import uuid
from types import SimpleNamespace

import pytest

from fanout import cli
from fanout.workloads.download import strategies
from fanout.common import paths
from fanout.local import hostlock, network
from fanout.local.network import capacity, model, options


def test_every_profile_is_a_valid_model():
    for name, parameters in model.PROFILES.items():
        assert model.parameters(parameters, name) == parameters


def test_scale_divides_every_rate_and_the_burst_but_not_the_latency():
    one, ten = network.load("lambda-2024").at(1024), network.load("lambda-2024", 10).at(1024)
    for name in ("burst_bytes", "peak_rate", "sustained_rate", "connection_rate"):
        assert getattr(ten, name) == pytest.approx(getattr(one, name) / 10), name
    assert (ten.first_byte_s, ten.first_byte_p90_s) == (one.first_byte_s, one.first_byte_p90_s)
    assert one.sustained_rate == model.PROFILES["lambda-2024"]["sustained_mb_per_s"] * 1e6


def test_memory_tables_interpolate_linearly_and_hold_beyond_their_ends():
    table = {"128": 10, "1024": 20, "2048": 40}
    m = model.NetworkModel("t", 1.0, model.parameters({"sustained_mb_per_s": table}, "t"))
    assert m.at(128).sustained_rate == 10e6
    assert m.at(576).sustained_rate == pytest.approx(15e6)
    assert m.at(1536).sustained_rate == pytest.approx(30e6)
    assert m.at(10240).sustained_rate == 40e6
    lambda_2026 = network.load("lambda-2026")
    assert lambda_2026.at(1024).sustained_rate == 75e6
    assert lambda_2026.at(10240).sustained_rate == pytest.approx(3000e6 / 8)


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_model_files(tmp_path, suffix):
    values = {"burst": "32MiB", "peak_mb_per_s": 64, "sustained_mb_per_s": 8, "connection_mb_per_s": 12,
              "first_byte_ms": 20, "aggregate_mb_per_s": {"128": 100, "2048": 200}}
    path = tmp_path / f"what-if{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(values))
    else:
        path.write_text('burst = "32MiB"\npeak_mb_per_s = 64\nsustained_mb_per_s = 8\nconnection_mb_per_s = 12\n'
                        'first_byte_ms = 20\naggregate_mb_per_s = { 128 = 100, 2048 = 200 }\n')
    loaded = network.load(str(path), 2)
    shape = loaded.at(128)
    assert (loaded.profile, loaded.scale) == ("what-if", 2.0)
    assert shape.burst_bytes == 32 * 2**20 / 2 and shape.connection_rate == 6e6 and shape.aggregate_rate == 50e6
    assert (shape.first_byte_s, shape.first_byte_p90_s) == (0.02, None)
    assert options.from_record(json.loads(json.dumps(loaded.describe()))) == loaded  # run.json round trip


BAD_VALUES = [
    ({"sustained_mb_per_s": "fast"}, "'sustained_mb_per_s' = 'fast'"),
    ({"peak_mb_per_s": -1}, "'peak_mb_per_s' = -1"),
    ({"connection_mb_per_s": True}, "'connection_mb_per_s' = True"),
    ({"burst": "lots", "sustained_mb_per_s": 1}, "'burst' = 'lots'"),
    ({"burst": "1MiB"}, "'burst' needs 'sustained_mb_per_s'"),
    ({"peak_mb_per_s": 5, "sustained_mb_per_s": 8}, "'peak_mb_per_s' = 5 at 128 MB is below 'sustained_mb_per_s'"),
    ({"first_byte_p90_ms": 20}, "'first_byte_p90_ms' needs 'first_byte_ms'"),
    ({"first_byte_ms": 30, "first_byte_p90_ms": 20}, "'first_byte_p90_ms' = 20"),
    ({"sustained_mb_per_s": {"64": 1}}, "'sustained_mb_per_s' has memory '64'"),
    ({"sustained_mb_per_s": {}}, "'sustained_mb_per_s' has an empty memory table"),
    ({"rate": 1}, "unknown parameter 'rate'"),
]


@pytest.mark.parametrize(("values", "message"), BAD_VALUES)
def test_bad_values_name_the_parameter(tmp_path, values, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(values))
    with pytest.raises(model.ModelError, match="^network model .*bad.json") as error:
        network.load(str(path))
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(("spec", "text", "message"), [
    ("fast-network", None, "invalid network 'fast-network': expected one of none, lambda-2024, lambda-2026"),
    ("missing.toml", None, "cannot read network model file"),
    ("broken.toml", "burst = ", "is not valid TOML"),
    ("broken.json", "{", "is not valid JSON"),
    ("list.json", "[1]", "must hold a table of parameters"),
])
def test_bad_model_files_are_one_line_usage_errors(tmp_path, monkeypatch, capsys, spec, text, message):
    monkeypatch.chdir(tmp_path)
    if text is not None:
        (tmp_path / spec).write_text(text)
    with pytest.raises(model.ModelError, match=message):
        network.load(spec)
    assert cli.main(["host", "--function", "f", "--endpoint", "http://127.0.0.1:9", "--network", spec,
                     "--network-scale", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert message.split(":")[0] in err and "\n" not in err


@pytest.mark.parametrize("scale", ["0", "-3", "x", "1e9"])
def test_bad_scale_names_the_value(scale):
    with pytest.raises(model.ModelError, match=f"invalid network scale '{scale}'"):
        options.resolve("lambda-2024", scale)


@pytest.mark.parametrize("command", [["wait"], ["host"], ["demo"], ["sweep"]])
def test_a_stacks_function_is_hosted_under_the_demos_model_unless_told(command):
    """`make wait`, `make run` and `make sweep` measure as the demo does; `fanout host
    --function`, with no stack to size a scale from, keeps loopback."""
    args = cli.build_parser().parse_args([*command, "--network-scale", "3"])
    stack = object()  # a number for the scale: the stack is not measured
    chosen = options.resolve(args.network, args.network_scale, stack)
    assert chosen.describe()["profile"] == "lambda-2024" == options.DEFAULT
    assert not options.resolve(args.network, args.network_scale, None).shaped
    told = cli.build_parser().parse_args([*command, "--network", "none"])
    assert not options.resolve(told.network, told.network_scale, stack).shaped


def test_auto_scale_needs_a_stack_to_measure():
    with pytest.raises(model.ModelError, match="auto needs a deployed stack"):
        options.resolve("lambda-2024", "auto")
    assert not options.resolve("none", "auto").shaped  # nothing to scale


# A model worked by hand below: one stream draws min(peak 40, connection 15) = 15 MB/s while its
# 100 MB bucket lasts (it drains at 15 - 10 = 5 MB/s: 20 s, 300 MB), no first-byte latency.
HAND = {"burst": 100e6, "peak_mb_per_s": 40, "sustained_mb_per_s": 10, "connection_mb_per_s": 15}


def hand_draw(**values):
    m = network.NetworkModel("hand", 1.0, model.parameters(HAND | values, "hand"))
    stream = strategies.strategy_demand(strategies.parse("stream"), 30_000_000)
    return m, capacity.Draw(environments=4, memory=1024, demand=stream)


def test_the_run_draws_the_peak_its_connections_carry_and_asks_its_requests():
    m, draw = hand_draw()
    assert draw.demand.requests == 0 + 1 + capacity.HOST_REQUESTS  # stream: no HEAD, one GET
    assert capacity.byte_rate(m, draw) == pytest.approx(4 * 15)  # not the sustained 4 x 10, nor the peak 4 x 40
    # 30 MB within the burst: 2 s at 15 MB/s; four environments each ask 4 requests a message.
    assert capacity.request_rate(m, draw) == pytest.approx(4 * 4 / 2)
    # Scale 3: 5 MB/s a stream, the bucket 33.3 MB still holds the 30 MB (it lasts 20 s, 100 MB): 6 s.
    assert capacity.byte_rate(m.with_scale(3), draw) == pytest.approx(4 * 5)
    assert capacity.request_rate(m.with_scale(3), draw) == pytest.approx(4 * 4 / 6)
    capped, _ = hand_draw(aggregate_mb_per_s=20)
    assert capacity.byte_rate(capped, draw) == pytest.approx(20)  # the aggregate cap binds


def test_the_automatic_scale_fits_bytes_and_requests_together_within_half():
    m, draw = hand_draw()
    # At scale s: bytes 60 / s of 100 MB/s, requests 8 / s of 10 requests/s: 1.4 / s <= 0.5 from s = 2.8.
    measured = capacity.Capacity(mb_per_s=100, requests_per_s=10)
    assert capacity.load(m, draw, measured) == pytest.approx(0.6 + 0.8)
    assert capacity.scale_for(m, draw, measured) == 2.8
    # Bytes alone (a machine that answers requests without limit): 0.6 / s <= 0.5 from s = 1.2.
    assert capacity.scale_for(m, draw, capacity.Capacity(100, float("inf"))) == 1.2
    assert capacity.scale_for(m, draw, capacity.Capacity(1000, 1000)) == 1.0  # fits as it is
    unlimited = network.NetworkModel("u", 1.0, {})
    assert capacity.scale_for(unlimited, draw, measured) == 1.0  # nothing to scale


def test_the_automatic_scale_leaves_room_for_the_load_it_finds():
    """Other work keeping 60% of the CPUs busy leaves the run 40% of the half: 1.4 / s <= 0.2
    from s = 7; a machine found fully busy still keeps MIN_FREE of it, 0.125 (past scale 3.3
    the bucket no longer holds the 30 MB, and the load falls faster than 1.4 / s)."""
    m, draw = hand_draw()
    assert capacity.scale_for(m, draw, capacity.Capacity(100, 10, busy=0.6)) == 7.0
    full = capacity.Capacity(100, 10, busy=1.0)
    picked = capacity.scale_for(m, draw, full)
    assert capacity.load(m.with_scale(picked), draw, full) <= 0.125 < capacity.load(m.with_scale(picked - 1), draw, full)
    text = options.auto_text(m, draw, capacity.Capacity(100, 10, busy=0.6), 7.0)
    assert text.endswith("takes 20% of that, within 20% (other work kept 60% of the CPUs busy))")


def test_the_automatic_scale_rises_until_the_environments_cpu_shares_fit_the_cpus():
    """Four environments of 1024 MB may use 4 x 1024 / 1769 = 2.32 vCPU. A machine that carries
    their network as it is (scale 1) but has 2 CPUs gives them half, 1: scale 2.4; with 60% of
    them busy elsewhere, 0.4: scale 5.8. Every scale divides every share."""
    m, draw = hand_draw()
    assert capacity.cpu_need(draw) == pytest.approx(4 * 1024 / 1769)
    roomy = capacity.Capacity(1000, 1000)
    assert capacity.scale_for(m, draw, roomy) == 1.0
    assert capacity.scale_for(m, draw, capacity.Capacity(1000, 1000, cpus=2)) == 2.4
    assert capacity.scale_for(m, draw, capacity.Capacity(1000, 1000, busy=0.6, cpus=2)) == 5.8
    # The network's need still wins when it is the larger: 2.8 (above) against 2.4.
    assert capacity.scale_for(m, draw, capacity.Capacity(100, 10, cpus=2)) == 2.8
    text = options.auto_text(m, draw, capacity.Capacity(1000, 1000, cpus=2), 2.4)
    assert text.endswith("their CPU shares, 2.3 vCPU at scale 1, take 0.96 of this machine's 2 CPUs, within 50%)")


@pytest.mark.parametrize("files, cpus", [
    ({"cpu.max": "50000 100000\n"}, 0.5),  # cgroup v2: half a CPU
    ({"cpu.max": "max 100000\n"}, None),  # no quota: the affinity's
    ({"cpu/cpu.cfs_quota_us": "150000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1.5),  # cgroup v1
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({}, None),  # no cgroup file system
])
def test_the_cpus_available_are_the_affinitys_within_the_cgroups_quota(tmp_path, files, cpus):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    allowed = len(os.sched_getaffinity(0))
    assert capacity.available_cpus(tmp_path) == (allowed if cpus is None else min(allowed, cpus))


def test_a_scale_past_what_the_kernel_can_cap_is_said_in_one_line():
    """128 MB is 0.072 vCPU; on 0.005 of a CPU four environments need scale 120, where each has
    0.0006 vCPU, under the 1 ms per second CFS can enforce: the host will not cap it, and says so."""
    m, draw = hand_draw()
    stack = SimpleNamespace(concurrency=4, memory=128)
    said = []
    picked = options.auto_scaled(m, stack, [draw.demand], capacity.Capacity(1000, 1000, cpus=0.005), said.append)
    assert picked.scale == 120
    assert said[1] == ("CPU share not capped: 0.00060 vCPU (128 MB at scale 120) is below the kernel's least quota "
                       "(1 ms per 1 s period)")
    said.clear()
    options.auto_scaled(m, stack, [draw.demand], capacity.Capacity(1000, 1000, cpus=2), said.append)
    assert len(said) == 1  # 0.072 vCPU at scale 1: capped, nothing to say


def test_the_limits_a_running_host_publishes_are_read_while_it_holds_the_stack(tmp_path, monkeypatch):
    """`fanout host` publishes how it holds its environments to Lambda's limits beside its model,
    for `wait --no-host` to record; both go with the host (a stopped host's say nothing)."""
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path))
    held = {"CPU share": "0.579 vCPU, enforced by cgroup", "memory (1024 MB)": "enforced by cgroup"}
    with hostlock.held("local", "s"), options.published("local", "s", options.load(options.DEFAULT)):
        assert options.read_published("local", "s", options.LIMITS_FILE) is None  # no environment yet
        options.publish_limits("local", "s", held)
        assert options.read_published("local", "s", options.LIMITS_FILE) == held
    assert options.read_published("local", "s", options.LIMITS_FILE) is None
    assert not (paths.stack_dir("local", "s") / options.LIMITS_FILE).exists()


@pytest.mark.parametrize("value, rounded", [(2.61, 2.7), (148, 150), (3, 3), (0.0123, 0.013)])
def test_scales_round_up_to_two_significant_digits(value, rounded):
    assert capacity.round_up(value) == rounded


def test_labels():
    assert network.label(False, None) == "measured on AWS"
    assert network.label(True, None) == "simulated network: none (loopback, not modelled)"
    assert network.label(True, network.load("none").describe()) == "simulated network: none (loopback, not modelled)"
    assert network.label(True, network.load("lambda-2024", 12.5).describe()) == (
        "simulated network: lambda-2024, scale 12.5 (rates / 12.5, first byte not scaled)")
    assert network.label(True, network.load("lambda-2024", 1).describe()) == "simulated network: lambda-2024, scale 1"


def test_the_byte_probe_of_a_tiny_object_reads_an_object_of_its_own_and_leaves_nothing(emulator):
    """A 1 KiB test object read for two seconds measures requests, not bytes (a transfer stack's
    once gave scale 1000): the byte probe reads an 8 MiB object it puts and deletes after."""
    from fanout.common import aws

    s3 = aws.client("s3", "us-east-1", emulator)
    bucket = f"probe-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="objects/1024-bytes.bin", Body=b"x" * 1024)
    read = []
    s3.meta.events.register("before-parameter-build.s3.GetObject", lambda params, **_: read.append(
        (params["Key"], "Range" in params)))
    measured = capacity.measure(s3, bucket, "objects/1024-bytes.bin", 1024, seconds=0.2)
    whole = {key for key, ranged in read if not ranged}
    assert whole == {capacity.PROBE_KEY} and {key for key, ranged in read if ranged} == {"objects/1024-bytes.bin"}
    assert measured.mb_per_s > 0 and measured.requests_per_s > 0
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["objects/1024-bytes.bin"]
    read.clear()
    capacity.measure(s3, bucket, "objects/1024-bytes.bin", capacity.PROBE_MIN_BYTES, seconds=0.1)
    assert {key for key, _ in read} == {"objects/1024-bytes.bin"}  # large enough: read as it is
    assert measured.upload_mb_per_s is None  # not asked: the run uploads nothing


def test_the_upload_probe_puts_objects_of_its_own_and_leaves_nothing(emulator):
    from fanout.common import aws

    s3 = aws.client("s3", "us-east-1", emulator)
    bucket = f"probe-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="objects/8MiB.bin", Body=b"x" * capacity.PROBE_MIN_BYTES)
    put = []
    s3.meta.events.register("before-parameter-build.s3.PutObject", lambda params, **_: put.append(params["Key"]))
    measured = capacity.measure(s3, bucket, "objects/8MiB.bin", capacity.PROBE_MIN_BYTES, seconds=0.2, uploads=True)
    assert measured.upload_mb_per_s > 0 and put and all(key.startswith(capacity.PROBE_PREFIX) for key in put)
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["objects/8MiB.bin"]
