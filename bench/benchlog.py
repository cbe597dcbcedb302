"""Synthetic event lines shared by the benchmarks (run as `python bench/<script>.py`)."""

from __future__ import annotations


def event(n: int) -> bytes:
    """One canonical-looking event line of about 250 bytes."""
    return (
        b'{"id":"event_%08d-6d1c-4f5e-9a7b-3c2d1e0f%04d","schema_version":1,"ts_ms":%d,'
        b'"actor":{"kind":"agent","id":"bench"},"kind":"observation.created",'
        b'"payload":{"id":"obs_%d","summary":"benchmark observation number %d","tags":[]},'
        b'"causation_id":null,"correlation_id":"run_bench"}\n'
        % (n, n % 10000, 1739000000000 + n, n, n)
    )
