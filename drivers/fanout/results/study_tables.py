"""A study's report: our figures in each published table's shape, the published ones beside them
with the ratio per cell, and a verdict per published claim with the confidence interval that
decides it.

Computed exactly from the study's saved records, so a report is the same whenever it is drawn,
and drawn as sections like every other report. A table may be derived from another's
statistics as its source derived it (DERIVATIONS). The verdicts' rules: docs/studies.md, *The
report*.
"""

import dataclasses
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from fanout.results import tables
from fanout.results.sections import Table

SUPPORTED, CONTRADICTED, UNDECIDED, UNTESTABLE = "supported", "contradicted", "not decided", "not testable"
# A rehearsal's verdicts on the local backend that are no test of the claim (Claim.aws_only,
# Claim.decided_by_model): the claim needs AWS, or the model's own parameters decide it.
AWS_ONLY, BY_THE_MODEL = "AWS only", "decided by the model"
# "About X": X within this fraction either side, on the ratio the claim compares (docs/studies.md).
ABOUT = 0.2


@dataclass(frozen=True)
class Measure:
    """A value read from each record, with its unit as the report writes it; `rate`: higher is faster."""

    unit: str
    read: Callable[[dict], float | None]
    rate: bool = False


def _per_second(record: dict, field: str) -> float | None:
    return record[field] / record["seconds"] if record.get(field) and record.get("seconds") else None


# What a study's table or claim measures: the one list of choices (the loader checks names against it).
MEASURES = {
    "seconds": Measure("s", lambda r: r.get("seconds")),
    "first_byte_seconds": Measure("s", lambda r: r.get("first_byte_seconds")),
    "mb_per_s": Measure("MB/s (decimal)", lambda r: (v / 1e6 if (v := _per_second(r, "bytes")) else None), rate=True),
    "mib_per_s": Measure("MiB/s (binary, 2^20 bytes/s)", lambda r: r.get("mib_per_s"), rate=True),  # seqread's, as fio's
    "mibit_per_s": Measure("Mibit/s (2^20 bits/s, each download's own rate)",
                           lambda r: (v * 8 if (v := r.get("mib_per_s")) else None), rate=True),  # fmt: skip
    "requests_per_s": Measure("requests/s (each record's requests_per_s: its GETs over its seconds)",
                              lambda r: r.get("requests_per_s"), rate=True),  # fmt: skip
}
# The statistics a published table may hold, as fanout.results.stats.describe names them.
STATISTICS = ("n", "min", "p25", "p50", "avg", "p75", "p90", "p99", "max")
# What a claim compares of each side: its median, or its mean (a source that averaged its runs).
CLAIM_STATISTICS = ("median", "mean")
# A reciprocal turns each statistic into its mirror: the slowest seconds are the lowest rate.
# The statistics a derived table may hold: each has its mirror among STATISTICS.
MIRROR = {"min": "max", "p25": "p75", "p50": "p50", "avg": "avg", "p75": "p25", "max": "min"}


@dataclass(frozen=True)
class Derivation:
    """A published table computed from another's statistics, as its source computed it: per
    statistic, `numerator(row)` over the mirrored statistic of the measure (MIRROR)."""

    unit: str
    text: str
    needs: str  # the row field the numerator reads
    numerator: Callable[[dict], float]
    axis: str  # the unit in a few words, for a plot's axis


DERIVATIONS = {
    # The Lambda fan-out source's "Mbps": 1024 x 8 / seconds per column, the columns reversed. Its
    # object was 1 GiB, so the numerator is the object in Mibit; a rehearsal's smaller object gets
    # its own, and stands in rows of its own.
    "mibit-per-s": Derivation(
        "'Mbps' as the source computed it (the object's Mibit over seconds: 1024 x 8 / seconds for 1 GiB)",
        "each column is the object's size in Mibit over the opposite column of seconds (min from max, p25 from "
        "p75, avg from avg): the source's derivation, not percentiles or means of a rate",
        "object_size", lambda row: row["object_size"] * 8 / 2**20, "'Mbps' (Mibit/s)"),
}  # fmt: skip


@dataclass(frozen=True)
class Reference:
    """A published table: `measure` per row of the record fields `rows` (e.g. memory_size x
    concurrency_limit), the statistics it reports, and its figures, one dict per published row
    (the row fields and a value per statistic; empty when the source has no table). With
    `derivation` (a key of DERIVATIONS), each statistic is derived from the measure's as the
    source derived it."""

    table: str
    measure: str
    rows: tuple[str, ...]
    statistics: tuple[str, ...]
    figures: tuple[dict, ...] = ()
    where: dict = dataclasses.field(default_factory=dict)
    note: str = ""
    derivation: str = ""


@dataclass(frozen=True)
class Claim:
    """A published claim and how to test it (`kind`: a key of CLAIM_KINDS; the other fields as
    that kind reads them). `text` is the source's claim in our words; `reading`, our
    interpretation where the source leaves one open. On the local backend `aws_only` (why) makes
    the rehearsal's verdict AWS_ONLY and `decided_by_model` (why) BY_THE_MODEL."""

    text: str
    kind: str
    measure: str
    field: str  # shadows dataclasses.field in this class's body: hence dataclasses.field
    where: dict = dataclasses.field(default_factory=dict)
    per: str = ""  # the claim holds at every value of this record field (at least `at_least`)
    at_least: float = 0
    statistic: str = "median"  # of CLAIM_STATISTICS
    faster: object = ""  # kind faster
    slower: object = ""
    a: object = ""  # kind ratio: statistic(b) / statistic(a) within [low, high]
    b: object = ""
    baseline: object = ""  # kinds max_reduction, largest_within: 1 - statistic(other) / statistic(baseline)
    other: object = ""
    value: float = 0.0  # kind max_reduction: the published largest reduction (about)
    within: tuple = ()  # kind largest_within: the values of `per` where the largest reduction lies
    about: float = 0.0  # kinds ratio, spread, best_over_all: the published ratio; gives low and high
    low: float = 0.0
    high: float = 0.0
    reading: str = ""
    aws_only: str = ""
    decided_by_model: str = ""

    def band(self) -> tuple[float, float]:
        """[low, high]: given, or `about` within ABOUT either side."""
        return (self.about * (1 - ABOUT), self.about * (1 + ABOUT)) if self.about else (self.low, self.high)

    def rehearsal(self) -> str:
        """What a local run's verdict is ('' : a test like AWS's), and why."""
        if self.aws_only:
            return f"{AWS_ONLY}: {self.aws_only}"
        if self.decided_by_model:
            return f"{BY_THE_MODEL}: {self.decided_by_model}"
        return ""


def select(records: list[dict], where: dict) -> list[dict]:
    """The records whose fields equal `where`'s values (a list value: any of them)."""
    def matches(record: dict, value: object, name: str) -> bool:
        return record.get(name) in value if isinstance(value, list) else record.get(name) == value

    return [r for r in records if all(matches(r, value, name) for name, value in where.items())]


def values(records: list[dict], measure: str) -> list[float]:
    read = MEASURES[measure].read
    return [v for v in (read(r) for r in records) if v is not None]


# ---- the published table beside ours ---------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One statistic of one row (a cell of the published table's shape): ours with its interval
    (None where the statistic has none: n, min, max, a derived one, or under two records) and the
    published figure (None where the source has none)."""

    key: tuple
    statistic: str
    ours: float | None
    interval: tuple[float, float] | None
    published: float | None


def points(reference: Reference, records: list[dict], intervals: bool = True) -> list[Point]:
    """Per row (the rows the records have, in order, then those only the source has) and per
    statistic of the table: ours (derived as the source derived its own, for a derived table),
    its interval (unless `intervals` is False) and the published figure, as transcribed."""
    from fanout.results import stats  # numpy and scipy: imported by a report, never by the CLI's parser
    chosen = select(records, reference.where)
    keys = sorted({tuple(r.get(name) for name in reference.rows) for r in chosen}, key=_order)
    published = {tuple(f[name] for name in reference.rows): f for f in reference.figures}
    keys += [key for key in sorted(published, key=_order) if key not in keys]
    found = []
    for key in keys:
        mine = values([r for r in chosen if tuple(r.get(n) for n in reference.rows) == key], reference.measure)
        described = _derived(reference, dict(zip(reference.rows, key)), stats.describe(mine)) if mine else {}
        cis = stats.named_intervals(mine if intervals and not reference.derivation else [], reference.statistics)
        theirs = published.get(key, {})
        found += [Point(key, name, described.get(name), cis[name],
                        tables.Exact(theirs[name]) if name in theirs else None)  # as the source wrote it
                  for name in reference.statistics]  # fmt: skip
    return found


def comparison(reference: Reference, records: list[dict], ours: str = "ours") -> Table:
    """Per row (points()): our statistics (headed `ours`: "rehearsal" for a local run) and, when
    the source's figures are transcribed, the published ones and ours over published where the
    rows match (a study without them shows ours alone, and says so)."""
    from fanout.results import stats  # as points()
    found = points(reference, records, intervals=False)
    beside = bool(reference.figures)
    header = [*reference.rows]
    for name in reference.statistics:
        header += [f"{ours} {name}", f"published {name}", f"ratio {name}"] if beside else [f"{ours} {name}"]
    rows = [header]
    for key in dict.fromkeys(point.key for point in found):
        row: list = list(key)
        for point in (p for p in found if p.key == key):
            mine, source = point.ours, point.published
            row += [mine, source, mine / source if mine is not None and source else None] if beside else [mine]
        rows.append(row)
    caption = _caption(reference, ours, stats.PERCENTILE_METHOD)
    return Table(reference.table, rows, caption, caption, labels=len(reference.rows))


def _derived(reference: Reference, row: dict, described: dict) -> dict:
    """Our statistics of the row as the published table has them: the measure's own, or derived."""
    if not reference.derivation:
        return described
    derivation = DERIVATIONS[reference.derivation]
    return {name: derivation.numerator(row) / described[MIRROR[name]] for name in reference.statistics}


def axis_label(reference: Reference) -> str:
    """The values' axis of a plot of `reference`: the measure and its unit, or the derivation's."""
    if reference.derivation:
        return DERIVATIONS[reference.derivation].axis
    return f"{reference.measure} ({MEASURES[reference.measure].unit})"


def _caption(reference: Reference, ours: str, method: str) -> str:
    unit = DERIVATIONS[reference.derivation].unit if reference.derivation else MEASURES[reference.measure].unit
    derived = f"Derived: {DERIVATIONS[reference.derivation].text}; ours computed the same way. " if reference.derivation else ""
    where = (f"ratio = {ours} / published, only where the rows match; '-': no figure (not in that table, or rows "
             "that differ)" if reference.figures else "no published figures transcribed: ours alone")
    return (f"{reference.measure if not reference.derivation else 'derived'} in {unit}; {where}. {derived}"
            f"{ours.capitalize()}: percentiles by {method}, over every record of the row. {reference.note}").strip()


def _order(key: tuple) -> tuple:
    """Rows sort numerically where they are numbers."""
    return tuple((0, v, "") if isinstance(v, int | float) else (1, 0, str(v)) for v in key)


# ---- claims -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    claim: str
    verdict: str
    evidence: str


def verdicts(claims: list[Claim], records: list[dict], local: bool = False) -> list[Verdict]:
    """Each claim's verdict and the interval that decided it; a rehearsal's (`local`) says which
    verdicts test nothing (Claim.rehearsal)."""
    found = []
    for claim in claims:
        judged = CLAIM_KINDS[claim.kind](claim, select(records, claim.where))
        if local and claim.aws_only:
            judged = Verdict(claim.text, AWS_ONLY, f"{claim.aws_only} (not run locally)")
        elif local and claim.decided_by_model:
            judged = Verdict(claim.text, BY_THE_MODEL, f"{claim.decided_by_model}; the rehearsal reads "
                             f"{judged.verdict}: {judged.evidence}")  # fmt: skip
        found.append(judged)
    return found


def tally(found: list[Verdict]) -> str:
    """`Of 3 published claims: 2 supported, 1 contradicted.`: the verdicts in a sentence."""
    names = (SUPPORTED, CONTRADICTED, UNDECIDED, UNTESTABLE, AWS_ONLY, BY_THE_MODEL)
    counts = {name: sum(v.verdict == name for v in found) for name in names}
    parts = [f"{count} {name}" for name, count in counts.items() if count]
    return f"Of {len(found)} published claim{'s' if len(found) != 1 else ''}: {', '.join(parts)}."


def judge(claims: list[Claim], records: list[dict], local: bool = False, found: list[Verdict] | None = None) -> Table:
    """One row per claim: the source's claim, our reading, its verdict and the interval that
    decided it (`found`: verdicts(), when computed already)."""
    from fanout.results import stats  # as comparison()
    found = verdicts(claims, records, local) if found is None else found
    rows = [["claim", "our reading", "verdict", "evidence"],
            *([v.claim, claim.reading or "-", v.verdict, v.evidence] for claim, v in zip(claims, found))]  # fmt: skip
    caption = (f"Each side's median (or mean, where the source averaged) compared as a ratio with a {stats.CI_METHOD}, "
               "each side resampled on its own; a claim is supported or contradicted only when the interval lies "
               f"wholly inside or wholly outside what it states ('about': within {ABOUT:.0%} either side).")
    if local:
        caption += (f" A rehearsal: '{AWS_ONLY}' claims need AWS, and '{BY_THE_MODEL}' ones follow from the network "
                    "model's own parameters; neither is a test of the source.")
    return Table("Published claims", rows, caption, caption, labels=1)  # the claim


def _groups(claim: Claim, records: list[dict]) -> list[tuple[str, object, list[dict]]]:
    """(label, value, records) split by `per` (each value from `at_least` up), or all as one."""
    if not claim.per:
        return [("", None, records)]
    found = sorted({r[claim.per] for r in records if r.get(claim.per) is not None and r[claim.per] >= claim.at_least})
    return [(f"{claim.per} {v}", v, [r for r in records if r.get(claim.per) == v]) for v in found]


def _ratio(claim: Claim, records: list[dict], a: object, b: object) -> tuple[float, tuple[float, float]] | None:
    """statistic(b) / statistic(a) of the claim's measure and its interval; None below two
    values a side. `a` None: every record."""
    first = values([r for r in records if a is None or r.get(claim.field) == a], claim.measure)
    second = values([r for r in records if r.get(claim.field) == b], claim.measure)
    if len(first) < 2 or len(second) < 2:
        return None
    from fanout.results import stats  # as comparison()

    if claim.statistic == "mean":
        ratio, ci = statistics.fmean(second) / statistics.fmean(first), stats.mean_ratio_interval(first, second)
    else:
        [ci] = stats.ratio_intervals(first, second, [50])
        ratio = statistics.median(second) / statistics.median(first)
    assert ci is not None, "two values a side always have an interval"
    return ratio, ci


def _inside(band: tuple[float, float], ci: tuple[float, float]) -> str:
    """Supported when the interval lies within the band, contradicted when wholly outside it."""
    if band[0] <= ci[0] and ci[1] <= band[1]:
        return SUPPORTED
    return CONTRADICTED if ci[1] < band[0] or ci[0] > band[1] else UNDECIDED


def _overall(verdicts: list[str]) -> str:
    return CONTRADICTED if CONTRADICTED in verdicts else UNDECIDED if UNDECIDED in verdicts else SUPPORTED


def _each_group(claim: Claim, records: list[dict], a: object, b: object, band: tuple[float, float], name: str) -> Verdict:
    """statistic(b) / statistic(a) within `band` at every group (`name` the ratio's)."""
    evidence, verdicts = [], []
    for label, _, group in _groups(claim, records):
        found = _ratio(claim, group, a, b)
        if found is None:
            return Verdict(claim.text, UNTESTABLE, f"fewer than 2 records of {a} or {b} {label}".strip())
        ratio, (low, high) = found
        verdicts.append(_inside(band, (low, high)))
        evidence.append(f"{label + ': ' if label else ''}{name} {claim.statistic} {ratio:.2f} [{low:.2f}, {high:.2f}]")
    if not verdicts:
        return Verdict(claim.text, UNTESTABLE, "no records")
    return Verdict(claim.text, _overall(verdicts), "; ".join(evidence))


def _faster(claim: Claim, records: list[dict]) -> Verdict:
    """`faster` has the lower seconds (the higher rate) at every group: the ratio above 1."""
    a, b = (claim.slower, claim.faster) if MEASURES[claim.measure].rate else (claim.faster, claim.slower)
    return _each_group(claim, records, a, b, (1.0, float("inf")), f"{b}/{a}")


def _ratio_claim(claim: Claim, records: list[dict]) -> Verdict:
    """statistic(b) / statistic(a) within the claim's band at every group."""
    return _each_group(claim, records, claim.a, claim.b, claim.band(), f"{claim.b}/{claim.a}")


def _reductions(claim: Claim, records: list[dict]) -> list[tuple[float, float, float, str, object]]:
    """(reduction, low, high, label, value) per group: 1 - statistic(other) / statistic(baseline)."""
    found = []
    for label, value, group in _groups(claim, records):
        ratio = _ratio(claim, group, claim.baseline, claim.other)
        if ratio is not None:
            found.append((1 - ratio[0], 1 - ratio[1][1], 1 - ratio[1][0], label, value))
    return found


def _max_reduction(claim: Claim, records: list[dict]) -> Verdict:
    """The largest reduction over the groups against `value`, read as about: the ratio 1 - value
    within ABOUT either side."""
    found = _reductions(claim, records)
    if not found:
        return Verdict(claim.text, UNTESTABLE, f"fewer than 2 records of {claim.baseline} or {claim.other}")
    best, low, high, label, _ = max(found)
    kept = 1 - claim.value
    band = (1 - kept * (1 + ABOUT), 1 - kept * (1 - ABOUT))
    return Verdict(claim.text, _inside(band, (low, high)), f"largest reduction{' at ' + label if label else ''}: "
                   f"{best:.1%} [{low:.1%}, {high:.1%}] against the published {claim.value:.1%} "
                   f"(about: {band[0]:.1%} to {band[1]:.1%})")  # fmt: skip


def _largest_within(claim: Claim, records: list[dict]) -> Verdict:
    """The largest reduction lies at a value of `within`: supported when some group there has an
    interval wholly above every other group's, contradicted when a group elsewhere has."""
    found = _reductions(claim, records)
    inside = [f for f in found if f[4] in claim.within]
    outside = [f for f in found if f[4] not in claim.within]
    if not inside or not outside:
        return Verdict(claim.text, UNTESTABLE, f"needs reductions at {claim.per} both in and outside {list(claim.within)}")
    best_in, best_out = max(inside, key=lambda f: f[1]), max(outside, key=lambda f: f[1])
    if best_in[1] > max(f[2] for f in outside):
        verdict = SUPPORTED
    elif best_out[1] > max(f[2] for f in inside):
        verdict = CONTRADICTED
    else:
        verdict = UNDECIDED
    return Verdict(claim.text, verdict, f"best within: {best_in[3]} {best_in[0]:.1%} [{best_in[1]:.1%}, "
                   f"{best_in[2]:.1%}]; best elsewhere: {best_out[3]} {best_out[0]:.1%} [{best_out[1]:.1%}, "
                   f"{best_out[2]:.1%}]")  # fmt: skip


def _by_group(claim: Claim, records: list[dict]) -> dict:
    """The statistic of every value of `field` with two records or more."""
    average = statistics.fmean if claim.statistic == "mean" else statistics.median
    found = {}
    for value in {r.get(claim.field) for r in records if r.get(claim.field)}:
        measured = values(select(records, {claim.field: value}), claim.measure)
        if len(measured) >= 2:
            found[value] = float(average(measured))
    return found


def _fastest(claim: Claim, by_group: dict) -> object:
    pick = max if MEASURES[claim.measure].rate else min
    return pick(by_group, key=lambda v: by_group[v])


def _spread(claim: Claim, records: list[dict]) -> Verdict:
    """The fastest group over the slowest (groups: the values of `field`) within the band: the
    highest statistic over the lowest, which for seconds is the slowest over the fastest."""
    by_group = _by_group(claim, records)
    if len(by_group) < 2:
        return Verdict(claim.text, UNTESTABLE, f"fewer than 2 values of {claim.field} with 2 records or more")
    lowest, highest = min(by_group, key=lambda v: by_group[v]), max(by_group, key=lambda v: by_group[v])
    found = _ratio(claim, records, lowest, highest)
    assert found is not None, "both groups have 2 records or more"
    ratio, ci = found
    fastest, slowest = (highest, lowest) if MEASURES[claim.measure].rate else (lowest, highest)
    low, high = claim.band()
    return Verdict(claim.text, _inside((low, high), ci), f"{fastest} over {slowest} ({len(by_group)} values of "
                   f"{claim.field}, {claim.statistic}): {ratio:.2f}x [{ci[0]:.2f}, {ci[1]:.2f}] against "
                   f"{low:.2f}x-{high:.2f}x")  # fmt: skip


def _best_over_all(claim: Claim, records: list[dict]) -> Verdict:
    """The fastest group's rate over every record's (the unpinned mix), within the band."""
    by_group = _by_group(claim, records)
    if len(by_group) < 2:
        return Verdict(claim.text, UNTESTABLE, f"fewer than 2 values of {claim.field} with 2 records or more")
    best = _fastest(claim, by_group)
    found = _ratio(claim, records, None, best)
    assert found is not None, "the group has 2 records or more"
    ratio, ci = found
    low, high = claim.band()
    return Verdict(claim.text, _inside((low, high), ci), f"{best} over all {len(by_group)} values of {claim.field} "
                   f"together ({claim.statistic}): {ratio:.2f}x [{ci[0]:.2f}, {ci[1]:.2f}] against "
                   f"{low:.2f}x-{high:.2f}x")  # fmt: skip


# The kinds of claim a study may state, and what each needs besides text, kind, measure and field.
CLAIM_KINDS = {"faster": _faster, "ratio": _ratio_claim, "max_reduction": _max_reduction,
               "largest_within": _largest_within, "spread": _spread, "best_over_all": _best_over_all}  # fmt: skip
RATE_KINDS = ("best_over_all",)  # kinds that compare rates (the best group's against all records')
CLAIM_NEEDS = {"faster": ("faster", "slower"), "ratio": ("a", "b"), "max_reduction": ("baseline", "other", "value"),
               "largest_within": ("baseline", "other", "per", "within"), "spread": (), "best_over_all": ()}  # fmt: skip
