"""The function's deployment zip, byte-for-byte reproducible (`fanout package` builds one by hand:
fanout.stages.package).

Terraform redeploys the function when the zip's hash changes, so the same sources and
requirements must give the same bytes. Dependencies are pinned wheels for the Lambda runtime and
the function's architecture, the SDK bundled unless `sdk="runtime"`. Details: docs/aws.md, *Where
state lives, and teams* (the zip), and docs/strategies.md, *The SDK*.
"""

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from fanout.common import file_lock, function_modules, paths
from fanout.common.errors import FanoutError, UsageError

RUNTIME_PYTHON = "3.12"  # the Lambda runtime in infra/ (python3.12); wheels are chosen for it
# Lambda architecture -> the wheel platform AWS documents for it (Amazon Linux, glibc 2.17+).
WHEEL_PLATFORMS = {"x86_64": "manylinux2014_x86_64", "arm64": "manylinux2014_aarch64"}
RUNTIME_PROVIDED = {"boto3", "botocore", "s3transfer"}  # in sdk-requirements.txt, never requirements.txt
SDK_REQUIREMENTS = "sdk-requirements.txt"
SDKS = {  # SDK= -> what the function imports boto3 from
    "bundled": "the zip's, pinned in sdk-requirements.txt",
    "runtime": "the Lambda runtime's own, varying by release and region",
}
DEFAULT_SDK = "bundled"
# What pip writes about the install rather than the package: console scripts (their shebang is
# the building interpreter's path), and the dist-info files that record it. importlib.metadata
# needs only METADATA, which stays.
DIST_INFO_ARTIFACTS = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can hold
FILE_MODE = 0o100644  # regular file, readable by the runtime's user
# Bump when the zip layout changes, so cached zips from an older layout are rebuilt.
LAYOUT_VERSION = "2"


def build(function: str = function_modules.NAME, architecture: str = "x86_64", sdk: str = DEFAULT_SDK) -> Path:
    """The zip of `function` for `architecture` at build_dir()/<function>-<architecture>.zip
    (-runtime-sdk.zip without the SDK), rebuilt only if its inputs changed."""
    source_dir = paths.FUNCTIONS / function
    if not (source_dir / "requirements.txt").is_file():
        raise UsageError(f"unknown function {function!r}: expected one of {', '.join(functions())}")
    if architecture not in WHEEL_PLATFORMS:
        raise UsageError(f"unknown architecture {architecture!r}: expected one of {', '.join(WHEEL_PLATFORMS)}")
    check_sdk(sdk)
    sources = _sources(source_dir)
    own = (source_dir / "requirements.txt").read_bytes()
    _check_requirements(function, own)
    requirements = own + (b"\n" + (source_dir / SDK_REQUIREMENTS).read_bytes() if sdk == "bundled" else b"")
    named_sources = [name.encode() + b"\0" + path.read_bytes() for name, path in sources]
    inputs = _digest([LAYOUT_VERSION.encode(), requirements, *named_sources])
    zip_path = paths.build_dir() / f"{function}-{architecture}{'' if sdk == 'bundled' else '-runtime-sdk'}.zip"
    stamp = zip_path.with_suffix(".inputs")
    # One build of a zip at a time (parallel commands, a test suite's workers): the others wait,
    # then find it built, instead of each running pip and deflating the same zip.
    with file_lock.exclusive(zip_path.with_suffix(".lock")):
        if zip_path.is_file() and stamp.is_file() and stamp.read_text() == inputs:
            return zip_path
        deps = _install(function, requirements, architecture)
        libraries = [(name, path) for name, path in _files(deps) if not _install_artifact(name)]
        _write_zip(zip_path, sources + libraries)
        stamp.write_text(inputs)
    return zip_path


def check_sdk(sdk: str) -> str:
    """`sdk` if it is one of SDKS, else a one-line UsageError naming the choices."""
    if sdk not in SDKS:
        raise UsageError(f"unknown SDK {sdk!r}: expected one of {', '.join(SDKS)}")
    return sdk


def functions() -> list[str]:
    """Names of the functions that can be packaged (folders with a requirements.txt)."""
    return sorted(p.parent.name for p in paths.FUNCTIONS.glob("*/requirements.txt"))


def sha256_base64(path: Path) -> str:
    """The hash Terraform's filebase64sha256() computes, to compare with source_code_hash."""
    return base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()


def _digest(parts: list[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _install(function: str, requirements: bytes, architecture: str) -> Path:
    """The dependencies installed for the runtime, from the cache when already there."""
    platform = WHEEL_PLATFORMS[architecture]
    key = _digest([requirements, RUNTIME_PYTHON.encode(), platform.encode()])[:16]
    target = paths.build_dir() / "deps" / f"{function}-{architecture}-{key}"
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        requirements_file = Path(scratch) / "requirements.txt"
        requirements_file.write_bytes(requirements)
        site = Path(scratch) / "site"
        command = [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--target", str(site), "--no-deps", "--no-compile", "--only-binary=:all:", "--platform", platform,
            "--implementation", "cp", "--python-version", RUNTIME_PYTHON, "-r", str(requirements_file),
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            detail = (result.stderr.strip().splitlines() or ["no output"])[-1]
            raise FanoutError(f"pip could not install {function}'s requirements.txt: {detail}")
        site.rename(target)  # atomic: an interrupted install leaves only its scratch folder
    return target


def _check_requirements(function: str, requirements: bytes) -> None:
    for line in requirements.decode().splitlines():
        name = line.split("#")[0].strip().split("==")[0].strip().lower().replace("_", "-")
        if name in RUNTIME_PROVIDED:
            raise UsageError(
                f"functions/{function}/requirements.txt lists {name!r}: the Lambda runtime provides "
                f"{', '.join(sorted(RUNTIME_PROVIDED))}: pin it in {SDK_REQUIREMENTS} instead"
            )


def _files(root: Path) -> list[tuple[str, Path]]:
    """(name in the zip, path) of every file under `root`, without bytecode."""
    found = []
    for path in root.rglob("*"):
        name = path.relative_to(root).as_posix()
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            found.append((name, path))
    return found


def _sources(source_dir: Path) -> list[tuple[str, Path]]:
    """(name in the zip, path) of the function's modules: those of its workload folders go to the
    zip's root beside the handler's, where the runtime imports them by plain name; two modules of
    one name would shadow each other, so they are refused."""
    sources = []
    for folder in function_modules.folders(source_dir):
        sources += [(path.name, path) for path in folder.iterdir() if path.is_file() and path.suffix != ".pyc"
                    and path.name not in {"requirements.txt", SDK_REQUIREMENTS}]  # fmt: skip
    names = [name for name, _ in sources]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise FanoutError(f"two modules named {', '.join(twice)} in {source_dir}: the function's zip is flat")
    return sorted(sources)


def _install_artifact(name: str) -> bool:
    top, _, rest = name.partition("/")
    return top == "bin" or (top.endswith(".dist-info") and rest in DIST_INFO_ARTIFACTS)


def _write_zip(zip_path: Path, entries: list[tuple[str, Path]]) -> None:
    """Write the zip atomically (a reader never sees half a zip) with every varying field fixed.

    Deflate at zlib's default level: level 9 took nearly three times the CPU (the awscrt library
    alone, about 2 s a build) for a zip 0.2% smaller."""
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=zip_path.parent, suffix=".tmp", delete=False) as tmp:
        with zipfile.ZipFile(tmp, "w") as archive:
            for name, path in sorted(entries):
                info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                info.external_attr = FILE_MODE << 16
                info.create_system = 3  # Unix, so the permissions above are honoured
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, zip_path)
