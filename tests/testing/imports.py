"""What a run imported, read from ``python -X importtime`` (or ``PYTHONPROFILEIMPORTTIME=1``)
on its stderr."""

from __future__ import annotations


def imported(stderr: str | bytes) -> list[str]:
    """The modules the run imported, in the order their imports ended."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    return [line.rsplit("|", 1)[1].strip() for line in text.splitlines()
            if line.startswith("import time:") and "|" in line
            and not line.rstrip().endswith("imported package")]
