"""The module's own tests (infra/mock-tests/*.tftest.hcl): the AWS branch, the emulator branches
and every validation, planned offline against a mocked AWS provider by `terraform test`.

They need Terraform >= 1.7 (mock_provider); the module itself needs only 1.5, so older versions
skip them. Terraform runs with its data in this test's own directory, so nothing is shared with
the stacks other tests deploy.
"""

import json
import re
import subprocess

import pytest

from fanout.common import paths
from fanout.cloud import terraform

TEST_DIRECTORY = "mock-tests"
MOCK_PROVIDER_SINCE = (1, 7)


def terraform_version() -> tuple[int, ...]:
    result = subprocess.run(["terraform", "version", "-json"], capture_output=True, text=True, check=True)
    return tuple(int(part) for part in json.loads(result.stdout)["terraform_version"].split(".")[:2])


def run_blocks() -> int:
    return sum(len(re.findall(r'^run "', path.read_text(), re.M))
               for path in (paths.INFRA / TEST_DIRECTORY).glob("*.tftest.hcl"))  # fmt: skip


def test_module_tests_pass(tmp_path, monkeypatch):
    if terraform_version() < MOCK_PROVIDER_SINCE:
        pytest.skip(f"terraform test with mock_provider needs Terraform >= {'.'.join(map(str, MOCK_PROVIDER_SINCE))}")
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path))
    env = terraform.environment("local", "module-tests", embedded_emulator=True)  # its own TF_DATA_DIR; the provider mirror if any
    for command in (["init", "-backend=false"], ["test"]):
        result = subprocess.run(
            ["terraform", *command, "-no-color", f"-test-directory={TEST_DIRECTORY}"],
            cwd=paths.INFRA, env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
    assert f"{run_blocks()} passed, 0 failed" in result.stdout
