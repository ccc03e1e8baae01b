"""`fanout emulator start|stop|status`: manage the local backend's AWS endpoint by hand.

`status` exits 0 when the emulator answers and 3 when it does not (the LSB init-script
convention for "not running"), so scripts can test it without parsing output.
"""

import argparse

from fanout.local.emulator import control

NOT_RUNNING = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("emulator", help="start, stop or inspect the embedded AWS emulator")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("start", help="start the emulator (no-op if running); prints its endpoint")
    actions.add_parser("stop", help="stop the emulator; its state is lost")
    actions.add_parser("status", help="print endpoint, pid and log; exit 3 if not running")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "start":
        print(control.start())
        return 0
    if args.action == "stop":
        print("emulator stopped" if control.stop() else "emulator was not running")
        return 0
    return status()


def status() -> int:
    endpoint = control.running_endpoint()
    if endpoint is None:
        print("emulator: not running")
        return NOT_RUNNING
    print(f"emulator: {endpoint}")
    print(f"pid: {control.running_pid()}")
    print(f"log: {control.log_file()}")
    return 0
