"""The function zip: reproducible bytes, the right contents, rebuilt only when inputs change."""

import argparse
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fanout.cloud import package
from fanout.stages import package as package_command
from fanout.common import function_modules, paths
from fanout.common.errors import UsageError


@pytest.fixture(scope="session")
def package_home(tmp_path_factory):
    """A state directory shared by these tests, so pip runs once for the cached dependencies."""
    return tmp_path_factory.mktemp("package-home")


@pytest.fixture
def home(package_home, monkeypatch):
    monkeypatch.delenv("FANOUT_BUILD", raising=False)  # the build directory under FANOUT_HOME
    monkeypatch.setenv("FANOUT_HOME", str(package_home))
    return package_home


@pytest.fixture(scope="module")
def unzipped(tmp_path_factory):
    """unzipped(architecture, sdk): the tree of that zip, extracted once for the tests that only
    read it (a zip is a few thousand files). Called from a test, under its `home`."""
    trees = {}

    def tree(architecture: str = "x86_64", sdk: str = package.DEFAULT_SDK) -> Path:
        if (architecture, sdk) not in trees:
            target = tmp_path_factory.mktemp(f"task-{architecture}-{sdk}")
            with zipfile.ZipFile(package.build("runner", architecture, sdk)) as archive:
                archive.extractall(target)
            trees[architecture, sdk] = target
        return trees[architecture, sdk]

    return tree


@pytest.fixture
def functions_copy(tmp_path, monkeypatch, home):
    """A copy of functions/ to edit, in place of the real one."""
    copy = tmp_path / "functions"
    shutil.copytree(paths.FUNCTIONS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(paths, "FUNCTIONS", copy)
    return copy


ELF_MACHINES = {"x86_64": 62, "arm64": 183}  # e_machine of EM_X86_64 and EM_AARCH64


def test_fresh_builds_are_byte_identical(home, tmp_path, monkeypatch):
    """Two builds from nothing give the same bytes. One architecture is enough: the other's build
    differs only in the --platform it gives pip (what each zip's native code is built for: the
    tests below). The second is two builds at once, as a suite's workers or two terminals start
    them: one installs, the other waits for its zip."""
    first = package.build("runner", "arm64").read_bytes()
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "elsewhere"))  # no cache: pip installs again
    installs = []
    run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: installs.append(command) or run(command, **kw))
    with ThreadPoolExecutor(2) as pool:
        zips = list(pool.map(lambda _: package.build("runner", "arm64"), range(2)))
    assert [zip_path.read_bytes() for zip_path in zips] == [first, first]
    assert len([command for command in installs if "pip" in command]) == 1


def test_each_architecture_has_its_own_zip(home):
    zips = {architecture: package.build("runner", architecture) for architecture in package.WHEEL_PLATFORMS}
    assert len(set(zips.values())) == len(zips)
    for architecture, path in zips.items():
        assert architecture in path.name


def test_compiled_dependencies_are_built_for_the_functions_architecture(functions_copy):
    """A package with a C extension gets the wheel of the stack's architecture, not the builder's."""
    with open(functions_copy / "runner" / "requirements.txt", "a") as requirements:
        requirements.write("markupsafe==3.0.2\n")
    assert_extension_per_architecture("markupsafe/")


def test_the_crt_strategys_awscrt_is_built_for_the_functions_architecture(home):
    assert_extension_per_architecture("_awscrt")


def assert_extension_per_architecture(prefix: str) -> None:
    """The zip of each architecture holds one native extension named `prefix...`, built for it."""
    for architecture, machine in ELF_MACHINES.items():
        with zipfile.ZipFile(package.build("runner", architecture)) as archive:
            (extension,) = [name for name in archive.namelist() if name.startswith(prefix) and ".so" in name]
            header = archive.read(extension)[:20]
        assert header[:4] == b"\x7fELF"
        assert int.from_bytes(header[18:20], "little") == machine, (architecture, extension)


CRT_ON_AWS = """
import boto3, strategies
from boto3.s3.transfer import create_transfer_manager
client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="x")
strategies.check_crt_endpoint(client.meta.endpoint_url)
config = strategies.crt_config(dict(strategies.parse("crt connections=12 chunk_size=16MiB").values))
with create_transfer_manager(client, config) as manager:
    print(type(manager).__name__)
"""


def test_the_zips_awscrt_gives_the_crt_transfer_client_on_aws(home, unzipped):
    """The crt strategy's AWS path as far as it goes without AWS: with the zip's own awscrt (in a
    process of its own, as in the function; the drivers never load it), boto3 builds its CRT
    transfer manager for a client of AWS's endpoint (the strategy's TransferConfig:
    tests/functions/test_strategies.py). Nothing is sent."""
    task = unzipped({"x86_64": "x86_64", "aarch64": "arm64"}[os.uname().machine])
    result = subprocess.run([sys.executable, "-c", CRT_ON_AWS], cwd=task, capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(task)))  # fmt: skip
    assert result.stdout.split() == ["CRTTransferManager"], result.stderr


def test_unknown_architecture_is_refused(home):
    with pytest.raises(UsageError, match="'arm': expected one of x86_64, arm64"):
        package.build("runner", "arm")


SDK_TOPS = {"boto3", "botocore", "s3transfer", "dateutil", "urllib3", "six.py"}


def test_zip_contents(home):
    with zipfile.ZipFile(package.build()) as archive:
        infos = archive.infolist()
    names = [info.filename for info in infos]
    tops = {name.split("/")[0] for name in names}
    assert {"handler.py", "measure.py", "strategies.py", "aws_lambda_powertools", "awscrt", "jmespath",
            "typing_extensions.py"} | SDK_TOPS <= tops
    assert not tops & {"bin", "requirements.txt", package.SDK_REQUIREMENTS}
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or n.endswith("/RECORD")]
    assert names == sorted(names)
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {info.external_attr >> 16 for info in infos} == {0o100644}


def test_the_runtime_sdk_zip_leaves_the_sdk_out_and_keeps_the_rest(home):
    bundled, runtime = package.build(), package.build(sdk="runtime")
    assert bundled != runtime
    with zipfile.ZipFile(bundled) as with_sdk, zipfile.ZipFile(runtime) as without:
        tops_with = {name.split("/")[0] for name in with_sdk.namelist()}
        tops = {name.split("/")[0] for name in without.namelist()}
    assert not tops & SDK_TOPS and {"handler.py", "awscrt", "aws_lambda_powertools"} <= tops
    assert {top for top in tops_with - tops if not top.endswith(".dist-info")} == SDK_TOPS


SDK_OF_THE_ZIP = "import invocation; print(*invocation.sdk_fields().values())"


@pytest.mark.parametrize("sdk", package.SDKS)
def test_the_records_name_the_sdk_the_zip_runs_on(home, unzipped, sdk):
    """The bundled zip's handler imports the pinned SDK from the zip; the runtime one whatever is
    on the path after the task root (here the venv's, as the Lambda runtime's would be)."""
    task = unzipped(sdk=sdk)
    pins = dict(line.split("==") for line in (function_modules.FOLDER / package.SDK_REQUIREMENTS)
                .read_text().splitlines() if "==" in line)  # fmt: skip
    result = subprocess.run([sys.executable, "-c", SDK_OF_THE_ZIP], cwd=task, capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(task)))  # fmt: skip
    boto3_version, botocore_version, s3transfer_version, awscrt_version, source = result.stdout.split()
    assert awscrt_version == "0.38.0" and source == sdk, result.stderr  # awscrt: the crt strategy's, in both
    if sdk == "bundled":
        assert (boto3_version, botocore_version, s3transfer_version) == (pins["boto3"], pins["botocore"],
                                                                         pins["s3transfer"])  # fmt: skip


def test_unknown_sdk_names_the_choices(home):
    with pytest.raises(UsageError, match="unknown SDK 'lambda': expected one of bundled, runtime"):
        package.build(sdk="lambda")


def test_zip_imports_handler_with_bundled_powertools(home, tmp_path, unzipped):
    task = unzipped()
    code = "import handler, aws_lambda_powertools; print(aws_lambda_powertools.__file__)"
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1", "PYTHONPATH": str(task)}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith(str(task))


def test_source_change_rebuilds_zip_but_not_dependencies(functions_copy, home):
    zip_path = package.build()
    first_hash, first_mtime = package.sha256_base64(zip_path), zip_path.stat().st_mtime_ns
    deps = sorted((home / "build" / "deps").iterdir())

    assert package.build() == zip_path and zip_path.stat().st_mtime_ns == first_mtime  # unchanged: kept

    with open(functions_copy / "runner" / "download" / "measure.py", "a") as source:
        source.write("\n# changed\n")
    assert package.sha256_base64(package.build()) != first_hash
    assert sorted((home / "build" / "deps").iterdir()) == deps


def test_runtime_provided_packages_are_refused(functions_copy):
    with open(functions_copy / "runner" / "requirements.txt", "a") as requirements:
        requirements.write("boto3==1.44.5\n")
    with pytest.raises(UsageError, match="'boto3'.*sdk-requirements.txt"):
        package.build()


def test_unknown_function_names_the_choices(home):
    with pytest.raises(UsageError, match="unknown function 'nope': expected one of runner"):
        package.build("nope")


def test_cli_prints_path_and_terraform_hash(home, capsys):
    parser = argparse.ArgumentParser()
    package_command.register(parser.add_subparsers())
    args = parser.parse_args(["package"])
    assert args.func(args) == 0
    path_line, hash_line = capsys.readouterr().out.splitlines()
    expected = base64.b64encode(hashlib.sha256(open(path_line, "rb").read()).digest()).decode()
    assert hash_line.endswith(expected)
