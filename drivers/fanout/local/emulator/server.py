"""Process entry point of the embedded emulator: `python -m fanout.local.emulator.server`.

Serves every moto service on one port of one threaded HTTP server, after applying the patches in
`fanout.local.emulator.patches`. With `--port 0` (the default) the kernel picks a free port and the
server writes it to `--port-file` once it listens, so the caller never races another process
for a port. Like any werkzeug server it closes the connection after each response: clients
open one TCP connection per request.
"""

import argparse
import logging
import os
import signal
import sys
import time
from pathlib import Path


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m fanout.local.emulator.server")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one")
    parser.add_argument("--port-file", type=Path, help="written with the bound port once listening")
    parser.add_argument(
        "--stock", action="store_true", help="serve moto without the patches (benchmark baseline)"
    )
    parser.add_argument(
        "--latency-ms", type=float, default=0, help="delay every response (benchmarks: a remote endpoint)"
    )
    return parser.parse_args(argv)


def write_atomically(path: Path, text: str) -> None:
    """Readers poll for this file: they must never see it half-written."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def delayed(app, seconds: float):
    """`app` with every response delayed by `seconds`: the network round trip of a remote
    endpoint, which loopback lacks. Benchmarks of client-side parallelism need it: on loopback
    the emulator's own CPU, not the wait for answers, limits every client."""

    def respond(environ, start_response):
        time.sleep(seconds)
        return app(environ, start_response)

    return respond


def main(argv=None) -> None:
    args = parse_args(argv)
    # Imported here so that `--help` stays fast; moto takes a second to import.
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    from fanout.local.emulator import patches

    if not args.stock:
        patches.apply_all()
    # One access-log line per request would cost time and fill the log; keep warnings and errors.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    app = DomainDispatcherApplication(create_backend_app)
    if args.latency_ms:
        app = delayed(app, args.latency_ms / 1000)
    server = make_server(
        args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler
    )
    port = server.server_port
    # moto builds some URLs (e.g. endpoints handed to functions) from MOTO_PORT.
    os.environ["MOTO_PORT"] = str(port)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    patched = "stock moto" if args.stock else f"{len(patches.PATCHES)} patches"
    print(f"emulator listening on http://{args.host}:{port} ({patched})", flush=True)
    if args.port_file:
        write_atomically(args.port_file, f"{port}\n")
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
