"""Deploy inputs are rejected before Terraform runs: one line naming the value and what is
allowed, exit status 2, and no state directory created."""

import io
import json

import pytest
from rich.console import Console

from fanout.local import backends
from fanout.common import aws, paths
from fanout import cli
from fanout.stages import deploy
from fanout.cloud import params, terraform
from fanout.common.errors import FanoutError, UsageError
from fanout.common.sizes import format_size
from fanout.workloads.download import strategies

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
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("fanout.stages.deploy",))


def argv(command="deploy", stack="s3fanout", backend="local", **overrides):
    values = {**GOOD, **{f"--{k.replace('_', '-')}": v for k, v in overrides.items()}}
    return [command, "--backend", backend, "--stack", stack,
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
        ({"strategy": "ranged connections=99"}, "connections='99'"),
        ({"strategy": "crt"}, "runs only against AWS"),
        ({"object_size": f"{LARGEST_DOWNLOADABLE + 1}"}, f"{LARGEST_DOWNLOADABLE + 1}"),
        ({"object_size": f"{params.MAX_OBJECT_SIZE + 1}", "mode": "stream"}, f"{params.MAX_OBJECT_SIZE + 1}"),
        ({"object_size": ""}, "''"),
        ({"function_timeout": "0"}, "'0'"),
        ({"function_timeout": "901"}, "'901'"),
        ({"function_timeout": "1.5"}, "'1.5'"),
        ({"function_timeout": "\uff13\uff10"}, "'\uff13\uff10'"),  # full-width 30
        ({"memory": "\uff15\uff11\uff12"}, "'\uff15\uff11\uff12'"),
        ({"object_size": "\uff16\uff14MiB"}, "'\uff16\uff14MiB'"),
        ({"sdk": "lambda"}, "'lambda': expected one of bundled, runtime"),
        ({"keys": "0"}, "invalid keys '0': expected a whole number from 1 to 100"),
        ({"keys": "101"}, "'101'"),
        ({"ephemeral_storage": "511"}, "'511'"),
        ({"ephemeral_storage": "10241"}, "'10241'"),
        ({"ephemeral_storage": "big"}, "'big'"),
        ({"ephemeral_storage": "600", "object_size": "1GiB", "mode": "download_file"}, "ephemeral storage 600 MB"),
    ],
)
@pytest.mark.parametrize("command", ["deploy", "plan"])
def test_bad_input_is_one_line_exit_2_and_creates_nothing(command, overrides, bad, capsys):
    assert cli.main(argv(command, **overrides)) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert bad in err
    assert not paths.home().exists()


@pytest.mark.parametrize(
    "overrides, name, words",
    [
        ({"concurrency": "2,4"}, "concurrency", "2 4"),
        ({"memory": "512 1024"}, "memory (MB)", "512 1024"),
        ({"object_size": "32MiB, 64MiB"}, "object size", "32MiB 64MiB"),
        ({"architecture": "x86_64,arm64"}, "architecture", "x86_64 arm64"),
    ],
)
@pytest.mark.parametrize("command", ["deploy", "plan"])
def test_a_list_is_refused_as_a_sweeps_in_one_line(command, overrides, name, words, capsys):
    assert cli.main(argv(command, **overrides)) == 2
    [value] = overrides.values()
    assert capsys.readouterr().err == (f"fanout: error: invalid {name} {value!r}: deploy takes one value; a list is "
                                       f"for `make sweep`, its values separated by spaces ({words!r})\n")  # fmt: skip
    assert not paths.home().exists()


@pytest.mark.parametrize("text", ["2,x", "2 0"])
def test_a_list_with_a_bad_value_gets_the_values_own_error(text):
    with pytest.raises(UsageError, match=f"^invalid concurrency '{text}': expected a whole number from 1 to 1000$"):
        params.one_value("concurrency", text, params.concurrency_value)


def test_a_size_with_a_space_before_its_unit_or_in_lower_case_is_one_value():
    assert params.parse("s3fanout", "us-east-1", "5", "512", "32mib", "x86_64").object_size == 32 * MIB
    assert params.parse("s3fanout", "us-east-1", "5", "512", "64 MiB", "x86_64").object_size == 64 * MIB


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
    strategies.check_fits_tmp(LARGEST_DOWNLOADABLE, "download_file")
    strategies.check_fits_tmp(LARGEST_DOWNLOADABLE + 1, "stream")
    with pytest.raises(UsageError, match="STRATEGY=stream or ranged"):
        strategies.check_fits_tmp(LARGEST_DOWNLOADABLE + 1, "download_file")


def one_line_error(capsys, args: list[str]) -> str:
    """stderr of a command that must fail with exit status 2 and one line, creating nothing."""
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert not paths.home().exists()
    return err


def test_endpoint_is_only_for_the_aws_backend(capsys):
    assert "--backend aws" in one_line_error(capsys, [*argv(), "--endpoint", "http://localhost:4566"])


@pytest.mark.parametrize("endpoint", ["localhost:4566", "ftp://localhost:21", "http://"])
def test_endpoint_must_be_an_http_url(capsys, endpoint):
    err = one_line_error(capsys, [*argv(backend="aws"), "--endpoint", endpoint])
    assert repr(endpoint) in err and "http(s) URL" in err


def test_unknown_backend_is_one_line_naming_the_choices(capsys):
    err = one_line_error(capsys, ["deploy", "--backend", "foo"])
    assert "'foo'" in err and "'local'" in err and "'aws'" in err


def test_a_flag_without_its_value_is_one_line(capsys):
    # What `make deploy OBJECT_SIZE=` runs: the flag is followed by the next one.
    err = one_line_error(capsys, ["deploy", "--object-size", "--region", "us-east-1"])
    assert "--object-size" in err and "fanout deploy --help" in err


def test_object_size_limit_is_s3s(capsys):
    assert params.object_size(str(params.MAX_OBJECT_SIZE)) == params.MAX_OBJECT_SIZE
    with pytest.raises(UsageError, match=format_size(params.MAX_OBJECT_SIZE)):
        params.object_size(f"{params.MAX_OBJECT_SIZE + 1}")


@pytest.mark.parametrize("concurrency", range(params.CONCURRENCY_RANGE[0], params.MAPPING_MIN_CONCURRENCY + 1))
def test_concurrency_below_the_mappings_minimum_is_warned_about_not_refused(concurrency):
    parsed = cli.build_parser().parse_args(argv(concurrency=str(concurrency)))
    warned = params.warnings(deploy.inputs_from(parsed))
    if concurrency < params.MAPPING_MIN_CONCURRENCY:
        (line,) = warned
        assert f"concurrency {concurrency}" in line and "dead-letter" in line and "\n" not in line
    else:
        assert warned == []


def test_variables_carry_the_validated_values():
    parsed = cli.build_parser().parse_args(argv(object_size="1.5GiB", mode="stream"))
    variables = deploy.inputs_from(parsed).variables("http://127.0.0.1:1", "/x.zip", backends.get("local"))
    assert variables["object_size"] == 3 * 2**29
    assert variables["concurrency"] == int(GOOD["--concurrency"])
    assert variables["memory"] == int(GOOD["--memory"])
    assert variables["default_strategy"] == "stream chunk_size=256KiB"
    assert variables["endpoint"] == "http://127.0.0.1:1"
    assert variables["timeout"] == params.DEFAULT_FUNCTION_TIMEOUT


@pytest.mark.parametrize("given, deployed", [((), "bundled"), (("--sdk", "runtime"), "runtime")])
def test_the_sdk_choice_reaches_terraforms_variables(given, deployed):
    parsed = cli.build_parser().parse_args([*argv(), *given])
    assert deploy.inputs_from(parsed).variables("http://127.0.0.1:1", "/x.zip", backends.get("local"))["sdk"] == deployed


def test_keys_reach_terraforms_variables():
    parsed = cli.build_parser().parse_args([*argv(), "--keys", "16"])
    assert deploy.inputs_from(parsed).variables("http://127.0.0.1:1", "/x.zip", backends.get("local"))["keys"] == 16


def test_function_timeout_reaches_the_modules_timeout_variable():
    parsed = cli.build_parser().parse_args(argv(function_timeout="7"))
    assert deploy.inputs_from(parsed).variables("http://127.0.0.1:1", "/x.zip", backends.get("local"))["timeout"] == 7


@pytest.mark.parametrize("given, expected", [("1200", 1200), ("auto", None), ("AUTO", None)])
def test_ephemeral_storage_reaches_the_modules_variable(given, expected):
    """The fan-out study's source gave its function 1200 MB of /tmp; auto leaves it to infra/lambda.tf."""
    parsed = cli.build_parser().parse_args(argv(ephemeral_storage=given, object_size="1GiB"))
    assert deploy.inputs_from(parsed).variables("http://127.0.0.1:1", "/x.zip", backends.get("local"))["ephemeral_storage"] == expected


def test_a_redeploy_keeps_an_explicit_ephemeral_storage_and_auto_stays_auto():
    kept = deploy.inputs_from(deploy_args("--memory", "1024"), {**DEPLOYED, "ephemeral_storage": "1200"})
    assert kept.variables("", "/x.zip", backends.get("aws"))["ephemeral_storage"] == 1200
    auto = deploy.inputs_from(deploy_args("--object-size", "2GiB"), {**DEPLOYED, "ephemeral_storage": "auto"})
    assert auto.variables("", "/x.zip", backends.get("aws"))["ephemeral_storage"] is None


@pytest.mark.parametrize("backend, embedded", [("local", True), ("aws", False)])
def test_only_the_local_backend_is_the_embedded_emulator(backend, embedded):
    parsed = cli.build_parser().parse_args(argv())
    variables = deploy.inputs_from(parsed).variables("http://127.0.0.1:4566", "/x.zip", backends.get(backend))
    assert variables["embedded_emulator"] is embedded


@pytest.fixture
def missing_profile(tmp_path, monkeypatch):
    """AWS_PROFILE naming a profile that no AWS configuration file holds."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_PROFILE", "nope")


def test_a_missing_aws_profile_is_one_line_before_terraform_runs(missing_profile, capsys):
    assert cli.main(argv(backend="aws")) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "nope" in err and "AWS_PROFILE" in err
    assert not paths.home().exists()
    with pytest.raises(FanoutError, match="nope"):
        aws.client("s3", "us-east-1")


def test_destroy_and_outputs_with_nothing_deployed(capsys):
    assert cli.main(["destroy", "--backend", "aws", "--stack", "never-deployed"]) == 0
    assert "Nothing to destroy" in capsys.readouterr().out
    assert cli.main(["outputs", "--backend", "aws", "--stack", "never-deployed"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == ("fanout: error: no stack 'never-deployed' is deployed on the aws backend; "
                                 "run `make deploy BACKEND=aws STACK=never-deployed` first\n")


def test_local_state_is_dropped_when_its_emulator_is_gone(capsys):
    state = paths.stack_dir("local", "gone") / terraform.STATE_FILE
    state.parent.mkdir(parents=True)
    state.write_text('{"version": 4, "resources": [{"type": "aws_sqs_queue", "name": "requests"}]}')
    assert cli.main(["destroy", "--backend", "local", "--stack", "gone"]) == 0
    assert "no longer running" in capsys.readouterr().out
    assert not state.exists()


def test_a_teardown_says_what_it_did_on_the_console_it_is_given(capsys):
    """A demo's or sweep's console gets deploy's lines, word for word, and stdout nothing more."""
    from fanout.stages import deploy

    state = paths.stack_dir("local", "gone") / terraform.STATE_FILE
    state.parent.mkdir(parents=True)
    state.write_text('{"version": 4, "resources": [{"type": "aws_sqs_queue", "name": "requests"}]}')
    given = Console(file=io.StringIO(), width=40)  # narrower than the line: it must not wrap
    deploy.tear_down("local", "gone", False, given)
    assert given.file.getvalue() == ("The emulator that held stack 'gone' is no longer running, and its resources "
                                     "went with it; deleted the stack's local state.\n")  # fmt: skip
    assert capsys.readouterr().out == "" and not state.exists()


def test_aws_state_is_never_deleted():
    state = paths.stack_dir("aws", "kept") / terraform.STATE_FILE
    state.parent.mkdir(parents=True)
    state.write_text('{"version": 4, "resources": [{"type": "aws_sqs_queue", "name": "requests"}]}')
    with pytest.raises(FanoutError):
        terraform.forget(backends.get("aws"), "kept")
    assert state.exists()


# A deployed stack's outputs (infra/outputs.tf): 32 MiB, concurrency 4, 512 MB, stream.
DEPLOYED = {"stack": "s3fanout", "region": "eu-west-1", "concurrency": 4, "memory": 512, "object_size": 32 * MIB,
            "architecture": "arm64", "default_strategy": "stream chunk_size=256KiB", "timeout": 60,
            "storage": ["express", "standard"], "express_az": "euw1-az1"}  # fmt: skip


def deploy_args(*given: str, backend: str = "aws"):
    return cli.build_parser().parse_args(["deploy", "--backend", backend, *given])


def test_a_redeploy_of_one_input_keeps_the_others():
    """Issue 19: `make deploy STRATEGY=ranged` on this stack changed the object, the concurrency
    and the memory to the Makefile's defaults."""
    variables = deploy.inputs_from(deploy_args("--strategy", "ranged"), DEPLOYED).variables("", "/x.zip", backends.get("aws"))
    assert variables["default_strategy"].startswith("ranged ")
    kept = {"object_size": 32 * MIB, "concurrency": 4, "memory": 512, "architecture": "arm64", "timeout": 60,
            "region": "eu-west-1", "storage": ["express", "standard"], "express_az": "euw1-az1"}  # fmt: skip
    assert {name: variables[name] for name in kept} == kept


def test_a_redeploy_keeps_the_default_strategy_a_stack_deployed_before_it_was_the_download_workloads_has():
    """Its outputs (as Terraform's recorded inputs) name it default_strategy, as every stack's did:
    a redeploy that does not give it keeps it, and nothing else than what was given changes."""
    inputs = deploy.inputs_from(deploy_args("--memory", "1024"), DEPLOYED)
    assert inputs.workload_options["strategy"] == DEPLOYED["default_strategy"]
    assert inputs.variables("", "/x.zip", backends.get("aws"))["default_strategy"] == DEPLOYED["default_strategy"]
    assert params.changes(deploy.inputs_from(deploy_args(), DEPLOYED), inputs) == ["memory: 512 -> 1024"]


def test_a_first_deploy_takes_the_documented_defaults():
    variables = deploy.inputs_from(deploy_args("--memory", "2048"), {}).variables("", "/x.zip", backends.get("aws"))
    defaults = {"concurrency": 10, "memory": 2048, "object_size": 256 * MIB, "architecture": "x86_64",
                "timeout": 300, "region": "us-east-1", "storage": ["standard"], "express_az": ""}  # fmt: skip
    assert {name: variables[name] for name in defaults} == defaults


def test_dropping_express_drops_its_kept_zone():
    inputs = deploy.inputs_from(deploy_args("--storage", "standard"), DEPLOYED)
    assert {name: inputs.workload_options[name] for name in ("storage", "express_az")} == {"storage": ["standard"],
                                                                                          "express_az": ""}  # fmt: skip


def test_the_change_lines_say_old_and_new_of_each_changed_input_only():
    args = deploy_args("--strategy", "ranged", "--memory", "1024", "--concurrency", "4", "--object-size", "32MiB")
    old, new = deploy.inputs_given(deploy.blank(deploy.given_of(args)), DEPLOYED), deploy.inputs_from(args, DEPLOYED)
    assert params.changes(old, new) == ["memory: 512 -> 1024",
                                        "strategy: stream chunk_size=256KiB -> ranged connections=8 chunk_size=8MiB"]
    assert params.changes(old, old) == []
    dropped = deploy.inputs_from(deploy_args("--storage", "standard"), DEPLOYED)
    assert params.changes(old, dropped) == ["storage: express standard -> standard", "express az: euw1-az1 -> (none)"]


def test_deploy_reads_the_deployed_stack_and_prints_its_changes(capsys):
    """deploy.resolve on a stack whose state records DEPLOYED (as a finished apply leaves it)."""
    from fanout.stages import deploy

    state = {"resources": [{"type": "aws_sqs_queue"}], "outputs": {k: {"value": v} for k, v in DEPLOYED.items()}}
    state_file = paths.stack_dir("aws", "s3fanout") / terraform.STATE_FILE
    state_file.parent.mkdir(parents=True)
    state_file.write_text(json.dumps(state))
    assert deploy.resolve(deploy_args("--memory", "1024"), Console()).concurrency == 4
    assert capsys.readouterr().out.splitlines()[1:] == ["  memory: 512 -> 1024"]
    deploy.resolve(deploy_args("--memory", "512"), Console())
    assert capsys.readouterr().out.splitlines()[1:] == ["  no change"]


def test_a_redeploy_keeps_the_remote_region_until_told_none():
    deployed = {**DEPLOYED, "remote_region": "us-west-2", "remote_bucket": "b"}
    kept = deploy.inputs_from(deploy_args(), deployed).variables("", "/x.zip", backends.get("aws"))
    assert kept["remote_region"] == "us-west-2"
    assert deploy.inputs_from(deploy_args("--remote-region", "none"), deployed).variables("", "/x.zip", backends.get("aws"))[
        "remote_region"] == ""  # fmt: skip
    assert deploy.inputs_from(deploy_args(), DEPLOYED).variables("", "/x.zip", backends.get("aws"))["remote_region"] == ""
