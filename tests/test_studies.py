"""Studies (issue 25): every shipped study file, and its local variant, passes validation with
the sweep's own rules; a bad file is refused in one line naming the value; the comparison puts
the published figures beside ours with their ratio; each kind of claim reaches the verdict its
confidence interval decides. The end-to-end run of a local variant is in tests/e2e/test_study.py."""

import dataclasses

import numpy as np
import pytest

from fanout import cli
from fanout.common.errors import UsageError
from fanout.results import markdown, sections, study_tables as compared
from fanout.stages import study, sweep
from fanout.workloads.download import strategies

MIB, GIB = 2**20, 2**30

SHIPPED = ("lambda-fanout", "latency-vs-size", "endpoint-addresses", "seqread-cross-region", "cli-upload-threads",
           "cli-small-files", "cli-copy", "cli-sync", "cli-parallel-uploads")


@pytest.mark.parametrize("name", study.names())
def test_every_study_and_its_local_variant_pass_the_sweeps_validation(name):
    loaded = study.load(name)
    for backend, local in (("aws", False), ("local", True)):
        checked = loaded.checked(backend, "s3fanout", local)
        assert checked.backend == backend and checked.tag == loaded.tag(local)
        assert checked.axes.workload == loaded.workload
    full, rehearsal = (study.estimate_row(loaded, backend) for backend in ("aws", "local"))
    assert rehearsal[3] <= full[3]  # the local variant sends no more messages than the study
    assert rehearsal[4] == "0.00"


def test_a_study_list_reaches_the_sweep_with_its_workloads_separator():
    """A TOML list becomes one flag value: strategies (which hold spaces) joined by the download
    workload's ';', every other list by spaces; the sweep reads each back as the list it was."""
    lists = {"memory": [512, 1024], "strategy": ["stream", "ranged connections=4"]}
    checked = dataclasses.replace(study.load("lambda-fanout"), sweep=lists).checked("local", "s3fanout", local=False)
    assert checked.axes.memory == (512, 1024)
    assert [combo["strategy"] for combo in checked.axes.options] == [str(strategies.parse("stream")),
                                                                     str(strategies.parse("ranged connections=4"))]


# The sources' parameters as docs/studies.md's sources publish them, kept here apart from the
# study files: each study runs them ([sweep], what its AWS run deploys and sends), and says in
# `adapts` what it had to assume (`assumed`: words one of its adapts lines holds beside
# "assumption").
SOURCES = {
    "lambda-fanout": {
        "sweep": {"concurrency": [1, 5, 10, 50, 100, 500], "memory": [1024, 2048], "multiplier": 10,
                  "strategy": "download_file", "function_timeout": 60, "ephemeral_storage": 1200},
        "date": "2025-01-18", "assumed": ["1 GiB"]},
    "latency-vs-size": {
        "sweep": {"sizes": "1 10 100 1KB 10KB 100KB 1MB 10MB 100MB", "reps": 10, "storage": "standard express",
                  "region": "ap-northeast-1", "express_az": "apne1-az4", "rep_order": "by-class",
                  "call_client": "per-call"},
        "date": "2023-12-13", "assumed": ["memory"]},
    "endpoint-addresses": {
        "sweep": {"region": "ap-northeast-1", "object_size": "100KB", "strategy": "repeated requests=10000 in_flight=10",
                  "pin": "auto"},
        "date": "2011-12", "assumed": ["100 KB", "memory"]},
    "seqread-cross-region": {
        "sweep": {"region": "us-east-2", "remote_region": "ap-northeast-1", "jobs": [1, 8, 16], "block": "8MiB",
                  "read_mode": "prefetch", "file_size": ["500MiB", "1GiB"], "from": ["local", "remote"],
                  "cell": [{"jobs": 1, "file_size": "3GiB"}]},
        "date": "2023-08", "assumed": ["2048 MB"]},
    "cli-upload-threads": {
        "sweep": {"size": "5GB", "threads": [1, 2, 10, 20], "part_size": "16MiB", "threshold": "64MiB"},
        "date": "2022-02-21", "assumed": ["5GB.file", "memory"]},
    "cli-parallel-uploads": {
        "sweep": {"size": "1GB", "concurrency": 5, "multiplier": 1, "threads": 20, "part_size": "16MiB",
                  "threshold": "64MiB"},
        "date": "2022-02-21", "assumed": ["1GB", "memory"]},
    "cli-copy": {
        "sweep": {"size": "5GB", "threads": 10, "part_size": "16MiB", "threshold": "64MiB",
                  "method": ["copy-object", "part-copy"]},
        "date": "2022-02-21", "assumed": ["5GB.file", "memory"]},
    "cli-small-files": {
        "sweep": {"size": "1KB", "files": 500, "threads": [1, 10, 50, 100], "client_per_object": 1},
        "date": "2022-02-21", "assumed": ["1KB", "memory 4096 MB"]},
    "cli-sync": {
        "sweep": {"size": "1MB", "files": 2000, "threads": [1, 10]},
        "date": "2022-02-21", "assumed": ["1MB", "memory"]},
}  # fmt: skip
# Published figures, a few per table, and each table's row count.
FIGURES = {
    ("lambda-fanout", 0): (12, {(GIB, 1024, 1): {"avg": 12.67, "min": 12.04}, (GIB, 1024, 500): {"avg": 13.24, "max": 14.93},
                                (GIB, 2048, 500): {"p25": 12.45, "p75": 13.84}}),
    ("lambda-fanout", 1): (12, {(GIB, 1024, 1): {"min": 596.1, "avg": 646.7}, (GIB, 2048, 500): {"max": 744.9}}),
    ("seqread-cross-region", 0): (9, {(16, GIB): {"p50": 466}, (1, 500 * MIB): {"p50": 40.4}, (1, 3 * GIB): {"p50": 111}}),
    ("cli-upload-threads", 0): (4, {(5 * 10**9, 1): {"p50": 95}, (5 * 10**9, 20): {"p50": 20}}),
    ("cli-small-files", 0): (4, {(1000, 500, 1): {"p50": 259}, (1000, 500, 100): {"p50": 22}}),
    ("cli-sync", 0): (2, {(10**6, 2000, 1): {"p50": 212}, (10**6, 2000, 10): {"p50": 23}}),
    ("cli-parallel-uploads", 0): (1, {(10**9, 20): {"p50": 11}}),
    ("cli-copy", 0): (3, {(5 * 10**9, "through-function"): {"p50": 38}, (5 * 10**9, "part-copy"): {"p50": 16}}),
}  # fmt: skip


@pytest.mark.parametrize("name", SOURCES)
def test_each_study_runs_its_sources_parameters_and_labels_what_it_assumes(name):
    loaded, source = study.load(name), SOURCES[name]
    assert {key: loaded.sweep.get(key) for key in source["sweep"]} == source["sweep"]
    assert loaded.source["date"].startswith(source["date"]) and loaded.source["author"]
    for words in source["assumed"]:
        assert any(words in line and "assumption" in line for line in loaded.adapts), (name, words)
    assert loaded.reproduces and all("assum" not in line for line in loaded.reproduces)


def test_every_source_and_every_shipped_study_is_in_the_table():
    assert set(SOURCES) == set(SHIPPED) == set(study.names())


@pytest.mark.parametrize("name, index", FIGURES)
def test_the_published_figures_are_the_sources(name, index):
    reference = study.load(name).references[index]
    count, some = FIGURES[name, index]
    by_row = {tuple(f[row] for row in reference.rows): f for f in reference.figures}
    assert len(by_row) == len(reference.figures) == count
    for row, figures in some.items():
        assert {key: by_row[row][key] for key in figures} == figures


def test_the_fanout_mbps_table_is_the_sources_derivation_of_its_seconds():
    """1024 x 8 / seconds, the columns reversed: the two transcribed tables agree to 0.1%."""
    seconds, mbps, rates = study.load("lambda-fanout").references
    assert mbps.derivation == "mibit-per-s" and mbps.rows == seconds.rows == rates.rows
    assert (rates.measure, rates.figures) == ("mibit_per_s", ())  # ours only: each download's own rate
    rows = {tuple(f[r] for r in seconds.rows): f for f in seconds.figures}
    for figure in mbps.figures:
        mine = rows[tuple(figure[r] for r in mbps.rows)]
        for name, mirror in (("min", "max"), ("p25", "p75"), ("avg", "avg"), ("p75", "p25"), ("max", "min")):
            assert figure[name] == pytest.approx(1024 * 8 / mine[mirror], rel=1e-3)


def test_the_source_order_and_client_reach_the_latency_messages_on_both_backends():
    loaded = study.load("latency-vs-size")
    for backend, local in (("aws", False), ("local", True)):
        checked = loaded.checked(backend, "s3fanout", local)
        assert {(o["order"], o["client"]) for o in checked.axes.options} == {("by-class", "per-call")}
    assert all(claim.aws_only for claim in loaded.claims) and len(loaded.claims) == 6


def test_the_seqread_study_has_its_3_gib_row_and_its_rehearsal_the_explicit_cell_too():
    loaded = study.load("seqread-cross-region")
    for backend, local, size in (("aws", False, 3 * GIB), ("local", True, 48 * MIB)):
        cells = loaded.checked(backend, "s3fanout", local).axes.cells()
        big = [(c.options["source"], c.options["jobs"]) for c in cells if c.options["file_size"] == size]
        assert big == [("local", 1), ("remote", 1)]
    assert "26.8 GiB per bucket" in loaded.description  # 16 x 500 MiB + 16 x 1 GiB + 3 GiB
    assert 16 * 500 / 1024 + 16 + 3 == pytest.approx(26.8, abs=0.05)


def test_every_flag_that_defines_a_sweep_is_a_study_key_named_as_the_flag():
    keys = study.keys()
    assert (keys["from"], keys["file_size"], keys["threads"], keys["remote_region"]) == (
        "source", "file_size", "threads", "remote_region")
    assert not {"tag", "backend", "stack", "resume", "yes", "keep_warm", "network", "source"} & set(keys)
    assert set(study.keys(local=True)) - set(keys) == {"network", "network_scale"}
    given = study.load("seqread-cross-region").sweep_given("aws", "s3fanout", local=False).texts
    assert given["source"] == "local remote" and given["jobs"] == "1 8 16"


def test_a_local_model_file_is_named_from_the_repository_whatever_the_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    loaded = study.load("endpoint-addresses")
    model = loaded.sweep_given("local", "s3fanout", local=True).texts["network"]
    assert model.startswith(str(study.paths.REPO)) and loaded.checked("local", "s3fanout", True).network == model


GOOD = """
title = "t"
description = "d"
workload = "download"
reproduces = ["r"]
adapts = ["a"]
[source]
title = "s"
author = "w"
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
    (('adapts = ["a"]', "adapts = []"), "adapts"),
    (('author = "w"', 'author = ""'), "author"),
    (('statistics = ["min", "max"]', 'statistics = ["min", "max"]\nderivation = "per-fortnight"'), "'per-fortnight'"),
    (('rows = ["memory_size"]', 'rows = ["memory_size"]\nderivation = "mibit-per-s"'), "'object_size'"),
    (('statistics = ["min", "max"]\nfigures = [{ memory_size = 1024, min = 1.0, max = 2.0 }]',
      'statistics = ["n"]\nderivation = "mibit-per-s"'), "'n'"),
    (("[reference]", '[[claims]]\ntext = "x"\nkind = "ratio"\nmeasure = "seconds"\nfield = "f"\na = 1\nb = 2\n[reference]'),
     "about, or low and high"),
    (("[reference]", '[[claims]]\ntext = "x"\nkind = "best_over_all"\nmeasure = "seconds"\nfield = "f"\nabout = 2\n[reference]'),
     "'seconds' is not one of"),
    (("[reference]", '[[claims]]\ntext = "x"\nkind = "faster"\nmeasure = "seconds"\nfield = "f"\nfaster = 1\nslower = 2\n'
                     'statistic = "mode"\n[reference]'), "'mode'"),
    (("[local]", "[[sweep.cell]]\n[local]"), "cell"),
    (("[local]\n", '[local]\ncell = [{ colour = "red" }]\n'), "'colour=red'"),
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


@pytest.mark.parametrize("key, value, argv", [
    ("architecture", '["arm64", "sparc"]', ["--architecture", "arm64 sparc"]),
    ("multiplier", "0", ["--multiplier", "0"]),
    ("strategy", '"nope"', ["--strategy", "nope"]),
    ("jobs", "4", ["--jobs", "4"]),  # another workload's option
    ("cell", '[{ colour = "red" }]', ["--cell", "colour=red"]),
])  # fmt: skip
def test_a_study_key_is_refused_in_the_words_the_sweeps_command_line_is(tmp_path, key, value, argv):
    """A study's sweep is composed from its keys, not from a command line, and checked by the
    same checks: the same value given to `fanout sweep` is refused in the same words."""
    (tmp_path / "bad.toml").write_text(GOOD.replace("[local]", f"{key} = {value}\n[local]"))
    with pytest.raises(UsageError) as from_file:
        study.load_file(tmp_path / "bad.toml")
    base = ["sweep", "--backend", "aws", "--tag", "bad", "--memory", "1024", "--object-size", "1MiB"]
    with pytest.raises(UsageError) as from_command_line:
        sweep.check(cli.build_parser().parse_args([*base, "--concurrency", "1 2", *argv]))
    assert str(from_file.value) == f"study bad [sweep]: {from_command_line.value}"


def test_the_good_file_loads(tmp_path):
    (tmp_path / "good.toml").write_text(GOOD)
    loaded = study.load_file(tmp_path / "good.toml")
    assert [reference.figures for reference in loaded.references] == [({"memory_size": 1024, "min": 1.0, "max": 2.0},)]
    assert (loaded.reproduces, loaded.adapts, loaded.source["author"]) == (("r",), ("a",), "w")


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
    return row[2]


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
    assert "size 1000" in row[3] and "68.0%" in row[3]


def test_a_spread_claim_compares_the_fastest_group_with_the_slowest():
    def at(ip: str, mb_per_s: float) -> list[dict]:
        return [download(1024, 3, 1 / v, endpoint_ip=ip) for v in spread_around(mb_per_s)]

    spread = compared.Claim(text="c", kind="spread", measure="mb_per_s", field="endpoint_ip", low=1.5, high=4.5)
    three = at("10.0.0.1", 90) + at("10.0.0.2", 85) + at("10.0.0.3", 30)
    assert verdict(spread, three) == compared.SUPPORTED
    header, row = compared.judge([spread], three).rows
    assert row[3].startswith("10.0.0.1 over 10.0.0.3 (3 values of endpoint_ip, median): 3.00x")
    assert verdict(spread, at("10.0.0.1", 90) + at("10.0.0.2", 88)) == compared.CONTRADICTED
    assert verdict(spread, at("10.0.0.1", 90)) == compared.UNTESTABLE


def test_the_tables_are_sections_drawn_with_their_title_and_caption():
    claims = [claim(kind="faster", faster="standard", slower="express")]
    parts = [compared.comparison(REFERENCE, [download(1024, 1, 2.0)]), compared.judge(claims, [])]
    text = markdown.document(sections.Report("A study", "simulated network: lambda-2024, scale 4", parts))
    assert text.startswith("# A study\n\n**simulated network: lambda-2024, scale 4**\n") and "\n## t\n" in text
    assert f"\n{parts[0].caption}\n" in text and f"\n{parts[1].caption}\n" in text
    assert "| 1024 | 1 | 2.00 | 2 | 1.00 |" in text and "| c | - | not testable |" in text  # the published 2.0 as written
    assert [part.labels for part in parts] == [2, 1]  # memory_size and concurrency_limit; the claim


def test_a_derived_table_mirrors_our_statistics_as_the_source_derived_its_own():
    """The fan-out source's 'Mbps': the object's Mibit over seconds, min from max, avg from avg."""
    reference = compared.Reference("Mbps", "seconds", ("object_size", "memory_size"), ("min", "avg", "max"),
                                   ({"object_size": GIB, "memory_size": 1024, "min": 500.0, "avg": 600.0, "max": 800.0},),
                                   derivation="mibit-per-s")  # fmt: skip
    records = [download(1024, 1, s, object_size=size) for s in (10.0, 12.0, 17.0) for size in (GIB, 8 * MIB)]
    own = compared.Reference("rates", "mibit_per_s", ("object_size",), ("min", "avg"))
    rates = {row[0]: row for row in compared.comparison(own, [{**r, "mib_per_s": r["object_size"] / 2**20 / r["seconds"]}
                                                               for r in records]).rows[1:]}  # fmt: skip
    assert rates[GIB][1] == pytest.approx(8192 / 17.0) and rates[GIB][2] == pytest.approx(8192 * (1 / 10 + 1 / 12 + 1 / 17) / 3)
    header, *rows = compared.comparison(reference, records, "rehearsal").rows
    assert header[2:5] == ["rehearsal min", "published min", "ratio min"]
    by_size = {row[0]: dict(zip(header, row)) for row in rows}
    assert by_size[GIB]["rehearsal min"] == pytest.approx(8192 / 17.0)  # from the slowest download
    assert by_size[GIB]["rehearsal max"] == pytest.approx(8192 / 10.0)
    assert by_size[GIB]["rehearsal avg"] == pytest.approx(8192 / 13.0)  # over the mean seconds, not a mean rate
    assert by_size[GIB]["ratio avg"] == pytest.approx(8192 / 13.0 / 600.0)
    assert by_size[8 * MIB]["rehearsal max"] == pytest.approx(64 / 10.0)  # 8 MiB is 64 Mibit
    assert by_size[8 * MIB]["published max"] is None and by_size[8 * MIB]["ratio max"] is None  # rows differ
    assert "the source's derivation" in compared.comparison(reference, records).caption


def test_a_rehearsal_names_the_claims_only_aws_can_test_and_those_the_model_decides():
    records = [latency("standard", 100, s) for s in spread_around(0.020)]
    records += [latency("express", 100, s) for s in spread_around(0.030)]
    aws = claim(kind="faster", faster="standard", slower="express", aws_only="Express One Zone is AWS only")
    model = claim(kind="faster", faster="standard", slower="express", decided_by_model="the model sets both")
    plain = claim(kind="faster", faster="standard", slower="express")
    header, *rows = compared.judge([aws, model, plain], records, local=True).rows
    assert [row[2] for row in rows] == [compared.AWS_ONLY, compared.BY_THE_MODEL, compared.SUPPORTED]
    assert "Express One Zone is AWS only" in rows[0][3] and rows[1][3].startswith("the model sets both; the rehearsal reads supported")
    header, *on_aws = compared.judge([aws, model, plain], records).rows
    assert [row[2] for row in on_aws] == [compared.SUPPORTED] * 3


def test_make_study_lists_what_each_study_reproduces_adapts_and_what_its_rehearsal_tests(capsys):
    assert cli.main(["study"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "reproduces: the region ap-northeast-1 and the directory bucket's zone apne1-az4" in out
    assert "adapts: no VPC endpoint" in out
    assert "rehearsal (LOCAL=1): sizes 1 100 1KB 1MB, reps 3, storage standard, express_az unset" in out
    assert "claim: GET: the best improvement is 68.0%; LOCAL=1: AWS only: Express One Zone" in out
    assert "LOCAL=1: decided by the model: the rehearsal's model runs the Tokyo path at 0.3" in out


def evidence_of(one: compared.Claim, records: list[dict]) -> tuple[str, float, float, float]:
    """The verdict, the point estimate and its interval, as the report writes them."""
    header, row = compared.judge([one], records).rows
    import re

    point, low, high = map(float, re.search(r"([\d.]+)x? \[([\d.]+), ([\d.]+)\]", row[3]).groups())
    return row[2], point, low, high


def test_a_verdict_follows_the_interval_where_the_point_estimate_says_otherwise():
    """Few, spread values: the point estimate says faster (or inside the band), the interval
    does not exclude the other side, so the claim is not decided either way."""
    spread = [0.010, 0.020, 0.030, 0.050, 0.080, 0.120]
    standard = [latency("standard", 100, s) for s in spread]
    express = [latency("express", 100, 0.9 * s) for s in spread]
    faster = claim(kind="faster", faster="express", slower="standard", statistic="mean")
    verdict, point, low, high = evidence_of(faster, standard + express)
    assert point > 1 and low < 1 < high and verdict == compared.UNDECIDED
    about = claim(kind="ratio", a="standard", b="express", about=point, statistic="mean")
    verdict, point, low, high = evidence_of(about, standard + express)
    assert about.band()[0] < point < about.band()[1] and low < about.band()[0] and verdict == compared.UNDECIDED
    outside = claim(kind="ratio", a="standard", b="express", low=high * 0.98, high=high * 2)
    verdict, point, low, high = evidence_of(outside, standard + express)
    assert point < outside.band()[0] < high and verdict == compared.UNDECIDED  # not contradicted: the interval reaches it


def test_a_mean_claim_compares_means_and_a_best_address_is_compared_with_the_mix():
    def at(ip: str, rate: float) -> list[dict]:
        return [{"event": "download", "endpoint_ip": ip, "seconds": 1 / v, "requests": 1, "requests_per_s": v}
                for v in spread_around(rate)]

    records = at("10.0.0.1", 24) + at("10.0.0.2", 12) + at("10.0.0.3", 12)
    best = compared.Claim(text="b", kind="best_over_all", measure="requests_per_s", field="endpoint_ip",
                          statistic="mean", about=1.5)  # fmt: skip
    verdict, point, low, high = evidence_of(best, records)
    assert point == pytest.approx(24 / ((24 + 12 + 12) / 3), rel=0.01) and verdict == compared.SUPPORTED
    spread = dataclasses.replace(best, kind="spread", about=4.5)
    assert evidence_of(spread, records)[0] == compared.CONTRADICTED  # 2x, wholly below 3.6x


def test_the_largest_gain_lies_where_its_interval_clears_every_other_sizes():
    records = [latency("standard", size, s) for size in (100, 10**4, 10**6) for s in spread_around(0.100)]
    records += [latency("express", 100, s) for s in spread_around(0.090)]
    records += [latency("express", 10**4, s) for s in spread_around(0.030)]
    records += [latency("express", 10**6, s) for s in spread_around(0.060)]
    most = claim(kind="largest_within", baseline="standard", other="express", per="size", within=(10**4, 10**5))
    assert verdict(most, records) == compared.SUPPORTED
    assert verdict(dataclasses.replace(most, within=(100,)), records) == compared.CONTRADICTED
