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

from fanout.common.errors import FanoutError, OneLineErrors

# Pipeline order: deploy -> fire -> run (host) -> wait -> query -> report -> destroy; demo and
# sweep run the whole pipeline. Each command, the module that registers it, and its line in
# `fanout --help` (the module's own help, which tests/test_cli_startup.py holds this to): the
# parser imports only the module of the command it runs, so that `--help` and a refused value
# cost little more than starting Python (bench/cli_startup.py), never boto3 or the reports.
COMMANDS = {
    "emulator": ("fanout.stages.emulator", "start, stop or inspect the embedded AWS emulator"),
    "deploy": ("fanout.stages.deploy", "deploy the stack and upload the test object; on a deployed stack, an input "
                                       "not given keeps its value"),
    "plan": ("fanout.stages.deploy", "show what deploy would change"),
    "outputs": ("fanout.stages.deploy", "print the deployed stack's outputs as JSON"),
    "destroy": ("fanout.stages.deploy", "remove everything the stack created"),
    "package": ("fanout.stages.package", "build the function's deployment zip (deterministic)"),
    "upload": ("fanout.stages.upload", "upload the test object to the deployed stack's bucket (if missing)"),
    "host": ("fanout.stages.host", "local backend: run the function on its SQS queue until the queue is drained"),
    "fire": ("fanout.stages.fire", "send the messages of one run to the stack's queue"),
    "wait": ("fanout.stages.wait", "wait until every message of a run is done, failed or dead-lettered"),
    "insights": ("fanout.stages.query", "run a Logs Insights query on the stack's logs (or on exported events)"),
    "export": ("fanout.stages.query", "save the stack's log events to a JSONL file"),
    "report": ("fanout.stages.report", "tables, CSV/JSON and plots of a run under results/"),
    "compare": ("fanout.stages.compare", "change in median and p99 throughput between two runs, with CIs"),
    "open": ("fanout.stages.open_page", "print the path of the newest report page; open it where a desktop is"),
    "demo": ("fanout.stages.demo", "deploy, fire, run, wait, report and destroy on the local backend"),
    "sweep": ("fanout.stages.sweep", "run every cell of a parameter sweep, one after another"),
    "study": ("fanout.stages.study", "list the studies, or run one and compare it with its source"),
}
COMMAND_MODULES = tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The CLI's parser. Given the command line about to be parsed (`argv`), only the module of
    its command is imported, the other commands listed by name and help; without it, every
    command's module registers its own (what the tests and the docs' check parse against)."""
    parser = OneLineErrors(prog="fanout", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = COMMAND_MODULES if argv is None else [COMMANDS[name][0] for name in argv[:1] if name in COMMANDS]
    for name, (module, help_line) in COMMANDS.items():
        if name in subparsers.choices:  # registered with another command of its module
            continue
        if module in wanted:
            importlib.import_module(module).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_line)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(argv).parse_args(argv)
        return args.func(args) or 0
    except FanoutError as exc:
        print(f"fanout: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("fanout: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        said = unreachable(exc)
        if said is None:
            raise
        print(f"fanout: error: {said}", file=sys.stderr)
        return FanoutError.exit_code


def unreachable(exc: Exception) -> str | None:
    """The one line for an endpoint that stopped answering (e.g. the emulator died mid-command),
    or None for any other exception. botocore is asked only when a command has loaded it."""
    if "botocore.exceptions" not in sys.modules:
        return None
    from botocore.exceptions import ConnectionError as EndpointUnreachable, HTTPClientError

    if not isinstance(exc, (EndpointUnreachable, HTTPClientError)):
        return None
    from fanout.local.emulator import health

    return health.unreachable(exc.kwargs.get("endpoint_url", ""), exc)


if __name__ == "__main__":
    sys.exit(main())
