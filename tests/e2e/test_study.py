"""`fanout study lambda-fanout --local` end to end on the local backend (issue 25): the fan-out
study's local variant runs as a sweep, and its report puts our cells in the published table's
shape, labelled as a simulation; drawn again with published figures, each sits beside ours with
the ratio. Our figures are checked against the runs' saved records, recomputed here with numpy.
"""

import dataclasses

import numpy as np
import pytest

from fanout import cli
from fanout.common import paths
from fanout.results import run_folders as runs, study_tables as compared, sweep_folders as sweeps
from fanout.stages import deploy, study

pytestmark = pytest.mark.slow

STACK = "study-e2e"
OBJECT_SIZE = 8 * 2**20  # the local variant's


@pytest.fixture(scope="module")
def ran(emulator, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FANOUT_RESULTS", str(tmp_path_factory.mktemp("results")))
        try:
            assert cli.main(["study", "lambda-fanout", "--local", "--backend", "local", "--stack", STACK,
                             "--timeout", "240", "--destroy-after"]) == 0  # fmt: skip
            yield sweeps.load(sweeps.LATEST)
        finally:
            deploy.destroy("local", STACK)


def records_of(manifest: sweeps.Manifest) -> list[dict]:
    return [r for cell in manifest.cells for r in runs.load_records(cell.run_id, "download")]


def seconds_by_cell(manifest: sweeps.Manifest) -> dict:
    found = {}
    for r in records_of(manifest):
        if r["event"] == "download":
            found.setdefault((r["memory_size"], r["concurrency_limit"]), []).append(r["seconds"])
    return found


def test_the_report_has_our_cells_in_the_published_shape_labelled_a_simulation(ran):
    loaded = study.load("lambda-fanout")
    assert ran.tag == "lambda-fanout-local" and all(cell.status == "done" for cell in ran.cells)
    folder = paths.results_dir() / "studies" / "lambda-fanout" / ran.sweep_id
    text = (folder / "report.md").read_text()
    assert (folder / "index.html").is_file()
    assert "SIMULATION, not a reproduction: simulated network: lambda-2024, scale" in text
    assert "measured on AWS" not in text
    # The shipped file transcribes no published figures: ours alone, said so, and plotted.
    assert "| object_size | memory_size | concurrency_limit | min | p25 | avg | p75 | max |" in text
    assert "no published figures transcribed" in text and (folder / "ours_vs_published.png").is_file()
    measured = seconds_by_cell(ran)
    assert sorted(measured) == [(1024, 2), (2048, 2)]
    header, *rows = compared.comparison(loaded.reference, records_of(ran)).rows
    for row in rows:
        values = dict(zip(header, row))
        assert row[0] == OBJECT_SIZE  # the rehearsal's object: a row of its own, never the source's 1 GiB
        mine = measured[row[1], row[2]]
        assert len(mine) == 2 * 2  # MULTIPLIER 2 x concurrency 2
        assert values["min"] == min(mine) and values["max"] == max(mine)
        assert values["avg"] == pytest.approx(np.mean(mine))
        assert values["p25"] == pytest.approx(np.percentile(mine, 25))
        assert "published min" not in values  # not transcribed in the shipped file


def test_published_figures_stand_beside_ours_with_the_ratio(ran):
    figures = ({"object_size": OBJECT_SIZE, "memory_size": 1024, "concurrency_limit": 2,
                **dict.fromkeys(("min", "p25", "avg", "p75", "max"), 0.5)},)
    loaded = study.load("lambda-fanout")
    with_figures = dataclasses.replace(loaded, reference=dataclasses.replace(loaded.reference, figures=figures))
    shown = study.write_report(with_figures, ran)
    mine = seconds_by_cell(ran)[1024, 2]
    header, *rows = compared.comparison(with_figures.reference, records_of(ran)).rows
    row = dict(zip(header, next(r for r in rows if r[:3] == [OBJECT_SIZE, 1024, 2])))
    assert (row["published min"], row["ratio min"]) == (0.5, min(mine) / 0.5)
    assert row["ratio avg"] == pytest.approx(np.mean(mine) / 0.5)
    assert f"| {OBJECT_SIZE} | 1024 | 2 |" in (study.report_dir(with_figures, ran) / "report.md").read_text()
    assert shown.title == loaded.title
