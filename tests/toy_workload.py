"""A third workload that exists only in the tests: its driver module, with the interface every
driver has (fanout.workloads.DRIVER_INTERFACE), and its registry entry. Registered only through
the registry (test_registry.py puts ENTRY in fanout.workloads.WORKLOADS and this module at
fanout.workloads.toy), it shows that the generic stages need no branch for a new workload.

It "measures" a colour at a weight: each message writes one record per weight step, the last
closing the delivery.
"""

import json

from fanout import cells, costs, runs, workloads
from fanout.errors import UsageError

NAME = "toy"
ENTRY = workloads.Workload(
    NAME, "a tests-only workload: a colour at several weights",
    (workloads.CellField("colour", "colour"), workloads.CellField("weight", "weight", "{} g", numeric=True)),
    "toy-percentiles", deployed=("colour",),
)  # fmt: skip
OPTIONS = ("colour",)
COLOURS = ("red", "green", "blue")


def add_fire_arguments(parser, sweep: bool = False) -> None:
    parser.add_argument("--colour", help=f"toy: one of {', '.join(COLOURS)}, or several in a sweep")


def options_from(args) -> dict:
    return {"colour": _colour(args.colour or COLOURS[0])}


def _colour(text: str) -> str:
    if text not in COLOURS:
        raise UsageError(f"invalid --colour {text!r}: expected one of {', '.join(COLOURS)}")
    return text


def plan(stack, options: dict, count: int) -> workloads.Plan:
    return workloads.Plan({"workload": NAME, "options": options}, _estimate(count, stack))


def _estimate(count: int, deployed) -> costs.Estimate:
    """Its messages' Lambda and SQS cost (a Stack or a sweep cell): it reads and writes nothing in S3."""
    return costs.estimate(count, costs.Deployment(deployed.memory, deployed.concurrency, deployed.architecture), 0, 0)


def message_fields(stack, params) -> dict:
    return {**params.options, "weights": [1, 10, 100]}


def sweep_options(args, memories) -> tuple[dict, ...]:
    return tuple({"colour": _colour(text)} for text in (args.colour or COLOURS[0]).split())


def cell_fire_fields(cell) -> dict:
    return {"workload": NAME, "options": cell.options}


def describe_cell(cell) -> str:
    return f"the colour {cell.options['colour']}"


def cell_estimate(count: int, cell) -> costs.Estimate:
    return _estimate(count, cell)


def records_of(run_id: str) -> list[dict]:
    path = runs.run_dir(run_id) / "records.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def build_report(stack, record: dict) -> dict:
    return {"run": record, "records": []}


def show_report(summary: dict) -> None:
    """Nothing to show: its records are the report."""


def write_report(summary: dict, plots_too: bool = True) -> list:
    return runs.write_summary(summary)


def report_across(run_ids: list[str], folder, title: str, at_target: float | None = None) -> dict:
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
    return {"title": title, "rows": rows}


def compare(a_ids: list[str], b_ids: list[str], at_target: float | None = None) -> None:
    raise UsageError("toy runs have nothing to compare: their colours are facts, not figures")


# ---- deploy-level hooks: the toy's stack is painted with a finish (--finish) --------------------

DEPLOY_OPTIONS = ("finish",)
FINISHES = ("matte", "gloss")
VARIABLE = "toy_finish"  # its Terraform variable, and the output the stack reports it in


def add_deploy_arguments(parser) -> None:
    parser.add_argument("--finish", help=f"toy: the stack's finish, {' or '.join(FINISHES)} (default {FINISHES[0]})")


def deploy_options(args, backend: str) -> dict:
    if args.finish is None:
        return {"finish": FINISHES[0]}
    if args.finish not in FINISHES:
        raise UsageError(f"invalid --finish {args.finish!r}: expected {' or '.join(FINISHES)}")
    if args.finish == "gloss" and backend == "local":
        raise UsageError("invalid --finish 'gloss' with --backend local: only AWS has it")
    return {"finish": args.finish}


def kept_options(outputs: dict, given: dict) -> dict:
    return {} if "finish" in given else {"finish": stack_fields(outputs)["finish"]}


def terraform_variables(options: dict) -> dict:
    return {VARIABLE: options.get("finish", FINISHES[0])}


def stack_fields(outputs: dict) -> dict:
    return {"finish": outputs.get(VARIABLE, FINISHES[0])}


def deploy_summary(stack) -> list[str]:
    return [f"finish    {stack.workload_outputs['finish']}"]
