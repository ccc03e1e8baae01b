"""A third workload that exists only in the tests: its driver (a fanout.workloads.base.Driver) and
what its folder would declare. Registered only through the registry (test_registry.py puts DRIVER
in fanout.workloads.registry.DRIVERS), it shows that the generic stages need no branch for a new
workload.

It "measures" a colour at a weight: each message writes one record per weight step, the last
closing the delivery.
"""

import json
from dataclasses import dataclass
from typing import ClassVar

from fanout.results import cells, run_folders as runs, sections, summary as summaries
from fanout.cloud import costs
from fanout.common import workload as workloads
from fanout.workloads.base import DeployPlace, Driver, Given, Plan
from fanout.common.errors import UsageError

NAME = "toy"
ENTRY = workloads.Workload(
    NAME, "a tests-only workload: a colour at several weights",
    (workloads.CellField("colour", "colour"), workloads.CellField("weight", "weight", "{} g", numeric=True)),
    "toy-percentiles", deployed=("colour",),
)  # fmt: skip
COLOURS = ("red", "green", "blue")
PREPARED: list[tuple[dict, int]] = []  # what ToyDriver.prepare saw: the run's options, messages then queued


@dataclass
class ToyBody:
    """Its report adds nothing to the header every run's summary has (fanout.results.summary)."""

    LAYOUT: ClassVar[tuple[str, ...]] = summaries.HEADER
    COUNTS: ClassVar[dict[str, str]] = summaries.count_names(NAME)


@dataclass
class ToyAcross:
    """Its report across runs: the records per cell."""

    title: str
    rows: list[dict]


def _colour(text: str) -> str:
    if text not in COLOURS:
        raise UsageError(f"invalid --colour {text!r}: expected one of {', '.join(COLOURS)}")
    return text


def _estimate(count: int, deployed) -> costs.Estimate:
    """Its messages' Lambda and SQS cost (a Stack or a sweep cell): it reads and writes nothing in S3."""
    return costs.estimate(count, costs.Deployment(deployed.memory, deployed.concurrency, deployed.architecture), 0, 0)


def records_of(run_id: str) -> list[dict]:
    path = runs.run_dir(run_id) / "records.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


FINISHES = ("matte", "gloss")
VARIABLE = "toy_finish"  # its Terraform variable, and the output the stack reports it in


class ToyDriver(Driver):
    """The toy's stack is painted with a finish (--finish), a deploy-level option of its own."""

    workload = ENTRY
    OPTIONS = ("colour",)
    DEPLOY_OPTIONS = ("finish",)

    def add_fire_arguments(self, parser, sweep: bool = False) -> None:
        parser.add_argument("--colour", help=f"toy: one of {', '.join(COLOURS)}, or several in a sweep")

    def options_from(self, given: Given) -> dict:
        return {"colour": _colour(given.get("colour") or COLOURS[0])}

    def plan(self, stack, options: dict, count: int) -> Plan:
        return Plan({"workload": NAME, "options": options}, _estimate(count, stack))

    def prepare(self, stack, params, say) -> None:
        """Notes the run's options and how many messages its queue held then (PREPARED)."""
        held = stack.client("sqs").get_queue_attributes(QueueUrl=stack.queue_url, AttributeNames=["ApproximateNumberOfMessages"])
        PREPARED.append((dict(params.options), int(held["Attributes"]["ApproximateNumberOfMessages"])))

    def message_fields(self, stack, params) -> dict:
        return {**params.options, "weights": [1, 10, 100]}

    def sweep_options(self, given: Given, memories) -> tuple[dict, ...]:
        return tuple({"colour": _colour(text)} for text in (given.get("colour") or COLOURS[0]).split())

    def describe_cell(self, cell) -> str:
        return f"the colour {cell.options['colour']}"

    def cell_estimate(self, count: int, cell, deployed: dict) -> costs.Estimate:
        return _estimate(count, cell)

    def build_report(self, stack, record) -> summaries.RunSummary[ToyBody]:
        header = summaries.Header(record, record.network_label(), None, summaries.Counts(0, 0, 0, 0, 0), [], [])
        return summaries.new(header, ToyBody())

    def summary_body(self) -> type:
        return ToyBody

    def report_sections(self, summary: summaries.RunSummary[ToyBody]) -> sections.Report:
        """Nothing to show: its records are the report."""
        return sections.Report(f"toy run {summary.run_id}", "")

    def write_report(self, summary: summaries.RunSummary[ToyBody], plots_too: bool = True) -> list:
        return summaries.write(summary)

    def report_across(self, run_ids: list[str], folder, title: str, options: dict | None = None) -> ToyAcross:
        """Records per cell across the runs, in the cells' order, labelled by the toy's cells."""
        schema = cells.of(ENTRY)
        counted: dict = {}
        for run_id in run_ids:
            for record in records_of(run_id):
                if record.get("workload") == NAME and record.get("event") == NAME:
                    cell = schema.key(record)
                    counted[cell] = counted.get(cell, 0) + 1
        rows = [{"cell": cell.label(), "records": counted[cell]} for cell in sorted(counted, key=lambda c: c.sort_key())]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "toy.json").write_text(json.dumps({"title": title, "rows": rows}))
        return ToyAcross(title, rows)

    def compare(self, a_ids: list[str], b_ids: list[str], options: dict | None = None) -> None:
        raise UsageError("toy runs have nothing to compare: their colours are facts, not figures")

    def add_deploy_arguments(self, parser) -> None:
        parser.add_argument("--finish", help=f"toy: the stack's finish, {' or '.join(FINISHES)} (default {FINISHES[0]})")

    def deploy_options(self, given: Given, place: DeployPlace) -> dict:
        finish = given.get("finish")
        if finish is None:
            return {"finish": FINISHES[0]}
        if finish not in FINISHES:
            raise UsageError(f"invalid --finish {finish!r}: expected {' or '.join(FINISHES)}")
        if finish == "gloss" and place.backend == "local":
            raise UsageError("invalid --finish 'gloss' with --backend local: only AWS has it")
        return {"finish": finish}

    def kept_options(self, outputs: dict, given: dict) -> dict:
        return {} if "finish" in given else {"finish": self.stack_fields(outputs)["finish"]}

    def terraform_variables(self, options: dict) -> dict:
        return {VARIABLE: options.get("finish", FINISHES[0])}

    def stack_fields(self, outputs: dict) -> dict:
        return {"finish": outputs.get(VARIABLE, FINISHES[0])}

    def deploy_summary(self, stack) -> list[str]:
        return [f"finish    {stack.workload_outputs['finish']}"]


DRIVER = ToyDriver()
