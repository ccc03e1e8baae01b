"""`fanout package`: build the function's deployment zip by hand (fanout.cloud.package builds it
for every deploy), and print its path and hash."""

import argparse

from rich.console import Console

from fanout.cloud import package
from fanout.common import function_modules


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("package", help="build the function's deployment zip (deterministic)")
    parser.add_argument(
        "--function", default=function_modules.NAME, help=f"function folder under functions/ (default: {function_modules.NAME})"
    )
    parser.add_argument(
        "--architecture", default="x86_64", help=f"{' or '.join(package.WHEEL_PLATFORMS)} (default: x86_64)"
    )
    parser.add_argument("--sdk", default=package.DEFAULT_SDK,
                        help=f"where the function's boto3 comes from: {'; '.join(f'{k}: {v}' for k, v in package.SDKS.items())} "
                             f"(default: {package.DEFAULT_SDK})")  # fmt: skip
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    path = package.build(args.function, args.architecture, args.sdk)
    Console().out(f"{path}\nsha256 (base64): {package.sha256_base64(path)}", highlight=False)
    return 0
