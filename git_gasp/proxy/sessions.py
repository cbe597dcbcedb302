"""Which agent session a model call belongs to: the session header the client sends,
else the calls that come without one grouped by an idle gap."""

from __future__ import annotations

import secrets
import time

IDLE_S = 600.0  # a header-less session ends after this long without a model call


def new_session_id(at: float) -> str:
    """``<UTC time>-<random>``: unique, and sorting by start."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(at)) + "-" + secrets.token_hex(4)


class SessionTracker:
    """Session ids for model calls, and the sessions an idle gap has ended."""

    def __init__(self, idle_s: float = IDLE_S) -> None:
        self.idle_s = idle_s
        self.last_seen: dict[str, float] = {}
        self.anonymous: str | None = None  # the open session of header-less calls

    def session_for(self, header: str | None, at: float) -> str:
        """The session of a call started at `at` that sent session header `header`."""
        if header and header.strip():
            sid = header.strip()[:200]
        else:
            sid = self.anonymous
            if sid is None or at - self.last_seen.get(sid, at) > self.idle_s:
                sid = self.anonymous = new_session_id(at)
        self.last_seen[sid] = max(at, self.last_seen.get(sid, at))
        return sid

    def idle(self, now: float) -> list[str]:
        """The sessions with no call for longer than the idle gap (forgotten here)."""
        done = [s for s, t in self.last_seen.items() if now - t > self.idle_s]
        for sid in done:
            del self.last_seen[sid]
            if sid == self.anonymous:
                self.anonymous = None
        return done

    def all(self) -> list[str]:
        """Every open session (forgotten here): the proxy is stopping."""
        done = list(self.last_seen)
        self.last_seen.clear()
        self.anonymous = None
        return done
