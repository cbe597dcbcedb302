"""The detectors of ``redactor.py``: compiled patterns and the entropy rule, all linear.

Every pattern here runs in time linear in its input, whatever the input (proved by
``bench/bench_redact.py`` on adversarial text). The rules that keep them so:

- a run of a character class starts only where the class starts (a lookbehind on the
  same class, or a literal anchor that cannot recur inside the run), so one run is
  scanned from one place, not from each of its characters;
- runs are possessive (``++``, ``*+``) or bounded, and what follows a run cannot also
  be matched by it, so a failed attempt never backtracks through the run;
- a pattern matches the whole shape and the decision "secret or not" is taken by the
  caller on the match (``re.sub`` then resumes after it): a long run is scanned once
  even when it turns out not to be a secret;
- context checks (``mysql -p…``) look back a bounded window, never the whole text.
"""

from __future__ import annotations

import math
import re
from collections import Counter

TOKEN_PREFIX = "[REDACTED:"
TOKEN_RE = re.compile(r"\[REDACTED:[a-z_]+:[0-9a-f]{8}\]")

PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.S | re.I)
PEM = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?)-----.*?"
    r"(?:-----END (?P=label)-----|\Z)",
    re.S,
)

# Python's re skips ahead fast to a position whose character is in a pattern's leading
# character set, but only when the pattern starts with that set (not with a lookbehind,
# nor case-insensitively): so each alternation below starts with the union of its
# branches' first characters, and every branch re-checks its own with a lookbehind.


def first_char_alternation(branches: list[tuple[str, str]], *, before: str = "",
                           tail: str = "", more: tuple[str, str] | None = None) -> str:
    """``[firsts](?:(?:(?<=[f1])rest1|…)tail|more)``: `branches` are (first characters,
    rest), group ``v<i>`` is branch i; `before` a class that must not precede; `more`
    (first characters, rest) one more alternative without the tail."""
    union = {c for firsts, _ in branches for c in firsts} | set(more[0] if more else "")
    guard = rf"(?<![{before}].)" if before else ""
    alts = "|".join(rf"(?<=[{re.escape(firsts)}])(?P<v{i}>{rest})"
                    for i, (firsts, rest) in enumerate(branches))
    other = rf"|(?<=[{re.escape(more[0])}]){more[1]}" if more else ""
    return rf"[{re.escape(''.join(sorted(union)))}]{guard}(?:(?:{alts}){tail}{other})"


# -- vendor tokens by their documented shape: one combined pass ------------------------
# A plain alternation whose branches all start with a literal character: re then skips
# ahead to those characters, and tries only the branches starting with the one found.
# The lookbehind after that character keeps a token from starting inside a word
# (`mask_ghp_…` is a name), but any other character may precede it: a token glued
# after a separator (`p-ghp_…`, `x.ghp_…`, `key:sk-…`) is still a token. The kind is
# read off the match (`vendor_kind`).
_G = r"(?<![A-Za-z0-9_].)"
_VENDOR_BRANCHES = [
    r"sk-ant-[A-Za-z0-9_-]{16,}+",
    r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}+",
    r"sk_(?:live|test)_[A-Za-z0-9]{16,}+",
    r"rk_(?:live|test)_[A-Za-z0-9]{16,}+",
    r"whsec_[A-Za-z0-9]{24,}+",
    r"A(?:KIA|SIA|BIA|CCA|IDA|ROA|IPA|NPA|NVA|GPA|PKA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    r"AIza[0-9A-Za-z_-]{35}",
    r"github_pat_[A-Za-z0-9_]{22,}+",
    r"gh[pousr]_[A-Za-z0-9]{30,}+",
    r"gl(?:pat|dt|rt|ptt|cbt|imt|soat|ft|agent)-[A-Za-z0-9_-]{20,}+",
    r"xox[abposre]-[A-Za-z0-9-]{10,}+",
    r"xapp-[0-9]-[A-Za-z0-9-]{10,}+",
    r"ya29\.[0-9A-Za-z_-]{20,}+",
    r"GOCSPX-[A-Za-z0-9_-]{20,}+",
    r"1//0[0-9A-Za-z_-]{30,}+",
    r"eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+",
    r"npm_[A-Za-z0-9]{36}",
    r"pypi-AgE[A-Za-z0-9_-]{50,}+",
    r"hf_[A-Za-z]{30,}+",
    r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
    *(c + r"[A-Za-z0-9_-]{23,27}+\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}+" for c in "MNO"),
]
VENDOR = re.compile("|".join(b[0] + _G + b[1:] for b in _VENDOR_BRANCHES))
_VENDOR_PREFIXES = (
    ("sk-ant-", "anthropic_key"), ("sk_", "stripe_key"), ("rk_", "stripe_key"),
    ("whsec_", "stripe_key"), ("sk-", "openai_key"), ("AIza", "google_api_key"),
    ("A", "aws_access_key"), ("github_pat_", "github_token"), ("gh", "github_token"),
    ("gl", "gitlab_token"), ("x", "slack_token"), ("ya29.", "google_oauth"),
    ("GOCSPX-", "google_oauth"), ("1//", "google_oauth"), ("eyJ", "jwt"),
    ("npm_", "npm_token"), ("pypi-", "pypi_token"), ("hf_", "hf_token"),
    ("SG.", "sendgrid_key"),
)


def vendor_kind(token: str) -> str:
    """The kind of a VENDOR match."""
    for prefix, kind in _VENDOR_PREFIXES:
        if token.startswith(prefix):
            return kind
    return "discord_token"


# -- secrets named by their context -----------------------------------------------------
# Whole URL paths that are the secret (webhooks).
WEBHOOK = re.compile(
    r"(?:hooks\.slack\.com/(?:services|workflows|triggers)/(?P<slack>[A-Za-z0-9_/-]++)"
    r"|discord(?:app)?\.com/api/webhooks/(?P<discord>[0-9]++/[A-Za-z0-9_-]++))"
)
# scheme://user:password@host (the user may be empty: redis://:pw@host).
URL_PASSWORD = re.compile(r"://[^\s:/@\"'<>]*+:(?P<s>[^\s@/\"'<>]++)@")
# Authorization: <scheme> <credential> (any scheme, or none).
AUTH_HEADER = re.compile(
    r"[AaPp](?<![A-Za-z0-9].)(?i:(?<=[Pp])roxy-a|(?<=[Aa]))(?i:uthorization)[\"']?[ \t]*+[:=]"
    r"[ \t]*+[\"']?(?>(?i:bearer|basic|token|digest|negotiate|bot|apikey|key)[ \t]++)?"
    r"(?P<s>[^\s\"'\[\],;<>]++)"
)
# A bare "Bearer x" / "Basic x" anywhere (the caller rejects plain words).
BEARER = re.compile(r"[Bb](?<![A-Za-z0-9].)(?i:earer|asic)[ \t]++(?P<s>[A-Za-z0-9._~+/-]{8,}+=*+)")

# CLI flags: --password x, --token=x, -u user:pass, mysql -pSECRET, sshpass -p x.
_FLAG_VALUE = r"(?:\"(?P<dq>[^\"\n]*+)\"|'(?P<sq>[^'\n]*+)'|(?P<bare>(?!-)[^\s\"'`;|&<>()]++))"
LONG_FLAG = re.compile(
    r"-(?<![^\s'\"(=]-)-?(?P<flag>[A-Za-z][A-Za-z0-9_-]{0,40}+)(?:=|[ \t]++)" + _FLAG_VALUE
)
SHORT_FLAG_ATTACHED = re.compile(
    r"-(?<![^\s'\"]-)(?P<flag>[pu])(?P<bare>[^\s\"'`;|&<>()-][^\s\"'`;|&<>()]*+)"
)
SECRET_FLAG = re.compile(
    r"(?i)(?:^|[-_])(?:password|passwd|pass|pwd|token|secret|api[-_]?key|apikey|"
    r"access[-_]?key|secret[-_]?key|auth[-_]?token|client[-_]?secret|access[-_]?token|"
    r"refresh[-_]?token|bearer|passphrase|credentials?)$"
)
USER_FLAG = re.compile(r"(?i)^(?:u|user|proxy-user)$")
# -p / -a with a separate value mean a password only after these commands.
SEPARATE_P_COMMANDS = re.compile(r"\b(?:sshpass|docker login|podman login|helm registry login)\b")
SEPARATE_A_COMMANDS = re.compile(r"\bredis-cli\b")
ATTACHED_P_COMMANDS = re.compile(r"\b(?:mysql\w*|mariadb\w*)\b")
CONTEXT_WINDOW = 400

# NAME op VALUE where NAME ends in a secret word (the name itself is never matched, so
# nothing scans back over it: only the value is replaced).
_WORDS = [  # (first characters, rest); case-insensitive unless marked
    ("pP", "(?i:assword|asswd|assphrase|rivate[_-]?key)"),
    ("pP", "(?<=[;_-].)(?i:wd)"),
    ("pP", "(?<=[A-Za-z0-9][_-].)(?i:ass)"),
    ("sS", "(?i:ecret(?:[_-]?key)?|igning[_-]?key|hared[_-]?access[_-]?key|ession[_-]?token)"),
    ("sS", "(?<=[?&;].)(?i:ig)"),
    ("aA", "(?i:pi[_-]?key|pikey|ccess[_-]?(?:key|token)|ccount[_-]?key|uth[_-]?token"
           "|uthorization)"),
    ("eE", "(?i:ncryption[_-]?key)"),
    ("mM", "(?i:aster[_-]?key)"),
    ("K", "(?<=[A-Z0-9]_.)EY"),
    ("cC", "(?i:lient[_-]?secret|redentials?)"),
    ("rR", "(?i:efresh[_-]?token)"),
    ("tT", "(?i:oken)"),
]
# Values may sit in JSON-escaped text (a command inside Codex's arguments): an escape
# (\\n, \\") ends a bare value, and \\"…\\" quotes like "…".
_NOT_BARE = r"\s\"'`,;&(){}\[\]<>|\\"
_WORD1 = rf"(?:[^{_NOT_BARE}]|\\(?![nrt\"]))++"
_WORDN = rf"(?:[^{_NOT_BARE}#=:]|\\(?![nrt\"]))++"


def _quoted(n: str) -> str:
    return (rf"\"(?P<dq{n}>[^\"\n]*+)\"|'(?P<sq{n}>[^'\n]*+)'"
            rf"|\\\"(?P<edq{n}>(?:[^\"\\\n]|\\[^\"])*+)\\\"")


_OPQ = r"\\?[\"']?[ \t]*+"
_ASSIGN_OP = (
    r"(?![A-Za-z0-9])(?:(?P<colon>" + _OPQ + r":(?!//)[ \t]*+)(?:" + _quoted("") + "|"
    r"(?P<multi>" + _WORD1 + r"(?:[ \t]++" + _WORDN + r"(?![:=]))*+))"
    r"|(?P<eq>" + _OPQ + r"=(?!=[ \t])[ \t]*+)(?:" + _quoted("2") + r"|(?P<bare>" + _WORD1 + r")))"
)
# An existing token is matched whole (its kind may be a secret word).
ASSIGN = re.compile(first_char_alternation(
    _WORDS, tail=_ASSIGN_OP, more=("[", r"(?P<tok>REDACTED:[a-z_]+:[0-9a-f]{8}\])")))
# The same words read backwards from their operator, in the reversed text: a pass over
# the reversed text stops only at ':' and '=' (a leading set again), and gives every
# place where ASSIGN can start (a superset: ASSIGN itself then decides, forwards).
def _both_cases(regex: str) -> str:
    """`regex` (lowercase letters, no classes of letters) matching either case of each
    letter with a class, not IGNORECASE: re's fast paths need plain classes."""
    return "".join(f"[{c}{c.upper()}]" if "a" <= c <= "z" else c for c in regex)


ASSIGN_REVERSED = re.compile(
    r"[:=][ \t]*+[\"']?\\?(?:" + _both_cases(
        "yek(?:[_-]?(?:etavirp|terces|gningis|ssecca[_-]?derahs|ipa|ssecca|tnuocca"
        "|noitpyrcne|retsam))?|nekot(?:[_-]?(?:noisses|htua|ssecca|hserfer))?"
        "|terces(?:[_-]?tneilc)?|d(?:rowssap|wssap|wp)|esarhpssap|s(?:sap|laitnederc)"
        "|laitnederc|gis|noitazirohtua") + ")"
)
ASSIGN_VALUES = ("dq", "sq", "edq", "multi", "dq2", "sq2", "edq2", "bare")
BARE_LITERALS = frozenset(
    {"none", "null", "nil", "true", "false", "undefined", "required", "optional",
     "string", "str", "bytes", "int", "bool", "any", "redacted", "xxx", "xxxx", "****",
     "changeme", "secret", "password", "token", "example", "placeholder", "bearer",
     "basic", "env", "yes", "no", "prompt", "value", "char", "text", "object", "list",
     "dict", "number", "boolean", "default", "empty", "unset", "hidden", "masked",
     "option", "options", "flag", "argument", "parameter", "field", "a", "an", "the",
     "is", "are", "was", "for", "of", "to", "and", "or"}
)
# A value that is a name in code (`token = Error`, `password = parsed.auth_decoded`)
# when the operator is spaced the way code is: no digits, nothing but identifiers.
CODE_NAME = re.compile(r"[A-Za-z_]++(?:\.[A-Za-z_]++)*+")
# `x_pass: ShrinkPass`, `secret: SecretStr`: a type annotation, not a setting.
TYPE_NAME = re.compile(r"(?:[A-Z][a-z0-9]++){2,}+")
# What follows a bare value when it is code, not a setting: `secret = tmp / "x"`.
EXPRESSION_AFTER = re.compile(r"[ \t]++(?:[-+*/%|&^<>=!.?]|(?:if|else|or|and|for|in)\b)")
REFERENCE = re.compile(
    r"^(?:process\.env|os\.environ|os\.getenv|env|ENV|self|this|config|settings|"
    r"secrets|vars|cls|ctx|args|opts|options|params|props|request|req)\.|^\$|^%[A-Za-z_]\w*%$|"
    r"^\{\{|^<[A-Za-z_ -]*>?$|^\*+$|^x+$|^\.+$|^#[0-9a-fA-F]{3,8}$",
)

# JSON object members whose key names a secret (the whole value) or an id (no entropy).
SECRET_KEY = re.compile(
    r"(?i)^(?:.*[_-])?(?:password|passwd|passphrase|secret|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|secret[_-]?key|account[_-]?key|client[_-]?secret|"
    r"token|access[_-]?token|auth[_-]?token|refresh[_-]?token|session[_-]?token|"
    r"authorization|credentials?|cookie)$"
)
ID_KEY = re.compile(
    r"(?i)(?:^|[_-]|[a-z])(?:id|uuid|ids|hash|digest|sha|sha1|sha256|ref|signature)$|^id$"
)

# -- what a cut left of a secret ---------------------------------------------------------
# Callers shorten long strings with an ellipsis (`value[:limit] + "…"`, head + "\n…\n" +
# tail); a secret the cut went through is no longer whole, so no shape above matches
# it. A run of token characters touching the ellipsis is replaced when it could be one.
_C = r"A-Za-z0-9+/_=.~-"
CUT_BEFORE = re.compile(rf"[{_C}](?<![{_C}].)[{_C}]{{7,}}+(?=…)")
CUT_AFTER = re.compile(rf"…\n?(?P<s>[{_C}]{{8,}}+)")

# -- high-entropy tokens ----------------------------------------------------------------
CANDIDATE = re.compile(r"[A-Za-z0-9+/_-](?<![A-Za-z0-9+/_-].)[A-Za-z0-9+/_-]{19,}+={0,2}")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")
_HEXDASH = "0123456789abcdefABCDEF-"
_UUID_SOURCE = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_UUID = re.compile(_UUID_SOURCE)
_WORDY = re.compile(r"[-_]*+[A-Za-z]?[a-z_-]*+|[0-9]++")
_PREFIX = re.compile(r"[A-Za-z]++(?:[_-][A-Za-z]++)*+")
# ids the adapted agents make that are not hex: OpenCode's `ses_`/`msg_`/`prt_`… (12 hex
# digits of time and count, then 14 random base62), Qwen Code's `toolu_<ms>_<9 base36>`
_AGENT_ID = re.compile(r"(?:ses|msg|prt|per|que|usr|call|tool)_[0-9a-f]{12}[0-9A-Za-z]{14}"
                       r"|toolu_[0-9]{13}_[0-9a-z]{9}")


def shannon_entropy(text: str) -> float:
    """Bits per character of `text` (0.0 for an empty string)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _is_hex(s: str) -> bool:
    return bool(s) and set(s) <= _HEX_CHARS


def is_identifier(word: str) -> bool:
    """A hash, uuid, `prefix_<hex or uuid>` id or an agent's own id shape (`_AGENT_ID`):
    common in transcripts, never a secret."""
    s = word.strip("-_=")
    if _is_hex(s) or _UUID.fullmatch(s) or _AGENT_ID.fullmatch(s):
        return True
    body_start = len(s.rstrip(_HEXDASH))  # where the hex-and-dash tail starts, one scan
    # The body is the tail after the first separator at or after the tail's start
    # whose prefix is letters joined by single separators.
    for sep in (s.find("_", max(body_start - 1, 0)), s.find("-", max(body_start - 1, 0))):
        if sep <= 0:
            continue
        m = _PREFIX.match(s)
        if m is None or m.end() < sep:
            continue
        body = s[sep + 1:].replace("-", "")
        if len(body) >= 8 and _is_hex(body) and s[sep + 1:].strip(_HEXDASH) == "":
            return True
    return False


def char_classes(word: str) -> tuple[bool, bool, bool]:
    """Whether `word` has (digits, upper case, lower case)."""
    return (any(c.isdigit() for c in word), any(c.isupper() for c in word),
            any(c.islower() for c in word))


def _transition_ratio(word: str) -> float:
    """How often adjacent letters and digits change class (digit/upper/lower; other
    characters skipped): ~0.6 for random base64, ~0.1-0.2 for words and identifiers."""
    def cls(c: str) -> int:
        return 0 if c.isdigit() else 1 if c.isupper() else 2
    word = "".join(c for c in word if c.isalnum())
    prev, changes = -1, 0
    for c in word:
        k = cls(c)
        if prev != -1 and k != prev:
            changes += 1
        prev = k
    return changes / max(1, len(word) - 1)


# camelCase / snake_case / UPPER_SNAKE names made of words
# (cacheCreationEphemeral5mInputTokens, PytestRemovedIn10Warning, PEP517_BUILD_BACKEND):
# fewer than 1 in 1,000 random 20-character tokens read as one, none of 40.
NAME = re.compile(
    r"(?:[_-]?+(?:[A-Z]?[a-z]{2,}+|(?:In|Of|To|Is|At|By|On|Or|As|If|Id|No|Up|Do)(?![a-z])"
    r"|[0-9]{1,4}+[a-z]?))++"
    r"|[A-Z]{2,}+[0-9]{0,4}+(?:[_-](?:[A-Z]++[0-9]{0,4}+|[0-9]{1,4}+))++"
)


# Ids agents put in file names: a UUID, an ISO time with '-' or ':' between its fields
# (Codex's rollout-2026-12-01T19-23-31-<uuid>.jsonl). Judged without them.
_NAME_IDS = re.compile(_UUID_SOURCE + r"|\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}")


def _segment_is_secret(seg: str) -> bool:
    if _UUID.search(seg) or "T" in seg:
        seg = _NAME_IDS.sub("-", seg)
    if len(seg) < 20 or is_identifier(seg) or NAME.fullmatch(seg.rstrip("=")):
        return False
    if ("-" in seg or "_" in seg) and _transition_ratio(seg) < 0.15:
        return False  # a slug: 577452-a-memoize-decorator-for-instance-methods
    digit, upper, lower = char_classes(seg)
    if not (digit and (upper or lower)) and not (upper and lower and len(seg) >= 30
                                                and _transition_ratio(seg) >= 0.3):
        return False
    return shannon_entropy(seg) >= min(4.0, 0.85 * math.log2(len(seg)))


def looks_high_entropy(word: str) -> bool:
    """True when `word` (one candidate token) is a likely secret by the entropy rule."""
    if "/" not in word:
        return _segment_is_secret(word)
    if any(_segment_is_secret(seg) for seg in word.split("/")):
        return True
    # A key with '/' in it (AWS secret keys, base64) is judged whole, without the
    # segments that read as a path's (words, numbers, ids).
    flat = "".join(seg for seg in word.split("/")
                   if seg and not _WORDY.fullmatch(seg) and not is_identifier(seg))
    return (len(flat) >= 20 and _transition_ratio(flat) >= 0.35
            and _segment_is_secret(flat))
