"""The `fanout` console script: one subcommand per pipeline stage.

Each stage lives in its own module exposing `register(subparsers)`; the subparser's `func`
default receives the parsed arguments, and its `check` default, when it has one, checks their
values with no side effect (nothing created, no AWS call): `func` runs it first, and
tests/test_docs_commands.py runs it alone on every command the docs show. Errors derived from
`FanoutError`, and command-line errors (an unknown choice, a flag missing its value because a
make variable was empty), become one line on stderr and a non-zero exit status.
"""

import argparse
import importlib
import sys

from botocore.exceptions import ConnectionError as EndpointUnreachable
from botocore.exceptions import HTTPClientError

from fanout.local.emulator import health
from fanout.common.errors import FanoutError, OneLineErrors

# Pipeline order: deploy -> fire -> run (host) -> wait -> query -> report -> destroy; demo and
# sweep run the whole pipeline.
COMMAND_MODULES = (
    "fanout.local.emulator.cli",
    "fanout.stages.deploy",
    "fanout.cloud.package",
    "fanout.stages.upload",
    "fanout.local.host.cli",
    "fanout.stages.fire",
    "fanout.stages.wait",
    "fanout.stages.query",
    "fanout.stages.report",
    "fanout.stages.compare",
    "fanout.stages.open_page",
    "fanout.stages.demo",
    "fanout.stages.sweep",
    "fanout.stages.study",
)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrors(prog="fanout", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args) or 0
    except FanoutError as exc:
        print(f"fanout: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except (EndpointUnreachable, HTTPClientError) as exc:  # e.g. the emulator died mid-command
        print(f"fanout: error: {health.unreachable(exc.kwargs.get('endpoint_url', ''), exc)}", file=sys.stderr)
        return FanoutError.exit_code
    except KeyboardInterrupt:
        print("fanout: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
