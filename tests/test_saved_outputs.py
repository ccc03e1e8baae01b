"""Reports drawn from saved runs come out byte for byte as they did when the runs were recorded.

tests/fixtures/saved/<case>/input/ is a results folder as the local backend left it (run.json,
records.jsonl and summary.json of each run; sweep.json of a sweep): a small real run of each
workload (a download run with failures and dead letters too), a sweep and a study (the
folder's README.md says how they were made). Each test copies one into a temporary
FANOUT_RESULTS, reports it as `fanout report` (or `fanout study`) does from saved files, without
an emulator, and checks that

- the input files the report rewrites (records.jsonl, summary.json) come back unchanged: a saved
  report read by today's code and written again is the same JSON. A run saved by an older
  version (the case download-old) is the exception: what its summary.json gains is an expected
  file like the others;
- every file it writes but the plots (report.md, index.html, the CSV and JSON tables) is byte
  for byte the one in <case>/expected/, and no file is missing or extra. The plots (PNG)
  are matplotlib's pixels, which another matplotlib may shift: only their names are checked
  (expected/plots.txt), and index.html is compared with each embedded plot's base64 data
  replaced by `(plot)`.

A report across runs (a sweep's) says what made it: the project's version with its git commit
and the versions of Python and the statistics libraries. Those two are fixed while the test
draws (`(version)` and `(environment)`, see `stamps`); a run's report shows the version its
run.json recorded. Otherwise the files hold no clock time, path or version of the machine that
draws them: nothing else is stripped.

A deliberate change to a report is one reviewed diff: regenerate the expected files with

    UPDATE_SAVED=1 .venv/bin/pytest -q tests/test_saved_outputs.py

and commit tests/fixtures/saved/*/expected/ with the change.
"""

import csv
import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from fanout.results import run_folders as runs, summary as summaries, sweep_folders as sweeps
from fanout.stages import report as reporting, study
from fanout.workloads.download import across

SAVED = Path(__file__).parent / "fixtures" / "saved"
UPDATE = os.environ.get("UPDATE_SAVED") == "1"
PLOTS = "plots.txt"  # the names of the PNG files a case draws, one a line
EMBEDDED_PLOT = re.compile(rb"data:image/png;base64,[A-Za-z0-9+/=]+")


def only_id(folder: Path) -> str:
    """The one run or sweep id among `folder`'s entries (a saved results folder has no `latest`)."""
    (found,) = [path.name for path in folder.iterdir() if path.is_dir() and path.name[:8].isdigit()]
    return found


def report_run(results: Path) -> None:
    """`fanout report --run <id>` from the run's saved report."""
    summary = reporting.load_saved(runs.load(only_id(results)))
    assert summary is not None and summaries.unaccounted(summary.header) == 0  # a complete saved report: reused as it is
    reporting.render(summary)


def report_sweep(results: Path) -> None:
    """`fanout report --sweep <id>`: the report across the sweep's runs, beside its manifest."""
    reporting.report_sweep(sweeps.load(only_id(results / "sweeps")))


def report_study(results: Path) -> None:
    """The report across the study's sweep and the study's report, as `fanout study` ends."""
    report_sweep(results)
    manifest = sweeps.load(only_id(results / "sweeps"))
    name = sweeps.study_of(manifest.tag)
    assert name is not None, manifest.tag
    study.write_report(study.load(name), manifest)


CASES = {
    "download": report_run,
    "download-failures": report_run,
    "download-old": report_run,
    "latency": report_run,
    "seqread": report_run,
    "transfer": report_run,
    "sweep": report_sweep,
    "study": report_study,
}


def files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def comparable(name: str, data: bytes) -> bytes:
    """The file as compared: a page's embedded plots as `(plot)`, every other file as it is."""
    return EMBEDDED_PLOT.sub(b"data:image/png;base64,(plot)", data) if name.endswith(".html") else data


def update(expected: Path, written: dict[str, bytes], plots: list[str]) -> None:
    shutil.rmtree(expected, ignore_errors=True)
    for name, data in written.items():
        (expected / name).parent.mkdir(parents=True, exist_ok=True)
        (expected / name).write_bytes(data)
    (expected / PLOTS).write_text("".join(f"{name}\n" for name in plots))


@pytest.fixture
def stamps(monkeypatch):
    """What a report across runs says made it, fixed: the checkout's commit (and whether it has
    changes) and the machine's library versions are not the report's."""
    monkeypatch.setattr(runs, "project_version", lambda: "(version)")
    monkeypatch.setattr(across, "environment", lambda: "(environment)")


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_saved_report_is_drawn_again_byte_for_byte(case, stamps, tmp_path, monkeypatch):
    source, expected = SAVED / case / "input", SAVED / case / "expected"
    results = tmp_path / "results"
    shutil.copytree(source, results)
    monkeypatch.setenv("FANOUT_RESULTS", str(results))
    inputs = files(source)

    CASES[case](results)

    after = files(results)
    assert set(inputs) <= set(after)
    written = {name: comparable(name, data) for name, data in after.items()
               if data != inputs.get(name) and not name.endswith(".png")}  # fmt: skip
    if case != "download-old":  # today's shape: the saved report is written back as it was read
        assert not set(written) & set(inputs), f"{case}: a saved file came back changed"
    plots = sorted(name for name in after if name.endswith(".png"))
    if UPDATE:
        update(expected, written, plots)
    wanted = {name: data for name, data in files(expected).items() if name != PLOTS}
    assert sorted(written) == sorted(wanted), "other files than the expected ones (UPDATE_SAVED=1 redraws them)"
    for name, data in written.items():
        assert data.decode() == wanted[name].decode(), f"{case}: {name} differs (UPDATE_SAVED=1 redraws it)"
    assert plots == (expected / PLOTS).read_text().splitlines()


HELD = {"memory (512 MB)": "enforced by cgroup v2", "CPU share": "0.289 vCPU, enforced by cgroup v2",
        "/tmp (512 MB)": "enforced by a loop-mounted file system"}  # run.json's "limits", as a host records them
HELD_LINE = ("Lambda's limits: /tmp (512 MB): enforced by a loop-mounted file system; CPU share: 0.289 vCPU, "
             "enforced by cgroup v2; memory (512 MB): enforced by cgroup v2")


def hold(results: Path) -> None:
    """Give every saved run the limits HELD, in its run.json and in its saved summary.json."""
    for path in results.rglob("run.json"):
        path.write_text(json.dumps({**json.loads(path.read_text()), "limits": HELD}))
    for path in results.rglob(runs.SUMMARY_FILE):
        data = json.loads(path.read_text())
        if "run" in data:  # a summary of today's shape (the old one is rebuilt from run.json)
            path.write_text(json.dumps({**data, "run": {**data["run"], "limits": HELD}, "limits": HELD_LINE}))


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_csv_and_plot_states_the_limits_beside_the_network(case, stamps, tmp_path, monkeypatch):
    """Each CSV with a `network` column has `limits` beside it, holding the runs' limits; each
    plot's caption has them on the line under the network's."""
    results = tmp_path / "results"
    shutil.copytree(SAVED / case / "input", results)
    hold(results)
    monkeypatch.setenv("FANOUT_RESULTS", str(results))
    captions: list[str] = []
    supxlabel = Figure.supxlabel
    monkeypatch.setattr(Figure, "supxlabel", lambda fig, text, **kw: captions.append(text) or supxlabel(fig, text, **kw))

    CASES[case](results)

    tables = [csv.DictReader(io.StringIO(path.read_text())) for path in results.rglob("*.csv")]
    tables = [(list(table.fieldnames or []), list(table)) for table in tables]
    with_network = [(columns, rows) for columns, rows in tables if "network" in columns]
    assert with_network
    for columns, rows in with_network:
        assert columns[columns.index("network") + 1] == "limits"
        assert rows and {row["limits"] for row in rows} == {HELD_LINE}
    assert len(captions) == len(list(results.rglob("*.png"))) > 0
    assert all(caption.splitlines()[-1] == HELD_LINE for caption in captions), captions
