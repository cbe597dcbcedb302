"""The server's forget rule: a forced update of a protected branch that only replaces
secrets by their redaction tokens (`git gasp forget`) is no loss of history.

Allowed only where the server sets ``gasp.allowForget`` and only when the new tip's log
records the forget (a maintenance event naming the fingerprints, `store.forget`): each
line of each append-only file at the old tip must then be, at the same place in the new
file, the same line or that line with secrets replaced by tokens of those fingerprints
(each token checked against the text it replaced: its kind's hash of that text).
"""

from __future__ import annotations

import json
import re

from git_gasp.redact.patterns import TOKEN_RE
from git_gasp.redact.scan import fingerprint
from git_gasp.store.forget import forgotten_fingerprints

__all__ = ["forgotten_fingerprints", "only_forgotten"]


def only_forgotten(old: bytes, new: bytes, fps: set[str]) -> bool:
    """True when `new` is `old` with secrets of `fps` replaced by their tokens, then
    perhaps more lines."""
    old_lines = old.split(b"\n")
    new_lines = new.split(b"\n")
    if len(new_lines) < len(old_lines):
        return False
    for i, (was, now) in enumerate(zip(old_lines, new_lines, strict=False)):
        last = i == len(old_lines) - 1
        if was == now or (last and not was):
            continue
        if not _line_forgot(was.decode("utf-8", "surrogateescape"),
                            now.decode("utf-8", "surrogateescape"), fps):
            return False
    return True


def _line_forgot(was: str, now: str, fps: set[str]) -> bool:
    pattern, tokens, pos = [], [], 0
    for m in TOKEN_RE.finditer(now):
        fp = m.group(0)[len("[REDACTED:"):-1]
        if fp not in fps:
            continue
        pattern.append(re.escape(now[pos:m.start()]))
        pattern.append("(.+?)")
        tokens.append(fp)
        pos = m.end()
    if not tokens:
        return False
    pattern.append(re.escape(now[pos:]))
    m = re.fullmatch("".join(pattern), was, re.S)
    if m is None:
        return False
    for text, fp in zip(m.groups(), tokens, strict=True):
        kind = fp.rsplit(":", 1)[0]
        if fingerprint(kind, text) != fp and fingerprint(kind, _unescaped(text)) != fp:
            return False
    return True


def _unescaped(text: str) -> str:
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return text
    return value if isinstance(value, str) else text
