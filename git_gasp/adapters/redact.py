"""Secrets redaction: applied to everything an adapter writes, before it is written.

Events are immutable and clone with the repo, so a secret that reaches the log is
permanent (spec Part V). Every string an adapter takes from an agent's transcript or
hook payload goes through :func:`redact` first.

What is replaced, each by ``[REDACTED:<kind>:<hash8>]`` where ``hash8`` is the first
8 hex digits of the SHA-256 of the secret (stable: the same secret always gives the
same token, so a reader can still tell two uses of one key apart from two keys):

- ``<private>…</private>`` spans are dropped entirely (an unclosed ``<private>``
  drops the rest of the string);
- PEM private key blocks (``private_key``);
- vendor API keys and tokens by their documented shape: Anthropic ``sk-ant-…``
  (``anthropic_key``), OpenAI ``sk-…`` (``openai_key``), AWS ``AKIA…``/``ASIA…``
  (``aws_access_key``), GitHub ``ghp_…``/``gho_…``/``github_pat_…``
  (``github_token``), Slack ``xox?-…`` (``slack_token``), Google ``AIza…``
  (``google_api_key``), JSON web tokens (``jwt``);
- ``Bearer``/``Basic`` credentials (``bearer``), passwords in URLs
  (``url_password``);
- assignments whose name says secret — ``password=…``, ``API_KEY: "…"``,
  ``client_secret=…``, ``token=…`` (kind ``password``, ``secret``, ``api_key`` or
  ``token``); the name is kept, the value replaced;
- JSON object members whose key names a secret (same kinds), whole value;
- high-entropy tokens (``high_entropy``): at least 20 characters of
  ``[A-Za-z0-9+/=_-]``, both letters and digits, and a Shannon entropy of at least
  ``min(4.0, 0.85 * log2(len))`` bits per character. Exempt, because agent
  transcripts are full of them and they are not secrets: pure hex (git SHAs,
  SHA-256 digests), UUIDs, ``prefix_<hex or uuid>`` identifiers (``toolu_…``,
  ``msg_…``, ``call_…``, ``event_…``), paths whose segments are ordinary words, and
  values of JSON members whose key names an id or hash (``id``, ``uuid``,
  ``parentUuid``, ``tool_use_id``, ``sha256``…), which only the explicit patterns
  above apply to.

Redaction is idempotent: redacting redacted text changes nothing.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from typing import Any

TOKEN_PREFIX = "[REDACTED:"
_TOKEN_RE = re.compile(r"\[REDACTED:[a-z_]+:[0-9a-f]{8}\]")

_PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.S | re.I)
_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?"
    r"(?:-----END \1-----|\Z)",
    re.S,
)

# (kind, pattern); group "s" (when present) is the secret, else the whole match.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("anthropic_key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{16,}")),
    (
        "openai_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ),
    ("aws_access_key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("github_token", re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}")),
    ("github_token", re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}")),
    ("slack_token", re.compile(r"(?<![A-Za-z0-9_-])xox[abposre]-[A-Za-z0-9-]{10,}")),
    ("google_api_key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}")),
    (
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    (
        "bearer",
        re.compile(r"(?i)\b(?:bearer|basic)[ \t]+(?P<s>[A-Za-z0-9._~+/-]{8,}=*)"),
    ),
    (
        "url_password",
        re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<s>[^\s@/]{3,})@"),
    ),
]

_SECRET_WORD = (
    r"password|passwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|"
    r"refresh[_-]?token|token|credentials?"
)
# NAME op VALUE; NAME contains a secret word; VALUE quoted, or bare up to a delimiter.
_ASSIGN = re.compile(
    r"(?i)(?P<name>\b[A-Za-z0-9_.-]*?(?:" + _SECRET_WORD + r"))"
    r"(?P<op>[\"']?[ \t]*(?:=|:)[ \t]*)"
    r"(?:\"(?P<dq>[^\"\n]{3,})\"|'(?P<sq>[^'\n]{3,})'|"
    r"(?P<bare>[A-Za-z0-9_+/=!@#%^*~.\-]{3,})(?=$|[\s\"',;&)}\]]))"
)
_BARE_LITERALS = frozenset(
    {"none", "null", "nil", "true", "false", "undefined", "required", "optional",
     "string", "str", "bytes", "int", "bool", "any", "redacted", "xxx", "xxxx", "****",
     "changeme", "secret", "password", "token", "example", "placeholder"}
)
_SECRET_KEY = re.compile(
    r"(?i)^(?:.*[_-])?(?:password|passwd|passphrase|secret|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|client[_-]?secret|token|access[_-]?token|"
    r"auth[_-]?token|refresh[_-]?token|authorization|credentials?)$"
)
_ID_KEY = re.compile(
    r"(?i)(?:^|[_-]|[a-z])(?:id|uuid|ids|hash|digest|sha|sha1|sha256|ref|signature)$|^id$"
)

_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{20,}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_PREFIXED_ID = re.compile(r"^[A-Za-z]+(?:[_-][A-Za-z]+)*[_-](?P<body>[0-9a-fA-F-]+)$")


def token_for(kind: str, secret: str) -> str:
    """The stable replacement for `secret`."""
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"[REDACTED:{kind}:{digest}]"


def shannon_entropy(text: str) -> float:
    """Bits per character of `text` (0.0 for an empty string)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _is_identifier(word: str) -> bool:
    """A hash, uuid or `prefix_<hex>` id: common in transcripts, never a secret."""
    stripped = word.strip("-_=")
    if _HEX.match(stripped) or _UUID.match(stripped):
        return True
    m = _PREFIXED_ID.match(stripped)
    if m:
        body = m.group("body").replace("-", "")
        return bool(body) and _HEX.match(body) is not None and len(body) >= 8
    return False


def _segment_is_secret(seg: str) -> bool:
    if len(seg) < 20 or _is_identifier(seg):
        return False
    if not re.search(r"[0-9]", seg) or not re.search(r"[A-Za-z]", seg):
        return False
    return shannon_entropy(seg) >= min(4.0, 0.85 * math.log2(len(seg)))


def looks_high_entropy(word: str) -> bool:
    """True when `word` (one candidate token) is a likely secret by the entropy rule."""
    if "/" in word:
        # Paths: judge each segment; base64 with '/' still has long random segments.
        return any(_segment_is_secret(seg) for seg in word.split("/"))
    return _segment_is_secret(word)


class Redactor:
    """Redacts strings and JSON values, counting what it replaced by kind."""

    def __init__(self, *, entropy: bool = True) -> None:
        self.entropy = entropy
        self.counts: Counter[str] = Counter()

    # -- strings ---------------------------------------------------------------------
    def text(self, text: str, *, entropy: bool | None = None) -> str:
        """`text` with private spans dropped and secrets replaced."""
        if not text:
            return text
        use_entropy = self.entropy if entropy is None else entropy
        if "<private>" in text.lower():
            text, n = _PRIVATE_SPAN.subn("", text)
            self.counts["private"] += n
        return _outside_tokens(text, lambda seg: self._text(seg, use_entropy))

    def _text(self, text: str, use_entropy: bool) -> str:
        if "-----BEGIN" in text:
            text = _outside_tokens(
                text, lambda seg: _PEM.sub(lambda m: self._token("private_key", m.group(0)), seg)
            )
        for kind, pattern in _PATTERNS:
            text = _outside_tokens(
                text, lambda seg, k=kind, p=pattern: p.sub(lambda m: self._sub_group(k, m), seg)
            )
        text = _outside_tokens(text, lambda seg: _ASSIGN.sub(self._sub_assign, seg))
        if use_entropy:
            text = _outside_tokens(text, lambda seg: _CANDIDATE.sub(self._sub_entropy, seg))
        return text

    def _token(self, kind: str, secret: str) -> str:
        self.counts[kind] += 1
        return token_for(kind, secret)

    def _sub_group(self, kind: str, m: re.Match[str]) -> str:
        if "s" in m.re.groupindex:
            secret = m.group("s")
            if secret.startswith(TOKEN_PREFIX):
                return m.group(0)
            start, end = m.span("s")
            whole = m.group(0)
            base = m.start()
            return whole[: start - base] + self._token(kind, secret) + whole[end - base:]
        return self._token(kind, m.group(0))

    def _sub_assign(self, m: re.Match[str]) -> str:
        for group in ("dq", "sq", "bare"):
            value = m.group(group)
            if value is not None:
                break
        else:  # pragma: no cover - the regex always sets one
            return m.group(0)
        if TOKEN_PREFIX in value or value.lower() in _BARE_LITERALS:
            return m.group(0)
        if group == "bare" and (value.startswith("$") or set(value) <= {"*", "x", "X", "."}):
            return m.group(0)
        kind = _assign_kind(m.group("name"))
        whole = m.group(0)
        base = m.start()
        start, end = m.span(group)
        return whole[: start - base] + self._token(kind, value) + whole[end - base:]

    def _sub_entropy(self, m: re.Match[str]) -> str:
        word = m.group(0)
        if looks_high_entropy(word):
            return self._token("high_entropy", word)
        return word

    # -- JSON values -----------------------------------------------------------------
    def value(self, value: Any) -> Any:
        """A copy of JSON `value` with every string redacted (iterative, any depth)."""
        root: list[Any] = [None]
        # (container, key, source value, entropy allowed, key names a secret)
        stack: list[tuple[Any, Any, Any, bool, bool]] = [(root, 0, value, True, False)]
        while stack:
            parent, key, src, use_entropy, secret_key = stack.pop()
            if isinstance(src, str):
                if secret_key and src and TOKEN_PREFIX not in src:
                    parent[key] = self._token(_assign_kind(str(key)), src)
                else:
                    parent[key] = self.text(src, entropy=use_entropy and self.entropy)
            elif isinstance(src, dict):
                out: dict = {}
                parent[key] = out
                for k, v in src.items():
                    ks = k if isinstance(k, str) else str(k)
                    out[k] = None
                    stack.append(
                        (out, k, v, _ID_KEY.search(ks) is None, _SECRET_KEY.match(ks) is not None)
                    )
            elif isinstance(src, list):
                lst: list = [None] * len(src)
                parent[key] = lst
                for i, v in enumerate(src):
                    stack.append((lst, i, v, use_entropy, False))
            else:
                parent[key] = src
        return root[0]


def _outside_tokens(text: str, fn) -> str:
    """Apply `fn` to the parts of `text` between existing redaction tokens."""
    if TOKEN_PREFIX not in text:
        return fn(text) if text else text
    parts = _TOKEN_RE.split(text)
    tokens = _TOKEN_RE.findall(text)
    out = [fn(parts[0]) if parts[0] else ""]
    for tok, part in zip(tokens, parts[1:], strict=True):
        out.append(tok)
        out.append(fn(part) if part else "")
    return "".join(out)


def _assign_kind(name: str) -> str:
    low = name.lower()
    if "pass" in low:
        return "password"
    if re.search(r"api[_-]?key|apikey|access[_-]?key|private[_-]?key", low):
        return "api_key"
    if "secret" in low or "credential" in low:
        return "secret"
    return "token"


def redact(value: Any) -> Any:
    """`value` (a string or any JSON value) with secrets redacted."""
    r = Redactor()
    return r.text(value) if isinstance(value, str) else r.value(value)


def redact_text(text: str) -> str:
    """One string with private spans dropped and secrets redacted."""
    return Redactor().text(text)


def is_redacted(text: str) -> bool:
    """True when `text` holds at least one redaction token."""
    return _TOKEN_RE.search(text) is not None
