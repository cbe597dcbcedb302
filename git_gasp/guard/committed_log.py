"""The committed log's index now lives in ``git_gasp.conformance.committed_log`` (one
home with the checks' saved log state); this name stays for the guard's imports."""

from __future__ import annotations

from git_gasp.conformance.committed_log import LINE_MASK, MAX_LINES, CommittedLog, TooLarge

__all__ = ["LINE_MASK", "MAX_LINES", "CommittedLog", "TooLarge"]
