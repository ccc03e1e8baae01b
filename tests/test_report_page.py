"""index.html, the report page beside report.md (fanout.results.page): the same tables and plots
as the Markdown, self-contained, values escaped, in run, across-runs and study folders of every
workload; and, in a real headless Chromium, every image loads, the tables' numbers are those of
summary.csv / cells.csv, and the console stays clean."""

import csv
import html
import os
import shutil
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from crossrun.support import make_run
from test_report import CELLS, RUN, summary_of, synthetic_records
from test_transfer import _record as transfer_record

from fanout import cli
from fanout.common import paths
from fanout.local import network
from fanout.results import run_folders as runs, run_record, sweep_folders as sweeps
from fanout.stages import study
from fanout.workloads.download import across as crossrun, report
from fanout.workloads.transfer import report as transfer_report


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))


class Page(HTMLParser):
    """What a page holds: its h2 headings, and the src and href of every element."""

    def __init__(self, text: str):
        super().__init__()
        self.headings, self.sources, self.links, self._in = [], [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._in = tag
        if "src" in attrs:
            self.sources.append(attrs["src"])
        if tag == "a":
            self.links.append(attrs["href"])
        if tag == "h2":
            self.headings.append("")

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "h2":
            self.headings[-1] += data


def run_folder(tag: str = "t"):
    """A two-cell run's report files (as `fanout report` writes them) and its summary."""
    records, _ = synthetic_records(per_cell=30, cell_keys=[replace(c, experiment_tag=tag) for c in CELLS[:2]])
    summary = summary_of(records, sent=len(records))
    runs.save(run_record.RunRecord.from_json(summary["run"]))  # run.json, as fire writes it
    report.write(summary)
    return runs.run_dir(RUN), summary


def across_folder(tmp_path):
    """The report across three runs of two memory sizes."""
    ids = [make_run(1, memory=512, seed=1)[0], make_run(2, memory=1024, seed=2)[0], make_run(3, memory=1024, seed=3)[0]]
    folder = tmp_path / "results" / "across" / "t"  # where `fanout report --runs` writes
    crossrun.build(ids, folder, "t")
    return folder


def markdown_headings(folder) -> list[str]:
    return [line[3:] for line in (folder / "report.md").read_text().splitlines() if line.startswith("## ")]


def test_the_run_page_has_the_markdowns_sections_and_plots_and_needs_nothing_else(tmp_path):
    folder, summary = run_folder()
    text = (folder / "index.html").read_text()
    page = Page(text)
    assert page.headings == markdown_headings(folder)  # the same sections, in the same order
    pngs = sorted(path.name for path in folder.glob("*.png"))
    assert len(pngs) >= 3 and len(page.sources) == len(pngs)
    assert all(src.startswith("data:image/png;base64,") for src in page.sources)  # embedded: no file, no network
    assert set(page.links) == {"records.jsonl", "run.json", "summary.csv", "summary.json", *pngs}
    assert all((folder / link).is_file() for link in page.links)
    label = f'<p class="network">{html.escape(summary["network"])}</p>'
    assert label in text and text.index(label) < text.index("<table")  # at the top


def test_the_across_page_has_the_markdowns_sections_and_links_its_files(tmp_path):
    folder = across_folder(tmp_path)
    page = Page((folder / "index.html").read_text())
    assert page.headings == markdown_headings(folder)
    assert "Methods" in page.headings
    assert {"cells.csv", "cells.json"} <= set(page.links)


def transfer_run(model: network.NetworkModel) -> run_record.RunRecord:
    """A transfer run of 1 and 4 threads, 3 messages each, hosted under `model`."""
    record = run_record.RunRecord.from_json({
        "run_id": RUN, "backend": "local", "sent": 6, "failed_seqs": [], "first_send_ms": 1_700_000_000_000,
        "stack": {"stack": "s", "backend": "local", "memory": 1024},
        "parameters": {"messages": 6, "workload": "transfer", "workload_options": {"operation": "upload"}},
        "network": model.describe()})  # fmt: skip
    runs.save(record)
    return record


def test_a_transfer_run_page_has_the_markdowns_sections_and_labels_unshaped_uploads():
    messages = [dict(transfer_record(threads, seconds), seq=seq, outcome="done")
                for seq, (threads, seconds) in enumerate([(1, 2.0), (1, 2.2), (1, 1.9), (4, 0.6), (4, 0.5), (4, 0.55)])]
    for model, unshaped in ((network.load(network.NONE), True), (network.load("lambda-2024", 4), False)):
        summary = transfer_report.summarize(transfer_run(model), messages, len(messages), [])
        written = transfer_report.write(summary)
        folder = runs.run_dir(RUN)
        page = Page((folder / "index.html").read_text())
        assert page.headings == markdown_headings(folder) == ["upload", "Plots"]
        assert {"transfer.csv", "transfer.png", "index.html", "report.md"} <= {path.name for path in written}
        assert {"records.jsonl", "run.json", "summary.json", "transfer.csv", "transfer.png"} == set(page.links)
        text = (folder / "report.md").read_text()
        assert summary["network"] in text and ("uploads unshaped" in text) == unshaped


def test_a_study_folder_gets_a_page_with_the_markdowns_sections():
    _, summary = run_folder()  # a download run of 512 and 1024 MB, its records saved
    record = run_record.RunRecord.from_json(summary["run"])
    runs.save(record.but(stack=record.stack.but(backend="local")))  # as fire records it
    manifest = sweeps.Manifest(sweep_id="20250101T000000Z-abcdef", tag="lambda-fanout-local",
                               cells=[sweeps.SweepCell(index=0, status="done", run_id=RUN)])  # fmt: skip
    loaded = study.load("lambda-fanout")
    shown = study.write_report(loaded, manifest)
    folder = paths.results_dir() / study.REPORT_DIR / "lambda-fanout" / manifest.sweep_id
    page = Page((folder / "index.html").read_text())
    assert page.headings == markdown_headings(folder) == [loaded.reference.table]
    text = (folder / "report.md").read_text()
    assert text.startswith(f"# {loaded.title}\n") and "SIMULATION, not a reproduction" in text
    assert "| 512 | 4 |" in text and "| 1024 | 4 |" in text  # our two cells, in the published table's shape
    assert shown.title == loaded.title and shown.network == "simulated network: none (loopback, not modelled)"


def test_values_from_the_records_reach_the_page_as_text_never_as_markup():
    folder, _ = run_folder(tag="<script>alert(1)</script>")
    text = (folder / "index.html").read_text()
    assert "<script" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_open_prints_the_newest_page_and_says_when_there_is_none(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)  # no desktop: the path only
    assert cli.main(["open"]) == 2
    assert capsys.readouterr().err.startswith("fanout: error: no report page under ")
    run, _ = run_folder()
    across = across_folder(tmp_path)
    os.utime(run / "index.html", (1, 1))  # the run's page is the older one
    assert cli.main(["open"]) == 0
    assert capsys.readouterr().out == f"{across.resolve() / 'index.html'}\n"


# ---- in a real browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium driven by selenium; skipped, with the reason, where it cannot run."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (browser and driver):
        pytest.skip("Chromium is not installed: apt-get install chromium chromium-driver (as root), or `make test-browser`")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    from selenium.webdriver.chrome.service import Service

    session = webdriver.Chrome(options=options, service=Service(driver))
    yield session
    session.quit()


TABLE_CELLS = """return Array.from(document.querySelectorAll('table')).map(t => [t.dataset.title,
  Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.textContent))]);"""


def opened(chromium, page, screenshot) -> dict:
    """Open `page`; returns its tables {title: rows of text} after checking that every image
    loaded, nothing went to the console, and saving a screenshot."""
    chromium.get_log("browser")  # what earlier pages left
    chromium.get(page.as_uri())
    images = chromium.execute_script("return Array.from(document.images).map(i => [i.complete, i.naturalWidth]);")
    assert images and all(complete and width > 0 for complete, width in images), images
    assert chromium.get_log("browser") == []
    assert chromium.save_screenshot(str(screenshot)) and screenshot.read_bytes()[:4] == b"\x89PNG"
    return dict(chromium.execute_script(TABLE_CELLS))


def assert_shown(shown: str, exact: str) -> None:
    """A figure as shown equals the file's to the digits shown (half a unit of the last)."""
    decimals = len(shown.partition(".")[2])
    assert abs(float(shown) - float(exact)) <= 0.5 * 10**-decimals + 1e-9, (shown, exact)


def by_label(rows: list[list[str]], *labels: str) -> dict:
    """Rows of a rendered table as {the values of the `labels` columns: {header: text}}."""
    header, body = rows[0], rows[1:]
    return {tuple(row[header.index(label)] for label in labels): dict(zip(header, row)) for row in body}


STATISTICS = ("min", "p25", "p50", "avg", "p75", "p90", "p99", "max")


def test_the_run_page_in_chromium_shows_summary_csv(chromium, tmp_path):
    folder, _ = run_folder()
    tables = opened(chromium, folder / "index.html", tmp_path / "run.png")
    with open(folder / "summary.csv") as f:
        cells = list(csv.DictReader(f))
    checked = 0
    for metric, (title, _) in report.METRICS.items():
        shown = by_label(tables[title + report.AT_TARGET_TITLE], "memory MB", "concurrency")
        for cell in cells:
            row = shown[(cell["memory_size"], cell["concurrency_limit"])]
            assert row["n"] == cell["n"]
            for stat in STATISTICS:
                assert_shown(row[stat], cell[f"{metric}_{stat}"])
                checked += 1
    assert checked == len(cells) * len(report.METRICS) * len(STATISTICS) and len(cells) == 2


def test_the_across_page_in_chromium_shows_cells_csv(chromium, tmp_path):
    folder = across_folder(tmp_path)
    tables = opened(chromium, folder / "index.html", tmp_path / "across.png")
    with open(folder / "cells.csv") as f:
        cells = list(csv.DictReader(f))
    shown = by_label(tables["Throughput (MB/s)" + crossrun.AT_TARGET_TITLE], "MB")
    intervals = by_label(tables[crossrun.CI_TITLE], "MB")
    assert len(cells) == len(shown) == 2
    for cell in cells:
        row = shown[(cell["memory_size"],)]
        assert row["n"] == cell["n"]
        for stat in STATISTICS:
            assert_shown(row[stat], cell[f"mb_per_s_{stat}"])
        low, high = intervals[(cell["memory_size"],)]["p50 95% CI"].split("-")
        assert_shown(low, cell["mb_per_s_p50_ci_low"])
        assert_shown(high, cell["mb_per_s_p50_ci_high"])
