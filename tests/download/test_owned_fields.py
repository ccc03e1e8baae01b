"""What is the download workload's stays in its folder: the generic wings (stages, cloud, results,
local, common) name none of its fields; each workload carries its own options through the generic
slot (FireParams.options, run.json's workload_options, a sweep cell's options).

A name counts wherever the code could use it as a field: a variable, an attribute, a keyword, a
parameter, a function, an imported name or a string (a JSON key). Only the modules listed below
may still name one: the JSON boundary that reads files saved before the slot, each with the names
it holds. A name coming back anywhere else fails, and so does a listed one that went.
"""

import ast
from pathlib import Path

DRIVERS = Path(__file__).resolve().parents[2] / "drivers" / "fanout"
GENERIC = ("stages", "cloud", "results", "local", "common")
DOWNLOAD_NAMES = {"strategy", "strategy_from", "default_strategy", "pin", "strategies", "pins", "pressure", "at_target"}

BOUNDARY = {  # old run.json and sweep.json: their download fields read into the options
    "results/run_record.py": {"strategy", "strategy_from", "pin"},
    "results/sweep_folders.py": {"strategy", "pin"},
}


def names_in(source: str) -> set[str]:
    """The download names `source` uses as a field (module docstring)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, (ast.keyword, ast.arg)) and node.arg:
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).rsplit(".", 1)[-1])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return found & DOWNLOAD_NAMES


def test_the_generic_wings_name_no_download_field_outside_the_listed_modules():
    found = {path.relative_to(DRIVERS).as_posix(): names_in(path.read_text())
             for wing in GENERIC for path in sorted((DRIVERS / wing).rglob("*.py"))}  # fmt: skip
    assert {module: names for module, names in found.items() if names} == BOUNDARY


def test_a_download_field_in_a_generic_module_is_found():
    for line in ("params.strategy", "FireParams(pin=None)", 'row["strategy_from"]', "def at_target(x): pass",
                 "from fanout.workloads.download import strategies", "def f(pin): pass"):
        assert names_in(line), line
    assert names_in("options = cell.options or {}  # a strategy in a comment is prose") == set()
