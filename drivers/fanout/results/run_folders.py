"""Run folders: results/<run_id>/run.json describes how a run was made; results/latest points at
the newest one.

`fire` creates the folder; `wait` and `report` find it again by id or by `latest`. run.json is
the only record of which seqs were sent, so it is written atomically (a temporary file renamed
into place) and `latest` is swapped the same way.
"""

import csv
import io
import json
import os
import re
import secrets
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fanout.common import paths
from fanout.results import run_record
from fanout.common.errors import FanoutError, UsageError

if TYPE_CHECKING:
    from fanout.cloud.stack import Stack

LATEST = "latest"
RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"  # a report's records of the run, as it fetched them from the logs
SUMMARY_FILE = "summary.json"  # the rest of the report's data: both files together are a saved report
MARKDOWN_FILE = "report.md"  # the report in Markdown (fanout.results.markdown), beside the page
PAGE_FILE = "index.html"  # the report page (fanout.results.page), in run, across-runs and sweep folders
CLOCK_SLACK_MS = 5 * 60 * 1000  # this machine's clock against the log timestamps
_RUN_ID = re.compile(r"^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$")


def new_run_id() -> str:
    """Sortable by time (UTC, to the second) and unique (random suffix): 20250101T120000Z-1a2b3c."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + secrets.token_hex(3)


def run_dir(run_id: str) -> Path:
    return paths.results_dir() / run_id


def save(run: run_record.RunRecord) -> Path:
    """Write run.json of `run` and point `latest` at it."""
    folder = make_folder(run_dir(run.run_id))
    write_file(run.run_id, RUN_FILE, run.to_json())
    _point_latest_at(run.run_id)
    return folder


def update(run: run_record.RunRecord) -> None:
    """Rewrite run.json without moving `latest` (for a run that is not the newest)."""
    write_file(run.run_id, RUN_FILE, run.to_json())


def write_file(run_id: str, name: str, data: Any) -> Path:  # JSON
    """Write `data` as JSON to results/<run_id>/<name>, atomically; returns the path."""
    path = run_dir(run_id) / name
    write_json(path, data)
    return path


def load_summary(run_id: str) -> dict | None:
    """The saved report of the run as JSON (summary.json with the records of records.jsonl under
    "records"; fanout.results.summary.from_json reads it), or None when it has none."""
    folder = run_dir(run_id)
    if not (folder / SUMMARY_FILE).is_file() or not (folder / RECORDS_FILE).is_file():
        return None
    return read_summary(run_id) | {"records": _read_records(run_id)}


def read_summary(run_id: str) -> dict:
    """summary.json of the run's saved report; a one-line error when it is not a JSON object
    (cut short by a full disk or a copy, or edited by hand)."""
    path = run_dir(run_id) / SUMMARY_FILE
    try:
        data = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise _corrupt(path, f"not valid JSON ({exc})", run_id) from None
    if not isinstance(data, dict):
        raise _corrupt(path, "not a JSON object", run_id)
    return data


def _corrupt(path: Path, what: str, run_id: str) -> FanoutError:
    return FanoutError(f"corrupt saved report {path}: {what}; {refresh_hint(run_id)} reads the run's logs again")


def saved_record_count(run_id: str) -> int | None:
    """How many records the run's saved report holds; None when it has none."""
    path = run_dir(run_id) / RECORDS_FILE
    return len(path.read_text().splitlines()) if path.is_file() else None


def load_records(run_id: str, needed: str) -> list[dict]:
    """The records a report saved for the run; a one-line error when there are none, or none
    whose event is `needed` (what a report across runs reads: a table of nothing is no answer)."""
    if not (run_dir(run_id) / RECORDS_FILE).is_file():
        raise FanoutError(f"run {run_id} has no {RECORDS_FILE}: run `make report RUN={run_id}` first")
    records = _read_records(run_id)
    if not any(record.get("event") == needed for record in records):
        raise FanoutError(f"run {run_id} has no {needed} records in its {RECORDS_FILE} ({len(records)} records): "
                          f"nothing to report; if its logs hold them, {refresh_hint(run_id)}")  # fmt: skip
    return records


def refresh_hint(run_id: str) -> str:
    """The command that reports the run from its logs again (its saved report is the default)."""
    return f"`make report RUN={run_id} REFRESH=1`"


def _read_records(run_id: str) -> list[dict]:
    """records.jsonl of the run's saved report; a one-line error naming the first line that is
    not a JSON object (a last line cut short, say)."""
    path = run_dir(run_id) / RECORDS_FILE
    try:
        lines = path.read_text().splitlines()
    except UnicodeDecodeError:
        raise _corrupt(path, "not UTF-8 text", run_id) from None
    records = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise _corrupt(path, f"line {number} of {len(lines)} is not valid JSON ({exc})", run_id) from None
        if not isinstance(record, dict):
            raise _corrupt(path, f"line {number} of {len(lines)} is not a JSON object", run_id)
        records.append(record)
    return records


def load(ref: str) -> run_record.RunRecord:
    """run.json of run `ref` (a run id or "latest"); a one-line error when there is none or it
    is corrupt."""
    path = run_dir(resolve(ref)) / RUN_FILE
    return run_record.parse(path.read_bytes(), path)


def resolve(ref: str) -> str:
    """The run id `ref` names ("latest" follows the link)."""
    if ref == LATEST:
        link = paths.results_dir() / LATEST
        if not link.is_symlink() or not (link / RUN_FILE).is_file():
            raise UsageError(f"no runs yet in {paths.results_dir()}; run `make fire` first")
        return resolve(os.readlink(link))
    if not _RUN_ID.fullmatch(ref) or not (run_dir(ref) / RUN_FILE).is_file():
        known = sorted(p.parent.name for p in paths.results_dir().glob(f"*/{RUN_FILE}") if _RUN_ID.fullmatch(p.parent.name))
        hint = f"known runs: {', '.join(known[-5:])}" if known else "no runs yet"
        raise UsageError(f"unknown run {ref!r}: expected {LATEST!r} or a run id under {paths.results_dir()} ({hint})")
    return ref


def run_window(record: run_record.RunRecord) -> tuple[int, int]:
    """The epoch-ms window holding every log line of the run: from its first send (less clock
    slack) to, once `wait` accounted for every message, its latest record plus the function
    timeout (an invocation running then ends within it) and the slack; before that, to now.
    Ending at the run, not now, keeps a report of an old run from scanning every later run's
    logs (Logs Insights bills and runs by the data scanned)."""
    now = int(time.time() * 1000)
    start = (record.first_send_ms or now) - CLOCK_SLACK_MS
    accounting = record.accounting or run_record.RunAccounting()
    last = accounting.last_record_ms
    if last is None or accounting.in_flight:
        return start, now + CLOCK_SLACK_MS
    timeout_ms = int(record.stack.timeout or 0) * 1000
    return start, last + timeout_ms + CLOCK_SLACK_MS


def check_same_stack(record: run_record.RunRecord, stack: "Stack") -> None:
    """A run can only be followed on the stack it was fired at: its queue and logs are there."""
    fired_at = record.stack
    if (fired_at.backend, fired_at.queue_arn) != (stack.backend, stack.queue_arn):
        raise UsageError(
            f"run {record.run_id} was fired at stack {fired_at.stack!r} on the {fired_at.backend} "
            f"backend, not at {stack.stack!r} on {stack.backend}; pass the matching --stack/--backend"
        )


def seq_ranges(seqs: Iterable[int], max_chars: int = 60) -> str:
    """Seqs as ranges, `3-7, 12, 40-99`, listing at most `max_chars` characters, then a count of
    the rest: a run of 100,000 messages can leave thousands missing, and one line must still
    say which."""
    ordered = sorted(set(seqs))
    spans: list[list[int]] = []
    shown = ""
    for seq in ordered:
        if spans and seq == spans[-1][1] + 1:
            spans[-1][1] = seq
        else:
            spans.append([seq, seq])
    for i, (first, last) in enumerate(spans):
        part = str(first) if first == last else f"{first}-{last}"
        longer = f"{shown}, {part}" if shown else part
        if shown and len(longer) > max_chars:
            rest = sum(b - a + 1 for a, b in spans[i:])
            return f"{shown}, ... ({rest:,} more)"
        shown = longer
    return shown


def project_version() -> str:
    """Package version plus the git commit (and '-dirty' for uncommitted changes) when known."""
    version = metadata.version("s3-fanout")
    try:
        commit = _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return version
    return f"{version}+g{commit}{'-dirty' if dirty else ''}"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=paths.REPO, capture_output=True, text=True, check=True, timeout=10
    ).stdout.strip()


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` to write to: renamed onto `path` when the block ends, and
    removed when it raises. A reader (or a crash) never sees half a file, and a write that
    fails leaves the file as it was. The one way files under results/ are written."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:  # a folder that cannot be written, a full disk: the old file stays
        raise unwritable(path, exc) from None
    finally:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)


def unwritable(path: Path, exc: OSError) -> FanoutError:
    """The one-line error of a file or folder under results/ that could not be written."""
    return FanoutError(f"cannot write {path}: {exc.strerror or exc}; make {path.parent} writable "
                       "(or point FANOUT_RESULTS at a folder that is)")


def make_folder(folder: Path) -> Path:
    """Create `folder` (and its parents) if missing; a one-line error when it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unwritable(folder, exc) from None
    return folder


def check_writable(run_id: str) -> None:
    """Refuse, before anything is sent, a run whose folder could not be written: a fire that sent
    its messages and then failed to write run.json would leave queued work no run record names.
    The folder is tried (created, a file written) and removed again: a fire that sends nothing
    leaves nothing."""
    folder = run_dir(run_id)
    make_folder(folder)
    try:
        (folder / RUN_FILE).write_bytes(b"")
    except OSError as exc:
        raise unwritable(folder / RUN_FILE, exc) from None
    finally:
        with suppress(OSError):
            (folder / RUN_FILE).unlink(missing_ok=True)
            folder.rmdir()


def write_text(path: Path, text: str) -> Path:
    """Write `text` to `path` atomically (replacing), byte for byte (no newline translation)."""
    with replacing(path) as tmp, open(tmp, "w", newline="") as out:
        out.write(text)
    return path


def write_json(path: Path, data: Any) -> Path:  # JSON
    """Write `data` as JSON (sorted keys) to `path` atomically."""
    return write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def write_csv(path: Path, columns: list[str], rows: Iterable[dict],
              extrasaction: Literal["raise", "ignore"] = "raise") -> Path:
    """Write dict rows under a header of `columns` to `path` atomically."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns, extrasaction=extrasaction)
    writer.writeheader()
    writer.writerows(rows)
    return write_text(path, text.getvalue())


def point_link(link: Path, target: str) -> None:
    """Make the symlink `link` point at `target` (a sibling folder), atomically."""
    tmp = link.with_name(f".{link.name}.tmp")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target, target_is_directory=True)
    os.replace(tmp, link)


def _point_latest_at(run_id: str) -> None:
    point_link(paths.results_dir() / LATEST, run_id)
