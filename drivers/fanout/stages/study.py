"""`fanout study`: a published experiment in one command, and our figures beside the published ones.

`fanout study` lists the studies (studies/<name>.toml) with their estimates; `fanout study NAME`
checks the file, runs its sweep through fanout.stages.sweep (every guard of a sweep applies) and
writes the study report. A local run is labelled a simulation, never a reproduction. Details:
docs/studies.md.
"""

import argparse
import functools
import shlex
import tomllib
from collections.abc import Callable, Iterable
from typing import Any
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from fanout.common import paths
from fanout.local import backends
from fanout.workloads import registry as workloads
from fanout.common.errors import UsageError
from fanout.results import cells as cell_schemas, report_files, run_folders as runs, sections, study_tables as compared, sweep_folders as sweeps
from fanout.results import run_record, run_sections, terminal
from fanout.results.sections import TERMINAL, Block, Heading, Table, Text
from fanout.stages import command_line, sweep, wait
from fanout.stages.sweep import SweepGiven, SweepParams  # a Study's field is named sweep

STUDIES = sweeps.STUDY_FILES
REPORT_DIR = sweeps.STUDY_REPORTS  # results/studies/<name>/<sweep id>/
# Flags of `fanout sweep` that run a study rather than define it: the study command sets them.
RUN_FLAGS = {"help", "backend", "stack", "endpoint", "verbose", "tag", "resume", "timeout", "yes", "destroy_after",
             "workload"}  # fmt: skip
LOCAL_ONLY = {"network", "network_scale"}  # keys of [local] alone: AWS has no network model
TOP_KEYS = {"title", "description", "workload", "source", "reproduces", "adapts", "sweep", "local", "reference", "claims"}
SOURCE_KEYS = ("title", "author", "url", "date", "platform")
REFERENCE_KEYS = {"table", "measure", "rows", "statistics", "figures", "where", "note", "derivation"}
CELL_KEY = "cell"  # [[sweep.cell]]: the explicit cells, each a table of keys (fanout sweep's --cell)
BAND_KINDS = ("ratio", "spread", "best_over_all")  # claims that state a range: `about`, or `low` and `high`
FIRST_DEPLOY_MINUTES = 1.0


@dataclass(frozen=True)
class Study:
    """A study file, checked: what it reproduces, how, and what the source published."""

    name: str
    title: str
    description: str
    workload: str
    source: dict
    reproduces: tuple[str, ...]  # what of the source's experiment the study runs as the source did
    adapts: tuple[str, ...]  # what it runs otherwise, and why
    sweep: dict
    local: dict
    references: tuple[compared.Reference, ...]  # the published tables: the first, then those derived
    claims: tuple[compared.Claim, ...]

    def options(self, local: bool) -> dict:
        """The sweep's keys, the local variant's over them when `local`."""
        return {**self.sweep, **self.local} if local else dict(self.sweep)

    def tag(self, local: bool) -> str:
        """Every run's tag: the study's name, so a sweep names the study it belongs to."""
        return f"{self.name}{sweeps.LOCAL_SUFFIX}" if local else self.name

    def sweep_given(self, backend: str, stack: str | None, local: bool) -> SweepGiven:
        """The sweep of this study on `backend`, on `stack` (None: the sweeps' own stack of the
        region), as its flags would give it: sweep.from_given checks it as it checks a command line."""
        texts = {"workload": self.workload, "tag": self.tag(local), **({"stack": stack} if stack else {})}
        cells: tuple[str, ...] = ()
        for key, value in self.options(local).items():
            if key == CELL_KEY:
                cells = tuple(_cell_text(cell) for cell in value)
            elif value != "":  # the local variant unsets a key of the study's with ""
                texts[keys(local=True)[key]] = _text(key, value)
        return SweepGiven(backend, texts, cells)

    def checked(self, backend: str, stack: str | None, local: bool) -> SweepParams:
        """This study's sweep (sweep_given), checked."""
        return sweep.from_given(self.sweep_given(backend, stack, local))

    def rehearsal(self) -> str:
        """What the local variant changes, as its keys say (LOCAL=1)."""
        changed = [f"{key} {_shown(key, value)}" for key, value in self.local.items()]
        return ", ".join(changed)


def _cell_text(cell: dict) -> str:
    """An explicit cell as fanout sweep's --cell takes it: KEY=VALUE words, quoted for the shell."""
    return " ".join(f"{key}={shlex.quote(_text(key, value))}" for key, value in cell.items())


def _shown(key: str, value: Any) -> str:  # Any: a TOML value, here and in the checks below
    if key == CELL_KEY:
        return "; ".join(" ".join(f"{k}={v}" for k, v in cell.items()) for cell in value) or "none"
    return "unset" if value == "" else (" ".join(map(str, value)) if isinstance(value, list) else str(value))


def _text(key: str, value: object) -> str:
    """A TOML value as the sweep's flag reads it: a list joined (fanout.workloads.registry.joined), a
    model file named relative to the repository made absolute, so that any directory works."""
    if isinstance(value, list):
        return workloads.joined(key, value)
    if key == "network" and str(value).endswith((".toml", ".json")):
        return str(paths.REPO / str(value))
    return str(value)


# ---- loading --------------------------------------------------------------------------------------


def names() -> list[str]:
    return sorted(path.stem for path in STUDIES.glob("*.toml"))


def load(name: str) -> Study:
    """The study `name` (a file studies/<name>.toml), checked; UsageError naming the bad value."""
    if name not in names():
        raise UsageError(f"invalid study {name!r}: expected one of {', '.join(names())} (files in studies/)")
    return load_file(STUDIES / f"{name}.toml")


def load_file(path: Path) -> Study:
    """A study from its file, every key checked and both variants' sweeps checked with the
    sweep's own rules (the study on AWS, its local variant on the local backend)."""
    where = f"study {path.stem}"
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{where}: cannot read {path.name}: {exc}") from None
    _only(where, data, TOP_KEYS)
    for key in ("title", "description", "workload"):
        _string(where, key, data.get(key))
    try:
        workload = workloads.get(data["workload"]).name
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    source = _table(where, "source", data.get("source"))
    _only(f"{where} [source]", source, set(SOURCE_KEYS))
    for key in SOURCE_KEYS:
        _string(f"{where} [source]", key, source.get(key), empty=key == "url")
    tables = data.get("reference")
    study = Study(
        name=path.stem, title=data["title"], description=" ".join(data["description"].split()), workload=workload,
        source=source, reproduces=_lines(where, "reproduces", data.get("reproduces")),
        adapts=_lines(where, "adapts", data.get("adapts")), sweep=_options(where, "sweep", data.get("sweep"), keys()),
        local=_options(where, "local", data.get("local", {}), keys(local=True)),
        references=tuple(_reference(where, _table(where, "reference", table))
                         for table in (tables if isinstance(tables, list) else [tables])),
        claims=tuple(_claim(f"{where} claim {i + 1}", claim) for i, claim in enumerate(data.get("claims", []))),
    )  # fmt: skip
    for backend, local in (("aws", False), ("local", True)):
        try:
            study.checked(backend, None, local)
        except UsageError as exc:
            raise UsageError(f"{where} {'[local]' if local else '[sweep]'}: {exc}") from None
    return study


@functools.cache  # computed once, not once per key of every study
def keys(local: bool = False) -> dict[str, str]:
    """A study's [sweep] keys (with `local`, its [local] keys) and the argparse name of the flag of
    `fanout sweep` each sets: every flag with a value that defines a sweep, named as the flag in
    lower case (`from` for --from, `file_size` for --file-size; an old name of a flag, such as
    --mode, is not a key), so a new workload's flags are study keys without a list here."""
    first = {dest: name for name, dest in reversed(sweep.flags().items())}  # a flag's first name
    return {name: dest for dest, name in first.items()
            if dest not in RUN_FLAGS and (local or dest not in LOCAL_ONLY)}  # fmt: skip


def _lines(where: str, key: str, value: object) -> tuple[str, ...]:
    """`reproduces` or `adapts`: a non-empty list of sentences."""
    if not isinstance(value, list) or not value or not all(isinstance(line, str) and line.strip() for line in value):
        raise UsageError(f"{where}: {key} must be a non-empty list of sentences, got {value!r}")
    return tuple(" ".join(line.split()) for line in value)


def _only(where: str, data: dict, allowed: set) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}: expected {', '.join(sorted(allowed))}")


def _string(where: str, key: str, value: object, empty: bool = False) -> None:
    if not isinstance(value, str) or not (empty or value.strip()):
        raise UsageError(f"{where}: {key} must be {'a' if empty else 'a non-empty'} string, got {value!r}")


def _table(where: str, key: str, value: object) -> dict:
    if not isinstance(value, dict):
        raise UsageError(f"{where}: [{key}] must be a table, got {value!r}")
    return value


def _options(where: str, key: str, value: object, allowed: dict) -> dict:
    options = _table(where, key, value)
    _only(f"{where} [{key}]", options, set(allowed))
    cells = options.get(CELL_KEY, [])
    if not isinstance(cells, list) or not all(isinstance(cell, dict) and cell for cell in cells):
        raise UsageError(f"{where} [{key}]: {CELL_KEY} must be a list of tables of keys, got {cells!r}")
    return options


def _reference(where: str, data: dict) -> compared.Reference:
    where = f"{where} [reference]"
    _only(where, data, REFERENCE_KEYS)
    _string(where, "table", data.get("table"))
    measure = _choice(where, "measure", data.get("measure"), compared.MEASURES)
    rows, statistics = data.get("rows"), data.get("statistics")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, str) for r in rows):
        raise UsageError(f"{where}: rows must be a list of record fields, got {rows!r}")
    if not isinstance(statistics, list) or not statistics:
        raise UsageError(f"{where}: statistics must be a list, got {statistics!r}")
    for name in statistics:
        _choice(where, "statistic", name, compared.STATISTICS)
    figures = data.get("figures", [])
    for i, figure in enumerate(figures):
        _figure(f"{where} figures[{i}]", figure, rows, statistics)
    derivation = data.get("derivation", "")
    if derivation:
        _choice(where, "derivation", derivation, compared.DERIVATIONS)
        for name in statistics:
            _choice(f"{where} (derived)", "statistic", name, compared.MIRROR)
        if compared.DERIVATIONS[derivation].needs not in rows:
            raise UsageError(f"{where}: derivation {derivation!r} reads the row field "
                             f"{compared.DERIVATIONS[derivation].needs!r}, which rows lacks")  # fmt: skip
    return compared.Reference(data["table"], measure, tuple(rows), tuple(statistics), tuple(figures),
                              _table(where, "where", data.get("where", {})), data.get("note", ""), derivation)  # fmt: skip


def _figure(where: str, figure: object, rows: list, statistics: list) -> None:
    """A published row: its row fields and a number for each statistic of the table."""
    if not isinstance(figure, dict):
        raise UsageError(f"{where}: must be a table, got {figure!r}")
    _only(where, figure, {*rows, *statistics})
    missing = [key for key in (*rows, *statistics) if key not in figure]
    if missing:
        raise UsageError(f"{where}: missing {missing[0]!r} (a published row has {', '.join((*rows, *statistics))})")
    bad = [name for name in statistics if isinstance(figure[name], bool) or not isinstance(figure[name], int | float)]
    if bad:
        raise UsageError(f"{where}: {bad[0]} must be a number, got {figure[bad[0]]!r}")


def _claim(where: str, data: object) -> compared.Claim:
    data = _table(where, "claims", data)
    fields = set(compared.Claim.__dataclass_fields__)
    _only(where, data, fields)
    _string(where, "text", data.get("text"))
    kind = _choice(where, "kind", data.get("kind"), compared.CLAIM_KINDS)
    _choice(where, "measure", data.get("measure"), compared.MEASURES)
    _string(where, "field", data.get("field"))
    missing = [key for key in compared.CLAIM_NEEDS[kind] if key not in data]
    if missing:
        raise UsageError(f"{where}: a {kind} claim needs {', '.join(compared.CLAIM_NEEDS[kind])}; missing {missing[0]!r}")
    if kind in BAND_KINDS and "about" not in data and not {"low", "high"} <= set(data):
        raise UsageError(f"{where}: a {kind} claim needs about, or low and high")
    _choice(where, "statistic", data.get("statistic", "median"), compared.CLAIM_STATISTICS)
    if kind in compared.RATE_KINDS and not compared.MEASURES[data["measure"]].rate:
        rates = ", ".join(name for name, measure in compared.MEASURES.items() if measure.rate)
        raise UsageError(f"{where}: a {kind} claim compares rates: measure {data['measure']!r} is not one of {rates}")
    if data.get("aws_only") and data.get("decided_by_model"):
        raise UsageError(f"{where}: a claim is aws_only or decided_by_model, not both")
    try:
        return compared.Claim(**{**data, "within": tuple(data.get("within", ()))})
    except TypeError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _choice(where: str, key: str, value: Any, allowed: Iterable[str]) -> str:
    if value not in allowed:
        raise UsageError(f"{where}: invalid {key} {value!r}: expected one of {', '.join(allowed)}")
    return value


# ---- the command ----------------------------------------------------------------------------------


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("study", help="list the studies, or run one and compare it with its source")
    parser.add_argument("name", nargs="?", help="the study to run (a file studies/NAME.toml); none: list them")
    command_line.stack_arguments(parser, sweeps_own=True)
    parser.add_argument("--local", action="store_true", help="run the study's local variant (its smaller axes)")
    parser.add_argument("--resume", metavar="SWEEP", help="continue the study's sweep SWEEP (an id, or latest)")
    parser.add_argument("--network-scale", help="local backend: the network model's scale (default: auto)")
    parser.add_argument("--timeout", default=str(wait.DEFAULT_TIMEOUT), help="per cell: give up waiting after this many seconds")
    parser.add_argument("--destroy-after", action="store_true", help="tear the stack down once every cell is done")
    parser.add_argument("--yes", action="store_true", help="run even when the study is large or costly")
    parser.add_argument("--verbose", action="store_true", help="show Terraform's output instead of logging it")
    parser.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> SweepParams | sweep.Resume | None:
    """The study's sweep, checked with no side effect, or the sweep to resume (None: the list)."""
    if args.name is None:
        return None
    study = load(args.name)
    if args.resume:
        return sweep.Resume(args.resume)  # the stack and the values are the sweep's
    given = study.sweep_given(args.backend, args.stack, args.local)
    scale = {"network_scale": args.network_scale} if args.network_scale else {}
    return sweep.from_given(replace(given, texts={**given.texts, **scale, "timeout": args.timeout},
                                    destroy_after=args.destroy_after))  # fmt: skip


def run(args: argparse.Namespace) -> int:
    console = Console()
    checked = check(args)
    if checked is None:
        terminal.show(listing(), console)
        return 0
    study = load(args.name)
    if args.resume:
        _check_sweep_of(study, sweeps.load(args.resume), args.local)
    manifest = sweep.run_sweep(checked, args.yes, args.verbose)
    terminal.show(write_report(study, manifest), console)
    console.print(f"study report: {report_dir(study, manifest) / report_files.MARKDOWN_FILE}", highlight=False)
    return 0


def _check_sweep_of(study: Study, manifest: sweeps.Manifest, local: bool) -> None:
    if manifest.tag != study.tag(local):
        raise UsageError(f"sweep {manifest.sweep_id} is not a run of study {study.tag(local)!r} "
                         f"(its tag is {manifest.tag!r})")  # fmt: skip


# ---- the list -------------------------------------------------------------------------------------


def estimate_row(study: Study, backend: str) -> list:
    """Cells, messages, USD and minutes of the study on AWS, or of its local variant: the
    downloads at the assumed AWS speed plus deploys (a local run under a network model takes
    longer by the scale it picks, and costs nothing)."""
    local = backends.get(backend).simulated
    checked = study.checked(backend, None, local)
    cells = checked.axes.cells()
    estimates = sweep.cell_estimates(checked.multiplier, cells, checked.deployed())
    minutes = FIRST_DEPLOY_MINUTES + sum(e.run_seconds / 60 + backends.get(backend).redeploy_minutes for e in estimates)
    usd = 0.0 if local else sum(e.total for e in estimates)
    return [study.name, "local (LOCAL=1)" if local else backend, len(cells), sum(e.messages for e in estimates),
            f"{usd:,.2f}", round(minutes, 1)]  # fmt: skip


def listing() -> sections.Report:
    """Every study with its estimates on both backends, and its title."""
    rows = [["study", "backend", "cells", "messages", "USD", "minutes"]]
    studies = [load(name) for name in names()]
    for study in studies:
        rows += [estimate_row(study, "aws"), estimate_row(study, "local")]
    note = ("USD: the AWS estimate of fanout.cloud.costs (the local backend is free); minutes: downloads at the assumed "
            "75 MiB/s with the queue mapping's ramp, plus deploys; a local run takes longer by the network scale it "
            "picks. Sources: docs/studies.md")  # fmt: skip
    blocks: list[Block] = [Table("Studies (make study STUDY=<name> [BACKEND=aws] [LOCAL=1])", rows, note, labels=2)]
    for study in studies:
        blocks += [Text(f"  {study.name}: {study.title} (source: {cited(study.source)})"),
                   *(Text(f"    {line}") for line in method_lines(study)),
                   *(Text(f"    claim: {claim.text}; LOCAL=1: {claim.rehearsal() or 'tested as on AWS'}")
                     for claim in study.claims)]  # fmt: skip
    return sections.Report("Studies", "", blocks)


def cited(source: dict) -> str:
    """The source as a reference names it: title, author or site, date."""
    return f"{source['title']}, {source['author']}, {source['date']}"


def method_lines(study: Study) -> list[str]:
    """What the study reproduces, what it adapts and why, and what its rehearsal changes."""
    return [*(f"reproduces: {line}" for line in study.reproduces), *(f"adapts: {line}" for line in study.adapts),
            f"rehearsal (LOCAL=1): {study.rehearsal() or 'the study as it is'}"]  # fmt: skip


# ---- the report -----------------------------------------------------------------------------------


def records_of(manifest: sweeps.Manifest, workload: str) -> list[dict]:
    """The measurement records of the sweep's finished cells, from each run's saved report."""
    found = []
    for cell in manifest.cells:
        if cell.status == "done":
            found += [r for r in runs.load_records(cell.run_id, workload) if r.get("event") == workload]
    return found


def provenance(study: Study, manifest: sweeps.Manifest, label: str, local: bool = False) -> list[Block]:
    """What was run and how its numbers were made (`label`; `local`: a rehearsal, whose cells are
    its own)."""
    source = study.source
    return [
        Heading("How it was made"),
        Text(f"The study, as its AWS run makes it: {study.description}" if local else study.description),
        Text(f"Source: {cited(source)}, {source['url'] or 'address not recorded'}; ran on: {source['platform']}."),
        *(Text(f"- {line[0].upper()}{line[1:]}") for line in method_lines(study)),
        Text(f"Ours: sweep {manifest.sweep_id} ({len(manifest.cells)} cells, tag {manifest.tag}), {label}."),
    ]  # fmt: skip


def simulation(label: str, backend: str | None) -> list[Block]:
    """A local study's warning, first: a simulation (network profile and scale), never a
    reproduction."""
    if not backends.simulated(backend):
        return []
    return [Text(f"SIMULATION, not a reproduction: {label}; these figures rehearse the study's method on the local "
                 "backend and say nothing about AWS.", "bold")]  # fmt: skip


def answer(study: Study, records: list[dict], labels: list[str], folder: Path, local: bool = False) -> list[Block]:
    """The study's answer: each claim's verdict (a rehearsal's, `local`, says which test nothing),
    and ours against the published figures in a plot per published table
    (fanout.results.study_plots) captioned with the runs' `labels`, written into `folder`."""
    from fanout.results import study_plots  # matplotlib: imported by a report, never by the CLI's parser

    found = compared.verdicts(list(study.claims), records, local)
    images = []
    for i, reference in enumerate(study.references):
        path = study_plots.draw(reference, compared.points(reference, records), labels, folder / study_plots.file_name(i),
                                row_label(study.workload, reference.rows))  # fmt: skip
        images.append(sections.Image(path, study_plots.caption_text(reference)))
    claims: list[Block] = []
    if found:
        claims = [Text(compared.tally(found)), compared.judge(list(study.claims), records, local, found)]
    return [*claims, sections.Figures(tuple(images), headed=False)]


def row_label(workload: str, rows: tuple[str, ...]) -> Callable[[tuple], str]:
    """A published row's key as its cell's label says it (`1024 MB, concurrency 2, 8 MiB`); a
    field that is not a cell field as `name value`."""
    schema = cell_schemas.of(workloads.get(workload).workload)

    def label(key: tuple) -> str:
        return ", ".join(schema.declared[name].label.format(schema.text(name, value)) if name in schema.declared
                         else f"{name} {value}" for name, value in zip(rows, key))  # fmt: skip

    return label


def report_tables(study: Study, records: list[dict], local: bool = False) -> list[Table]:
    """Each published table with ours beside it (a rehearsal's headed so)."""
    ours = "rehearsal" if local else "ours"
    return [compared.comparison(reference, records, ours) for reference in study.references]


def report_dir(study: Study, manifest: sweeps.Manifest) -> Path:
    """results/studies/<name>/<sweep id>/."""
    return sweeps.study_dir(study.name, manifest.sweep_id)


def write_report(study: Study, manifest: sweeps.Manifest) -> sections.Report:
    """The study report as sections, written as report.md and index.html into report_dir with
    its plot; the report, for the terminal."""
    done = [cell.run_id for cell in manifest.cells if cell.status == "done" and cell.run_id]
    first = runs.load(done[0])
    label, limits = first.network_label(), run_record.limits_label(runs.load(run_id) for run_id in done)
    records = records_of(manifest, study.workload)
    folder = report_dir(study, manifest)
    folder.mkdir(parents=True, exist_ok=True)
    local = backends.simulated(first.backend)
    warning, found = simulation(label, first.backend), answer(study, records, run_sections.labels(label, limits), folder, local)
    # The terminal keeps its order (title, provenance, tables, verdicts); the files open with the answer.
    blocks = [Text(study.title, "bold", only=TERMINAL), *sections.on_only(warning, TERMINAL),
              *(Text(line, "bold", only=TERMINAL) for line in filter(None, [limits])),
              *provenance(study, manifest, label, local), *report_tables(study, records, local),
              *sections.on_only(found, TERMINAL)]  # fmt: skip
    pages = [(f"sweep {manifest.sweep_id}", sweeps.sweep_dir(manifest.sweep_id)),
             *((f"run {run_id}", runs.run_dir(run_id)) for run_id in done)]  # fmt: skip
    report = sections.Report(study.title, label, blocks, answer=sections.on_only([*warning, *found], sections.FILES),
                             header=(f"workload: {study.workload}", f"source: {study.source['title']}, "
                                     f"{study.source['date']}"), links=sections.links(folder, pages), limits=limits)  # fmt: skip
    report_files.write(report, folder)
    return report
