"""Run Terraform on infra/ with one state per backend and stack.

Every (backend, stack) pair has its own state directory, so a local-backend run cannot read or
change an AWS deployment's state; Terraform's output goes to the user or the stack's
terraform.log, a failure becomes one line, and Ctrl-C is handled so that a teardown always
completes. Details: docs/aws.md (*Where state lives, and teams* and provider installation) and
docs/experiment.md, *demo and Ctrl-C*.
"""

import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fanout.common import paths
from fanout.common.backend import Backend
from fanout.common.errors import FanoutError

MIRROR_ENV = "FANOUT_TF_PROVIDER_MIRROR"
DEFAULT_MIRROR = "/opt/tf-plugins"
MIRRORED_PROVIDER = "registry.terraform.io/hashicorp/aws"
# The user's AWS setup an endpoint must not see is every AWS_* variable (credentials, profiles
# and their files, endpoint overrides...) except the CA bundle, which an https emulator may need.
KEPT_AWS_VARIABLES = {"AWS_CA_BUNDLE"}
GO_GC_PERCENT = "400"  # Terraform's GOGC unless the user sets one (environment())

STATE_FILE = "terraform.tfstate"
INPUTS_FILE = "inputs.tfvars.json"
PLAN_INPUTS_FILE = "plan.tfvars.json"  # what plan() writes its variables to
INIT_STAMP = "init.sha256"
LOG_FILE = "terraform.log"
LOG_TAIL_LINES = 25

_log: "_Log | None" = None  # where Terraform's output goes instead of the terminal; see output_to_log


def outputs(backend: str, stack: str) -> dict:
    """Output values of the deployed stack ({} when nothing is deployed).

    Read from the state file, as `terraform output` reads them, without a Terraform process
    (a second or two, on every deploy and every command that loads the stack).
    """
    if not has_state(backend, stack):
        return {}
    state = json.loads((_stack_dir(backend, stack) / STATE_FILE).read_text())
    return {name: item["value"] for name, item in state.get("outputs", {}).items()}


def resource(backend: str, stack: str, kind: str, name: str) -> dict | None:
    """The attributes the state records for resource `kind.name` (None: not in the state). Read
    from the resources, not the outputs: a partial apply records the resources it made."""
    if not has_state(backend, stack):
        return None
    state = json.loads((_stack_dir(backend, stack) / STATE_FILE).read_text())
    found = [item for item in state.get("resources", []) if (item.get("type"), item.get("name")) == (kind, name)]
    instances = found[0].get("instances", []) if found else []
    return instances[0].get("attributes") if instances else None


def deployed(backend: str) -> list[str]:
    """The stacks this machine holds a state of on `backend`, by name."""
    folder = paths.stack_dir(backend, "x").parent
    return sorted(path.name for path in folder.iterdir() if has_state(backend, path.name)) if folder.is_dir() else []


def apply(backend: str, stack: str, variables: dict) -> None:
    """Create or update the stack with these input variables."""
    _write_inputs(backend, stack, variables)
    endpoint, emulated = variables.get("endpoint", ""), bool(variables.get("embedded_emulator"))
    _init(backend, stack, endpoint, emulated)
    _run(backend, stack, "apply", "-auto-approve", *_var_args(backend, stack), endpoint=endpoint,
         embedded_emulator=emulated)


def plan(backend: str, stack: str, variables: dict, detailed_exitcode: bool = False) -> int:
    """Show what apply would change; with detailed_exitcode, 2 means changes, 0 none."""
    vars_file = _stack_dir(backend, stack) / PLAN_INPUTS_FILE
    _write_json(vars_file, variables)
    endpoint, emulated = variables.get("endpoint", ""), bool(variables.get("embedded_emulator"))
    _init(backend, stack, endpoint, emulated)
    extra = ["-detailed-exitcode"] if detailed_exitcode else []
    ok_codes = (0, 2) if detailed_exitcode else (0,)
    return _run(backend, stack, "plan", *extra, f"-var-file={vars_file}", ok_codes=ok_codes,
                endpoint=endpoint, embedded_emulator=emulated).returncode


def destroy(backend: str, stack: str) -> bool:
    """Destroy everything the state records; False when there was nothing to destroy."""
    if not has_state(backend, stack):
        return False
    _init(backend, stack)
    # Destroy still evaluates the function's source_code_hash; the zip may have been cleaned
    # since the apply and its content is irrelevant to deleting the function.
    _run(backend, stack, "destroy", "-auto-approve", *_var_args(backend, stack), f"-var=zip_path={os.devnull}")
    return True


def has_state(backend: str, stack: str) -> bool:
    """Does the stack's state record any resource (also true after a partial apply)?"""
    state_file = _stack_dir(backend, stack) / STATE_FILE
    try:
        return bool(json.loads(state_file.read_text()).get("resources"))
    except FileNotFoundError:
        return False
    except json.JSONDecodeError as exc:
        raise FanoutError(f"state file {state_file} is not valid JSON: {exc}") from None


def recorded_inputs(backend: str, stack: str) -> dict:
    """Input variables of the last apply ({} if none)."""
    try:
        return json.loads((_stack_dir(backend, stack) / INPUTS_FILE).read_text())
    except FileNotFoundError:
        return {}


def forget(backend: Backend, stack: str) -> None:
    """Delete the state of a stack in the embedded emulator (the local backend's, which hands
    itself in): for when the emulator holding it is gone.

    Never on AWS, where the state is the only record of resources that cost money. Terraform's
    log stays: it is what explains a failed deploy afterwards.
    """
    if not backend.embedded_emulator:
        raise FanoutError(f"refusing to delete the state of a stack on the {backend.name} backend")
    stack_dir = _stack_dir(backend.name, stack)
    for path in stack_dir.iterdir() if stack_dir.is_dir() else ():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.name != LOG_FILE:
            path.unlink()


@contextmanager
def output_to_log(backend: str, stack: str, verbose: bool = False):
    """Within the block, Terraform's output goes to the stack's terraform.log instead of the
    terminal, and a failure prints the log's last lines; yields the log's path. The log is
    emptied, and a line says where it is, when Terraform first runs in the block: a block that
    runs none (a destroy with nothing deployed, a refused input) creates nothing. `verbose`:
    the output stays on the terminal (yields None).

    For deploy, destroy, the demo and the sweep: a deploy prints a plan of several hundred lines
    that buries their own output.
    """
    global _log
    if verbose:
        yield None
        return
    path = _stack_dir(backend, stack) / LOG_FILE
    previous, _log = _log, _Log(path)
    try:
        yield path
    finally:
        _log = previous


@dataclass
class _Log:
    """The log Terraform's output goes to, and whether a Terraform run has written to it yet."""

    path: Path
    started: bool = False


def _stack_dir(backend: str, stack: str) -> Path:
    return paths.stack_dir(backend, stack)


def _var_args(backend: str, stack: str) -> list[str]:
    return [f"-var-file={_stack_dir(backend, stack) / INPUTS_FILE}"]


def _write_inputs(backend: str, stack: str, variables: dict) -> None:
    _write_json(_stack_dir(backend, stack) / INPUTS_FILE, variables)


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def _init(backend: str, stack: str, endpoint: str | None = None, embedded_emulator: bool | None = None) -> None:
    """terraform init, skipped when this stack was already initialised for the same inputs.

    Init takes seconds even with nothing to install; the stamp covers everything that changes
    its result: the module's version constraints, the CLI configuration and the state path.
    """
    stack_dir = _stack_dir(backend, stack)
    state_arg = f"-backend-config=path={stack_dir / STATE_FILE}"
    stamp = _init_fingerprint(state_arg)
    stamp_file = stack_dir / INIT_STAMP
    lock_file = paths.INFRA / ".terraform.lock.hcl"
    if lock_file.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return
    _run(backend, stack, "init", "-reconfigure", state_arg, endpoint=endpoint, embedded_emulator=embedded_emulator)
    stamp_file.write_text(stamp)


def _init_fingerprint(state_arg: str) -> str:
    digest = hashlib.sha256(state_arg.encode())
    digest.update((paths.INFRA / "versions.tf").read_bytes())
    config = _cli_config()
    if config:
        digest.update(config.read_bytes())
    return digest.hexdigest()


def _cli_config() -> Path | None:
    """The CLI configuration file Terraform runs with; None for Terraform's own default.

    A TF_CLI_CONFIG_FILE the user set, naming an existing file, is theirs and is kept. Otherwise,
    when the local mirror holds the AWS provider for this platform, a configuration is written
    that installs it from there. Only then: Terraform fails init on a filesystem_mirror that does
    not exist, and with an empty one the `direct` exclusion would leave nowhere to install from.
    """
    user_config = os.environ.get("TF_CLI_CONFIG_FILE")
    if user_config and Path(user_config).is_file():
        return Path(user_config)
    mirror = Path(os.environ.get(MIRROR_ENV, DEFAULT_MIRROR))
    if not _mirror_holds_provider(mirror):
        return None
    config = paths.home() / "terraform.rc"
    text = (
        "provider_installation {\n"
        f"  filesystem_mirror {{\n    path    = {json.dumps(str(mirror))}\n"
        f"    include = [{json.dumps(MIRRORED_PROVIDER)}]\n  }}\n"
        f"  direct {{\n    exclude = [{json.dumps(MIRRORED_PROVIDER)}]\n  }}\n"
        "}\n"
    )
    config.parent.mkdir(parents=True, exist_ok=True)
    if not config.exists() or config.read_text() != text:
        config.write_text(text)
    return config


def _mirror_holds_provider(mirror: Path) -> bool:
    """Does the mirror hold a version of the AWS provider for this platform, in either layout
    Terraform reads: unpacked (<version>/<os_arch>/) or packed (terraform-provider-aws_<version>_<os_arch>.zip)?"""
    provider = mirror / MIRRORED_PROVIDER
    platform = _terraform_platform(shutil.which("terraform")) if provider.is_dir() else None  # no subprocess without a mirror
    if platform is None:
        return False
    unpacked = any(path.is_dir() for path in provider.glob(f"*/{platform}"))
    return unpacked or any(provider.glob(f"terraform-provider-aws_*_{platform}.zip"))


@functools.cache
def _terraform_platform(executable: str | None) -> str | None:
    """The os_arch this Terraform executable installs providers for, e.g. linux_amd64; None
    without one. Cached per executable: asking costs a subprocess."""
    if executable is None:
        return None
    try:
        result = subprocess.run(
            [executable, "version", "-json"],
            capture_output=True, text=True, check=True, env={**os.environ, "CHECKPOINT_DISABLE": "1"},
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    return json.loads(result.stdout).get("platform")


def environment(backend: str, stack: str, endpoint: str | None = None, embedded_emulator: bool | None = None) -> dict:
    """Environment Terraform runs with for this stack (also for running it by hand).

    `endpoint` and `embedded_emulator` are the infra/ variables of that name the command runs
    with (whether the stack is in the local backend's embedded emulator is one); by default
    (None) those the stack was last applied with. Against an endpoint, or in the embedded
    emulator, the user's AWS setup is left out: the provider uses test credentials there, an
    AWS_PROFILE naming a profile that does not exist would fail it, and the user's
    AWS_ENDPOINT_URL_* would redirect it; AWS_ENDPOINT_URL is then the endpoint itself.
    """
    recorded = recorded_inputs(backend, stack) if None in (endpoint, embedded_emulator) else {}
    endpoint = recorded.get("endpoint", "") if endpoint is None else endpoint
    emulated = bool(recorded.get("embedded_emulator")) if embedded_emulator is None else embedded_emulator
    env = dict(os.environ)
    if emulated or endpoint:
        env = {name: value for name, value in env.items()
               if not name.startswith("AWS_") or name in KEPT_AWS_VARIABLES}  # fmt: skip
    if endpoint:
        # The provider reaches the endpoint through this, not through its endpoints block (see
        # infra/variables.tf, endpoint_in_environment): every service, validated in no time.
        env["AWS_ENDPOINT_URL"] = endpoint
    cache = paths.home() / "terraform-plugin-cache"
    cache.mkdir(parents=True, exist_ok=True)
    # Terraform and the AWS provider are Go programs; loading the provider's schema, which each
    # plan and apply starts the provider for, is mostly garbage collection at Go's default
    # (GOGC=100). Collecting at 4x the live heap instead used about a fifth less CPU in the
    # module's own tests, for about 70 MB more at the peak. A GOGC of the user's own is kept.
    env.setdefault("GOGC", GO_GC_PERCENT)
    env.update(
        TF_DATA_DIR=str(_stack_dir(backend, stack) / ".terraform"),
        TF_PLUGIN_CACHE_DIR=str(cache),
        TF_IN_AUTOMATION="1",
        TF_INPUT="0",
    )
    config = _cli_config()
    if config:
        env["TF_CLI_CONFIG_FILE"] = str(config)
    return env


def _run(backend: str, stack: str, command: str, *args: str, ok_codes=(0,), endpoint: str | None = None,
         embedded_emulator: bool | None = None):
    executable = shutil.which("terraform")
    if executable is None:
        raise FanoutError("terraform is not on PATH; install Terraform >= 1.5")
    _stack_dir(backend, stack).mkdir(parents=True, exist_ok=True)
    log = _log
    plain = log is not None or not sys.stdout.isatty()
    with _output(log) as (stdout, stderr):
        process = subprocess.Popen(
            [executable, command, *(["-no-color"] if plain else []), *args],
            cwd=paths.INFRA,
            env=environment(backend, stack, endpoint, embedded_emulator),
            stdout=stdout,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
        out, err = _wait(process, command)
    if process.returncode not in ok_codes:
        raise FanoutError(f"terraform {command} failed for stack {stack!r} on {backend}: "
                          f"{_failure(err, log.path if log else None)}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@contextmanager
def _output(log: _Log | None):
    """(stdout, stderr) for Terraform: the log file (emptied by the block's first run), or the terminal."""
    if log is None:
        yield None, None
        return
    if not log.started:
        _say(f"Terraform's output goes to {log.path} (--verbose or VERBOSE=1 shows it)")
    with open(log.path, "a" if log.started else "w") as handle:
        log.started = True
        yield handle, subprocess.STDOUT


def _wait(process: subprocess.Popen, command: str) -> tuple[str | None, str | None]:
    """Terraform's output once it exits, deciding what a Ctrl-C here does to it.

    The first Ctrl-C is passed on to Terraform, once (a second one would make it exit at once
    and risk its state), and raised again as KeyboardInterrupt when Terraform has stopped, so
    that the caller can clean up. `terraform destroy` gets none: stopping it half-way would leave
    resources behind, and it is what a teardown runs.
    """
    interrupted = False
    while True:
        try:
            out, err = process.communicate()
            break
        except KeyboardInterrupt:
            if command == "destroy":
                _say("terraform destroy continues: stopping it half-way would leave resources behind")
            elif interrupted:
                _say("still waiting for Terraform to stop")
            else:
                process.send_signal(signal.SIGINT)
                _say(f"asked terraform {command} to stop; waiting for it to save its state")
            interrupted = True
    if interrupted and command != "destroy":
        raise KeyboardInterrupt
    return out, err


def _failure(stderr: str | None, log: Path | None) -> str:
    """The line that says why Terraform failed, after printing the log's tail when there is one."""
    if log is None:
        return _last_error_line(stderr) if stderr is not None else "see Terraform's output above"
    text = log.read_text()
    _say(f"last lines of {log}:\n" + "\n".join(text.splitlines()[-LOG_TAIL_LINES:]))
    return f"{_last_error_line(text)}; full output in {log}"


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _last_error_line(stderr: str) -> str:
    lines = [line.strip(" │╷╵") for line in (stderr or "").splitlines()]
    errors = [line for line in lines if line.startswith("Error:")]
    return errors[-1] if errors else (next((line for line in reversed(lines) if line), "no output"))
