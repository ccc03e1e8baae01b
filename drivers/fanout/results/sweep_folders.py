"""Sweep manifests: results/sweeps/<sweep_id>/sweep.json says how a sweep was made and where it
stands; results/sweeps/latest points at the newest one.

The manifest is data a reader can follow: the axes, the order (and its seed), and one entry per
cell in the order the cells run, each with its parameters, status, run id (and the run ids of
earlier attempts), start and end times and step timings. It is rewritten atomically after every
change, so that a Ctrl-C or a crash at any point leaves it consistent and `--resume` can
continue with the first cell that is not done.

Cell status: pending (not started), running (this process is on it), done (every message
accounted for), interrupted (stopped by Ctrl-C, or found `running` by a resume: its process
died), failed (an error; the sweep stopped there). A resume re-runs interrupted and failed
cells from scratch as new runs; the old run ids move to `previous_run_ids` and their run.json
is marked, never deleted.
"""

import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from fanout.common import paths, registry as workloads
from fanout.results import run_folders as runs
from fanout.common.errors import UsageError

SWEEP_FILE = "sweep.json"
LATEST = "latest"
_SWEEP_ID = re.compile(r"^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$")



@dataclass(frozen=True)
class CellParams:
    """The parameters of one cell (the manifest's `params`)."""

    memory: int
    concurrency: int
    object_size: int
    architecture: str
    strategy: str  # canonical text (str(strategies.Choice)), as fire sends it
    workload: str = workloads.DEFAULT  # fanout.common.registry; sweeps from before the registry downloaded
    options: dict | None = None  # the workload's message fields (None: download's strategy says it all)
    pin: str | None = None  # fanout.cloud.pins: none, auto or an address; None: no --pin (where DNS says, as none)

    def as_dict(self) -> dict:
        return asdict(self)


def sweeps_dir() -> Path:
    return paths.results_dir() / "sweeps"


def sweep_dir(sweep_id: str) -> Path:
    return sweeps_dir() / sweep_id


def new_manifest(settings: dict, cell_params: list[dict]) -> dict:
    """A manifest for a new sweep: `settings` (backend, stack, axes, order...) and one pending
    cell per entry of `cell_params`, in the order they will run."""
    cells: list[dict] = [{"index": i, "params": params, "status": "pending", "run_id": None, "previous_run_ids": [],
              "started": None, "finished": None, "timings": {}} for i, params in enumerate(cell_params)]  # fmt: skip
    return {"sweep_id": runs.new_run_id(), "status": "running", "created": now(), **settings, "cells": cells}


def save(manifest: dict) -> Path:
    """Write sweep.json atomically; the first save also points `latest` at the sweep."""
    folder = sweep_dir(manifest["sweep_id"])
    first = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    runs.write_json(folder / SWEEP_FILE, manifest)
    if first:
        runs.point_link(sweeps_dir() / LATEST, manifest["sweep_id"])
    return folder / SWEEP_FILE


def load(ref: str) -> dict:
    """The manifest of sweep `ref` (a sweep id or "latest"); a one-line error when there is none."""
    return json.loads((sweep_dir(resolve(ref)) / SWEEP_FILE).read_text())


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


def first_unfinished(manifest: dict) -> int | None:
    """Index of the first cell that is not done; None when every cell is."""
    return next((cell["index"] for cell in manifest["cells"] if cell["status"] != "done"), None)


def reopen(cell: dict) -> str | None:
    """Make an unfinished cell pending again for a resume; the run id it abandons, if any."""
    abandoned = cell["run_id"]
    if abandoned:
        cell["previous_run_ids"].append(abandoned)
    cell.update(status="pending", run_id=None, started=None, finished=None, timings={})
    return abandoned


def now() -> str:
    """UTC time as ISO 8601 to the second, as the manifest records every time."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
