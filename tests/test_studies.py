"""Studies (issue 25): every shipped study file, and its local variant, passes validation with
the sweep's own rules; a bad file is refused in one line naming the value; the comparison puts
the published figures beside ours with their ratio; each kind of claim reaches the verdict its
confidence interval decides. The end-to-end run of a local variant is in tests/e2e/test_study.py."""

import numpy as np
import pytest

from fanout import cli
from fanout.common.errors import UsageError
from fanout.results import markdown, sections, study_tables as compared
from fanout.stages import study, sweep

SHIPPED = ("lambda-fanout", "latency-vs-size", "endpoint-addresses", "seqread-cross-region", "cli-upload-threads",
           "cli-small-files", "cli-copy", "cli-sync", "cli-parallel-uploads")


@pytest.mark.parametrize("name", study.names())
def test_every_study_and_its_local_variant_pass_the_sweeps_validation(name):
    loaded = study.load(name)
    for backend, local in (("aws", False), ("local", True)):
        checked = sweep.from_args(study.sweep_args(loaded.sweep_argv(backend, "s3fanout", local)))
        assert checked.backend == backend and checked.tag == loaded.tag(local)
        assert checked.axes.workload == loaded.workload
    full, rehearsal = (study.estimate_row(loaded, backend) for backend in ("aws", "local"))
    assert rehearsal[3] <= full[3]  # the local variant sends no more messages than the study
    assert rehearsal[4] == "0.00"


def test_the_studies_the_issue_asks_for_are_shipped():
    assert set(SHIPPED) <= set(study.names())
    fanout = study.load("lambda-fanout")
    assert fanout.sweep["concurrency"] == [1, 5, 10, 50, 100, 500] and fanout.sweep["memory"] == [1024, 2048]
    assert (fanout.sweep["object_size"], fanout.sweep["multiplier"], fanout.sweep["strategy"]) == ("1GiB", 10, "download_file")
    assert fanout.reference.statistics == ("min", "p25", "avg", "p75", "max")
    latency = study.load("latency-vs-size")
    assert latency.sweep["sizes"].split() == ["1", "10", "100", "1KB", "10KB", "100KB", "1MB", "10MB", "100MB"]
    assert sorted(claim.value for claim in latency.claims if claim.kind == "max_reduction") == [0.68, 0.777]
    [spread] = study.load("endpoint-addresses").claims
    assert (spread.low, spread.high) == (1.5, 4.5)
    seqread = study.load("seqread-cross-region")
    assert (seqread.sweep["jobs"], seqread.sweep["from"], seqread.sweep["remote_region"]) == ([1, 8, 16], ["local", "remote"], "ap-northeast-1")
    published = {(f["jobs"], f["file_size"]): f["p50"] for f in seqread.reference.figures}
    assert published[16, 2**30] == 466 and published[1, 500 * 2**20] == 40.4 and len(published) == 9
    assert [f["p50"] for f in study.load("cli-upload-threads").reference.figures] == [95, 45, 18, 20]
    assert [f["p50"] for f in study.load("cli-small-files").reference.figures] == [259, 27, 21, 22]
    sync = study.load("cli-sync")
    assert (sync.sweep["files"], sync.sweep["size"], sync.sweep["threads"]) == (2000, "1MB", [1, 10])
    assert [(f["threads"], f["p50"]) for f in sync.reference.figures] == [(1, 212), (10, 23)]
    parallel = study.load("cli-parallel-uploads")
    assert (parallel.sweep["concurrency"], parallel.sweep["multiplier"], parallel.sweep["size"]) == (5, 1, "1GB")
    assert [f["p50"] for f in parallel.reference.figures] == [11] and not parallel.claims
    assert {f["method"]: f["p50"] for f in study.load("cli-copy").reference.figures} == {
        "through-function": 38, "copy-object": 120, "part-copy": 16}


def test_every_flag_that_defines_a_sweep_is_a_study_key_named_as_the_flag():
    keys = study.keys()
    assert (keys["from"], keys["file_size"], keys["threads"], keys["remote_region"]) == (
        "--from", "--file-size", "--threads", "--remote-region")
    assert not {"tag", "backend", "stack", "resume", "yes", "keep_warm", "network", "source"} & set(keys)
    assert set(study.keys(local=True)) - set(keys) == {"network", "network_scale"}
    argv = study.load("seqread-cross-region").sweep_argv("aws", "s3fanout", local=False)
    assert argv[argv.index("--from") + 1] == "local remote" and argv[argv.index("--jobs") + 1] == "1 8 16"


def test_a_local_model_file_is_named_from_the_repository_whatever_the_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = study.load("endpoint-addresses").sweep_argv("local", "s3fanout", local=True)
    model = argv[argv.index("--network") + 1]
    assert model.startswith(str(study.paths.REPO)) and sweep.from_args(study.sweep_args(argv)).network == model


GOOD = """
title = "t"
description = "d"
workload = "download"
[source]
title = "s"
url = ""
date = "2025"
platform = "p"
[sweep]
concurrency = [1, 2]
memory = 1024
object_size = "1MiB"
[local]
concurrency = 1
[reference]
table = "seconds"
measure = "seconds"
rows = ["memory_size"]
statistics = ["min", "max"]
figures = [{ memory_size = 1024, min = 1.0, max = 2.0 }]
"""


@pytest.mark.parametrize("change, named", [
    (("[sweep]", "[sweep]\ncolour = 1"), "'colour'"),
    (("concurrency = [1, 2]", "concurrency = [1, 0]"), "concurrency '0'"),
    (("concurrency = 1\n", "concurrency = 1\nmemory = 99999\n"), "[local]"),
    (('measure = "seconds"', 'measure = "speed"'), "'speed'"),
    (('"min", "max"]', '"min", "p42"]'), "'p42'"),
    ((", max = 2.0 }", " }"), "'max'"),
    (("max = 2.0 }", 'max = "fast" }'), "'fast'"),
    (('workload = "download"', 'workload = "upload"'), "'upload'"),
    (('platform = "p"', 'platform = ""'), "platform"),
    (("[reference]", '[[claims]]\ntext = "x"\nkind = "faster"\nmeasure = "seconds"\nfield = "storage"\nfaster = "a"\n[reference]'),
     "'slower'"),
    (("[reference]", '[[claims]]\ntext = "x"\nkind = "better"\nmeasure = "seconds"\nfield = "f"\n[reference]'), "'better'"),
])  # fmt: skip
def test_a_bad_study_file_is_one_line_naming_the_file_and_the_value(tmp_path, change, named):
    path = tmp_path / "bad.toml"
    text = GOOD.replace(*change)
    assert text != GOOD
    path.write_text(text)
    with pytest.raises(UsageError) as refused:
        study.load_file(path)
    message = str(refused.value)
    assert message.startswith("study bad") and named in message and "\n" not in message


def test_the_good_file_loads(tmp_path):
    (tmp_path / "good.toml").write_text(GOOD)
    assert study.load_file(tmp_path / "good.toml").reference.figures == ({"memory_size": 1024, "min": 1.0, "max": 2.0},)


def test_an_unknown_study_is_refused_listing_the_studies(capsys):
    assert cli.main(["study", "no-such-study"]) == 2
    err = capsys.readouterr().err.strip()
    assert "'no-such-study'" in err and "lambda-fanout" in err and "\n" not in err


def test_the_list_names_every_study_on_both_backends(capsys):
    assert cli.main(["study"]) == 0
    out = capsys.readouterr().out
    for name in study.names():
        assert out.count(name) >= 3  # an AWS row, a local row and its title line


# ---- the comparison and the claims ----------------------------------------------------------------

REFERENCE = compared.Reference("t", "seconds", ("memory_size", "concurrency_limit"), ("min", "avg", "max"),
                               ({"memory_size": 1024, "concurrency_limit": 1, "min": 2.0, "avg": 4.0, "max": 8.0},
                                {"memory_size": 2048, "concurrency_limit": 500, "min": 1.0, "avg": 1.0, "max": 1.0}))  # fmt: skip


def download(memory: int, concurrency: int, seconds: float, **more) -> dict:
    return {"event": "download", "memory_size": memory, "concurrency_limit": concurrency, "seconds": seconds,
            "bytes": 10**6, **more}  # fmt: skip


def test_our_cells_stand_beside_the_published_ones_with_their_ratio():
    records = [download(1024, 1, s) for s in (1.0, 3.0, 5.0)] + [download(1024, 2, 7.0)]
    table = compared.comparison(REFERENCE, records)
    header, *rows = table.rows
    assert header[:2] == ["memory_size", "concurrency_limit"]
    assert header[2:5] == ["ours min", "published min", "ratio min"]
    by_row = {tuple(row[:2]): dict(zip(header, row)) for row in rows}
    assert list(by_row) == [(1024, 1), (1024, 2), (2048, 500)]  # ours first, then the source's other rows
    assert (by_row[1024, 1]["ours min"], by_row[1024, 1]["published min"], by_row[1024, 1]["ratio min"]) == (1.0, 2.0, 0.5)
    assert (by_row[1024, 1]["ours avg"], by_row[1024, 1]["ratio avg"]) == (3.0, 0.75)
    assert by_row[1024, 1]["ratio max"] == 5.0 / 8.0
    assert by_row[1024, 2]["published min"] is None and by_row[1024, 2]["ratio min"] is None
    assert by_row[2048, 500]["ours min"] is None and by_row[2048, 500]["published min"] == 1.0


def test_a_rate_in_mib_per_s_is_read_from_the_records_of_the_published_path_only():
    reference = compared.Reference("t", "mib_per_s", ("jobs",), ("p50",), ({"jobs": 8, "p50": 400.0},),
                                   where={"source": "remote"})  # fmt: skip
    records = [{"event": "seqread", "jobs": 8, "source": "remote", "mib_per_s": v} for v in (100.0, 200.0, 300.0)]
    records.append({"event": "seqread", "jobs": 8, "source": "local", "mib_per_s": 900.0})
    table = compared.comparison(reference, records)
    assert table.rows[1] == [8, 200.0, 400.0, 0.5]
    assert "MiB/s (binary" in table.caption


def latency(storage: str, size: int, seconds: float, operation: str = "get") -> dict:
    return {"event": "latency", "storage": storage, "operation": operation, "size": size,
            "first_byte_seconds": seconds, "seconds": seconds}  # fmt: skip


def spread_around(centre: float, n: int = 30) -> list[float]:
    return list(centre * (1 + 0.02 * np.linspace(-1, 1, n)))


def claim(**fields) -> compared.Claim:
    return compared.Claim(text="c", measure="first_byte_seconds", field="storage", **fields)


def verdict(one: compared.Claim, records: list[dict]) -> str:
    header, row = compared.judge([one], records).rows
    return row[1]


def test_a_faster_claim_is_decided_by_the_interval_of_the_ratio_of_medians():
    records = [latency("standard", 100, s) for s in spread_around(0.020)]
    records += [latency("express", 100, s) for s in spread_around(0.030)]
    assert verdict(claim(kind="faster", faster="standard", slower="express"), records) == compared.SUPPORTED
    assert verdict(claim(kind="faster", faster="express", slower="standard"), records) == compared.CONTRADICTED
    same = [latency("standard", 100, s) for s in spread_around(0.020)] + \
        [latency("express", 100, s) for s in spread_around(0.020)[::-1]]  # fmt: skip
    assert verdict(claim(kind="faster", faster="standard", slower="express"), same) == compared.UNDECIDED
    only_standard = [r for r in records if r["storage"] == "standard"]
    assert verdict(claim(kind="faster", faster="standard", slower="express"), only_standard) == compared.UNTESTABLE


def test_a_faster_claim_per_size_must_hold_at_every_size_from_its_first():
    records = [latency("standard", size, s) for size in (100, 1000, 10**6) for s in spread_around(0.030)]
    records += [latency("express", 100, s) for s in spread_around(0.040)]  # slower below 1 KB: outside the claim
    records += [latency("express", size, s) for size in (1000, 10**6) for s in spread_around(0.010)]
    faster = claim(kind="faster", faster="express", slower="standard", per="size", at_least=1000)
    assert verdict(faster, records) == compared.SUPPORTED
    records += [latency("express", 10**7, s) for s in spread_around(0.050)]
    records += [latency("standard", 10**7, s) for s in spread_around(0.030)]
    assert verdict(faster, records) == compared.CONTRADICTED


def test_an_up_to_claim_takes_the_largest_reduction_and_its_interval():
    records = [latency("standard", size, s) for size in (1000, 10**6) for s in spread_around(0.100)]
    records += [latency("express", 1000, s) for s in spread_around(0.032)]  # 68% less
    records += [latency("express", 10**6, s) for s in spread_around(0.080)]  # 20% less
    up_to = claim(kind="max_reduction", baseline="standard", other="express", value=0.68, per="size")
    assert verdict(up_to, records) == compared.SUPPORTED
    assert verdict(claim(kind="max_reduction", baseline="standard", other="express", value=0.9, per="size"),
                   records) == compared.CONTRADICTED  # fmt: skip
    header, row = compared.judge([up_to], records).rows
    assert "size 1000" in row[2] and "68.0%" in row[2]


def test_a_spread_claim_compares_the_fastest_group_with_the_slowest():
    def at(ip: str, mb_per_s: float) -> list[dict]:
        return [download(1024, 3, 1 / v, endpoint_ip=ip) for v in spread_around(mb_per_s)]

    spread = compared.Claim(text="c", kind="spread", measure="mb_per_s", field="endpoint_ip", low=1.5, high=4.5)
    three = at("10.0.0.1", 90) + at("10.0.0.2", 85) + at("10.0.0.3", 30)
    assert verdict(spread, three) == compared.SUPPORTED
    header, row = compared.judge([spread], three).rows
    assert row[2].startswith("10.0.0.1 over 10.0.0.3 (3 values of endpoint_ip): 3.00x")
    assert verdict(spread, at("10.0.0.1", 90) + at("10.0.0.2", 88)) == compared.CONTRADICTED
    assert verdict(spread, at("10.0.0.1", 90)) == compared.UNTESTABLE


def test_the_tables_are_sections_drawn_with_their_title_and_caption():
    claims = [claim(kind="faster", faster="standard", slower="express")]
    parts = [compared.comparison(REFERENCE, [download(1024, 1, 2.0)]), compared.judge(claims, [])]
    text = markdown.document(sections.Report("A study", "simulated network: lambda-2024, scale 4", parts))
    assert text.startswith("# A study\n\n**simulated network: lambda-2024, scale 4**\n") and "\n## t\n" in text
    assert f"\n{parts[0].caption}\n" in text and f"\n{parts[1].caption}\n" in text
    assert "| 1024 | 1 | 2.00 | 2.00 | 1.00 |" in text and "| c | not testable |" in text
    assert [part.labels for part in parts] == [2, 1]  # memory_size and concurrency_limit; the claim
