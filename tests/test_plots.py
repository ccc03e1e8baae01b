"""Every plot the tool draws, fed the longest labels it can produce (strategies at their longest
parameters, 64-character tags, several cells, a mixed network caption), read as a person would:
after drawing, no text leaves the figure, no two texts overlap, no legend covers data or text.
Inputs are built the way the reports build them: records as the function writes them, the
run report's summary fields, crossrun.summarize over run folders, the latency query's rows."""

import io
import itertools
import json
import random

import matplotlib
import numpy as np
import pytest
from crossrun.support import make_run
from latency_calls import calls
from matplotlib.axis import Axis
from matplotlib.text import Text

from fanout.local import backends
from fanout.results import concurrency, figures
from fanout.workloads.download import strategies
from fanout.workloads.download import across_plots as crossplots, across as crossrun, plots
from fanout.common import function_modules
from fanout import insights
from fanout.local import network
from fanout.workloads.latency import storage as storage_classes
from fanout.workloads.latency import report as latency_report

matplotlib.use("Agg")

TOLERANCE = 0.5  # pixels: boxes that merely touch do not overlap
TAG_WORDS = "sweep-2026-11-25-ranged-vs-stream-memory-scan-on-the-lambda-2026"  # 64 characters, fire's maximum
TAG_SOLID = "x" * 64  # no place to break a line
FUNCTION_TIMELINE = function_modules.load("timeline")
LOCAL_RUN = {"backend": "local", "network": {"profile": "lambda-2026", "scale": 12.5}}
NO_CGROUP = ("no cgroup v1 {0} controller at /sys/fs/cgroup/{0}, and the cgroup v2 hierarchy at /sys/fs/cgroup/unified "
             "has no {0} controller")
LONGEST_LIMITS = {  # how a host that could hold none of Lambda's limits recorded them, at the largest sizes
    "memory (10240 MB)": f"enforced by watchdog (no memory cgroup: {NO_CGROUP.format('memory')})",
    "CPU share": f"not enforced: no cpu cgroup ({NO_CGROUP.format('cpu')})",
    "/tmp (10240 MB)": "not enforced: no loop mount (mount: /tmp: failed to setup loop device for /tmp/tmp-x.img.)",
}
LIMITS_LINE = "Lambda's limits: " + "; ".join(f"{name}: {how}" for name, how in sorted(LONGEST_LIMITS.items()))


def longest_strategies() -> list[str]:
    """Every strategy with each parameter at its highest value: the longest canonical texts."""
    return [str(strategies.Choice(s, tuple((p.name, p.high) for p in s.params))) for s in strategies.STRATEGIES.values()]


# ---- the check ---------------------------------------------------------------------------------


def assert_readable(fig) -> None:
    """Draw `fig` and check it reads: every drawn text inside the figure and clear of every other;
    every legend inside the figure, off every axes (data) and off every text not its own."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [(text, text.get_window_extent(renderer)) for text in drawn_texts(fig)]
    assert texts, "nothing drawn"
    for text, box in texts:
        assert inside(box, fig.bbox), f"text cut off: {text.get_text()!r} at {pixels(box)}, figure {pixels(fig.bbox)}"
    for (a, box_a), (b, box_b) in itertools.combinations(texts, 2):
        assert not overlap(box_a, box_b), f"texts overlap: {a.get_text()!r} and {b.get_text()!r}"
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert inside(box, fig.bbox), f"legend cut off at {pixels(box)}, figure {pixels(fig.bbox)}"
        for ax in fig.axes:
            assert not (ax.get_visible() and overlap(box, ax.bbox)), "a legend covers an axes' data"
        own = set(drawn_texts(legend))
        for text, text_box in texts:
            assert text in own or not overlap(box, text_box), f"a legend covers {text.get_text()!r}"


def drawn_texts(artist):
    """The visible, non-empty texts under `artist`, tick labels only of ticks within view."""
    if not artist.get_visible():
        return
    if isinstance(artist, Axis):
        for child in (artist.label, artist.offsetText, *tick_labels(artist)):
            yield from drawn_texts(child)
        return
    if isinstance(artist, Text) and artist.get_text().strip():
        yield artist
    for child in artist.get_children():
        yield from drawn_texts(child)


def tick_labels(axis: Axis):
    """The labels of the ticks matplotlib draws: those whose location is within the view."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * (high - low)
    for locations, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks),
                             (axis.get_minorticklocs(), axis.get_minor_ticks)):  # fmt: skip
        for location, tick in zip(locations, ticks(len(locations))):
            if tick.get_visible() and low - slack <= location <= high + slack:
                yield from (tick.label1, tick.label2)


def overlap(a, b) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > TOLERANCE and min(a.y1, b.y1) - max(a.y0, b.y0) > TOLERANCE


def inside(box, figure) -> bool:
    return (box.x0 >= figure.x0 - TOLERANCE and box.y0 >= figure.y0 - TOLERANCE
            and box.x1 <= figure.x1 + TOLERANCE and box.y1 <= figure.y1 + TOLERANCE)  # fmt: skip


def pixels(box) -> tuple[int, ...]:
    """(x, y, width, height), rounded: for messages."""
    return tuple(round(float(v)) for v in box.bounds)


def png(fig) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


@pytest.fixture
def results(tmp_path, monkeypatch):
    """Run folders go to this test's own results directory."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))


@pytest.fixture(autouse=True)
def close_figures():
    yield
    matplotlib.pyplot.close("all")


# ---- the checker itself ------------------------------------------------------------------------


def test_the_check_catches_overlapping_cut_off_and_covering_texts():
    plt = matplotlib.pyplot
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.set_xticks(range(4), ["a long tick label"] * 4)
    with pytest.raises(AssertionError, match="overlap"):
        assert_readable(fig)
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_title("a title far wider than the three inches of this figure")
    with pytest.raises(AssertionError, match="cut off"):
        assert_readable(fig)
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.plot([0, 1], label="data")
    ax.legend()
    with pytest.raises(AssertionError, match="covers an axes"):
        assert_readable(fig)
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.set_xticks([0, 1], ["0", "1"])
    assert_readable(fig)  # a plain figure passes


# ---- one run's report (fanout.workloads.download.plots) -----------------------------------------------------------


def download_records(cells: list[tuple], per_cell=12, seed=0, seconds_scale=1.0) -> list[dict]:
    """Download records as the function writes them, byte-arrival timelines included, for cells of
    (memory, concurrency, object size, strategy, tag)."""
    rng = np.random.default_rng(seed)
    records, seq, t0 = [], 0, 1_700_000_000_000
    for memory, limit, size, strategy, tag in cells:
        for _ in range(per_cell):
            seconds = float(rng.lognormal(0.5, 0.4)) * seconds_scale
            start = t0 + int(rng.integers(0, 5_000 * seconds_scale))
            ticks = max(2, int(seconds * 100))
            shares = rng.dirichlet(np.ones(ticks))
            counts = np.diff(np.round(np.cumsum(shares) * size).astype(int), prepend=0).tolist()
            interval_ms, text = FUNCTION_TIMELINE.encode(counts, 10)
            records.append({
                "event": "download", "run_id": "r", "seq": seq, "experiment_tag": tag, "memory_size": memory,
                "concurrency_limit": limit, "object_size": size, "strategy": strategy, "bytes": size,
                "seconds": seconds, "mbps": size * 8 / seconds / 1e6, "start_ms": start,
                "end_ms": start + int(seconds * 1000), "cold_start": seq % 5 == 0, "receive_count": 1,
                "timeline": text, "timeline_interval_ms": interval_ms,
            })  # fmt: skip
            seq += 1
    return records


def run_summary(records, run=LOCAL_RUN) -> tuple:
    """What the plots read of a run's summary: its records, its cells, its labels (network, the
    longest limits)."""
    return records, [], [network.label(backends.simulated(run["backend"]), run.get("network")), LIMITS_LINE]


def long_cells() -> list[tuple]:
    """Every field varying, strategies and tags at their longest."""
    found = [(10240, 1000, 5 * 10**9, strategy, tag)
             for strategy, tag in zip(longest_strategies(), itertools.cycle((TAG_WORDS, TAG_SOLID)))]  # fmt: skip
    return found + [(128, 2, 1, "stream chunk_size=1KiB", "short")]


@pytest.mark.parametrize("cells", [long_cells(), long_cells()[:1]], ids=["many-long-cells", "one-long-cell"])
def test_the_run_report_plots_read_with_the_longest_labels(cells):
    figures = plots.build(*run_summary(download_records(cells)))
    assert set(figures) == {"throughput.png", "concurrency.png", "seconds_cdf.png", "timeline.png",
                            "throughput_by_concurrency_ran_at.png"}
    for name, fig in figures.items():
        assert_readable(fig)


def test_run_report_plots_are_captioned_with_the_network_and_the_limits_and_deterministic():
    summary = run_summary(download_records(long_cells()[:2]))
    first, second = plots.build(*summary), plots.build(*summary)
    for name in first:
        assert first[name]._supxlabel.get_text() == ("simulated network: lambda-2026, scale 12.5 (rates / 12.5, first byte "
                                                     f"not scaled)\n{LIMITS_LINE}")
        assert png(first[name]) == png(second[name]), name


def test_times_below_a_second_are_shown_in_milliseconds():
    fast = plots.build(*run_summary(download_records(long_cells()[:2], seconds_scale=0.05)))
    assert "(ms)" in fast["seconds_cdf.png"].axes[0].get_xlabel()
    slow = plots.build(*run_summary(download_records(long_cells()[:2], seconds_scale=2)))
    assert "(s)" in slow["seconds_cdf.png"].axes[0].get_xlabel()
    records = download_records(long_cells()[:2], seconds_scale=0.05)
    seconds = sorted(r["seconds"] for r in records if r["strategy"] == records[0]["strategy"])
    line = plots.build(*run_summary(records))["seconds_cdf.png"].axes[0].get_lines()[0]
    assert line.get_xdata() == pytest.approx(np.array(seconds) * 1000)


def test_every_run_plot_says_what_every_cell_shares_and_no_title_leaves_a_word_alone():
    """The at-target scatter had no `every cell:` line where the others had one; the timeline's
    title wrapped its last words ("per cell") onto a line of their own."""
    built = plots.build(*run_summary(download_records(long_cells()[:2])))
    for name, fig in built.items():
        title_lines = fig._suptitle.get_text().splitlines()
        assert title_lines[1].startswith("every cell: 10240 MB"), (name, title_lines)
        assert len(title_lines[0].split()) > 2 and not title_lines[0].endswith((":", ",")), (name, title_lines)


def test_a_label_breaks_between_words_never_inside_a_hyphenated_one():
    """The README's figure broke its tag as `tag=lambda-` / `fanout-local`."""
    text = ("every cell: concurrency 2, 8 MiB, download_file max_concurrency=10 chunk_size=8MiB threshold=8MiB, "
            "tag=lambda-fanout-local")
    assert figures.wrap(text, figures.TITLE_CHARS).splitlines()[-1] == "tag=lambda-fanout-local"
    assert figures.wrap(TAG_SOLID, 34).splitlines() == [TAG_SOLID[:34], TAG_SOLID[34:]]  # no space: still cut


def band_count(fig) -> int:
    """The filled bands on a figure's first axes."""
    return sum(isinstance(c, matplotlib.collections.FillBetweenPolyCollection) for c in fig.axes[0].collections)


def test_the_timeline_draws_no_p10_p90_band_over_fewer_than_ten_downloads():
    few = plots.build(*run_summary(download_records(long_cells()[:2], per_cell=4)))["timeline.png"]
    enough = plots.build(*run_summary(download_records(long_cells()[:2], per_cell=10)))["timeline.png"]
    assert (band_count(few), band_count(enough)) == (0, 2)
    assert "10 downloads or more" in few.legends[0].get_title().get_text().replace("\n", " ")


# ---- the report across runs (fanout.workloads.download.across_plots) ------------------------------------------------


def cross_summary(*, networks=(None,), strategy_list=None, tags=(TAG_WORDS, TAG_SOLID)) -> dict:
    """crossrun.summarize over run folders: memory x concurrency per strategy, tag and network."""
    numbers = itertools.count(1)
    run_ids = []
    for model, strategy, tag, memory, limit in itertools.product(
            networks, strategy_list or longest_strategies()[:2], tags, (1769, 10240), (2, 40, 1000)):  # fmt: skip
        run_id, _ = make_run(next(numbers), memory=memory, concurrency=limit, strategy=strategy, tag=tag,
                             per_slot=1 if limit == 1000 else 3, median_s=5e9 / (memory * 50_000), network=model,
                             object_size=5 * 10**9, limits=LONGEST_LIMITS)  # fmt: skip
        run_ids.append(run_id)
    return crossrun.summarize([crossrun.load(run_id) for run_id in run_ids], "longest labels")


@pytest.mark.parametrize("kwargs", [{}, {"networks": (None, {"profile": "lambda-2026", "scale": 12.5}),
                                         "strategy_list": longest_strategies()[:1], "tags": (TAG_SOLID,)}],
                         ids=["strategies-and-tags", "mixed-networks"])  # fmt: skip
def test_the_cross_run_plots_read_with_the_longest_labels(results, kwargs):
    summary = cross_summary(**kwargs)
    figures = crossplots.build(summary, crossrun.CELLS.long_label)
    assert set(figures) == {"throughput_vs_concurrency.png", "by_variable.png", "median_throughput_heatmap.png",
                            "seconds_by_cell.png", "throughput_by_concurrency_ran_at.png"}  # fmt: skip
    for fig in figures.values():
        assert_readable(fig)
        assert fig._supxlabel.get_text() == f"{summary.network}\n{LIMITS_LINE}"


def test_download_times_per_cell_are_in_seconds_and_name_memory_as_the_tables_do(results):
    """seconds_by_cell.png was in ms (the tables are in seconds) and said "MB 1769" where the
    other plots say "1769 MB"."""
    summary = cross_summary(strategy_list=longest_strategies()[:1], tags=("short",))
    fig = crossplots.build(summary, crossrun.CELLS.long_label)["seconds_by_cell.png"]
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("Download time (s, ")
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    assert labels and all("MB" in text and "MB 1" not in text for text in labels), labels
    assert any(text.startswith("1769 MB") for text in labels), labels
    assert max(line.get_xdata().max() for line in ax.get_lines()) == pytest.approx(
        max(max(sample["seconds"]) for sample in summary.samples), rel=0.5)  # seconds, not ms


def test_the_heatmap_colour_scale_states_its_range_and_unit(results):
    summary = cross_summary(tags=(TAG_WORDS,))
    medians = [np.median(sample["mb_per_s"]) for sample in summary.samples]
    heatmap = crossplots.build(summary, crossrun.CELLS.long_label)["median_throughput_heatmap.png"]
    [scale] = [ax for ax in heatmap.axes if ax.get_label() == "<colorbar>"]
    ticks = scale.get_yticks()
    assert ticks[0] == pytest.approx(min(medians)) and ticks[-1] == pytest.approx(max(medians))
    assert "MB/s" in scale.get_ylabel() and f"from {figures.number(min(medians))} to {figures.number(max(medians))}" in scale.get_ylabel()


# ---- the latency workload's report -------------------------------------------------------------


def latency_records(scale: float, seed=4) -> list[dict]:
    """PUT and GET calls of every storage class at sizes from 1 B to 100 MB, as the function logs them."""
    rng = random.Random(seed)
    return [call for storage in storage_classes.CLASSES
            for call in calls(rng, storage, scale, sizes=(1, 1000, 10**6, 10**8), reps=8, base_s=0.01, bytes_per_s=5e8)]


def latency_figure(records):
    events = [{"timestamp": 1_700_000_000_000 + i, "message": json.dumps(r)} for i, r in enumerate(records)]
    rows = insights.evaluate(insights.load_query(latency_report.QUERY), events).rows
    return latency_report.figure(rows, records, [network.label(backends.simulated(LOCAL_RUN["backend"]), LOCAL_RUN.get("network")), LIMITS_LINE])


def test_the_latency_plot_reads_and_is_in_milliseconds_below_a_second():
    records = latency_records(scale=1.0)
    assert max(r["seconds"] for r in records) < 1
    fig = latency_figure(records)
    assert_readable(fig)
    assert "(ms" in fig.axes[0].get_ylabel()
    standard_put = [r["seconds"] for r in records if (r["storage"], r["operation"], r["size"]) == ("standard", "put", 1)]
    [line] = [line for line in fig.axes[0].get_lines() if line.get_label() == "standard put"]
    assert line.get_ydata()[0] == pytest.approx(np.median(standard_put) * 1000)
    assert fig._supxlabel.get_text() == f"{network.label(backends.simulated(LOCAL_RUN['backend']), LOCAL_RUN.get('network'))}\n{LIMITS_LINE}"


def test_the_latency_plot_stays_in_seconds_when_a_call_takes_longer():
    fig = latency_figure(latency_records(scale=30.0))
    assert_readable(fig)
    assert "(s;" in fig.axes[0].get_ylabel()



def fanout_rehearsal_records() -> list[dict]:
    """The fan-out study's rehearsal as its records are: 8 MiB at 1024/2048 MB x concurrency 1/2,
    four downloads a cell, seconds spread so that each cell has an interval."""
    rng = random.Random(7)
    return [{"object_size": 8 * 2**20, "memory_size": memory, "concurrency_limit": concurrency,
             "seconds": rng.uniform(0.4, 1.2), "bytes": 8 * 2**20, "mib_per_s": rng.uniform(8, 20)}
            for memory in (1024, 2048) for concurrency in (1, 2) for _ in range(4)]  # fmt: skip


@pytest.mark.parametrize("index", [0, 1], ids=["seconds", "derived-mbps"])
def test_the_fan_out_rehearsal_reads_beside_the_twelve_published_rows(index):
    """Our four 8 MiB cells and the source's twelve 1 GiB rows in one plot: every row's label
    reads, and the axis names the table's own unit (the derived table's is the source's 'Mbps')."""
    from fanout.results import study_plots, study_tables
    from fanout.stages import study

    loaded = study.load("lambda-fanout")
    reference = loaded.references[index]
    found = study_tables.points(reference, fanout_rehearsal_records())
    fig = study_plots.figure(reference, found, [network.label(True, {"profile": "lambda-2024", "scale": 5.9}), LIMITS_LINE],
                             study.row_label(loaded.workload, reference.rows))  # fmt: skip
    assert_readable(fig)
    ax = fig.axes[0]
    assert len(ax.get_xticks()) == 4 + 12 and len(reference.figures) == 12
    assert ax.get_ylabel() == ("seconds (s)" if index == 0 else "'Mbps' (Mibit/s)")
    published = [c for c in ax.collections if c.get_label().startswith("published")]
    assert len(published) == len(reference.statistics)  # a hollow diamond series per statistic
