"""`git daemon --enable=receive-pack` on 127.0.0.1 for tests of a real network push."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (just now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """Serve every repository below `base` (push enabled, loopback only) while the block
    runs; yields the URL prefix (``git://127.0.0.1:PORT/``) once the daemon answers."""
    port = free_port()
    daemon = subprocess.Popen(
        ["git", "daemon", "--enable=receive-pack", "--export-all", "--reuseaddr",
         f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())
    try:
        url = f"git://127.0.0.1:{port}/"
        for _ in range(200):  # until it listens
            probe = subprocess.run(["git", "ls-remote", url + "nothing-here"],
                                   capture_output=True)
            if b"Connection refused" not in probe.stderr and b"unable to connect" not in \
                    probe.stderr:
                break
            time.sleep(0.05)
        yield url
    finally:
        daemon.terminate()
        daemon.wait()
