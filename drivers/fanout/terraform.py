"""Run Terraform on infra/ with one state per backend and stack.

Every (backend, stack) pair has its own directory (paths.stack_dir): the local state file, the
input variables of the last apply (destroy needs them) and TF_DATA_DIR, so two stacks or the two
backends never share state or .terraform data, and a local-backend run cannot read or change the
state of an AWS deployment. Terraform's own output streams to the user; a failure becomes one
FanoutError line.

Provider installation: when a local provider mirror directory exists (FANOUT_TF_PROVIDER_MIRROR,
default /opt/tf-plugins) a generated CLI configuration installs the AWS provider from it and any
other provider from the registry; otherwise Terraform's normal configuration applies. A shared
plugin cache keeps several stacks from each unpacking their own copy of the provider.
"""

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from fanout import paths
from fanout.errors import FanoutError

MIRROR_ENV = "FANOUT_TF_PROVIDER_MIRROR"
DEFAULT_MIRROR = "/opt/tf-plugins"
MIRRORED_PROVIDER = "registry.terraform.io/hashicorp/aws"

STATE_FILE = "terraform.tfstate"
INPUTS_FILE = "inputs.tfvars.json"
INIT_STAMP = "init.sha256"


def outputs(backend: str, stack: str) -> dict:
    """Output values of the deployed stack ({} when nothing is deployed)."""
    if not has_state(backend, stack):
        return {}
    result = _run(backend, stack, "output", "-json", capture=True)
    return {name: item["value"] for name, item in json.loads(result.stdout or "{}").items()}


def apply(backend: str, stack: str, variables: dict) -> None:
    """Create or update the stack with these input variables."""
    _write_inputs(backend, stack, variables)
    _init(backend, stack)
    _run(backend, stack, "apply", "-auto-approve", *_var_args(backend, stack))


def plan(backend: str, stack: str, variables: dict, detailed_exitcode: bool = False) -> int:
    """Show what apply would change; with detailed_exitcode, 2 means changes, 0 none."""
    vars_file = _stack_dir(backend, stack) / "plan.tfvars.json"
    _write_json(vars_file, variables)
    _init(backend, stack)
    extra = ["-detailed-exitcode"] if detailed_exitcode else []
    ok_codes = (0, 2) if detailed_exitcode else (0,)
    return _run(backend, stack, "plan", *extra, f"-var-file={vars_file}", ok_codes=ok_codes).returncode


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


def forget(backend: str, stack: str) -> None:
    """Delete a local-backend stack's state: for when the emulator holding it is gone.

    Never on AWS, where the state is the only record of resources that cost money.
    """
    if backend != "local":
        raise FanoutError(f"refusing to delete the state of a stack on the {backend} backend")
    shutil.rmtree(_stack_dir(backend, stack), ignore_errors=True)


def _stack_dir(backend: str, stack: str) -> Path:
    return paths.stack_dir(backend, stack)


def _var_args(backend: str, stack: str) -> list[str]:
    return [f"-var-file={_stack_dir(backend, stack) / INPUTS_FILE}"]


def _write_inputs(backend: str, stack: str, variables: dict) -> None:
    _write_json(_stack_dir(backend, stack) / INPUTS_FILE, variables)


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def _init(backend: str, stack: str) -> None:
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
    _run(backend, stack, "init", "-reconfigure", state_arg)
    stamp_file.write_text(stamp)


def _init_fingerprint(state_arg: str) -> str:
    digest = hashlib.sha256(state_arg.encode())
    digest.update((paths.INFRA / "versions.tf").read_bytes())
    config = _cli_config()
    if config:
        digest.update(config.read_bytes())
    return digest.hexdigest()


def _cli_config() -> Path | None:
    """Write the CLI configuration that prefers the local provider mirror, if there is one.

    Only when the mirror directory exists: Terraform fails init on a filesystem_mirror that
    does not exist, even with a direct fallback.
    """
    mirror = Path(os.environ.get(MIRROR_ENV, DEFAULT_MIRROR))
    if not mirror.is_dir():
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


def environment(backend: str, stack: str) -> dict:
    """Environment Terraform runs with for this stack (also for running it by hand)."""
    env = dict(os.environ)
    cache = paths.home() / "terraform-plugin-cache"
    cache.mkdir(parents=True, exist_ok=True)
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


def _run(backend: str, stack: str, command: str, *args: str, capture: bool = False, ok_codes=(0,)):
    executable = shutil.which("terraform")
    if executable is None:
        raise FanoutError("terraform is not on PATH; install Terraform >= 1.5")
    _stack_dir(backend, stack).mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [executable, command, *args],
        cwd=paths.INFRA,
        env=environment(backend, stack),
        stdout=subprocess.PIPE if capture else None,
        stderr=subprocess.PIPE if capture else None,
        text=True,
    )
    if result.returncode not in ok_codes:
        detail = _last_error_line(result.stderr) if capture else "see Terraform's output above"
        raise FanoutError(f"terraform {command} failed for stack {stack!r} on {backend}: {detail}")
    return result


def _last_error_line(stderr: str) -> str:
    lines = [line.strip(" │╷╵") for line in (stderr or "").splitlines()]
    errors = [line for line in lines if line.startswith("Error:")]
    return errors[-1] if errors else (next((line for line in reversed(lines) if line), "no output"))
