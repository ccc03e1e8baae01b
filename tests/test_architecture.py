"""The driver package's shape (docs/architecture.md): the CLI entry and the wings at the top, each
wing importing only the wings below it (import-linter's contracts in pyproject.toml, with no
exception), and no import cycles between modules."""

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

from fanout.common import paths
from fanout.workloads import registry

PACKAGE = paths.REPO / "drivers" / "fanout"
WINGS = {"stages", "workloads", "results", "local", "cloud", "insights", "common"}
CONTRACTS = tomllib.loads((paths.REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_the_top_level_holds_only_the_cli_entry_and_the_wings():
    entries = {path.name for path in PACKAGE.iterdir() if path.name != "__pycache__"}
    assert entries == {"__init__.py", "cli.py", *WINGS}


def test_every_wing_says_what_it_is_in_one_line():
    for wing in WINGS:
        docstring = ast.get_docstring(ast.parse((PACKAGE / wing / "__init__.py").read_text()))
        assert docstring, wing
        assert len(docstring.splitlines()) <= 2, wing


def test_the_layers_name_every_wing_and_allow_no_exception():
    """A wing reaches one above it only by a value handed down (a workload's reader of a stack's
    outputs, a backend object), never by an import the contract must excuse."""
    layers = next(contract for contract in CONTRACTS if contract["type"] == "layers")
    assert {name.removeprefix("fanout.") for name in layers["layers"]} == WINGS | {"cli"}
    assert layers.get("ignore_imports", []) == []


def test_no_contract_excuses_an_import():
    assert [contract["name"] for contract in CONTRACTS if contract.get("ignore_imports")] == []


def test_the_independence_contract_names_every_registered_workload_and_nothing_else():
    """The contract's list is the one place outside the registry a new workload must be named:
    a workload missing from it could import another unseen."""
    independent = next(contract for contract in CONTRACTS if contract["type"] == "independence")
    assert sorted(independent["modules"]) == sorted(f"fanout.workloads.{name}" for name in registry.DRIVERS)


def namespace_parameters(source: str) -> list[str]:
    """The functions of `source` with a parameter annotated as argparse's Namespace, or named
    `args` and read as one (`args.region`; a query function's `args[0]` is a list)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            read = {inner.value.id for inner in ast.walk(node)
                    if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)}  # fmt: skip
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            annotated = {a.arg for a in arguments if a.annotation and "Namespace" in ast.unparse(a.annotation)}
            found += [f"{node.name}({a.arg})" for a in arguments
                      if a.arg in annotated or (a.arg == "args" and "args" in read)]  # fmt: skip
    return found


def test_the_namespace_finder_finds_a_command_lines_parameter():
    found = namespace_parameters("def f(args):\n    return args.stack\ndef g(x: argparse.Namespace): pass\n")
    assert found == ["f(args)", "g(x)"]
    assert namespace_parameters("def f(given: dict, *args):\n    return args[0]\ndef g(args): return len(args)\n") == []


def test_only_the_commands_read_the_command_line():
    """argparse's Namespace is read at the command's edge, cli.py and stages/: the wings below
    take typed values (docs/architecture.md, *The seams*)."""
    below = [path for path in sorted(PACKAGE.rglob("*.py")) if path.relative_to(PACKAGE).parts[0] in WINGS - {"stages"}]
    found = {str(path.relative_to(PACKAGE)): namespace_parameters(path.read_text()) for path in below}
    assert {module: names for module, names in found.items() if names} == {}


# The stages' helpers that read a command line for its command (and no one else): each turns the
# Namespace into typed values (flags' texts, a DeployGiven, a SweepGiven, a stack looked up, a
# query window) or prints what a command resolved. A pipeline function is never one of them.
EDGE_HELPERS = {
    "command_line.py": {"texts"},
    "deploy.py": {"given_of", "inputs_from", "resolve"},
    "host.py": {"_function_config"},
    "query.py": {"window_given", "offline_events"},
    "sweep.py": {"given_of"},
}


def command_edges(source: str) -> set[str]:
    """`register` and the functions it registers as a command's `func` or `check` (set_defaults)."""
    found = {"register"}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set_defaults":
            found |= {k.value.id for k in node.keywords if k.arg in ("func", "check") and isinstance(k.value, ast.Name)}
    return found


def namespaces_made_or_returned(source: str) -> list[str]:
    """The functions of `source` annotated to return a Namespace, or that build one (argparse's
    Namespace(...), or a parse_args call: a command line made up to reach another stage)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns is not None and "Namespace" in ast.unparse(node.returns):
                found.append(f"{node.name} returns one")
            calls = [ast.unparse(inner.func) for inner in ast.walk(node) if isinstance(inner, ast.Call)]
            found += [f"{node.name} calls {call}" for call in calls
                      if call.endswith(("Namespace", "parse_args", "parse_known_args"))]  # fmt: skip
    return found


def test_the_edge_finders_find_a_commands_functions_and_a_made_up_command_line():
    source = ("def register(subparsers):\n    p.set_defaults(func=run, check=lambda args: args.x)\n"
              "def run(args): return args.x\n"
              "def f(argv) -> argparse.Namespace:\n    return parser.parse_args(argv)\n"
              "def g(): return argparse.Namespace(a=1)\n")  # fmt: skip
    assert command_edges(source) == {"register", "run"}
    assert namespaces_made_or_returned(source) == ["f returns one", "f calls parser.parse_args",
                                                   "g calls argparse.Namespace"]  # fmt: skip


def test_inside_the_stages_only_the_commands_edge_takes_a_namespace():
    """A command parses its command line once, at its edge (its `register`, the `func` and `check`
    it registers, and EDGE_HELPERS), into typed params; below that the stages compose typed
    functions (a sweep's cells, a study's sweep, the demo's experiment), so none takes, returns or
    makes up a Namespace (docs/architecture.md, *The seams*)."""
    taken, made = {}, {}
    for path in sorted((PACKAGE / "stages").glob("*.py")):
        source = path.read_text()
        edge = command_edges(source) | EDGE_HELPERS.get(path.name, set())
        below = [name for name in namespace_parameters(source) if name.partition("(")[0] not in edge]
        taken |= {path.name: below} if below else {}
        made |= {path.name: found} if (found := namespaces_made_or_returned(source)) else {}
    assert (taken, made) == ({}, {})


def test_every_edge_helper_reads_a_command_line():
    """EDGE_HELPERS names only functions that take one: a helper that no longer does leaves it."""
    for module, helpers in EDGE_HELPERS.items():
        takes = {name.partition("(")[0] for name in namespace_parameters((PACKAGE / "stages" / module).read_text())}
        assert helpers <= takes, (module, helpers - takes)


def test_the_import_contracts_hold():
    env = os.environ | {"PYTHONPATH": str(paths.REPO / "drivers")}
    result = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=paths.REPO, env=env,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other in a loop (Tarjan's strongly connected
    components with more than one member, or a module importing itself)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in imports.get(module, ()):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1 or module in imports.get(module, ()):
                found.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_the_cycle_finder_finds_a_loop_and_only_loops():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"b"}}) == []
    assert cycles({"a": {"a"}}) == [["a"]]


def test_no_modules_import_each_other_in_a_loop():
    graph = grimp.build_graph("fanout")
    imports = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    assert cycles(imports) == []


SUMMARY_LOOKUPS_ALLOWED = 20  # a summary read by key is an untyped one: only the JSON boundary should


def summary_lookups() -> dict[str, int]:
    """`summary["` lookups per file of the drivers and the function (a summary indexed like JSON)."""
    found = {}
    for folder in ("drivers", "functions"):
        for path in sorted((paths.REPO / folder).rglob("*.py")):
            if count := path.read_text().count('summary["'):
                found[str(path.relative_to(paths.REPO))] = count
    return found


def test_summary_lookups_by_key_are_few():
    """Summaries are typed (a run's: fanout.results.summary; across runs: each workload's Across):
    read by key only where JSON is read or written."""
    found = summary_lookups()
    assert sum(found.values()) <= SUMMARY_LOOKUPS_ALLOWED, found

