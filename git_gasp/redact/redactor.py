"""Secrets redaction: applied to everything an adapter writes, before it is written.

Events are immutable and clone with the repo, so a secret that reaches the log is
permanent (spec Part V). Every string an adapter takes from an agent's transcript or
hook payload goes through :func:`redact` first.

What is replaced, each by ``[REDACTED:<kind>:<hash8>]`` where ``hash8`` is the first
8 hex digits of the SHA-256 of the secret (stable: the same secret always gives the
same token, so a reader can still tell two uses of one key apart from two keys):

- ``<private>…</private>`` spans are dropped entirely (an unclosed ``<private>``
  drops the rest of the string);
- PEM / OpenSSH / PGP private key blocks (``private_key``);
- vendor keys and tokens by their documented shape: Anthropic ``sk-ant-…``, OpenAI
  ``sk-…``/``sk-proj-…``, AWS ``AKIA…``/``ASIA…``, Google ``AIza…``, ``ya29.…``,
  ``GOCSPX-…``, GitHub ``ghp_/gho_/ghs_/ghu_/ghr_…``/``github_pat_…``, GitLab
  ``glpat-…`` (and ``gldt-``, ``glrt-``…), Slack ``xox?-…``/``xapp-…``, Stripe
  ``sk_live_``/``rk_live_``/``whsec_…``, npm, PyPI, Hugging Face, SendGrid and
  Discord bot tokens, JSON web tokens (kinds ``anthropic_key``, ``openai_key``,
  ``aws_access_key``, ``github_token``, ``slack_token``, ``jwt``…);
- Slack and Discord webhook URLs (the whole secret path: ``slack_webhook``,
  ``discord_webhook``); passwords in URLs, empty user too (``redis://:pw@host``,
  ``url_password``);
- ``Authorization:`` / ``Proxy-Authorization:`` values of any scheme, and bare
  ``Bearer``/``Basic`` credentials that are not plain words (``bearer``);
- CLI password flags: ``--password x``, ``--token=x``, ``--api-key x``…, ``-u
  user:pass`` / ``--user user:pass`` (the part after the colon; not ``uid:gid``),
  ``mysql … -pSECRET``, ``sshpass -p x``, ``docker login -p x``, ``redis-cli -a x``
  (``password``, ``token``…);
- assignments whose name ends in a secret word — ``password=…``, ``API_KEY: "…"``,
  ``client_secret=…``, ``DB_PASS=…``, ``AccountKey=…``, ``Pwd=…;``, ``?sig=…``
  (kind ``password``, ``secret``, ``api_key`` or ``token``): the name is kept, the
  value replaced; after ``:`` every word to the end of the value (``password:
  correct horse battery staple``); placeholders, types and references (``None``,
  ``str``, ``$VAR``, ``os.environ[…]``, ``self.token``, ``get_token()``) are kept;
- JSON object members whose key names a secret (same kinds), whole value;
- high-entropy tokens (``high_entropy``): at least 20 characters of
  ``[A-Za-z0-9+/_-]`` (plus ``=`` padding), letters and digits (or mixed case with
  frequent changes of case), and a Shannon entropy of at least
  ``min(4.0, 0.85 * log2(len))`` bits per character; a token with ``/`` in it (an AWS
  secret key) is judged whole, without the segments that read as a path's. Exempt,
  because agent transcripts are full of them and they are not secrets: pure hex (git
  SHAs, SHA-256 digests), UUIDs, ``prefix_<hex or uuid>`` identifiers (``toolu_…``,
  ``msg_…``, ``call_…``, ``event_…``), camelCase and snake_case names made of words,
  paths, and values of JSON members whose key names an id or hash (``id``, ``uuid``,
  ``parentUuid``, ``tool_use_id``, ``sha256``…), which only the explicit patterns
  above apply to.

Time is linear in the input, whatever the input (the detectors and the rules that
keep them linear are in ``patterns.py``; ``bench/bench_redact.py`` measures
it on adversarial text).
Redaction is idempotent: redacting redacted text changes nothing. Also here: `summarize`,
outside text (or JSON) cut to a stored summary's length, before it is redacted.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from hashlib import sha256
from typing import Any

from git_gasp.redact import patterns as P
from git_gasp.redact.patterns import (
    TOKEN_PREFIX,
    looks_high_entropy,
    shannon_entropy,
)

__all__ = ["TOKEN_PREFIX", "Redactor", "is_redacted", "looks_high_entropy", "redact",
           "redact_field", "redact_text", "shannon_entropy", "summarize", "token_for"]

SUMMARY_LIMIT = 500  # a stored summary of outside text (a tool's input or output)


def token_for(kind: str, secret: str) -> str:
    """The stable replacement for `secret`."""
    digest = sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"[REDACTED:{kind}:{digest}]"


class Redactor:
    """Redacts strings and JSON values, counting what it replaced by kind."""

    def __init__(self, *, entropy: bool = True, keep: bool = False) -> None:
        self.entropy = entropy
        self.counts: Counter[str] = Counter()
        # with `keep`: (kind, secret) of each replacement, in order (what `scan` reports)
        self.found: list[tuple[str, str]] | None = [] if keep else None
        self._ctx: dict = {}  # per-text positions of command words (_command_before)

    # -- strings ---------------------------------------------------------------------
    def text(self, text: str, *, entropy: bool | None = None) -> str:
        """`text` with private spans dropped and secrets replaced (linear time)."""
        if not text:
            return text
        use_entropy = self.entropy if entropy is None else entropy
        if "<private>" in text.lower():
            text, n = P.PRIVATE_SPAN.subn("", text)
            self.counts["private"] += n
        if "-----BEGIN" in text:
            text = P.PEM.sub(lambda m: self._token("private_key", m.group(0)), text)
        text = P.VENDOR.sub(self._sub_vendor, text)
        if "hooks.slack.com" in text or "/api/webhooks/" in text:
            text = P.WEBHOOK.sub(self._sub_webhook, text)
        if "://" in text:
            text = P.URL_PASSWORD.sub(lambda m: self._sub_group("url_password", m), text)
        text = P.AUTH_HEADER.sub(lambda m: self._sub_group("bearer", m), text)
        text = P.BEARER.sub(self._sub_bearer, text)
        if "-" in text:
            text = P.LONG_FLAG.sub(self._sub_flag, text)
            text = P.SHORT_FLAG_ATTACHED.sub(self._sub_flag, text)
        text = self._assignments(text)
        if use_entropy:
            text = P.CANDIDATE.sub(self._sub_entropy, text)
        if "…" in text:
            text = P.CUT_BEFORE.sub(self._sub_cut, text)
            text = P.CUT_AFTER.sub(self._sub_cut, text)
        return text

    def _token(self, kind: str, secret: str) -> str:
        self.counts[kind] += 1
        if self.found is not None:
            self.found.append((kind, secret))
        return token_for(kind, secret)

    def _replace(self, m: re.Match[str], group: str, kind: str, secret: str | None = None,
                 offset: int = 0) -> str:
        """The match with group `group` (or its part from `offset`) replaced by a token."""
        start, end = m.span(group)
        start += offset
        value = m.string[start:end] if secret is None else secret
        if not value or TOKEN_PREFIX in value:
            return m.group(0)
        base = m.start()
        whole = m.group(0)
        return whole[: start - base] + self._token(kind, value) + whole[end - base:]

    def _sub_group(self, kind: str, m: re.Match[str]) -> str:
        if _not_a_value(m.group("s")):
            return m.group(0)  # Authorization: <token>, basic ...
        return self._replace(m, "s", kind)

    def _sub_vendor(self, m: re.Match[str]) -> str:
        value = m.group(0)
        kind = P.vendor_kind(value)
        if kind == "openai_key" and not (any(c.isdigit() for c in value)
                                          and any(c.isupper() for c in value)):
            return value  # "sk-learn-style-words": not a key
        return self._token(kind, value)

    def _sub_webhook(self, m: re.Match[str]) -> str:
        group = "slack" if m.group("slack") is not None else "discord"
        return self._replace(m, group, f"{group}_webhook")

    def _sub_bearer(self, m: re.Match[str]) -> str:
        value = m.group("s")
        digit, upper, lower = P.char_classes(value.rstrip("="))
        # "basic functionality", "Bearer authentication": plain words are not credentials
        if not digit and not (upper and lower and not value[1:].islower()) \
                and not any(c in value for c in "+/=._~-"):
            return m.group(0)
        return self._replace(m, "s", "bearer")

    def _sub_flag(self, m: re.Match[str]) -> str:
        flag = m.group("flag")
        group = next(g for g in ("dq", "sq", "bare")
                     if g in m.re.groupindex and m.group(g) is not None)
        value = m.group(group)
        if m.re is P.SHORT_FLAG_ATTACHED:
            if flag == "p":
                if not _command_before(m, P.ATTACHED_P_COMMANDS, self._ctx):
                    return m.group(0)
                return self._replace(m, group, "password")
            return self._user_pass(m, group, value)
        if P.USER_FLAG.match(flag):
            return self._user_pass(m, group, value)
        if flag == "p" and _command_before(m, P.SEPARATE_P_COMMANDS, self._ctx) or \
                flag == "a" and _command_before(m, P.SEPARATE_A_COMMANDS, self._ctx):
            return self._replace(m, group, "password")
        if len(flag) > 1 and P.SECRET_FLAG.search(flag) and not _not_a_value(value):
            return self._replace(m, group, _assign_kind(flag))
        return m.group(0)

    def _user_pass(self, m: re.Match[str], group: str, value: str) -> str:
        """`-u user:password`: the part after the first colon (not uid:gid numbers)."""
        colon = value.find(":")
        if colon < 0 or colon == len(value) - 1:
            return m.group(0)
        secret = value[colon + 1:]
        if secret.isdigit() and value[:colon].isdigit():
            return m.group(0)
        return self._replace(m, group, "password", offset=colon + 1)

    def _sub_assign(self, m: re.Match[str]) -> str:
        if m.group("tok") is not None:
            return m.group(0)
        group = m.lastgroup or ""  # the value's group closes last
        value = m.group(group)
        if _not_a_value(value):
            return m.group(0)
        if len(value) < 3:
            return m.group(0)  # jsonnet_token = r'…', token: x
        word = _word(m)
        if group == "bare" and " " in m.group("eq") and P.CODE_NAME.fullmatch(value):
            return m.group(0)  # token = Error, password = parsed.auth_decoded
        if group == "multi" and P.TYPE_NAME.fullmatch(value):
            return m.group(0)  # shrink_pass: ShrinkPass
        if m.string.rfind(":param ", max(0, m.start() - 60), m.start()) >= 0 or \
                m.string.rfind(":type ", max(0, m.start() - 60), m.start()) >= 0:
            return m.group(0)  # a docstring's :param password: …
        if group in ("multi", "bare"):
            nxt = m.string[m.end():m.end() + 1]
            if nxt in ("(", "[") or value.lower().rstrip("_").endswith(word.lower()):
                return m.group(0)  # code: get_token(...), os.environ[...], key_password
            if group == "bare" and P.EXPRESSION_AFTER.match(m.string, m.end()):
                return m.group(0)  # code: secret = base / "name"
            if group == "multi" and value[0] in "=:":
                return m.group(0)  # token := ..., token: = ...
        return self._replace(m, group, _assign_kind(word))

    def _assignments(self, text: str) -> str:
        """ASSIGN over `text`, tried only where ASSIGN_REVERSED (run on the reversed
        text, so it skips ahead to each ':' or '=') says a secret word ends before an
        operator; existing tokens are skipped. Same result as ``ASSIGN.sub``."""
        if "=" not in text and ":" not in text:
            return text
        n = len(text)
        starts = [n - m.end() for m in P.ASSIGN_REVERSED.finditer(text[::-1])]
        if not starts:
            return text
        starts.reverse()
        tokens = ([t.span() for t in P.TOKEN_RE.finditer(text)]
                  if TOKEN_PREFIX in text else [])
        out: list[str] = []
        done = ti = 0
        for start in starts:
            if start < done:
                continue
            while ti < len(tokens) and tokens[ti][1] <= start:
                ti += 1
            if ti < len(tokens) and tokens[ti][0] <= start:
                continue  # inside an existing token
            m = P.ASSIGN.match(text, start)
            if m is None:
                continue
            out.append(text[done:start])
            out.append(self._sub_assign(m))
            done = m.end()
        if not out:
            return text
        out.append(text[done:])
        return "".join(out)

    def _sub_cut(self, m: re.Match[str]) -> str:
        """A run the ellipsis of a cut touches: replaced when it mixes letters and
        digits or cases the way keys do (a cut word stays)."""
        group = "s" if "s" in m.re.groupindex else 0  # CUT_AFTER (CUT_BEFORE has none)
        value = m.group(group)
        if TOKEN_PREFIX in value or "REDACTED" in value:
            return m.group(0)
        digit, upper, lower = P.char_classes(value)
        if not (digit and (upper or lower)) and not (upper and lower
                                                     and not value[1:].islower()):
            return m.group(0)
        if P.is_identifier(value) or P.NAME.fullmatch(value):
            return m.group(0)
        if group == 0:
            return self._token("truncated", value)
        return self._replace(m, "s", "truncated")

    def _sub_entropy(self, m: re.Match[str]) -> str:
        word = m.group(0)
        if looks_high_entropy(word):
            return self._token("high_entropy", word)
        return word

    # -- JSON values -----------------------------------------------------------------
    def value(self, value: Any) -> Any:
        """A copy of JSON `value` with every string redacted, object keys too (an
        object's key is judged by what it was: a key naming an id keeps its value out of
        entropy detection, one naming a secret has its value replaced; iterative, any
        depth)."""
        root: list[Any] = [None]
        # (container, slot, source value, entropy allowed, the secret's key or None)
        stack: list[tuple[Any, Any, Any, bool, str | None]] = [(root, 0, value, True, None)]
        while stack:
            parent, slot, src, use_entropy, secret_key = stack.pop()
            if isinstance(src, str):
                if secret_key is not None and src and TOKEN_PREFIX not in src:
                    parent[slot] = self._token(_assign_kind(secret_key), src)
                else:
                    parent[slot] = self.text(src, entropy=use_entropy and self.entropy)
            elif isinstance(src, dict):
                out: dict = {}
                parent[slot] = out
                for k, v in src.items():
                    ks = k if isinstance(k, str) else str(k)
                    entropy, secret = _key_rules(ks)
                    nk = self.text(k) if isinstance(k, str) else k
                    out[nk] = None
                    stack.append((out, nk, v, entropy, ks if secret else None))
            elif isinstance(src, list):
                lst: list = [None] * len(src)
                parent[slot] = lst
                for i, v in enumerate(src):
                    stack.append((lst, i, v, use_entropy, None))
            else:
                parent[slot] = src
        return root[0]

    def field(self, key: str, value: str) -> str:
        """One string taken from outside as the field `key` (a session id, a tool or model
        name, a path, an attribute key…), redacted by the rule a JSON member of that name
        gets in :meth:`value`: a key that names a secret (``token``, ``password``…) has
        its whole value replaced; a key that names an id or hash (``session_id``,
        ``tool_use_id``, ``trace_id``…) gets the explicit patterns only, since ids are
        random by design; any other key the whole of :meth:`text`.

        Deterministic: the same value under the same key always gives the same string
        (each token hashes the secret it replaces), so an id that must find its run again
        (a session id, run id, record key) still does after redaction, whichever path
        (hook payload, transcript, trace) it came in by."""
        entropy, secret = _key_rules(key)
        if secret and value and TOKEN_PREFIX not in value:
            return self._token(_assign_kind(key), value)
        return self.text(value, entropy=entropy and self.entropy)


def _key_rules(key: object) -> tuple[bool, bool]:
    """(entropy detection applies, the key names a secret) for a value stored under
    `key`: an id or hash is exempt from entropy detection, a secret's name redacts the
    whole value."""
    ks = key if isinstance(key, str) else str(key)
    return P.ID_KEY.search(ks) is None, P.SECRET_KEY.match(ks) is not None


def _word(m: re.Match[str]) -> str:
    """The secret word an ASSIGN match starts with."""
    return m.string[m.start():m.start("colon") if m.group("colon") is not None
                    else m.start("eq")].rstrip("\\\"' \t")


def _not_a_value(value: str) -> bool:
    """A placeholder, a type, a reference to a variable: nothing to redact."""
    v = value.strip()
    return (not v or TOKEN_PREFIX in v or v.lower() in P.BARE_LITERALS
            or v.split(None, 1)[0].lower() in P.BARE_LITERALS
            or P.REFERENCE.match(v) is not None)


_SEPARATOR = re.compile(r"[\n;|&]")


def _command_before(m: re.Match[str], command: re.Pattern[str], cache: dict) -> bool:
    """Whether `command` starts the shell command the match is part of (within
    CONTEXT_WINDOW characters). Positions are found once per text (`cache`) and
    looked up by bisection, so a text full of flags stays linear."""
    text = m.string
    key = (id(text), command.pattern)
    if cache.get("text") is not text:
        cache.clear()
        cache["text"] = text
    if key not in cache:
        if "seps" not in cache:
            cache["seps"] = [x.start() for x in _SEPARATOR.finditer(text)]
        cache[key] = [x.end() for x in command.finditer(text)]
    ends, seps = cache[key], cache["seps"]
    pos = m.start()
    j = bisect.bisect_right(ends, pos) - 1
    if j < 0 or pos - ends[j] > P.CONTEXT_WINDOW:
        return False
    k = bisect.bisect_right(seps, pos) - 1
    return k < 0 or seps[k] < ends[j]


_KEY_KIND = re.compile(r"api[_-]?key|apikey|access[_-]?key|private[_-]?key|_key|key$")


def _assign_kind(name: str) -> str:
    low = name.lower()
    if "pass" in low or "pwd" in low:
        return "password"
    if _KEY_KIND.search(low):
        return "api_key"
    if "secret" in low or "credential" in low:
        return "secret"
    return "token"


def redact(value: Any) -> Any:
    """`value` (a string or any JSON value) with secrets redacted."""
    r = Redactor()
    return r.text(value) if isinstance(value, str) else r.value(value)


def redact_field(key: str, value: str) -> str:
    """A string taken from outside as field `key`, redacted (:meth:`Redactor.field`):
    the one function every importer, adapter and bridge routes names and ids through."""
    return Redactor().field(key, value)


def redact_text(text: str) -> str:
    """One string with private spans dropped and secrets redacted."""
    return Redactor().text(text)


def is_redacted(text: str) -> bool:
    """True when `text` holds at least one redaction token."""
    return P.TOKEN_RE.search(text) is not None


def summarize(value: Any, limit: int = SUMMARY_LIMIT) -> str:
    """`value` as text (JSON with sorted keys unless a string), cut to `limit` with "…"."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True,
                                                           ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
