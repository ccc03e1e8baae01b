"""Workloads are registered in one place (issue 12's acceptance criterion): the generic stages
never name a workload, and a workload registered only through the registry (the tests-only
toy_workload) is fired, described in a sweep, grouped into cells, accounted for, reported across
runs and refused by compare in its own words, by the unchanged generic code."""

import ast
import json
from pathlib import Path

import pytest
from rich.console import Console
import toy_workload
from test_fire import drain, make_stack, queue, results  # noqa: F401 - fixtures

from fanout.local import backends
from fanout.stages import sweep_axes as axes, command_line, demo, deploy, fire, report as reporting, sweep, wait
from fanout.results import cells, deadletters, run_folders as runs, sweep_folders as sweeps
from fanout import cli, insights
from fanout.common import function_modules
from fanout.workloads import registry as workloads
from fanout.cloud import params
from fanout.local.emulator import control
from fanout.common.errors import UsageError
from fanout.cloud.stack import Stack
from fanout.workloads.base import Driver
from fanout.common.workload import SHARED_CELL_FIELDS

DRIVERS = Path(workloads.__file__).parents[1]  # drivers/fanout
WORKLOAD_FOLDERS = DRIVERS / "workloads"  # a folder per workload; base.py, registry.py and __init__.py are generic
REGISTRY = WORKLOAD_FOLDERS / "registry.py"  # names each workload once, in REGISTERED
# What a workload declares (common/workload.py) names the one workload records saved before
# there were others ran: DEFAULT, the registry's too.
DECLARATIONS = DRIVERS / "common" / "workload.py"


def is_workloads_own(path: Path) -> bool:
    """Is `path` (a driver module) inside one workload's folder?"""
    relative = path.relative_to(DRIVERS).parts
    return len(relative) > 2 and relative[0] == "workloads"


def generic_modules() -> list[Path]:
    return [path for path in sorted(DRIVERS.rglob("*.py")) if not is_workloads_own(path) and path not in (REGISTRY, DECLARATIONS)]


def names_a_workload(source: str, names, is_workload_module=None) -> list[str]:
    """What in `source` names one of the workloads `names`: a string literal equal to a name, a
    comparison with the default workload (`workload != workloads.DEFAULT`: a branch for it), or
    an import of a workload's module (`is_workload_module(dotted name)`; by default a module of a
    workload's folder, fanout.workloads.<name>)."""
    is_workload_module = is_workload_module or _workloads_own
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(_is_default(side) for side in (node.left, *node.comparators)):
            found.append(f"line {node.lineno}: compares with workloads.DEFAULT")
        elif isinstance(node, ast.Constant) and node.value in names:
            found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [f"line {node.lineno}: imports {name}" for name in _imported(node) if is_workload_module(name)]
    return found


def _imported(node) -> list[str]:
    """The dotted names an import statement brings in (`from a import b`: a.b)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [f"{node.module}.{alias.name}" for alias in node.names] if node.module and not node.level else []


def _workloads_own(name: str) -> bool:
    """Is `name` (a module, or a name in one) in a workload's folder, fanout.workloads.<name>?"""
    parts = name.split(".")
    return parts[:2] == ["fanout", "workloads"] and len(parts) > 2 and parts[2] not in ("base", "registry")


def _is_default(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "DEFAULT" and ast.unparse(node.value).endswith("workloads")


def test_the_generic_driver_modules_name_no_workload():
    modules = generic_modules()
    assert {DRIVERS / "stages" / name for name in ("fire.py", "wait.py", "sweep.py")} <= set(modules)
    assert {path.name for path in WORKLOAD_FOLDERS.iterdir() if (path / "__init__.py").is_file()} == set(workloads.DRIVERS)
    found = {path.relative_to(DRIVERS).as_posix(): names_a_workload(path.read_text(), set(workloads.DRIVERS))
             for path in modules}  # fmt: skip
    assert {module: hits for module, hits in found.items() if hits} == {}


@pytest.mark.parametrize("branch", [
    'if workload.name == "download":\n    pass\n',
    'WHAT = {"latency": 1}\n',
    "what = cell.strategy if cell.workload == workloads.DEFAULT else cell.options\n",
    "if workloads.DEFAULT != name:\n    pass\n",
    "from fanout.workloads import latency\n",
    "import fanout.workloads.download.driver\n",
    "from fanout.workloads.latency.driver import definition\n",
    "from fanout.workloads.latency import costs as priced\n",
    "from fanout.cloud import params\nfrom fanout.workloads.latency import storage as storage_classes\n",
    "from fanout.workloads.latency.storage import CLASSES\n",
    "import fanout.workloads.latency.storage\n",
    "from fanout.workloads.download import report as run_report\n",
])  # fmt: skip
def test_the_static_check_catches_a_branch_on_a_workload(branch):
    assert names_a_workload(branch, set(workloads.DRIVERS))
    generic = "from fanout.workloads import registry\nfrom fanout.workloads.base import Driver\nregistry.get(name).plan()\n"
    assert not names_a_workload(generic, set(workloads.DRIVERS))
    assert not names_a_workload("from fanout.cloud import params, stack\nimport fanout.local.host.runtime\n", set(workloads.DRIVERS))


def test_every_driver_is_a_driver_named_as_registered():
    for name, driver in workloads.DRIVERS.items():
        assert isinstance(driver, Driver) and driver.name == driver.workload.name == name
        assert workloads.get(name) is driver  # one instance
    assert toy_workload.DRIVER.name == toy_workload.ENTRY.name


def test_deploy_option_names_are_each_one_workloads_and_clash_with_no_sweep_setting():
    """They are flat keys of a sweep's manifest and of deploy_options(): one name, one meaning."""
    names = [*workloads.deploy_option_names(), *toy_workload.DRIVER.DEPLOY_OPTIONS]
    assert len(names) == len(set(names))
    settings = sweep.SweepParams("local", "s", "us-east-1", axes.Axes.parse(
        {"memory": "512", "concurrency": "2", "object_size": "1MiB", "architecture": "x86_64", "strategy": "stream"}),
        1, "t").settings()  # fmt: skip
    assert not set(names) & set(settings)


# ---- the function's side ----------------------------------------------------------------------

FUNCTION = function_modules.FOLDER  # functions/runner
FUNCTION_REGISTRY = "workloads.py"
# The function's modules that are one workload's own: those of its folder (download: its core,
# strategies and byte-arrival timeline; latency: its core). Every module at the top is generic
# (the handler, the envelope, what every invocation shares, the endpoint addresses).
FUNCTION_WORKLOAD_OWN = {folder.name: tuple(sorted(path.name for path in folder.glob("*.py")))
                         for folder in function_modules.folders()[1:]}  # fmt: skip
FUNCTION_OWN = {name for names in FUNCTION_WORKLOAD_OWN.values() for name in names}


def generic_function_modules() -> list[Path]:
    return [path for path in sorted(FUNCTION.glob("*.py")) if path.name != FUNCTION_REGISTRY]


def imports_a_function_workload(name: str) -> bool:
    """`import measure`, `from latency import NAME`: the function's modules import by plain name."""
    return f"{name.split('.')[0]}.py" in FUNCTION_OWN


def test_the_generic_function_modules_name_no_workload():
    """Only the function's registry names a workload: the handler reaches every one through it."""
    modules = generic_function_modules()
    assert {FUNCTION / name for name in ("handler.py", "envelope.py", "invocation.py")} <= set(modules)
    registry = function_modules.load("workloads")
    assert set(FUNCTION_WORKLOAD_OWN) == set(registry.WORKLOADS) == set(workloads.DRIVERS)  # a folder each
    names = set(registry.WORKLOADS) | set(workloads.DRIVERS)
    found = {path.name: names_a_workload(path.read_text(), names, imports_a_function_workload) for path in modules}
    assert {module: hits for module, hits in found.items() if hits} == {}


def test_no_workload_s_function_module_imports_another_workload_s():
    """A workload's own modules share only the generic ones (units, envelope, ...), so removing
    one workload cannot break another."""
    for name, own in FUNCTION_WORKLOAD_OWN.items():
        others = {module for other, modules in FUNCTION_WORKLOAD_OWN.items() if other != name for module in modules}
        for module in own:
            tree = ast.parse((FUNCTION / name / module).read_text())
            imported = {f"{alias.name.split('.')[0]}.py" for node in ast.walk(tree) if isinstance(node, ast.Import)
                        for alias in node.names}  # fmt: skip
            imported |= {f"{node.module}.py" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
            assert not imported & others, f"{module} imports {sorted(imported & others)}"


@pytest.mark.parametrize("branch", [
    "import measure\n",
    "from latency import NAME\n",
    "import timeline, strategies\n",
    'DEFAULT_WORKLOAD = "download"\n',
    "if name == workloads.DEFAULT:\n    pass\n",
])  # fmt: skip
def test_the_static_check_catches_a_function_module_naming_a_workload(branch):
    names = set(function_modules.load("workloads").WORKLOADS)
    assert names_a_workload(branch, names, imports_a_function_workload)
    generic = "import envelope\nimport invocation\nimport workloads\nfrom envelope import load\n"
    assert not names_a_workload(generic, names, imports_a_function_workload)


# ---- a third workload, registered only through the registry -----------------------------------


@pytest.fixture
def toy(monkeypatch):
    """The toy workload in the registry, and in the sweep's flags (read once, and cached, from the
    registry as it is: forgotten again afterwards, so no later test on the worker sees --colour)."""
    monkeypatch.setitem(workloads.DRIVERS, toy_workload.NAME, toy_workload.DRIVER)
    sweep.flags.cache_clear()
    yield toy_workload.DRIVER
    sweep.flags.cache_clear()


def test_fire_sends_the_toys_bodies_through_its_driver(toy, queue, emulator, results):  # noqa: F811
    sqs, url = queue
    args = cli.build_parser().parse_args(["fire", "--workload", "toy", "--colour", "blue"])  # its flag, from the registry
    workload = workloads.get(args.workload)
    fire.check_options(workload, command_line.texts(args))
    stack = make_stack(emulator, url)
    plan = workload.plan(stack, workload.options_from(command_line.texts(args)), 4)
    toy_workload.PREPARED.clear()
    record = fire.fire(stack, fire.FireParams(4, "t", workers=1, **plan.fire_fields))
    assert toy_workload.PREPARED == [({"colour": "blue"}, 0)]  # once, before the first message was sent
    bodies = sorted(drain(sqs, url), key=lambda body: body["seq"])
    expected = toy_workload.DRIVER.message_fields(stack, fire.FireParams(4, **plan.fire_fields))
    assert [body["seq"] for body in bodies] == list(range(4))
    assert all({k: v for k, v in body.items() if k not in ("seq", "run_id")} ==
               {"experiment_tag": "t", "workload": toy.name, **expected} for body in bodies)  # fmt: skip
    assert record.parameters.workload == toy.name and record.parameters.workload_options == {"colour": "blue"}
    download_args = cli.build_parser().parse_args(["fire", "--colour", "red"])
    with pytest.raises(UsageError, match="--colour is an option of the toy workload"):
        fire.check_options(workloads.get(download_args.workload), command_line.texts(download_args))


def test_fire_ignores_another_workloads_option_when_deploy_level(toy, queue, emulator, results, monkeypatch):  # noqa: F811
    """`--deploy-level NAME` (how make passes STRATEGY and STORAGE, which deploy reads too): a run
    of a workload without that option sends exactly what it sends without it; given outright,
    the option is still refused. Through fire's command line, on a stack the lookup returns."""
    sqs, url = queue
    monkeypatch.setattr(fire.stacks, "acted_on", lambda backend, name, fields: make_stack(emulator, url))

    def sent(*argv) -> list[dict]:
        assert cli.main(["fire", "--messages", "3", "--workers", "1", *argv]) == 0
        bodies = sorted(drain(sqs, url), key=lambda body: body["seq"])
        return [{name: value for name, value in body.items() if name != "run_id"} for body in bodies]

    assert sent("--strategy", "stream", "--colour", "red", "--deploy-level", "colour") == sent("--strategy", "stream")
    assert sent("--workload", "toy", "--colour", "blue", "--strategy", "stream", "--deploy-level", "strategy") == \
        sent("--workload", "toy", "--colour", "blue")  # fmt: skip
    assert cli.main(["fire", "--messages", "3", "--colour", "red"]) == 2
    toy_workload.PREPARED.clear()
    assert cli.main(["fire", "--messages", "200000", "--workload", "toy"]) == 2  # over the estimate's threshold
    assert drain(sqs, url) == [] and toy_workload.PREPARED == []  # a refused run prepares nothing


def test_a_sweep_describes_and_prices_the_toys_cells(toy):
    args = cli.build_parser().parse_args(["sweep", "--workload", "toy", "--colour", "red green"])
    grid = axes.Axes.parse({"memory": "512", "concurrency": "2", "object_size": "1MiB", "architecture": "x86_64",
                            "strategy": "stream"}, toy.name, toy.sweep_options(command_line.texts(args), (512,)))  # fmt: skip
    cells_ = grid.cells()
    assert [cell.options for cell in cells_] == [{"colour": "red"}, {"colour": "green"}]
    described = [sweep._describe(cell) for cell in cells_]
    assert [text.endswith(toy_workload.DRIVER.describe_cell(cell)) for text, cell in zip(described, cells_)] == [True, True]
    deployed = {"region": "us-east-1", "finish": "matte"}
    assert sweep.cell_estimates(10, cells_, deployed) == \
        [toy_workload.DRIVER.cell_estimate(10 * cell.concurrency, cell, deployed) for cell in cells_]  # fmt: skip
    assert all(toy_workload.DRIVER.cell_fire_fields(cell)["workload"] == toy.name for cell in cells_)


def toy_records(run_id: str) -> list[dict]:
    """What the toy's function would log: seqs 0 and 1 one record per weight, the last closing
    the delivery; seq 2 fails on its last allowed receive (3); seq 3 has not ended yet."""
    cell = {"memory_size": 512, "concurrency_limit": 2, "experiment_tag": "t"}
    lines = [{"seq": seq, "event": "toy", "colour": colour, "weight": weight, "receive_count": 1, **cell}
             | ({"outcome": "done"} if weight == 1000 else {})
             for seq, colour in ((0, "red"), (1, "green")) for weight in (100, 10, 1000)]  # fmt: skip
    lines += [{"seq": 2, "event": "error", "outcome": "error", "receive_count": 3},
              {"seq": 3, "event": "toy", "colour": "red", "weight": 5, "receive_count": 1, **cell}]  # fmt: skip
    return [{"run_id": run_id, "workload": "toy", **line} for line in lines]


def test_wait_accounts_for_the_toys_messages_from_the_envelope(toy, queue, emulator, results, monkeypatch):  # noqa: F811
    sqs, url = queue
    dlq = sqs.create_queue(QueueName="toy-dlq")["QueueUrl"]
    stack = make_stack(emulator, url, dlq_url=dlq, max_receive_count=3)
    record = fire.fire(stack, fire.FireParams(5, "t", workers=1, workload=toy.name, options={"colour": "red"}))
    sqs.send_message(QueueUrl=dlq, MessageBody=json.dumps({"run_id": record.run_id, "seq": 4, "workload": toy.name}))
    events = [{"timestamp": record.first_send_ms + i, "message": json.dumps(line)}
              for i, line in enumerate(toy_records(record.run_id))]  # fmt: skip
    # The logs, as the local evaluator reads them: the saved query runs on these events.
    monkeypatch.setattr(insights, "run", lambda stack, text, start_ms=None, end_ms=None: insights.evaluate(text, events))
    accounting = wait.account(stack, record)
    assert (accounting.done, accounting.failed, accounting.dead_lettered) == ({0, 1}, {2}, {4})
    assert accounting.in_flight() == [3] and accounting.duplicates == 0
    assert deadletters.peek(stack, record.run_id) == {4}
    sqs.delete_queue(QueueUrl=dlq)


def test_the_toys_cells_come_from_its_registry_entry(toy):
    schema = cells.of(toy.workload)
    shared = SHARED_CELL_FIELDS
    assert schema.fields == (*shared[:-1], "colour", "weight", shared[-1])
    assert schema.across == (*shared[:-1], "colour", "architecture", "weight", shared[-1], "network")  # no pin: download's
    rows = [{"memory_size": "512", "concurrency_limit": 2, "colour": "red", "weight": w, "experiment_tag": "t"}
            for w in ("1000", 10, "100")]  # query rows carry text, records numbers  # fmt: skip
    ordered = sorted(rows, key=schema.sort_key)
    assert [schema.key(row).weight for row in ordered] == [10, 100, 1000]  # numeric order, not text order
    assert schema.label(rows[1]) == "512 MB, concurrency 2, red, 10 g, tag=t"
    assert schema.key(rows[1]) == schema.key({**rows[1], "memory_size": 512, "weight": "10"})
    assert schema.varying([schema.key(row) for row in rows]) == ("weight",)
    assert {"colour", "weight"} <= cells.titles()


def test_a_workloads_run_cells_are_its_own_columns_after_its_message_fields():
    """download's pin (run.json's, not its records') is a column of its cells alone, where its tables across runs have it."""
    download = cells.of(workloads.get("download").workload)
    assert download.across == (*SHARED_CELL_FIELDS[:-1], "object_size", "architecture", "strategy", "pin",
                                SHARED_CELL_FIELDS[-1], "network")  # fmt: skip
    assert download.key({"memory_size": 512}).pin is None and download.Cell(**dict.fromkeys(download.fields), pin="auto").pin == "auto"
    assert "pin" not in cells.of(workloads.get("latency").workload).across


def test_report_and_compare_dispatch_to_the_toys_driver(toy, queue, emulator, results, tmp_path, capsys):  # noqa: F811
    _, url = queue
    stack = make_stack(emulator, url)
    run_ids = [fire.fire(stack, fire.FireParams(2, "t", workers=1, workload=toy.name, options={"colour": "red"})).run_id
               for _ in range(2)]  # fmt: skip
    for run_id in run_ids:  # as the toy's report writes them
        (runs.run_dir(run_id) / "records.jsonl").write_text("\n".join(map(json.dumps, toy_records(run_id))) + "\n")
    assert reporting.workload_of(run_ids) == toy
    summary = reporting.report_across(run_ids, tmp_path / "across", "toys")
    # Per cell: 2 runs x the records of that colour and weight; in the cells' numeric order.
    expected = {}
    for run_id in run_ids:
        for line in toy_records(run_id):
            if line["event"] == "toy":
                cell = cells.of(toy.workload).key(line)
                expected[cell] = expected.get(cell, 0) + 1
    assert summary.rows == [{"cell": cell.label(), "records": expected[cell]}
                               for cell in sorted(expected, key=lambda c: c.sort_key())]  # fmt: skip
    assert json.loads((tmp_path / "across" / "toy.json").read_text())["rows"] == summary.rows
    capsys.readouterr()
    assert cli.main(["compare", run_ids[0], run_ids[1]]) == 2
    assert capsys.readouterr().err.strip() == "fanout: error: toy runs have nothing to compare: their colours are facts, not figures"


# ---- the toy's deploy-level option, through the same hooks as latency's storage classes ------------


def deploy_inputs(*argv: str) -> params.DeployParams:
    return deploy.inputs_given(deploy.given_of(cli.build_parser().parse_args(["deploy", *argv])), {})


def test_the_toys_deploy_option_reaches_terraforms_variables(toy):
    chosen = deploy_inputs("--backend", "aws", "--finish", "gloss")
    assert chosen.workload_options["finish"] == "gloss"
    variables = chosen.variables("", "/x.zip", backends.get("aws"))
    assert variables[toy_workload.VARIABLE] == "gloss"
    default = deploy_inputs().variables("", "/x.zip", backends.get("local"))
    assert default[toy_workload.VARIABLE] == toy_workload.FINISHES[0]
    # The other workloads' variables are there alongside, unchanged by the toy's.
    assert {name: value for name, value in variables.items() if name != toy_workload.VARIABLE} == \
        {name: value for name, value in deploy_inputs("--backend", "aws").variables("", "/x.zip", backends.get("aws")).items()
         if name != toy_workload.VARIABLE}  # fmt: skip
    # Without a command line of deploy's (the demo's inputs), the options deploy their defaults.
    bare = demo.check(cli.build_parser().parse_args(["demo"])).inputs
    assert bare.variables("", "/x.zip", backends.get("local"))[toy_workload.VARIABLE] == toy_workload.FINISHES[0]


def test_a_redeploy_keeps_the_toys_deployed_option_unless_given(toy):
    """The generic redeploy (deploy.inputs_given with the stack's outputs) keeps every workload's
    deploy-level option through kept_options, without naming one."""
    deployed = {toy_workload.VARIABLE: "gloss", "memory": 512}
    args = cli.build_parser().parse_args(["deploy", "--backend", "aws", "--memory", "1024"])
    assert deploy.inputs_given(deploy.given_of(args), deployed).workload_options["finish"] == "gloss"
    args = cli.build_parser().parse_args(["deploy", "--backend", "aws", "--finish", "matte"])
    assert deploy.inputs_given(deploy.given_of(args), deployed).workload_options["finish"] == "matte"


@pytest.mark.parametrize("argv, named", [(["--finish", "shiny"], "'shiny'"), (["--finish", "gloss"], "--backend local")])
def test_a_bad_toy_deploy_option_is_one_line_before_anything_runs(toy, argv, named, capsys, monkeypatch):
    started = []
    monkeypatch.setattr(control, "start", lambda: started.append("emulator"))
    monkeypatch.setattr(deploy.terraform, "apply", lambda *a: started.append("terraform"))
    for command in ("deploy", "plan", "sweep"):
        assert cli.main([command, *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert named in err and len(err.splitlines()) == 1, command
    assert started == []


def test_the_stack_reports_the_toys_finish_back(toy):
    outputs = {"region": "us-east-1", "endpoint": "", "stack": "t", "bucket": "b", "object_key": "k", "object_size": 1,
               "queue_url": "q", "queue_arn": "qa", "dlq_url": "d", "dlq_arn": "da", "function_name": "f",
               "log_group": "/aws/lambda/f", "concurrency": 1, "memory": 128, "timeout": 60, "batch_size": 1,
               "max_receive_count": 5, "architecture": "x86_64", "default_strategy": "stream"}  # fmt: skip
    deployed = Stack.from_outputs("aws", outputs | {toy_workload.VARIABLE: "gloss"}, workloads.stack_fields)
    assert deployed.workload_outputs["finish"] == "gloss"
    assert deployed.as_record()["finish"] == "gloss"  # run.json holds it beside the other outputs
    assert Stack.from_outputs("aws", outputs, workloads.stack_fields).workload_outputs["finish"] == toy_workload.FINISHES[0]  # deployed before it
    assert "\n  finish    gloss\n" in deploy.summary(deployed, 1.0)


def test_a_sweep_deploys_the_toys_option_with_every_cell_and_records_it(toy):
    args = cli.build_parser().parse_args(["sweep", "--backend", "aws", "--memory", "512 1024", "--finish", "gloss"])
    chosen = sweep.check(args)
    manifest = json.loads(json.dumps(chosen.settings()))
    assert manifest["finish"] == "gloss"
    for made in (chosen, sweep.SweepParams.from_manifest(sweeps.Manifest.from_json(manifest))):
        deployment = sweep._Deployment(made, "id", Console())
        inputs = [deployment.inputs_for(cell, i) for i, cell in enumerate(made.axes.cells())]
        assert [i.variables("", "zip", backends.get("local"))[toy_workload.VARIABLE] for i in inputs] == ["gloss", "gloss"]
    older = sweep.SweepParams.from_manifest(sweeps.Manifest.from_json({k: v for k, v in manifest.items() if k != "finish"}))
    cell = older.axes.cells()[0]
    assert sweep._Deployment(older, "id", Console()).inputs_for(cell, 0).variables("", "zip", backends.get("local"))[toy_workload.VARIABLE] == "matte"
