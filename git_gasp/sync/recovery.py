"""Where `git gasp sync` puts the local work when it gives up:
``refs/gasp/recovery/<agent>/<run-or-time>`` on the remote.

``<agent>`` is the manifest's ``agent_id`` (AGENT.md; ``unknown`` without one);
``<run-or-time>`` the ``Run-Id`` trailer of the newest local commit that has one
(`git gasp commit-run` and the live hook's boundary commit write it), else the UTC
time (``20261202T011502.123456Z``). Pushed without force: when that ref already holds
something the local work does not extend, the time is appended to the name.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from git_gasp.base import git
from git_gasp.protocol.manifest import ManifestError, parse_manifest
from git_gasp.store.agentfs import AgentFileError, read_regular

PREFIX = "refs/gasp/recovery/"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def utc_stamp(now: float | None = None) -> str:
    """The current UTC time as a ref name part, microseconds included."""
    t = time.time() if now is None else now
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


def ref_part(text: str) -> str:
    """`text` made safe as one component of a ref name (`git check-ref-format`: no
    unsafe characters, no leading dot, no ``..``, no ``.lock`` ending — however often
    it repeats — at most 200 characters, and not empty)."""
    part = re.sub(r"\.{2,}", ".", _UNSAFE.sub("-", text))[:200]
    while True:
        cut = part.strip(".-")
        while cut.endswith(".lock"):
            cut = cut[: -len(".lock")]
        if cut == part:
            return part or "unknown"
        part = cut


def agent_id(agent_root: Path) -> str:
    """The manifest's agent id, or ``unknown``."""
    try:
        return parse_manifest(read_regular(agent_root, "AGENT.md")).agent_id
    except (AgentFileError, ManifestError, OSError):
        return "unknown"


def local_run(top: Path, tip: str, base: str | None) -> str | None:
    """The Run-Id trailer of the newest commit of `base`..`tip` that has one."""
    proc = git.run(top, "log", "--format=%(trailers:key=Run-Id,valueonly,separator=%x00)",
                   tip, *(("--not", base) if base else ()), check=False)
    if proc.returncode != 0:
        return None
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        value = line.split("\0", 1)[0].strip()
        if value:
            return value
    return None


def recovery_ref(agent_root: Path, top: Path, tip: str, base: str | None,
                 now: float | None = None) -> str:
    """The recovery ref for the local work `tip` (not on the remote's `base`)."""
    run = local_run(top, tip, base)
    last = ref_part(run) if run else utc_stamp(now)
    return f"{PREFIX}{ref_part(agent_id(agent_root))}/{last}"
