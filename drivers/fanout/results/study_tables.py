"""A study's report: our figures in the published table's shape, the published ones beside them
with the ratio per cell, and a verdict per published claim with the confidence interval that
decides it.

Computed exactly from the study's saved records, so a report is the same whenever it is drawn,
and drawn as sections like every other report. The verdicts' rules: docs/studies.md, *The
report*.
"""

import dataclasses
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from fanout.results.sections import Table

SUPPORTED, CONTRADICTED, UNDECIDED, UNTESTABLE = "supported", "contradicted", "not decided", "not testable"


@dataclass(frozen=True)
class Measure:
    """A value read from each record, with its unit as the report writes it."""

    unit: str
    read: Callable[[dict], float | None]


# What a study's table or claim measures: the one list of choices (the loader checks names against it).
MEASURES = {
    "seconds": Measure("s", lambda r: r.get("seconds")),
    "first_byte_seconds": Measure("s", lambda r: r.get("first_byte_seconds")),
    "mb_per_s": Measure("MB/s (decimal)", lambda r: r["bytes"] / r["seconds"] / 1e6 if r.get("seconds") else None),
    "mib_per_s": Measure("MiB/s (binary, 2^20 bytes/s)", lambda r: r.get("mib_per_s")),  # seqread's, as fio's
}
# The statistics a published table may hold, as fanout.results.stats.describe names them.
STATISTICS = ("n", "min", "p25", "p50", "avg", "p75", "p90", "p99", "max")


@dataclass(frozen=True)
class Reference:
    """The published table: `measure` per row of the record fields `rows` (e.g. memory_size x
    concurrency_limit), the statistics it reports, and its figures, one dict per published row
    (the row fields and a value per statistic; empty when not transcribed)."""

    table: str
    measure: str
    rows: tuple[str, ...]
    statistics: tuple[str, ...]
    figures: tuple[dict, ...] = ()
    where: dict = dataclasses.field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class Claim:
    """A published claim and how to test it (`kind`: a key of CLAIM_KINDS; the other fields as
    that kind reads them)."""

    text: str
    kind: str
    measure: str
    field: str  # shadows dataclasses.field in this class's body: hence dataclasses.field
    where: dict = dataclasses.field(default_factory=dict)
    per: str = ""  # the claim holds at every value of this record field (at least `at_least`)
    at_least: float = 0
    faster: str = ""  # kind faster
    slower: str = ""
    baseline: str = ""  # kind max_reduction: 1 - median(other) / median(baseline), at most `value`
    other: str = ""
    value: float = 0.0
    low: float = 0.0  # kind spread: fastest over slowest group's median within [low, high]
    high: float = 0.0


def select(records: list[dict], where: dict) -> list[dict]:
    """The records whose fields equal `where`'s values (a list value: any of them)."""
    def matches(record, value, name):
        return record.get(name) in value if isinstance(value, list) else record.get(name) == value

    return [r for r in records if all(matches(r, value, name) for name, value in where.items())]


def values(records: list[dict], measure: str) -> list[float]:
    read = MEASURES[measure].read
    return [v for v in (read(r) for r in records) if v is not None]


# ---- the published table beside ours ---------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One statistic of one row (a cell of the published table's shape): ours with its interval
    (None where the statistic has none: n, min, max, or under two records) and the published
    figure (None where the source has none)."""

    key: tuple
    statistic: str
    ours: float | None
    interval: tuple[float, float] | None
    published: float | None


def points(reference: Reference, records: list[dict], intervals: bool = True) -> list[Point]:
    """Per row (the rows the records have, in order, then those only the source has) and per
    statistic of the table: ours, its interval (unless `intervals` is False) and the published
    figure."""
    from fanout.results import stats  # numpy and scipy: imported by a report, never by the CLI's parser
    chosen = select(records, reference.where)
    keys = sorted({tuple(r.get(name) for name in reference.rows) for r in chosen}, key=_order)
    published = {tuple(f[name] for name in reference.rows): f for f in reference.figures}
    keys += [key for key in sorted(published, key=_order) if key not in keys]
    found = []
    for key in keys:
        ours = values([r for r in chosen if tuple(r.get(n) for n in reference.rows) == key], reference.measure)
        described = stats.describe(ours) if ours else {}
        cis = stats.named_intervals(ours if intervals else [], reference.statistics)
        found += [Point(key, name, described.get(name), cis[name], published.get(key, {}).get(name))
                  for name in reference.statistics]  # fmt: skip
    return found


def comparison(reference: Reference, records: list[dict]) -> Table:
    """Per row (points()): our statistics and, when the source's figures are transcribed, the
    published ones and ours over published (a study without them shows ours alone, and says so)."""
    from fanout.results import stats  # as points()
    found = points(reference, records, intervals=False)
    beside = bool(reference.figures)
    header = [*reference.rows]
    for name in reference.statistics:
        header += [f"ours {name}", f"published {name}", f"ratio {name}"] if beside else [name]
    rows = [header]
    for key in dict.fromkeys(point.key for point in found):
        row: list = list(key)
        for point in (p for p in found if p.key == key):
            mine, source = point.ours, point.published
            row += [mine, source, mine / source if mine is not None and source else None] if beside else [mine]
        rows.append(row)
    unit = MEASURES[reference.measure].unit
    where = ("ratio = ours / published; '-': no figure (not in that table)" if beside else
             "no published figures transcribed: ours alone")  # fmt: skip
    caption = (f"{reference.measure} in {unit}; {where}. Ours: percentiles by {stats.PERCENTILE_METHOD}, over every "
               f"record of the row. {reference.note}").strip()  # fmt: skip
    return Table(reference.table, rows, caption, caption, labels=len(reference.rows))


def _order(key: tuple):
    """Rows sort numerically where they are numbers."""
    return tuple((0, v, "") if isinstance(v, int | float) else (1, 0, str(v)) for v in key)


# ---- claims -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    claim: str
    verdict: str
    evidence: str


def verdicts(claims: list[Claim], records: list[dict]) -> list[Verdict]:
    """Each claim's verdict and the interval that decided it."""
    return [CLAIM_KINDS[claim.kind](claim, select(records, claim.where)) for claim in claims]


def tally(found: list[Verdict]) -> str:
    """`2 of 3 published claims supported, 1 contradicted`: the verdicts in a sentence."""
    counts = {name: sum(v.verdict == name for v in found) for name in (SUPPORTED, CONTRADICTED, UNDECIDED, UNTESTABLE)}
    parts = [f"{count} {name}" for name, count in counts.items() if count]
    return f"Of {len(found)} published claim{'s' if len(found) != 1 else ''}: {', '.join(parts)}."


def judge(claims: list[Claim], records: list[dict], found: list[Verdict] | None = None) -> Table:
    """One row per claim: its verdict and the interval that decided it (`found`: verdicts(), when
    computed already)."""
    from fanout.results import stats  # as comparison()
    found = verdicts(claims, records) if found is None else found
    rows = [["claim", "verdict", "evidence"], *([v.claim, v.verdict, v.evidence] for v in found)]
    caption = (f"Medians compared as ratios with a {stats.CI_METHOD}, each side resampled on its own; "
               f"a claim is supported or contradicted only when the interval lies wholly on one side.")
    return Table("Published claims", rows, caption, caption, labels=1)  # the claim


def _groups(claim: Claim, records: list[dict]) -> list[tuple[str, list[dict]]]:
    """The records split by `per` (each value from `at_least` up), or all of them as one group."""
    if not claim.per:
        return [("", records)]
    found = sorted({r[claim.per] for r in records if r.get(claim.per) is not None and r[claim.per] >= claim.at_least})
    return [(f"{claim.per} {v}", [r for r in records if r.get(claim.per) == v]) for v in found]


def _ratio(claim: Claim, records: list[dict], a: object, b: object):
    """median(b) / median(a) of the claim's measure and its interval; None below two values a side."""
    first = values([r for r in records if r.get(claim.field) == a], claim.measure)
    second = values([r for r in records if r.get(claim.field) == b], claim.measure)
    if len(first) < 2 or len(second) < 2:
        return None
    from fanout.results import stats  # as comparison()

    [ci] = stats.ratio_intervals(first, second, [50])
    return statistics.median(second) / statistics.median(first), ci


def _faster(claim: Claim, records: list[dict]) -> Verdict:
    """`faster` has the lower median at every group: median(slower) / median(faster) above 1."""
    evidence, verdicts = [], []
    for name, group in _groups(claim, records):
        found = _ratio(claim, group, claim.faster, claim.slower)
        if found is None:
            return Verdict(claim.text, UNTESTABLE, f"fewer than 2 records of {claim.faster} or {claim.slower} {name}".strip())
        ratio, (low, high) = found
        verdicts.append(SUPPORTED if low > 1 else CONTRADICTED if high < 1 else UNDECIDED)
        evidence.append(f"{name + ': ' if name else ''}{claim.slower}/{claim.faster} median {ratio:.2f} [{low:.2f}, {high:.2f}]")
    if not verdicts:
        return Verdict(claim.text, UNTESTABLE, "no records")
    verdict = CONTRADICTED if CONTRADICTED in verdicts else UNDECIDED if UNDECIDED in verdicts else SUPPORTED
    return Verdict(claim.text, verdict, "; ".join(evidence))


def _max_reduction(claim: Claim, records: list[dict]) -> Verdict:
    """The largest 1 - median(other) / median(baseline) over the groups, against `value`: the
    interval of that reduction holding `value` supports it."""
    found = []
    for name, group in _groups(claim, records):
        ratio = _ratio(claim, group, claim.baseline, claim.other)
        if ratio is not None:
            found.append((1 - ratio[0], 1 - ratio[1][1], 1 - ratio[1][0], name))
    if not found:
        return Verdict(claim.text, UNTESTABLE, f"fewer than 2 records of {claim.baseline} or {claim.other}")
    best, low, high, name = max(found)
    verdict = SUPPORTED if low <= claim.value <= high else CONTRADICTED
    return Verdict(claim.text, verdict, f"largest reduction{' at ' + name if name else ''}: {best:.1%} "
                   f"[{low:.1%}, {high:.1%}] against the published {claim.value:.1%}")  # fmt: skip


def _spread(claim: Claim, records: list[dict]) -> Verdict:
    """Fastest over slowest group's median (groups: the values of `field`) within [low, high]:
    supported when its interval overlaps the published range, contradicted when it lies outside."""
    medians = {v: float(statistics.median(values(select(records, {claim.field: v}), claim.measure)))
               for v in {r.get(claim.field) for r in records if r.get(claim.field)}
               if len(values(select(records, {claim.field: v}), claim.measure)) >= 2}  # fmt: skip
    if len(medians) < 2:
        return Verdict(claim.text, UNTESTABLE, f"fewer than 2 values of {claim.field} with 2 records or more")
    slowest, fastest = min(medians, key=lambda v: medians[v]), max(medians, key=lambda v: medians[v])
    found = _ratio(claim, records, slowest, fastest)
    assert found is not None, "both groups have 2 records or more"
    ratio, (low, high) = found
    verdict = CONTRADICTED if high < claim.low or low > claim.high else SUPPORTED
    return Verdict(claim.text, verdict, f"{fastest} over {slowest} ({len(medians)} values of {claim.field}): "
                   f"{ratio:.2f}x [{low:.2f}, {high:.2f}] against {claim.low:g}x-{claim.high:g}x")  # fmt: skip


# The kinds of claim a study may state, and what each needs besides text, kind, measure and field.
CLAIM_KINDS = {"faster": _faster, "max_reduction": _max_reduction, "spread": _spread}
CLAIM_NEEDS = {"faster": ("faster", "slower"), "max_reduction": ("baseline", "other", "value"), "spread": ("low", "high")}
