"""Dates as `git log --since` takes them (the common forms of git's approxidate):
``2026-12-01``, ``2026-12-01 14:30[:05]``, ISO 8601 with ``T``, ``Z`` or an offset,
``@1764600000`` (epoch seconds), ``now``, ``today``, ``yesterday``, and ``N unit[s]
ago`` with spaces or dots (``2.weeks.ago``), units second, minute, hour, day, week,
month (30 days), year (365 days). A time without a zone is local, as in git."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta

_AGO = re.compile(r"(\d+)[ .]+(second|minute|hour|day|week|month|year)s?[ .]+ago")
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400,
          "month": 30 * 86400, "year": 365 * 86400}


def parse_date(text: str, now: datetime | None = None) -> int | None:
    """Epoch milliseconds `text` names, or None when it is no date this reads."""
    now = now or datetime.now().astimezone()
    t = text.strip().lower()
    if t == "now":
        return _ms(now)
    if t in ("today", "yesterday"):
        day = now.date() - timedelta(days=t == "yesterday")
        return _ms(datetime.combine(day, time(), now.tzinfo))
    if t.startswith("@") and t[1:].isdigit():
        return int(t[1:]) * 1000
    m = _AGO.fullmatch(t)
    if m:
        return _ms(now - timedelta(seconds=int(m.group(1)) * _UNITS[m.group(2)]))
    iso = text.strip().replace(" ", "T", 1)
    if iso.endswith(("Z", "z")):
        iso = iso[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.astimezone()  # local time, as git reads a date without a zone
    return _ms(when)


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)
