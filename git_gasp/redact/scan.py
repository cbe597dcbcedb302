"""Finding secrets in text with the redactor's own detectors (one set of patterns).

A secret is found where `Redactor` would replace it: the scanner runs the redactor and
reports each replacement as a `Secret` — its kind, the line it is on, and its
fingerprint ``kind:hash8``, the redaction token's own kind and hash (the token is
``[REDACTED:<fingerprint>]``), never the secret itself. So the guard refuses exactly
what the write path would have redacted, in the same linear time, and a line the
runtime wrote (already redacted) yields nothing.

A line that is a JSON object or array (an event, a fact) is scanned as the write path
redacts a payload (`Redactor.value`: a member named like a secret is one, an id or a
hash is spared the entropy rule); any other text as a whole (`Redactor.text`, so a
private key block spanning lines is one secret, reported at its first line).

Also here: the allowlist (`ALLOWLIST_REL`, fingerprints committed in the state for
false positives) and `fingerprint_of`, the fingerprint a literal secret has.
"""

from __future__ import annotations

import json
import re

from git_gasp.base.record import Record
from git_gasp.redact.patterns import TOKEN_PREFIX
from git_gasp.redact.redactor import Redactor, token_for

ALLOWLIST_REL = ".agent/secrets-allow"  # one fingerprint a line, `# why` after it
FINGERPRINT = re.compile(r"[a-z_]+:[0-9a-f]{8}")
_JSON_START = ("{", "[")


class Secret(Record):
    """One secret found: `kind` (the detector), `line` (1-based, in the text scanned),
    `fingerprint` (``kind:hash8``) and `secret` (kept for `forget`; never printed)."""

    FIELDS = ("kind", "line", "fingerprint")  # the secret stays out of repr and ==

    def __init__(self, kind: str, line: int, fingerprint: str, secret: str) -> None:
        self.kind, self.line, self.fingerprint, self.secret = kind, line, fingerprint, secret

    def where(self, path: str) -> str:
        """``path:line: <kind> (fingerprint F)``: what a report prints, no secret."""
        return f"{path}:{self.line}: {self.kind} (fingerprint {self.fingerprint})"


def fingerprint(kind: str, secret: str) -> str:
    """``kind:hash8`` of `secret`: its redaction token without the brackets."""
    return token_for(kind, secret)[len(TOKEN_PREFIX):-1]


def scan_text(text: str, first_line: int = 1) -> list[Secret]:
    """Every secret in `text` (lines numbered from `first_line`), in order of lines."""
    if not text:
        return []
    found: list[Secret] = []
    plain: list[tuple[int, str]] = []  # runs of lines that are not JSON values
    for number, line in enumerate(text.split("\n"), first_line):
        value = _json_value(line)
        if value is None:
            plain.append((number, line))
            continue
        _flush(plain, found)
        redactor = Redactor(keep=True)
        redactor.value(value)
        found += [Secret(k, number, fingerprint(k, s), s) for k, s in redactor.found or ()]
    _flush(plain, found)
    found.sort(key=lambda s: s.line)
    return found


def scan_bytes(data: bytes, first_line: int = 1) -> list[Secret]:
    """`scan_text` of `data` decoded as UTF-8 (bad bytes replaced)."""
    return scan_text(data.decode("utf-8", "replace"), first_line)


def _flush(plain: list[tuple[int, str]], found: list[Secret]) -> None:
    """Scan the run of plain lines `plain` as one text (then empty it)."""
    if not plain:
        return
    start = plain[0][0]
    text = "\n".join(line for _n, line in plain)
    plain.clear()
    redactor = Redactor(keep=True)
    redactor.text(text)
    cursor = 0
    for kind, secret in redactor.found or ():
        at = text.find(secret, cursor)
        if at < 0:
            at = text.find(secret)
        line = start + (text.count("\n", 0, at) if at >= 0 else 0)
        found.append(Secret(kind, line, fingerprint(kind, secret), secret))


def _json_value(line: str) -> object | None:
    stripped = line.strip()
    if not stripped.startswith(_JSON_START):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def fingerprint_of(secret: str) -> str:
    """The fingerprint the redactor gives the literal `secret` when it detects it whole
    (its own kind), else ``secret:hash8`` (a string no detector names)."""
    redactor = Redactor(keep=True)
    redactor.text(secret)
    for kind, found in redactor.found or ():
        if found == secret:
            return fingerprint(kind, secret)
    return fingerprint("secret", secret)


def parse_allowlist(data: bytes) -> set[str]:
    """The fingerprints of an allowlist file: one per line, ``#`` starts a comment;
    anything else on a line is ignored (a typo allows nothing)."""
    out: set[str] = set()
    for raw in data.decode("utf-8", "replace").splitlines():
        head = raw.split("#", 1)[0].strip()
        if FINGERPRINT.fullmatch(head):
            out.add(head)
    return out
