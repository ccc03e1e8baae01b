"""index.html, the report page beside report.md (fanout.results.page): the same tables and plots
as the Markdown, self-contained, values escaped, in run, across-runs and study folders of every
workload; and, in a real headless Chromium, every image loads, the tables' numbers are those of
summary.csv / cells.csv, and the console stays clean."""

import csv
import html
import json
import os
import shutil
import subprocess
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from crossrun.support import make_run
from test_report import CELLS, MIB, RUN, summary_of, synthetic_records
from test_plots import cross_summary
from test_transfer import _record as transfer_record
from test_workloads import LATENCY_RUN, latency_summary

from fanout import cli
from fanout.common import paths
from fanout.local import network
from fanout.results import run_folders as runs, run_record, run_sections, sections, study_tables as compared, sweep_folders as sweeps
from fanout.stages import study
from fanout.workloads.download import across as crossrun, report
from fanout.workloads.latency import report as latency_report
from fanout.workloads.transfer import report as transfer_report


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))


class Page(HTMLParser):
    """What a page holds: its h2 headings (with their ids), the src and href of every element, the
    images' alt texts, its tables' headers, the order its landmarks come in, and its style text."""

    def __init__(self, text: str):
        super().__init__()
        self.headings, self.ids, self.sources, self.links, self.alts = [], [], [], [], []
        self.headers, self.order, self.styles, self._in, self._th = [], [], [], None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._in = tag
        if "src" in attrs:
            self.sources.append(attrs["src"])
        if tag == "img":
            self.order.append("img")
        if tag == "img":
            self.alts.append(attrs.get("alt"))
        if tag == "a":
            self.links.append(attrs["href"])
        if tag == "link":
            self.sources.append(attrs["href"])
        if tag == "h2":
            self.headings.append("")
            self.order.append("h2")
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "thead":
            self.headers.append([])
        if tag == "th":
            self.headers[-1].append("")
            self._th = True
        if tag == "table":
            self.order.append("table")

    def handle_endtag(self, tag):
        self._in = None
        self._th = self._th and tag != "th"  # a header's <wbr>s end no text

    def handle_data(self, data):
        if self._in == "h2":
            self.headings[-1] += data
        elif self._th:
            self.headers[-1][-1] += data
        elif self._in == "style":
            self.styles.append(data)


def run_folder(tag: str = "t"):
    """A two-cell run's report files (as `fanout report` writes them) and its summary: 512 and
    1024 MB, the other cell fields the same."""
    records, _ = synthetic_records(per_cell=30, cell_keys=[replace(c, experiment_tag=tag) for c in CELLS[:2]])
    summary = summary_of(records, sent=len(records))
    runs.save(summary.header.run)  # run.json, as fire writes it
    report.write(summary)
    return runs.run_dir(RUN), summary


def across_folder(tmp_path, concurrencies=(4, 4, 4)):
    """The report across three runs of two memory sizes (at `concurrencies`)."""
    ids = [make_run(i + 1, memory=memory, concurrency=c, seed=i + 1)[0]
           for i, (memory, c) in enumerate(zip((512, 1024, 1024), concurrencies))]  # fmt: skip
    folder = tmp_path / "results" / "across" / "t"  # where `fanout report --runs` writes
    crossrun.build(ids, folder, "t")
    return folder


def markdown_headings(folder) -> list[str]:
    return [line[3:] for line in (folder / "report.md").read_text().splitlines() if line.startswith("## ")]


def assert_shown(shown: str, exact: str) -> None:
    """A figure as shown equals the file's to the digits shown (half a unit of the last)."""
    decimals = len(shown.partition(".")[2])
    assert abs(float(shown) - float(exact)) <= 0.5 * 10**-decimals + 1e-9, (shown, exact)


def by_label(rows: list[list[str]], *labels: str) -> dict:
    """Rows of a rendered table as {the values of the `labels` columns: {header: text}}."""
    header, body = rows[0], rows[1:]
    return {tuple(row[header.index(label)] for label in labels): dict(zip(header, row)) for row in body}


STATISTICS = ("min", "p25", "p50", "avg", "p75", "p90", "p99", "max")


def the_answer_comes_first(page: Page) -> None:
    """Summary, then its plot, then the contents, whose links lead to the page's own headings."""
    assert page.headings[0] == sections.ANSWER_TITLE and sections.CONTENTS_TITLE in page.headings
    contents = [i for i, kind in enumerate(page.order) if kind == "h2"][page.headings.index(sections.CONTENTS_TITLE)]
    assert page.order.index("img") < contents
    anchors = [link[1:] for link in page.links if link.startswith("#")]
    assert anchors and set(anchors) <= set(page.ids)
    assert all(alt and not alt.endswith(".png") and len(alt.split()) >= 5 for alt in page.alts)  # a sentence


def test_the_run_page_has_the_markdowns_sections_and_plots_and_needs_nothing_else(tmp_path):
    folder, summary = run_folder()
    text = (folder / "index.html").read_text()
    page = Page(text)
    assert page.headings == markdown_headings(folder)  # the same sections, in the same order
    pngs = sorted(path.name for path in folder.glob("*.png"))
    assert len(pngs) >= 3 and len(page.alts) == len(pngs)
    assert all(src.startswith("data:") for src in page.sources)  # embedded: no file, no network
    files = {link for link in page.links if not link.startswith("#")}
    assert files == {"records.jsonl", "run.json", "summary.csv", "summary.json", *pngs}
    assert all((folder / link).is_file() for link in files)
    label = f'<p class="network">{html.escape(summary.header.network)}</p>'
    assert label in text and text.index(label) < text.index("<table")  # at the top
    the_answer_comes_first(page)


def test_what_every_cell_of_a_run_shares_is_said_once_above_its_tables():
    folder, _ = run_folder()
    text = (folder / "index.html").read_text()
    page = Page(text)
    header = text[:text.index("<main>")]
    for line in ("concurrency: 4", "object: 1 MiB", "strategy: download_file", "tag: t"):  # the cells differ in memory
        assert f"<li>{line}</li>" in header
    assert all("concurrency" not in row and "tag" not in row and "strategy" not in row for row in page.headers)
    assert sum("memory MB" in row for row in page.headers) >= 5
    markdown = (folder / "report.md").read_text()
    assert "- concurrency: 4" in markdown and "| memory MB | n | min |" in markdown and "| concurrency |" not in markdown


def test_the_run_page_answers_with_intervals_the_at_target_share_and_the_aggregate():
    folder, summary = run_folder()
    with open(folder / "summary.csv") as f:
        cells = {row["memory_size"]: row for row in csv.DictReader(f)}
    markdown = (folder / "report.md").read_text()
    answer = markdown[markdown.index(f"## {sections.ANSWER_TITLE}"):markdown.index(f"## {sections.CONTENTS_TITLE}")]
    lines = [line for line in answer.splitlines() if line.startswith("| ")]
    header, body = [c.strip() for c in lines[0].strip("|").split("|")], lines[1:]
    assert header[:4] == ["memory MB", "at target", "p50 MB/s (95% CI)", "p99 MB/s (95% CI)"]
    for line in body:
        row = dict(zip(header, (c.strip() for c in line.strip("|").split("|"))))
        cell = cells[row["memory MB"]]
        assert row["at target"].startswith(f"{cell['n']} of {cell['n_all']} (")
        median, interval = row["p50 MB/s (95% CI)"].split(" ")
        assert_shown(median, cell["mb_per_s_p50"])
        low, high = interval.strip("()").split("-")
        assert_shown(low, cell["mb_per_s_p50_ci_low"]) and assert_shown(high, cell["mb_per_s_p50_ci_high"])
        assert float(cell["mb_per_s_p50_ci_low"]) <= float(cell["mb_per_s_p50"]) <= float(cell["mb_per_s_p50_ci_high"])
        assert_shown(row["aggregate GB/s"], cell["aggregate_gb_per_s"])
    # The synthetic cells keep `concurrency` downloads of 1 MiB busy: the aggregate is about
    # concurrency x the mean throughput over the window, bounded by the fastest and slowest.
    for cell in cells.values():
        aggregate = float(cell["aggregate_gb_per_s"]) * 1e3  # MB/s
        assert 4 * float(cell["mb_per_s_min"]) <= aggregate <= 4 * float(cell["mb_per_s_max"])
    assert "The best cell, 1024 MB" in answer or "The best cell, 512 MB" in answer


def test_the_across_page_has_the_markdowns_sections_and_links_its_files(tmp_path):
    folder = across_folder(tmp_path)
    page = Page((folder / "index.html").read_text())
    assert page.headings == markdown_headings(folder)
    assert "Methods" in page.headings
    assert {"cells.csv", "cells.json"} <= set(page.links)
    assert {f"../../{run}/index.html" for run in json.loads((folder / "cells.json").read_text())["cells"][0]["runs"]} <= set(page.links)
    the_answer_comes_first(page)


def test_a_sweep_page_plots_the_aggregate_against_concurrency_and_draws_no_one_cell_heatmap(tmp_path):
    flat = across_folder(tmp_path)  # concurrency 4 in every cell: one column
    assert not (flat / "median_throughput_heatmap.png").exists() and not (flat / "throughput_vs_concurrency.png").exists()
    scaling = across_folder(tmp_path / "scaling", concurrencies=(2, 2, 8))
    cells = json.loads((scaling / "cells.json").read_text())["cells"]
    assert all(cell["aggregate_gb_per_s"] > 0 and cell["aggregate_window_s"] > 0 for cell in cells)
    page = Page((scaling / "index.html").read_text())
    assert (scaling / "throughput_vs_concurrency.png").is_file() and (scaling / "median_throughput_heatmap.png").is_file()
    text = (scaling / "report.md").read_text()
    assert "Aggregate throughput against concurrency:" in text
    summary = text[text.index(f"## {sections.ANSWER_TITLE}"):text.index(f"## {sections.CONTENTS_TITLE}")]
    assert "(throughput_vs_concurrency.png)" in summary  # the answer's plot
    assert len(page.alts) == len(list(scaling.glob("*.png")))


def test_a_latency_run_page_answers_with_the_medians_by_size_and_storage_class():
    latency_report.write(latency_summary(5))
    folder = runs.run_dir(LATENCY_RUN)
    page = Page((folder / "index.html").read_text())
    assert page.headings == markdown_headings(folder)
    the_answer_comes_first(page)
    assert page.headers[0] == ["size", *(f"{storage} {title} p50 (s)" for storage in ("express", "standard")
                                         for title in ("put", "get", "get first byte"))]  # fmt: skip
    assert page.alts == [latency_report.CAPTION]


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
        assert page.headings == markdown_headings(folder) == [sections.ANSWER_TITLE, "upload", sections.CONTENTS_TITLE,
                                                              run_sections.HOW_TITLE]  # fmt: skip
        assert page.alts == [transfer_report.CAPTION]
        assert {"transfer.csv", "transfer.png", "index.html", "report.md"} <= {path.name for path in written}
        assert {"records.jsonl", "run.json", "summary.json", "transfer.csv", "transfer.png", "#how-the-run-was-made"} == set(page.links)
        text = (folder / "report.md").read_text()
        assert summary.header.network in text and ("uploads unshaped" in text) == unshaped


def study_folder(published: bool = True, claims: bool = True):
    """The lambda-fanout study's report over a run of its local variant (512 and 1024 MB), with
    published figures for our two rows and a claim when asked; its folder and what it showed."""
    records, _ = synthetic_records(per_cell=30, cell_keys=[replace(c, experiment_tag="lambda-fanout-local")
                                                           for c in CELLS[:2]])  # fmt: skip
    summary = summary_of(records, sent=len(records))
    record = summary.header.run
    runs.save(record)
    report.write(summary)
    runs.save(record.but(stack=record.stack.but(backend="local")))  # as fire records it
    manifest = sweeps.Manifest(sweep_id="20250101T000000Z-abcdef", tag="lambda-fanout-local",
                               cells=[sweeps.SweepCell(index=0, status="done", run_id=RUN)])  # fmt: skip
    loaded = study.load("lambda-fanout")
    figures = tuple({"object_size": MIB, "memory_size": memory, "concurrency_limit": 4, "min": 0.2, "p25": 0.5,
                     "avg": 1.0, "p75": 1.5, "max": 3.0} for memory in (512, 1024)) if published else ()  # fmt: skip
    faster = compared.Claim(text="1024 MB downloads no slower than 512 MB", kind="faster", measure="seconds",
                            field="memory_size", faster=1024, slower=512)  # fmt: skip
    # its first published table only (the others are derived from it), with our figures in it
    loaded = replace(loaded, references=(replace(loaded.references[0], figures=figures),),
                     claims=(faster,) if claims else ())  # fmt: skip
    shown = study.write_report(loaded, manifest)
    return study.report_dir(loaded, manifest), loaded, shown


def test_a_study_page_answers_with_the_verdicts_and_plots_ours_against_the_published_figures():
    folder, loaded, shown = study_folder()
    page = Page((folder / "index.html").read_text())
    assert page.headings == markdown_headings(folder)
    assert page.headings == [sections.ANSWER_TITLE, "Published claims", sections.CONTENTS_TITLE, "How it was made",
                             loaded.references[0].table]  # fmt: skip
    text = (folder / "report.md").read_text()
    assert text.startswith(f"# {loaded.title}\n") and "SIMULATION, not a reproduction" in text
    assert "Of 1 published claim: 1 " in text and "| 1024 MB downloads no slower than 512 MB |" in text
    assert (folder / "ours_vs_published.png").is_file() and len(page.alts) == 1
    assert "against the published figures" in page.alts[0]
    assert "| 1048576 | 512 | 4 |" in text and "| 1048576 | 1024 | 4 |" in text  # our two cells, in the published shape
    assert "published p25" in text and "ratio p25" in text
    assert shown.title == loaded.title and shown.network == "simulated network: none (loopback, not modelled)"
    assert {"../../../sweeps/20250101T000000Z-abcdef/index.html", f"../../../{RUN}/index.html"} <= set(page.links)


def test_a_study_without_published_figures_shows_ours_alone_and_says_so():
    folder, loaded, _ = study_folder(published=False, claims=False)
    text = (folder / "report.md").read_text()
    assert "published" not in text.split(f"## {loaded.references[0].table}")[1].split("\n\n")[2]  # the table's header
    assert "no published figures transcribed" in text and (folder / "ours_vs_published.png").is_file()


def test_a_sweep_cells_run_page_links_to_its_sweep_and_study():
    folder, _, _ = study_folder()
    record = runs.load(RUN)
    runs.save(record.but(sweep=run_record.RunSweep(sweep_id="20250101T000000Z-abcdef", cell=0)))
    summary = summary_of(synthetic_records(per_cell=30, cell_keys=[replace(c, experiment_tag="lambda-fanout-local")
                                                                    for c in CELLS[:2]])[0], sent=60)  # fmt: skip
    summary.header.run = runs.load(RUN)
    report.write(summary)
    links = Page((runs.run_dir(RUN) / "index.html").read_text()).links
    assert {"../sweeps/20250101T000000Z-abcdef/index.html", "../studies/lambda-fanout/20250101T000000Z-abcdef/index.html"} <= set(links)


def test_a_transfer_sweep_cells_page_links_to_its_sweep_and_study():
    record = transfer_run(network.load(network.NONE))
    parameters = dict(record.to_json()["parameters"], experiment_tag="cli-upload-threads-local")
    runs.save(run_record.RunRecord.from_json(dict(record.to_json(), parameters=parameters,
                                                  sweep={"sweep_id": "20250101T000000Z-abcdef", "cell": 1})))  # fmt: skip
    messages = [dict(transfer_record(1, 2.0), seq=0, outcome="done"), dict(transfer_record(1, 2.1), seq=1, outcome="done")]
    transfer_report.write(transfer_report.summarize(runs.load(RUN), messages, len(messages), []))
    links = Page((runs.run_dir(RUN) / "index.html").read_text()).links
    assert {"../sweeps/20250101T000000Z-abcdef/index.html",
            "../studies/cli-upload-threads/20250101T000000Z-abcdef/index.html"} <= set(links)  # fmt: skip


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
# One Chromium session and one set of pages (a run, a sweep whose concurrency varies, a study) for
# the whole module: starting a browser and drawing the plots are the slow parts.

BROWSER_TARGET = "make browser"  # installs Chromium and its driver (Debian, as root)
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage")  # fmt: skip
PAGE_WIDTH = 1280  # px: no table wider than the page at this width
FIRST_SCREENS = 1800  # px: the first figure starts within the first two screens


def unavailable(reason: str):
    """Skip, naming what installs what is missing; in CI (CI=true) fail: there the page tests must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the page tests in Chromium (.ci/run installs it)")
    pytest.skip(f"{reason}: `{BROWSER_TARGET}` installs Chromium and its driver, `make test-tools` selenium")


@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium driven by selenium, its window PAGE_WIDTH wide."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("selenium is not installed")
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (browser and driver):
        unavailable("Chromium is not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (*FLAGS, f"--window-size={PAGE_WIDTH},1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    session = webdriver.Chrome(options=options, service=Service(driver))
    session.set_window_size(PAGE_WIDTH, 1000)
    yield session
    session.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The pages the browser opens, written once: {name: folder}."""
    root = tmp_path_factory.mktemp("pages")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FANOUT_RESULTS", str(root / "results"))
        study, _, _ = study_folder()  # writes the run too
        run = runs.run_dir(RUN)
        latency_report.write(latency_summary(5))
        longest = root / "longest"  # 24 cells labelled by the longest strategies and tags the tool makes
        crossrun.write(cross_summary(), longest)
        return {"run": run, "sweep": across_folder(root, concurrencies=(2, 2, 8)), "study": study,
                "latency": runs.run_dir(LATENCY_RUN), "longest": longest}


TABLE_CELLS = """return Array.from(document.querySelectorAll('table')).map(t => [t.dataset.title,
  Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.textContent))]);"""
LAYOUT = """const page = document.documentElement.clientWidth;
  return {page: page, scroll: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
    tables: Array.from(document.querySelectorAll('table')).map(t => [t.dataset.title, t.getBoundingClientRect().right]),
    firstFigure: document.images[0].getBoundingClientRect().top + window.scrollY,
    resources: performance.getEntriesByType('resource').map(r => r.name),
    csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]').content};"""
CANARY = """const done = arguments[arguments.length - 1];
  document.addEventListener('securitypolicyviolation', e => done(e.effectiveDirective));
  const image = document.createElement('img');
  image.src = 'http://127.0.0.1:9/canary.png';
  document.body.appendChild(image);
  setTimeout(() => done(null), 3000);"""


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


@pytest.mark.parametrize("name", ["run", "sweep", "study", "latency", "longest"])
def test_at_1280_px_every_table_fits_the_first_figure_is_on_the_first_two_screens_and_nothing_comes_from_outside(
        chromium, pages, name, tmp_path):  # fmt: skip
    folder = pages[name]
    opened(chromium, folder / "index.html", tmp_path / f"{name}.png")
    layout = chromium.execute_script(LAYOUT)
    assert layout["innerWidth"] == PAGE_WIDTH and layout["scroll"] <= layout["page"], layout
    wide = [(title, right) for title, right in layout["tables"] if right > layout["page"]]
    assert not wide, f"tables past the page's edge ({layout['page']} px): {wide}"
    assert layout["firstFigure"] <= FIRST_SCREENS
    assert all(url.startswith("data:") for url in layout["resources"]), layout["resources"]
    assert "default-src 'none'" in layout["csp"]
    text = (folder / "index.html").read_text()
    page = Page(text)
    assert all(source.startswith("data:") for source in page.sources)  # images, icon: embedded
    style = "".join(page.styles)
    assert "@import" not in style and "url(" not in style and "<script" not in text
    assert chromium.execute_async_script(CANARY) == "img-src"  # the page's CSP refuses what the file does not hold
    chromium.get_log("browser")  # the refusal's message


def test_the_run_page_in_chromium_shows_summary_csv(chromium, pages, tmp_path):
    folder = pages["run"]
    tables = opened(chromium, folder / "index.html", tmp_path / "run.png")
    with open(folder / "summary.csv") as f:
        cells = list(csv.DictReader(f))
    checked = 0
    for metric, (title, _) in report.METRICS.items():
        shown = by_label(tables[title + report.AT_TARGET_TITLE], "memory MB")  # the one cell field that varies
        for cell in cells:
            row = shown[(cell["memory_size"],)]
            assert row["n"] == cell["n"]
            for stat in STATISTICS:
                assert_shown(row[stat], cell[f"{metric}_{stat}"])
                checked += 1
    assert checked == len(cells) * len(report.METRICS) * len(STATISTICS) and len(cells) == 2


def test_the_sweep_page_in_chromium_shows_cells_csv(chromium, pages, tmp_path):
    folder = pages["sweep"]
    tables = opened(chromium, folder / "index.html", tmp_path / "sweep.png")
    with open(folder / "cells.csv") as f:
        cells = list(csv.DictReader(f))
    shown = by_label(tables["Throughput (MB/s)" + crossrun.AT_TARGET_TITLE], "MB", "conc")
    intervals = by_label(tables[crossrun.CI_TITLE], "MB", "conc")
    assert len(cells) == len(shown) == 3
    for cell in cells:
        row = shown[(cell["memory_size"], cell["concurrency_limit"])]
        assert row["n"] == cell["n"]
        for stat in STATISTICS:
            assert_shown(row[stat], cell[f"mb_per_s_{stat}"])
        low, high = intervals[(cell["memory_size"], cell["concurrency_limit"])]["p50 95% CI"].split("-")
        assert_shown(low, cell["mb_per_s_p50_ci_low"])
        assert_shown(high, cell["mb_per_s_p50_ci_high"])


def test_without_chromium_ci_fails_and_elsewhere_the_skip_names_the_make_target_that_installs_it(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run the page tests"):
        unavailable("Chromium is not installed")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match=f"`{BROWSER_TARGET}` installs Chromium"):
        unavailable("Chromium is not installed")
    shown = subprocess.run(["make", "-n", BROWSER_TARGET.split()[1]], cwd=paths.REPO, capture_output=True, text=True)
    assert "apt-get install -y chromium chromium-driver" in shown.stdout
