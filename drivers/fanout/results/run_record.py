"""The run record (run.json) as typed data, and the checks a run.json must pass when it is
loaded, so that a corrupt record is one line naming the file, never a traceback deep in wait or
report. The keys of older runs are read here and nowhere else (docs/output.md, *Old runs*).

Hand-written rather than a JSON Schema: a dozen fields, cross-field rules (`sent` against
`messages`, seqs within range) a schema cannot state, and messages that must name the file and
the field in one line.
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fanout.common import workload as workloads
from fanout.common.errors import FanoutError
from fanout.local import backends, network
from fanout.results.recorded import Recorded


@dataclass(frozen=True)
class RunStack(Recorded):
    """The stack a run was fired at (fanout.cloud.stack.Stack.as_record); the workloads' outputs
    (download: default_strategy; latency: storage, express_bucket, express_az) stay in `extra`, by name."""

    stack: str = ""
    backend: str = ""
    region: str = ""
    endpoint: str = ""  # the emulator's URL on the local backend
    bucket: str | None = None
    object_key: str | None = None
    object_size: int | None = None
    queue_url: str | None = None
    queue_arn: str | None = None
    dlq_url: str | None = None
    dlq_arn: str | None = None
    function_name: str | None = None
    log_group: str | None = None
    concurrency: int | None = None
    memory: int | None = None
    timeout: int | None = None
    batch_size: int | None = None
    max_receive_count: int | None = None
    architecture: str | None = None
    sdk: str = "runtime"  # a stack deployed before the zip bundled the SDK ran on the runtime's
    object_keys: list = field(default_factory=list)
    ephemeral_storage: str | None = None  # EPHEMERAL_STORAGE as deployed (MB, or auto); None: before it was recorded


@dataclass(frozen=True)
class RunParameters(Recorded):
    """What fire was asked to send."""

    messages: int = 0
    experiment_tag: str = ""
    inject_failures: str | None = None  # a fraction as text
    send_workers: int | None = None
    workload: str = workloads.DEFAULT  # runs from before the registry downloaded
    workload_options: dict | None = None  # the workload's options (its driver's run_options), when it has any

    LEGACY = {"workload_options": lambda data: _legacy_options(data)}
    OMIT_NONE = ("workload_options",)


# The JSON boundary: before a workload's options had this generic slot, the download workload
# (the one run without options of that slot) recorded its options beside the generic parameters
# under these names (and before that its strategy as a mode). Read, they become its options;
# written back, they stay where they were.
LEGACY_DEFAULT_OPTIONS = {"strategy": "mode", "strategy_from": "mode_from", "pin": None}


def _legacy_options(data: dict) -> dict | None:
    """The options an old run.json's parameters (`data`, without workload_options) recorded
    outside it; None for a run of a workload without options."""
    found = {name: data[name] if name in data else data.get(old) if old else None
             for name, old in LEGACY_DEFAULT_OPTIONS.items() if name in data or (old and old in data)}
    return found or None


@dataclass(frozen=True)
class RunSweep(Recorded):
    """The sweep cell a run was (fanout.stages.sweep), and how the cell ended."""

    sweep_id: str | None = None
    cell: int | None = None
    environments: str | None = None  # fresh, or warm (kept from the previous cell)
    cell_status: str | None = None

    OMIT_NONE = ("sweep_id", "cell", "environments", "cell_status")


@dataclass(frozen=True)
class RunAccounting(Recorded):
    """Where every sent message ended, as `wait` last saw it (fanout.stages.wait.Accounting)."""

    done: int = 0
    failed: list = field(default_factory=list)
    dead_lettered: list = field(default_factory=list)
    in_flight: list = field(default_factory=list)
    lost: list = field(default_factory=list)
    duplicate_download_records: int = 0
    platform_errors: dict = field(default_factory=dict)
    last_record_ms: int | None = None
    ingestion_lag_ms: int | None = None


@dataclass(frozen=True)
class RunRecord(Recorded):
    """One run: how it was made (fire), what was sent, and (once waited for) its accounting and
    the network it was hosted under (local backend)."""

    run_id: str
    backend: str | None = None
    stack: RunStack = field(default_factory=RunStack)
    parameters: RunParameters = field(default_factory=RunParameters)
    injected_seqs: list = field(default_factory=list)
    version: str | None = None
    sweep: RunSweep | None = None
    send_status: str | None = None  # sending (fire still running, or killed), complete or interrupted
    sent: int = 0
    failed_seqs: list = field(default_factory=list)
    failure_reasons: dict = field(default_factory=dict)
    first_send_ms: int | None = None
    last_send_ms: int | None = None
    send_rate_per_s: float | None = None
    accounting: RunAccounting | None = None
    network: dict | None = None  # fanout.local.network.NetworkModel.describe()
    limits: dict | None = None  # how the local host held its environments to Lambda's limits (Summary.limits)

    NESTED = {"stack": RunStack, "parameters": RunParameters, "sweep": RunSweep, "accounting": RunAccounting}
    OMIT_NONE = ("sweep", "accounting", "network", "limits")

    def sent_seqs(self) -> list[int]:
        """The seqs of the run that reached the queue."""
        failed = set(self.failed_seqs)
        return [seq for seq in range(self.parameters.messages) if seq not in failed]

    def network_label(self) -> str:
        """How the run's numbers were made (fanout.local.network.label)."""
        return network.label(backends.simulated(self.backend), self.network)

    def limits_label(self) -> str:
        """How the run's environments were held to Lambda's limits, in one line stated beside the
        network label: each limit as the local host applied it, or why this machine could not
        ("" on AWS, where Lambda holds them, and for a run whose host did not record them)."""
        if not self.limits:
            return ""
        return "Lambda's limits: " + "; ".join(f"{name}: {how}" for name, how in sorted(self.limits.items()))

    def cpu_scale(self) -> float:
        """What the environments' CPU share was divided by: the network scale they were hosted
        under (the local host caps each at memory / 1,769 MB of a vCPU / scale, a shaped model
        only), else 1."""
        shaped = self.network and self.network.get("profile") != network.NONE
        return float(self.network["scale"]) if shaped and self.network else 1.0


def limits_label(records: Iterable[RunRecord]) -> str:
    """The limits labels of several runs (RunRecord.limits_label), each distinct one once, for a
    page across them ("" when none has any: AWS, or runs from before the host recorded them)."""
    return distinct_limits(record.limits_label() for record in records)


def distinct_limits(labels: Iterable[str]) -> str:
    """Limits labels in one, each distinct one once ("" when none is any)."""
    return " | ".join(sorted(set(labels) - {""}))


def check(data: object, path: Path) -> RunRecord:
    """The run record of `data` (a run.json just parsed) when it is a usable one; else FanoutError."""
    problem = _problem(data)
    if problem or not isinstance(data, dict):
        raise FanoutError(f"corrupt run record {path}: {problem}; fire a new run or restore the file")
    return RunRecord.from_json(data)


def parse(raw: bytes, path: Path) -> RunRecord:
    """Decode and check the bytes of a run.json."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise FanoutError(f"corrupt run record {path}: not UTF-8 text; fire a new run or restore the file") from None
    except ValueError as exc:
        raise FanoutError(f"corrupt run record {path}: not valid JSON ({exc}); fire a new run or restore the file") from None
    return check(data, path)


def _problem(data: object) -> str | None:
    if not isinstance(data, dict):
        return f"expected a JSON object, found {type(data).__name__}"
    checks = (
        ("run_id", str),
        ("stack", dict),
        ("parameters", dict),
        ("sent", int),
        ("failed_seqs", list),
        ("first_send_ms", (int, type(None))),
    )
    for name, kind in checks:
        if name not in data:
            return f"field {name!r} is missing"
        if not _is(data[name], kind):
            return f"field {name!r} is {data[name]!r:.40}, not {_kind_name(kind)}"
    messages = data["parameters"].get("messages")
    if not _is(messages, int) or messages < 1:
        return f"parameters.messages is {messages!r:.40}, not a whole number of at least 1"
    if not 0 <= data["sent"] <= messages:
        return f"sent is {data['sent']}, not between 0 and parameters.messages ({messages})"
    bad = [s for s in data["failed_seqs"] if not _is(s, int) or not 0 <= s < messages]
    if bad:
        return f"failed_seqs holds {bad[0]!r:.40}, not a seq from 0 to {messages - 1}"
    if messages - len(set(data["failed_seqs"])) != data["sent"]:
        return f"sent ({data['sent']}) does not match parameters.messages less failed_seqs"
    for name in ("backend", "stack"):
        if not isinstance(data["stack"].get(name), str):
            return f"stack.{name} is missing or not a string"
    return None


def _is(value: object, kind: type | tuple[type, ...]) -> bool:
    """isinstance, except that a bool is not an int (JSON true is not a count)."""
    return isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", dict: "an object", int: "a whole number", list: "a list", type(None): "null"}
    return " or ".join(names[k] for k in kinds)
