"""The cache of committed-log indexes now lives in ``git_gasp.conformance.index_cache``
(one home with the checks' saved log state); this name stays for the guard's imports."""

from __future__ import annotations

from git_gasp.conformance.index_cache import CommittedLogCache, rules_key

__all__ = ["CommittedLogCache", "rules_key"]
