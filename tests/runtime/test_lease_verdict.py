"""`git gasp doctor` and a writer read `.agent/lease` with the same parser, so they
give the same verdict on it (store.lease.parse_lease is the one parser)."""

from __future__ import annotations

import json

import pytest

from tests.runtime.helpers import one_error_line
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute

FUTURE = 2**62


def _lease(agent, record: dict) -> bytes:
    data = json.dumps(record).encode()
    (agent / ".agent" / "lease").write_bytes(data)
    return data


def _doctor_lease_line(agent) -> tuple[int, str]:
    proc = gasp(agent, "doctor")
    lines = [ln for ln in out(proc).splitlines()
             if ln[:1].isalpha() and ".agent/lease" in ln and "gitignored" not in ln]
    assert len(lines) == 1, out(proc)
    return proc.returncode, lines[0]


def test_an_empty_worker_id_is_corrupt_to_doctor_and_to_a_writer(agent):
    data = _lease(agent, {"worker_id": "", "pid": 1, "expires_at_ms": FUTURE})
    code, line = _doctor_lease_line(agent)
    assert code == 1 and line.startswith("error") and "corrupt" in line, line
    proc = gasp(agent, "record", "goal", "--title", "x")
    assert "corrupt" in one_error_line(proc)
    assert (agent / ".agent" / "lease").read_bytes() == data  # refused, never overwritten


@pytest.mark.parametrize("record, doctor_level, writer_word", [
    ({"worker_id": "other@host", "pid": 1, "expires_at_ms": FUTURE}, "ok", "held by"),
    ({"worker_id": "w", "pid": True, "expires_at_ms": FUTURE}, "error", "corrupt"),
    ({"worker_id": "w", "pid": 1, "expires_at_ms": FUTURE, "x": 1}, "error", "corrupt"),
])
def test_doctor_and_writer_agree(agent, monkeypatch, record, doctor_level, writer_word):
    monkeypatch.setenv("GASP_WORKER_ID", "me@here")
    _lease(agent, record)
    _code, line = _doctor_lease_line(agent)
    assert line.startswith(doctor_level), line
    proc = gasp(agent, "record", "goal", "--title", "x")
    assert writer_word in one_error_line(proc)
