"""A throwaway emulator process for benchmarks (no pid files: nothing else should find it)."""

import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def serve(*server_args: str):
    """Endpoint URL of an emulator started with `server_args` (e.g. `--stock`), stopped on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        command = [sys.executable, "-m", "fanout.local.emulator.server", "--port-file", str(port_file), *server_args]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            while not port_file.exists():
                if process.poll() is not None:
                    raise RuntimeError(f"emulator exited with status {process.returncode}")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port_file.read_text().strip()}"
        finally:
            process.terminate()
            process.wait()
