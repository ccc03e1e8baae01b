"""Sweep manifests: results/sweeps/<sweep_id>/sweep.json says how a sweep was made and where it
stands; results/sweeps/latest points at the newest one.

Manifest and SweepCell are its typed form, loaded and saved here only; it is rewritten
atomically after every change (Keeper), so a Ctrl-C or a crash leaves it consistent for
`--resume`. Its contents and the cell statuses: docs/sweep.md (the manifest).
"""

import itertools
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fanout.common import paths, workload as workloads
from fanout.results import run_folders as runs, run_record
from fanout.results.recorded import Recorded
from fanout.common.errors import UsageError

SWEEP_FILE = "sweep.json"
LATEST = "latest"
_SWEEP_ID = re.compile(r"^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$")


# The JSON boundary: before a workload's options had their generic slot, sweeps kept the download
# workload's options (the one workload whose cells had no `options`) beside the deploy-level
# parameters, in a cell's `params` and as axes, under these names (before the pin: no pin).
LEGACY_DEFAULT_OPTIONS = ("strategy", "pin")


@dataclass(frozen=True)
class CellParams:
    """The parameters of one cell (the manifest's `params`): where it is deployed, and the
    options of its workload (its driver's, as fire sends them)."""

    memory: int
    concurrency: int
    object_size: int
    architecture: str
    workload: str = workloads.DEFAULT  # sweeps from before the registry downloaded
    options: dict | None = None  # the workload's options (its driver's sweep_options)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "CellParams":
        """A manifest's cell; an older one's download options become its options (another
        workload's cell, which has options of its own, carried them unused: left out)."""
        old = {name: data[name] for name in LEGACY_DEFAULT_OPTIONS if name in data}
        fields = {name: value for name, value in data.items() if name not in LEGACY_DEFAULT_OPTIONS}
        if old and fields.get("options") is None:
            fields["options"] = old
        return cls(**fields)


def legacy_axis_options(axes: dict) -> tuple[dict, ...] | None:
    """An older manifest's axes of the download's options (`axes`, as saved, its `options` none)
    as its combinations, in the order the cells ran; None for a newer manifest or another workload."""
    lists = {name: axes.get(name) or [None] for name in LEGACY_DEFAULT_OPTIONS}
    if not any(name in axes for name in LEGACY_DEFAULT_OPTIONS) or any(axes.get("options") or [None]):
        return None
    return tuple(dict(zip(lists, values)) for values in itertools.product(*lists.values()))


def sweeps_dir() -> Path:
    return paths.results_dir() / "sweeps"


def sweep_dir(sweep_id: str) -> Path:
    return sweeps_dir() / sweep_id


STUDY_FILES = paths.REPO / "studies"  # studies/<name>.toml (fanout.stages.study)
STUDY_REPORTS = "studies"  # results/studies/<name>/<sweep id>/: a study's report
LOCAL_SUFFIX = "-local"  # a study's local variant tags its runs <name>-local


def study_dir(name: str, sweep_id: str) -> Path:
    return paths.results_dir() / STUDY_REPORTS / name / sweep_id


def study_of(tag: str) -> str | None:
    """The study whose runs a tag names (its name, or its local variant's), None for another."""
    name = tag.removesuffix(LOCAL_SUFFIX)
    return name if (STUDY_FILES / f"{name}.toml").is_file() else None


def related(sweep_id: str, tag: str) -> list[tuple[str, Path]]:
    """The pages of a sweep and, when it runs a study, of the study's report: (text, folder)
    for the links between a run's, its sweep's and its study's pages."""
    found = [(f"sweep {sweep_id}", sweep_dir(sweep_id))]
    name = study_of(tag)
    return found + ([(f"study {name}", study_dir(name, sweep_id))] if name else [])


@dataclass(frozen=True)
class SweepCell(Recorded):
    """One cell of a sweep, in the order the cells run (module docstring: its statuses)."""

    index: int = 0
    params: dict = field(default_factory=dict)  # CellParams as JSON (cell_params())
    status: str = "pending"
    run_id: str | None = None
    previous_run_ids: list = field(default_factory=list)
    started: str | None = None
    finished: str | None = None
    timings: dict = field(default_factory=dict)  # step -> seconds
    environments: str | None = None  # fresh, or warm (kept from the previous cell)
    accounting: run_record.RunAccounting | None = None

    NESTED = {"accounting": run_record.RunAccounting}
    OMIT_NONE = ("environments", "accounting")

    def cell_params(self) -> CellParams:
        return CellParams.from_dict(self.params)

    def reopened(self) -> "SweepCell":
        """The cell pending again for a resume, its abandoned run id (if any) kept as previous."""
        previous = [*self.previous_run_ids, self.run_id] if self.run_id else self.previous_run_ids
        return self.but(status="pending", run_id=None, previous_run_ids=previous, started=None, finished=None,
                        timings={})  # fmt: skip


@dataclass(frozen=True)
class Manifest(Recorded):
    """sweep.json: how the sweep is made (fanout.stages.sweep.SweepParams.settings; the
    workloads' deploy-level options stay in `extra`, by name) and its cells."""

    sweep_id: str = ""
    status: str = "running"  # running, done, interrupted or failed
    created: str | None = None
    resumed: list = field(default_factory=list)  # when each resume began
    backend: str = ""
    stack: str = ""
    region: str = ""
    endpoint: str = ""
    axes: dict = field(default_factory=dict)
    varying: list = field(default_factory=list)
    order: str = "given"
    seed: int | None = None
    keep_warm: bool = False
    destroy_after: bool = False
    multiplier: int | None = None
    tag: str | None = None
    timeout: float | None = None
    function_timeout: int | None = None
    ephemeral_storage: int | None = None  # None: auto (sized from the object), also in sweeps before it was an input
    network: str | None = None
    network_scale: str | None = None
    version: str | None = None
    cells: list = field(default_factory=list)  # SweepCell, in the order they run

    NESTED = {"cells": SweepCell}

    def first_unfinished(self) -> int | None:
        """Index of the first cell that is not done; None when every cell is."""
        return next((cell.index for cell in self.cells if cell.status != "done"), None)

    def with_cell(self, cell: SweepCell) -> "Manifest":
        """The manifest with `cell` in place of the cell of its index."""
        return self.but(cells=[cell if c.index == cell.index else c for c in self.cells])


class Keeper:
    """The manifest of a running sweep: every change goes through `change` or `change_cell`,
    which make the new manifest and save it at once (a Ctrl-C or a crash finds it current)."""

    def __init__(self, manifest: Manifest):
        self.manifest = manifest

    def change(self, **changes: Any) -> Manifest:  # Manifest.but's
        self.manifest = self.manifest.but(**changes)
        save(self.manifest)
        return self.manifest

    def change_cell(self, index: int, **changes: Any) -> SweepCell:  # SweepCell.but's
        cell = self.manifest.cells[index].but(**changes)
        self.manifest = self.manifest.with_cell(cell)
        save(self.manifest)
        return cell


def new_manifest(settings: dict, cell_params: list[dict]) -> Manifest:
    """A manifest for a new sweep: `settings` (backend, stack, axes, order...) and one pending
    cell per entry of `cell_params`, in the order they will run."""
    cells = [SweepCell(index=i, params=params) for i, params in enumerate(cell_params)]
    return Manifest.from_json({"sweep_id": runs.new_run_id(), "status": "running", "created": now(), **settings}).but(
        cells=cells)  # fmt: skip


def save(manifest: Manifest) -> Path:
    """Write sweep.json atomically; the first save also points `latest` at the sweep."""
    folder = sweep_dir(manifest.sweep_id)
    first = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    runs.write_json(folder / SWEEP_FILE, manifest.to_json())
    if first:
        runs.point_link(sweeps_dir() / LATEST, manifest.sweep_id)
    return folder / SWEEP_FILE


def load(ref: str) -> Manifest:
    """The manifest of sweep `ref` (a sweep id or "latest"); a one-line error when there is none."""
    return Manifest.from_json(json.loads((sweep_dir(resolve(ref)) / SWEEP_FILE).read_text()))


def resolve(ref: str) -> str:
    if ref == LATEST:
        link = sweeps_dir() / LATEST
        if not link.is_symlink() or not (link / SWEEP_FILE).is_file():
            raise UsageError(f"no sweeps yet in {sweeps_dir()}; run `make sweep` first")
        return link.readlink().name
    if not _SWEEP_ID.match(ref) or not (sweep_dir(ref) / SWEEP_FILE).is_file():
        known = sorted(p.parent.name for p in sweeps_dir().glob(f"*/{SWEEP_FILE}"))
        hint = f"known sweeps: {', '.join(known[-5:])}" if known else "no sweeps yet"
        raise UsageError(f"unknown sweep {ref!r}: expected {LATEST!r} or a sweep id under {sweeps_dir()} ({hint})")
    return ref


def now() -> str:
    """UTC time as ISO 8601 to the second, as the manifest records every time."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
