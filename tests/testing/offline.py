"""`no_network`: refuse (and record) every internet connect for a test, and fail it if
one was tried or if it left a thread running (conformance/forked forks only a process with one
thread)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def no_network(monkeypatch: pytest.MonkeyPatch, what: str) -> Iterator[list]:
    """While the block runs, INET connects raise; yields the refused addresses. `what`
    names the tests in the messages. Call the cleanup of framework state in the block."""
    attempts: list = []
    threads = set(threading.enumerate())
    real = socket.socket.connect

    def refuse(self, address, *args, **kwargs):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError(f"network disabled in the {what} ({address})")
        return real(self, address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield attempts
    assert not attempts, f"a test among the {what} tried the network: {attempts}"
    stray = [t.name for t in set(threading.enumerate()) - threads]
    assert not stray, f"threads left running (conformance/forked then will not fork): {stray}"
