"""Deploy inputs are rejected before Terraform runs: one line naming the value and what is
allowed, exit status 2, and no state directory created."""

import pytest

from fanout import cli, params, paths, terraform
from fanout.errors import FanoutError, UsageError

GOOD = {
    "--concurrency": "5",
    "--memory": "512",
    "--object-size": "64MiB",
    "--region": "us-east-1",
    "--architecture": "x86_64",
    "--mode": "download_file",
}
MIB = 2**20
LARGEST_DOWNLOADABLE = (params.MAX_EPHEMERAL_MIB - params.TMP_HEADROOM_MIB) * MIB


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("fanout.deploy",))


def argv(command="deploy", stack="s3fanout", **overrides):
    values = {**GOOD, **{f"--{k.replace('_', '-')}": v for k, v in overrides.items()}}
    return [command, "--backend", "local", "--stack", stack,
            *[item for pair in values.items() for item in pair]]


@pytest.mark.parametrize(
    "overrides, bad",
    [
        ({"concurrency": "0"}, "0"),
        ({"concurrency": "1001"}, "1001"),
        ({"concurrency": "ten"}, "ten"),
        ({"memory": "127"}, "127"),
        ({"memory": "10241"}, "10241"),
        ({"memory": "1.5"}, "1.5"),
        ({"object_size": "64XB"}, "64XB"),
        ({"object_size": "0"}, "0"),
        ({"region": "mars"}, "mars"),
        ({"architecture": "arm"}, "arm"),
        ({"mode": "mmap"}, "mmap"),
        ({"object_size": f"{LARGEST_DOWNLOADABLE + 1}"}, f"{LARGEST_DOWNLOADABLE + 1}"),
    ],
)
@pytest.mark.parametrize("command", ["deploy", "plan"])
def test_bad_input_is_one_line_exit_2_and_creates_nothing(command, overrides, bad, capsys):
    assert cli.main(argv(command, **overrides)) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert bad in err
    assert not paths.home().exists()


@pytest.mark.parametrize("stack", ["Upper", "9lives", "trailing-", "../escape", "a" * 31, ""])
@pytest.mark.parametrize("command", ["deploy", "destroy", "outputs"])
def test_bad_stack_name_is_rejected_before_any_path_is_used(command, stack, capsys):
    args = argv(stack=stack) if command == "deploy" else [command, "--stack", stack]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert repr(stack) in err
    assert not paths.home().exists()


def test_longest_stack_name_is_accepted():
    name = "a" + "b" * 29
    assert params.stack_name(name) == name


def test_allowed_range_is_named_in_the_error():
    low, high = params.MEMORY_RANGE
    with pytest.raises(UsageError, match=f"{low} to {high}"):
        params.integer("memory", str(high + 1), low, high)


def test_object_must_fit_tmp_only_in_download_file_mode():
    params.check_fits_tmp(LARGEST_DOWNLOADABLE, "download_file")
    params.check_fits_tmp(LARGEST_DOWNLOADABLE + 1, "stream")
    with pytest.raises(UsageError, match="--mode stream"):
        params.check_fits_tmp(LARGEST_DOWNLOADABLE + 1, "download_file")


def test_endpoint_is_only_for_the_aws_backend(capsys):
    assert cli.main([*argv(), "--endpoint", "http://localhost:4566"]) == 2
    assert "--backend aws" in capsys.readouterr().err
    assert not paths.home().exists()


def test_variables_carry_the_validated_values():
    parsed = cli.build_parser().parse_args(argv(object_size="1.5GiB", mode="stream"))
    variables = params.from_args(parsed).variables("http://127.0.0.1:1", "/x.zip")
    assert variables["object_size"] == 3 * 2**29
    assert variables["concurrency"] == int(GOOD["--concurrency"])
    assert variables["memory"] == int(GOOD["--memory"])
    assert variables["download_mode"] == "stream"
    assert variables["endpoint"] == "http://127.0.0.1:1"


def test_destroy_and_outputs_with_nothing_deployed(capsys):
    assert cli.main(["destroy", "--backend", "aws", "--stack", "never-deployed"]) == 0
    assert "Nothing to destroy" in capsys.readouterr().out
    assert cli.main(["outputs", "--backend", "aws", "--stack", "never-deployed"]) == 0
    assert capsys.readouterr().out.strip() == "{}"


def test_local_state_is_dropped_when_its_emulator_is_gone(capsys):
    state = paths.stack_dir("local", "gone") / terraform.STATE_FILE
    state.parent.mkdir(parents=True)
    state.write_text('{"version": 4, "resources": [{"type": "aws_sqs_queue", "name": "requests"}]}')
    assert cli.main(["destroy", "--backend", "local", "--stack", "gone"]) == 0
    assert "no longer running" in capsys.readouterr().out
    assert not state.exists()


def test_aws_state_is_never_deleted():
    state = paths.stack_dir("aws", "kept") / terraform.STATE_FILE
    state.parent.mkdir(parents=True)
    state.write_text('{"version": 4, "resources": [{"type": "aws_sqs_queue", "name": "requests"}]}')
    with pytest.raises(FanoutError):
        terraform.forget("aws", "kept")
    assert state.exists()
