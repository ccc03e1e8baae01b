"""The seam between the stages and the place a stack runs (fanout.common.backend): every backend
in the table (fanout.local.backends) is a whole Backend, picked by the name `--backend` and
run.json give, the table imports each class, and no code but the table compares a backend's name
(docs/architecture.md, *Adding a backend*)."""

import ast
import inspect
import re

import pytest

from fanout import cli
from fanout.cloud.backend import AwsBackend
from fanout.common import paths
from fanout.common.backend import Backend
from fanout.common.errors import FanoutError, UsageError
from fanout.local import backends
from fanout.local.backend import LocalBackend
from fanout.local.emulator import control
from fanout.stages import wait

TABLE = paths.REPO / "drivers" / "fanout" / "local" / "backends.py"
PROTOCOL = paths.REPO / "drivers" / "fanout" / "common" / "backend.py"
SCANNED = ("drivers", "bench")


def _names_in(node: ast.AST) -> set[str]:
    """The backend names written as string constants in `node` (a tuple of them too)."""
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in backends.NAMES}


def _is_backend(node: ast.AST) -> bool:
    """`backend`, `x.backend`, `x["backend"]`: what holds a backend's name."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "backend"
    return (node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")) == "backend"


def name_comparisons(source: str) -> list[int]:
    """Lines of `source` that branch on a backend's name: a comparison of a backend with anything,
    or of anything with a backend's name, and a dict keyed by backend names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_backend(side) for side in sides) or any(_names_in(side) for side in sides):
                found.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(key is not None and _names_in(key) for key in node.keys):
            found.append(node.lineno)
    return found


def test_a_backend_name_is_compared_only_in_the_table_that_picks_the_class():
    offending = []
    for folder in SCANNED:
        for path in sorted((paths.REPO / folder).rglob("*.py")):
            if path != TABLE:
                offending += [f"{path.relative_to(paths.REPO)}:{line}" for line in name_comparisons(path.read_text())]
    assert offending == [], "ask the backend object (fanout.local.backends.get) instead"


@pytest.mark.parametrize("source", [
    'if stack.backend == "aws": pass',
    'if args.backend != "local": pass',
    'if backend in ("local",): pass',
    'x = record["backend"] == other',
    'if "aws" == name: pass',
    'SECONDS = {"local": 1.0, "aws": 10.0}',
])  # fmt: skip
def test_the_guard_sees_each_way_of_branching_on_a_name(source):
    assert name_comparisons(source) == [1]


def test_the_guard_leaves_other_strings_and_names_alone():
    assert name_comparisons('if row["local"] and row["remote"]: pass\nSOURCES = ("local", "remote")\n'
                            'terraform.outputs("aws", stack)') == []  # fmt: skip


def _members() -> dict[str, object]:
    """What the Backend protocol declares: its attributes (annotations) and its methods."""
    declared = dict.fromkeys(Backend.__annotations__)
    declared.update({name: value for name, value in vars(Backend).items()
                     if inspect.isfunction(value) and not name.startswith("_")})  # fmt: skip
    return declared


@pytest.mark.parametrize("name", backends.NAMES)
def test_every_backend_in_the_table_is_a_whole_backend_called_by_its_name(name):
    backend = backends.get(name)
    assert backend.name == name
    for member, declared in _members().items():
        assert hasattr(backend, member), f"{name} lacks {member}"
        if declared is not None:
            got = inspect.signature(getattr(type(backend), member)).parameters
            assert list(got) == list(inspect.signature(declared).parameters), f"{name}.{member}"


def test_each_backend_lives_in_its_own_wing():
    assert {name: type(backend) for name, backend in backends.BACKENDS.items()} == {"local": LocalBackend, "aws": AwsBackend}
    assert backends.NAMES[0] == "local"  # the default
    assert sorted(type(backend).__module__ for backend in backends.BACKENDS.values()) == ["fanout.cloud.backend",
                                                                                          "fanout.local.backend"]


def test_the_backend_flag_offers_the_tables_names_and_refuses_others():
    parser = cli.build_parser()
    with pytest.raises(UsageError) as refused:
        parser.parse_args(["outputs", "--backend", "gcp"])
    error = str(refused.value)
    assert "'gcp'" in error and all(f"'{name}'" in error for name in backends.NAMES)
    assert parser.parse_args(["outputs"]).backend == backends.NAMES[0]


def test_only_a_simulated_backend_labels_its_figures_simulated():
    measured = [name for name in backends.NAMES if not backends.simulated(name)]
    assert measured == ["aws"]
    assert backends.simulated(None)  # a record that does not say is never claimed as measured


def test_a_hosting_backend_hosts_here_and_the_other_does_nothing():
    with backends.get("aws").hosting(None, None, None) as lambda_hosts:
        lambda_hosts.check()
        assert lambda_hosts.idle() and lambda_hosts.network is None
    assert backends.get("local").hosts_function and not backends.get("aws").hosts_function


def test_a_message_counts_as_lost_after_the_backends_own_delay():
    for name in backends.NAMES:
        backend = backends.get(name)
        assert wait.lost_after(name, None) == backend.lost_after_s
        assert wait.lost_after(name, 0) == backend.min_lost_after_s  # no lag: the floor
        lag_s = 1000.0
        assert wait.lost_after(name, int(lag_s * 1000)) == wait.LAG_FACTOR * lag_s + backend.poll_seconds


def test_a_teardown_without_the_emulator_started_here_leaves_it_to_terraform():
    for name in backends.NAMES:
        assert backends.get(name).teardown("any", False, None) is False


def test_the_aws_backend_asks_nothing_of_aws_against_an_endpoint(monkeypatch):
    """Against an endpoint (LocalStack...) fixed test credentials apply and no account has quotas:
    neither STS nor Lambda is called (no client can be made here)."""
    monkeypatch.setattr("fanout.common.aws.client", lambda *a, **k: pytest.fail("an AWS client was made"))
    aws = backends.get("aws")
    assert aws.check_credentials("us-east-1", "http://127.0.0.1:4566", "s") == "http://127.0.0.1:4566"
    assert aws.check_account("us-east-1", "s", 10, 1024, "http://127.0.0.1:4566") == []
    assert aws.endpoint("http://127.0.0.1:4566") == "http://127.0.0.1:4566"


def test_the_local_backend_checks_its_stack_against_the_running_emulator(tmp_path, monkeypatch):
    """The check that cloud.stack once imported from the emulator's wing: a stack whose emulator
    is not the running one is gone, in one line."""
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path))
    assert control.running_endpoint() is None
    stack = type("S", (), {"stack": "gone", "endpoint": "http://127.0.0.1:1"})()
    with pytest.raises(FanoutError, match="the embedded emulator is not running") as gone:
        backends.get("local").check_stack(stack)
    assert "\n" not in str(gone.value)


BACKEND_MODULE = re.compile(r"fanout\.(local|cloud)\.backend")


def backend_paths(source: str) -> list[int]:
    """Lines of `source` holding a backend module's dotted path as a string (not a mention in a
    docstring: the whole string)."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and BACKEND_MODULE.fullmatch(node.value)]


def loads_by_name(source: str) -> list[int]:
    """Lines of `source` that load a module by its name (importlib, __import__) or hold a backend
    module's path: a lookup neither the import contracts nor a reader sees."""
    found = backend_paths(source)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module",
                                                                      "__import__"):
            found.append(node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and "importlib" in ast.unparse(node):
            found.append(node.lineno)
    return sorted(found)


@pytest.mark.parametrize("source", [
    'import importlib\n',
    'BACKENDS = {"local": "fanout.local.backend"}',
    'x = importlib.import_module(BACKENDS[name]).BACKEND',
    'from importlib import import_module\n',
    'x = __import__("fanout.cloud.backend")',
])  # fmt: skip
def test_the_by_name_guard_sees_each_way_of_loading_a_module(source):
    assert loads_by_name(source)[:1] == [1]


def test_the_by_name_guard_leaves_docstrings_and_imports_alone():
    assert loads_by_name('"""See fanout.local.backend and fanout.local.backends."""\n'
                         'from fanout.local.backend import LocalBackend\n') == []  # fmt: skip


def test_the_backend_table_imports_the_classes_it_names():
    """A backend's class is imported where the table names it, so that the import contracts see
    the table's reach and a reader can follow it: nothing turns a backend's name into a module,
    neither the table nor the protocol's module, and no module of the drivers holds a backend
    module's path."""
    for module in (TABLE, PROTOCOL):
        assert loads_by_name(module.read_text()) == [], module
    held = [f"{path.relative_to(paths.REPO)}:{line}" for path in sorted((paths.REPO / "drivers").rglob("*.py"))
            for line in backend_paths(path.read_text())]  # fmt: skip
    assert held == []
    imported = {alias.name for node in ast.walk(ast.parse(TABLE.read_text())) if isinstance(node, ast.ImportFrom)
                for alias in node.names}  # fmt: skip
    assert {type(backend).__name__ for backend in backends.BACKENDS.values()} <= imported


def imports_of(source: str) -> set[str]:
    """The modules `source` imports (`from a import b` counts as a.b too)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_no_module_outside_the_table_imports_a_backend():
    """The stages, the workloads and the results reach a backend only through the table."""
    importing = [str(path.relative_to(paths.REPO)) for path in sorted((paths.REPO / "drivers" / "fanout").rglob("*.py"))
                 if path != TABLE and {m for m in imports_of(path.read_text()) if BACKEND_MODULE.fullmatch(m)}]  # fmt: skip
    assert importing == []
