"""The environment Terraform runs with: per-stack directories, the provider mirror, and the user's
AWS setup kept away from emulators. No Terraform run here (only `terraform version`)."""

import json
import subprocess
from pathlib import Path

import pytest

from fanout.common import paths
from fanout.cloud import terraform
from fanout.local import backends

AWS_SETUP = {
    "AWS_PROFILE": "nope",
    "AWS_DEFAULT_PROFILE": "nope",
    "AWS_ACCESS_KEY_ID": "AKIAREAL",
    "AWS_SECRET_ACCESS_KEY": "real-secret",
    "AWS_SESSION_TOKEN": "real-token",
    "AWS_CONFIG_FILE": "/nonexistent/config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
    "AWS_ENDPOINT_URL": "http://elsewhere:1",
    "AWS_ENDPOINT_URL_S3": "http://elsewhere:2",
}


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TF_CLI_CONFIG_FILE", raising=False)


def test_every_backend_and_stack_has_its_own_state_and_data_dir():
    pairs = [("local", "a"), ("aws", "a"), ("local", "b")]
    stack_dirs = [paths.stack_dir(*pair) for pair in pairs]
    data_dirs = [Path(terraform.environment(*pair)["TF_DATA_DIR"]) for pair in pairs]
    assert len(set(stack_dirs)) == len(set(data_dirs)) == len(pairs)
    for stack_dir, data_dir in zip(stack_dirs, data_dirs):
        assert data_dir.is_relative_to(stack_dir)
        others = [other for other in stack_dirs if other != stack_dir]
        assert not any(data_dir.is_relative_to(other) or other.is_relative_to(stack_dir) for other in others)


# Provider mirror ------------------------------------------------------------------------------


def terraform_platform() -> str:
    """The os_arch this Terraform installs providers for, asked of Terraform itself."""
    result = subprocess.run(["terraform", "version", "-json"], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)["platform"]


def mirror_layout(root: Path, layout: str) -> Path:
    """A mirror directory as Terraform reads it: missing, empty, or holding the AWS provider."""
    provider = root / terraform.MIRRORED_PROVIDER
    if layout == "empty":
        root.mkdir()
    elif layout == "unpacked":
        (provider / "5.100.0" / terraform_platform()).mkdir(parents=True)
    elif layout == "packed":
        provider.mkdir(parents=True)
        (provider / f"terraform-provider-aws_5.100.0_{terraform_platform()}.zip").touch()
    elif layout == "other platform":
        (provider / "5.100.0" / "plan9_386").mkdir(parents=True)
    return root


@pytest.mark.parametrize(
    "layout, used", [("missing", False), ("empty", False), ("other platform", False), ("unpacked", True), ("packed", True)]
)
def test_the_mirror_is_used_only_when_it_holds_the_provider_for_this_platform(tmp_path, monkeypatch, layout, used):
    mirror = mirror_layout(tmp_path / "mirror", layout)
    monkeypatch.setenv(terraform.MIRROR_ENV, str(mirror))
    config = terraform.environment("local", "s").get("TF_CLI_CONFIG_FILE")
    if used:
        text = Path(config).read_text()
        assert json.dumps(str(mirror)) in text and "filesystem_mirror" in text
    else:
        assert config is None


def test_a_users_cli_config_file_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(terraform.MIRROR_ENV, str(mirror_layout(tmp_path / "mirror", "unpacked")))
    theirs = tmp_path / "their.tfrc"
    theirs.write_text('plugin_cache_dir = "/somewhere"\n')
    monkeypatch.setenv("TF_CLI_CONFIG_FILE", str(theirs))
    assert terraform.environment("local", "s")["TF_CLI_CONFIG_FILE"] == str(theirs)
    assert theirs.read_text() == 'plugin_cache_dir = "/somewhere"\n'


def test_a_cli_config_file_that_does_not_exist_configures_nothing(tmp_path, monkeypatch):
    # Terraform only warns about it; the mirror still serves.
    mirror = mirror_layout(tmp_path / "mirror", "unpacked")
    monkeypatch.setenv(terraform.MIRROR_ENV, str(mirror))
    monkeypatch.setenv("TF_CLI_CONFIG_FILE", str(tmp_path / "absent.tfrc"))
    assert json.dumps(str(mirror)) in Path(terraform.environment("local", "s")["TF_CLI_CONFIG_FILE"]).read_text()


# The user's AWS setup -------------------------------------------------------------------------


@pytest.fixture
def aws_setup(monkeypatch):
    for name, value in {**AWS_SETUP, "AWS_CA_BUNDLE": "/etc/ssl/bundle.pem"}.items():
        monkeypatch.setenv(name, value)


def aws_variables(env: dict) -> dict:
    return {name: value for name, value in env.items() if name.startswith("AWS_")}


def test_the_local_backend_never_sees_the_users_aws_setup(aws_setup):
    """Its stacks are in the embedded emulator: the variables an apply runs with say so before
    anything is recorded (a first apply), the recorded ones after (destroy, by hand)."""
    emulated = backends.get("local").embedded_emulator
    assert aws_variables(terraform.environment("local", "s", "", emulated)) == {"AWS_CA_BUNDLE": "/etc/ssl/bundle.pem"}
    deployed_with("", "local", embedded_emulator=emulated)
    assert aws_variables(terraform.environment("local", "s")) == {"AWS_CA_BUNDLE": "/etc/ssl/bundle.pem"}


def test_the_aws_backend_keeps_it(aws_setup):
    assert aws_variables(terraform.environment("aws", "s")).items() >= AWS_SETUP.items()


def deployed_with(endpoint: str, backend: str = "aws", **variables) -> None:
    """Record that stack "s" on `backend` was last applied against `endpoint` (with `variables`)."""
    path = paths.stack_dir(backend, "s") / terraform.INPUTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"endpoint": endpoint, **variables}))


def test_the_aws_backend_drops_it_against_an_endpoint(aws_setup):
    deployed_with("")  # deployed to AWS...
    assert aws_variables(terraform.environment("aws", "s")).items() >= AWS_SETUP.items()
    localstack = "http://localhost:4566"  # ...then planned against LocalStack
    against_it = {"AWS_CA_BUNDLE": "/etc/ssl/bundle.pem", "AWS_ENDPOINT_URL": localstack}  # not the user's
    assert aws_variables(terraform.environment("aws", "s", localstack)) == against_it
    deployed_with(localstack)  # deployed there: destroy and outputs go there too
    assert aws_variables(terraform.environment("aws", "s")) == against_it


# Go's garbage collector ------------------------------------------------------------------------


@pytest.mark.parametrize("given", [None, "150"])
def test_terraform_collects_garbage_less_often_unless_the_user_says_otherwise(given, monkeypatch):
    if given is None:
        monkeypatch.delenv("GOGC", raising=False)
    else:
        monkeypatch.setenv("GOGC", given)
    for backend in ("local", "aws"):
        assert terraform.environment(backend, "gc")["GOGC"] == (given or "400")
