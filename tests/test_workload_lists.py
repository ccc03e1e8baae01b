"""The per-workload lists outside the drivers' registry, each checked against it: what a new
workload adds besides its two folders and its registry lines (docs/architecture.md, *Adding a
workload*). The import contract's module list is checked in test_architecture.py."""

import re
import subprocess

import pytest

from fanout import cli
from fanout.common import function_modules, paths
from fanout.workloads import registry as workloads

MAKEFILE = (paths.REPO / "Makefile").read_text()
INFRA = paths.REPO / "infra"
# download's PIN reaches fire and sweep through a Make variable of its own (PIN_ARG); its STRATEGY,
# a deploy-level option fire takes too, is in WORKLOAD_DEPLOY_OPTIONS.
OWN_MAKE_VARIABLE = {"pin"}


def make_pairs(name: str, text: str = MAKEFILE) -> dict[str, str]:
    """The VARIABLE=--flag pairs of the Makefile's list `name` (its `:=` and `+=` lines)."""
    words = [word for line in re.findall(rf"^{name} [:+]= (.*)$", text, re.M) for word in line.split()]
    return dict(word.split("=", 1) for word in words)


def flag_dests(command: str) -> dict[str, str]:
    """The argparse name of each flag of `fanout COMMAND`."""
    parser = cli.build_parser()
    [subparsers] = [action for action in parser._actions if action.choices and command in action.choices]
    return {flag: action.dest for action in subparsers.choices[command]._actions for flag in action.option_strings}


def test_make_pairs_reads_each_line_of_a_list():
    text = "LIST := A=--a B=--b-c\nLIST += C=--c\nOTHER := D=--d\n"
    assert make_pairs("LIST", text) == {"A": "--a", "B": "--b-c", "C": "--c"}


def test_the_makefile_passes_every_workloads_options_and_nothing_else():
    options, deploy_level = make_pairs("WORKLOAD_OPTIONS"), make_pairs("WORKLOAD_DEPLOY_OPTIONS")
    fire, deploy = flag_dests("fire"), flag_dests("deploy")
    assert not set(options) & set(deploy_level)
    declared = {name for driver in workloads.DRIVERS.values() for name in (*driver.OPTIONS, *driver.DEPLOY_OPTIONS)}
    assert {fire[flag] for flag in options.values()} | {deploy[flag] for flag in deploy_level.values()} == \
        declared - OWN_MAKE_VARIABLE  # fmt: skip
    assert {deploy[flag] for flag in deploy_level.values()} == set(workloads.deploy_option_names())
    for flag in deploy_level.values():  # make marks each --deploy-level with the name it derives from the flag
        assert flag.removeprefix("--").replace("-", "_") == deploy[flag] == fire[flag], flag


def test_each_workload_make_variable_is_known_and_reaches_its_commands():
    """`make fire`, `sweep` (options) and `deploy` (deploy-level options) pass a variable set
    (the Makefile refuses a variable it does not know)."""
    result = dry_run("fire", "SIZES=1 2", "EXPRESS_AZ=use1-az4")
    assert "--sizes='1 2'" in result and "--express-az='use1-az4' --deploy-level express_az" in result
    assert "--job-files='4x64MiB'" in dry_run("deploy", "JOB_FILES=4x64MiB")
    assert "--threads='1 2'" in dry_run("sweep", "THREADS=1 2")


def dry_run(target: str, *variables: str) -> str:
    result = subprocess.run(["make", "--no-print-directory", "-n", "-o", "venv", "FANOUT=fanout", target, *variables],
                            cwd=paths.REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


# ---- Terraform: infra/workloads.tf gathers each workload's statements and variables -------------


def terraform_list(local: str) -> list[str]:
    """The workloads `local.<name>_<suffix>` entries of infra/workloads.tf's local `local` name."""
    body = re.search(rf"^  {local} = \w+\((.*?)^  \)", (INFRA / "workloads.tf").read_text(), re.M | re.S)
    assert body, local
    suffix = local.removeprefix("workload_")
    return re.findall(rf"local\.(\w+)_{suffix},", body.group(1))


def test_the_terraform_lists_name_each_workload_with_a_file_of_its_own():
    with_files = {name for name in workloads.DRIVERS if (INFRA / f"{name}.tf").is_file()}
    for local in ("workload_statements", "workload_environment"):
        listed = terraform_list(local)
        assert sorted(listed) == sorted(set(listed)) == sorted(with_files), local
    for name in with_files:
        text = (INFRA / f"{name}.tf").read_text()
        assert re.search(rf"^  {name}_statements *= ", text, re.M), name
        assert re.search(rf"^  {name}_environment *= ", text, re.M), name


def test_the_role_and_the_function_take_the_workloads_lists():
    assert "local.workload_statements)" in (INFRA / "iam.tf").read_text()
    assert "local.workload_environment)" in (INFRA / "lambda.tf").read_text()


@pytest.mark.parametrize("name", [name for name in workloads.DRIVERS if (INFRA / f"{name}.tf").is_file()])
def test_a_workloads_variables_are_its_own_and_its_function_reads_them(name):
    text = (INFRA / f"{name}.tf").read_text()
    block = re.search(rf"^  {name}_environment *= (\{{.*?\}})$", text, re.M | re.S)
    assert block, name
    variables = re.findall(r"^\s*([A-Z][A-Z0-9_]*)\s*=", block.group(1), re.M)
    source = "".join(path.read_text() for path in (function_modules.FOLDER / name).glob("*.py"))
    for variable in variables:
        assert variable.startswith(f"{name.upper()}_"), variable  # one namespace per workload
        assert f'"{variable}"' in source, variable
