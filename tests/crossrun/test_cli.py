"""`fanout report --runs` and `fanout compare` from the command line: one-line errors naming the
bad value, exit 2 for usage and 1 for runtime failures, and the files where they are said to be."""

import csv

import pytest

from fanout import cli
from fanout.stages import report as reporting
from fanout.results import run_folders as runs, sweep_folders as sweeps

from .support import make_run


def error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(
    ("argv", "bad"),
    [
        (["report", "--runs", "20990101T000000Z-abcdef"], "20990101T000000Z-abcdef"),
        (["report", "--runs", "nonsense"], "nonsense"),
        (["compare", "latest", "20990101T000000Z-abcdef"], "20990101T000000Z-abcdef"),
    ],
)
def test_unknown_runs_are_one_line_usage_errors(argv, bad, capsys):
    make_run(1)
    assert cli.main(argv) == 2
    line = error_line(capsys)
    assert f"unknown run {bad!r}" in line and "expected 'latest' or a run id" in line


def test_an_unknown_run_among_good_ones_creates_nothing(capsys, results):
    good, _ = make_run(1)
    assert cli.main(["report", "--runs", f"{good},20990101T000000Z-abcdef"]) == 2
    assert "20990101T000000Z-abcdef" in error_line(capsys)
    assert not (results / "across").exists()


@pytest.mark.parametrize(("argv", "missing"), [(["compare", "latest", ""], "B"), (["compare", "", "latest"], "A"),
                                              (["compare", " ", ""], "A and B")])  # fmt: skip
def test_a_side_missing_from_compare_is_named_in_one_line(argv, missing, capsys):
    make_run(1)
    assert cli.main(argv) == 2
    line = error_line(capsys)
    assert f"compare needs {missing}: `make compare A=<runs> B=<runs>`" in line and "'latest'" in line


def test_missing_records_are_a_runtime_error_naming_the_fix(capsys):
    rid, _ = make_run(1)
    other, _ = make_run(2)
    (runs.run_dir(rid) / "records.jsonl").unlink()
    assert cli.main(["compare", rid, other]) == 1
    assert error_line(capsys) == f"fanout: error: run {rid} has no records.jsonl: run `make report RUN={rid}` first"


@pytest.mark.parametrize("command", [lambda a, b: ["compare", a, b], lambda a, b: ["report", "--runs", f"{a},{b}"]],
                         ids=["compare", "report-runs"])  # fmt: skip
def test_a_run_whose_saved_records_hold_no_downloads_is_refused(command, capsys, results):
    empty, _ = make_run(1, per_slot=2, dead_lettered=range(8))  # every message failed: error records only
    good, _ = make_run(2)
    assert cli.main(command(good, empty)) == 1
    assert error_line(capsys) == (f"fanout: error: run {empty} has no download records in its records.jsonl (40 records): "
                                  f"nothing to report; if its logs hold them, `make report RUN={empty} REFRESH=1`")  # fmt: skip
    assert not (results / "across").exists()


def test_report_runs_writes_into_its_folder_and_compare_prints(capsys):
    a, _ = make_run(1, memory=512)
    b, _ = make_run(2, memory=1024)
    assert cli.main(["report", "--runs", f"{a},{b}"]) == 0
    out_dir = reporting.across_dir([a, b])
    assert {"cells.csv", "cells.json", "report.md"} <= {p.name for p in out_dir.iterdir()}
    assert str(out_dir) in capsys.readouterr().out.replace("\n", "")
    assert cli.main(["compare", a, "latest"]) == 0  # latest is b; memory is what they differ in
    out = capsys.readouterr().out
    assert f"A: {a} (MB 512)" in out and f"B: {b} (MB 1024)" in out and "B - A" in out


def test_compare_sides_can_be_several_runs(capsys):
    a = [make_run(n, memory=m, seed=n)[0] for n, m in ((1, 512), (2, 1024))]
    b = [make_run(n, memory=m, seed=n, tag="new")[0] for n, m in ((3, 512), (4, 1024))]
    assert cli.main(["compare", ",".join(a), ",".join(b)]) == 0
    out = capsys.readouterr().out
    assert "cells matched on: MB" in out
    assert "MB 512" not in out and "only in" not in out  # both memories matched, none left over


def make_sweep(run_ids, statuses):
    """A sweep manifest whose cells ran `run_ids` and ended with `statuses`."""
    settings = {"backend": "local", "stack": "s", "keep_warm": False, "axes": {}}
    manifest = sweeps.new_manifest(settings, [{"memory": 512}] * len(run_ids))
    for cell, rid, status in zip(manifest.cells, run_ids, statuses):
        manifest = manifest.with_cell(cell.but(run_id=rid, status=status))
    sweeps.save(manifest)
    return manifest.sweep_id


def test_report_of_a_sweep_covers_its_finished_cells_beside_its_manifest(capsys):
    done = [make_run(n, memory=m, seed=n)[0] for n, m in ((1, 512), (2, 1024))]
    unfinished, _ = make_run(3, memory=2048, seed=3)
    sweep_id = make_sweep([*done, unfinished], ["done", "done", "interrupted"])
    assert cli.main(["report", "--sweep", "latest"]) == 0
    with open(sweeps.sweep_dir(sweep_id) / "cells.csv") as f:
        assert sorted(int(row["memory_size"]) for row in csv.DictReader(f)) == [512, 1024]
    assert f"sweep {sweep_id}" in capsys.readouterr().out


def test_compare_takes_sweeps(capsys):
    a = make_sweep([make_run(1, memory=512, seed=1)[0]], ["done"])
    make_sweep([make_run(2, memory=512, seed=2, tag="new")[0]], ["done"])  # the latest sweep
    assert cli.main(["compare", f"sweep:{a}", "sweep:latest"]) == 0
    assert "B - A" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "bad"),
    [(["report", "--sweep", "20990101T000000Z-abcdef"], "unknown sweep '20990101T000000Z-abcdef'"),
     (["compare", "sweep:nope", "latest"], "unknown sweep 'nope'")],
)  # fmt: skip
def test_unknown_sweeps_are_one_line_usage_errors(argv, bad, capsys):
    make_sweep([make_run(1)[0]], ["done"])
    assert cli.main(argv) == 2
    assert bad in error_line(capsys)


def test_a_sweep_without_a_finished_cell_has_nothing_to_report(capsys):
    sweep_id = make_sweep([make_run(1)[0]], ["interrupted"])
    assert cli.main(["report", "--sweep", sweep_id]) == 2
    assert f"sweep {sweep_id} has no finished cell yet" in error_line(capsys)


def test_compare_refuses_runs_made_under_different_networks_unless_forced(capsys):
    """A manual run on loopback against the demo's under lambda-2024: their difference would be the
    networks'. One line naming both; --force (FORCE=1) compares them anyway."""
    a, _ = make_run(1)
    b, _ = make_run(2, network={"profile": "lambda-2024", "scale": 5.0})
    assert cli.main(["compare", a, b]) == 2
    line = error_line(capsys)
    assert line.startswith("fanout: error: A and B were made under different networks (A: simulated network: none")
    assert "B: simulated network: lambda-2024, scale 5" in line and "FORCE=1" in line
    assert cli.main(["compare", a, b, "--force"]) == 0
    assert "networks differ" in capsys.readouterr().out
