"""Dates as `git log --since` takes them (the common forms of git's approxidate):
``2026-12-01``, ``2026-12-01 14:30[:05]``, ISO 8601 with ``T``, ``Z`` or an offset,
``@1764600000`` (epoch seconds), ``now``, ``today``, ``yesterday``, and ``N unit[s]
ago`` with spaces or dots (``2.weeks.ago``), units second, minute, hour, day, week,
month (30 days), year (365 days). A time without a zone is local, as in git."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta

from git_gasp.base.errors import UsageError
from git_gasp.store.logview import event_index

_AGO = re.compile(r"(\d+)[ .]+(second|minute|hour|day|week|month|year)s?[ .]+ago")
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400,
          "month": 30 * 86400, "year": 365 * 86400}


MAX_DIGITS = 18  # epoch milliseconds or seconds longer than this name no time at all


def event_bound(events: list, option: str, text: str) -> tuple[int | None, int | None]:
    """Where ``--since``/``--until TEXT`` falls among `events`: (the index of the event
    it names, None), or (None, epoch milliseconds) for a number of them or a date; a
    UsageError naming `option` for anything else (a 5,000-digit number included)."""
    idx = event_index(events, text)
    if idx is not None:
        return idx, None
    return None, date_ms(option, text, "an event id, ")


def date_ms(option: str, text: str, also: str = "") -> int:
    """``--since``/``--until TEXT`` as epoch milliseconds: a number of them, or a date
    `parse_date` reads; else a UsageError naming `option` (and `also`, what else the
    option takes), a 5,000-digit number included."""
    when = (int(text) if len(text) <= MAX_DIGITS else None) if text.isdigit() \
        else parse_date(text)
    if when is None:
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise UsageError(f"{option} {shown}: neither {also}a date (2026-12-01, "
                         "'2 days ago', yesterday) nor epoch milliseconds")
    return when


def parse_date(text: str, now: datetime | None = None) -> int | None:
    """Epoch milliseconds `text` names, or None when it is no date this reads."""
    try:
        return _parse(text, now)
    except (OverflowError, ValueError):  # '999999999 years ago', a year past 9999
        return None


def _parse(text: str, now: datetime | None) -> int | None:
    now = now or datetime.now().astimezone()
    t = text.strip().lower()
    if t == "now":
        return _ms(now)
    if t in ("today", "yesterday"):
        day = now.date() - timedelta(days=t == "yesterday")
        return _ms(datetime.combine(day, time(), now.tzinfo))
    if t.startswith("@") and t[1:].isdigit() and len(t) <= MAX_DIGITS:
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
