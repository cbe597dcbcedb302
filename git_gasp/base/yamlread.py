"""The one YAML reader, for front matter and the other small YAML documents git-gasp reads
(AGENT.md's manifest block, SKILL.md headers, kg documents and their front matter).

PyYAML's safe loader (its C ``CSafeLoader`` when built) under YAML 1.1, with two
differences: dates stay strings (``2026-07-14`` is text, as Perstate's scripts treat
it), and anchors and aliases are refused before anything is built (front matter never
needs them; an alias bomb would expand past any memory). Every failure is one line.

Flat ``key: value`` text whose meaning under those rules is certain is read without
PyYAML (`load_flat`): a value is a decimal integer, a double-quoted string without
escapes, a plain string that starts with a letter, ``_``, ``/`` or ``.`` and a letter
and holds none of YAML's indicators (and is no bool or null word), a hex digest, or a
flow list ``[a, "b", 3]`` of those (not nested) (the form kg documents use for aliases and sources).
Anything else returns None and goes to PyYAML, which is imported only then: the
pre-commit guard and ``git gasp check`` read AGENT.md on every run, and importing yaml
cost a process 54 ms against `python -c pass`'s 87 ms (medians of 40 interleaved runs
on the 2-core machine of issue 40), more than the guard's own work. The tests compare
`load_flat` with PyYAML on generated text.
"""

from __future__ import annotations

import re
from functools import cache

from git_gasp.base.errors import FormatError
from git_gasp.base.outside import why_unreadable

_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+(.*?))?[ ]*")
_INT = re.compile(r"0|[1-9][0-9]{0,17}")
_PLAIN = re.compile(r"(?:[A-Za-z_/]|\.[A-Za-z])[A-Za-z0-9 _./,()'+=?!;@$~^-]*")
_HEX = re.compile(r"[0-9a-f]*[a-f][0-9a-f]*")
_QUOTED = re.compile(r'"([^"\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]*)"')
# Words YAML 1.1 resolves to a bool or null (compared case-insensitively: conservative).
_WORDS = frozenset(("yes", "no", "true", "false", "on", "off", "null", "y", "n", ".inf", ".nan"))
_NULLS = ("", "~", "null", "Null", "NULL")  # YAML 1.1's null, exactly
_NO = object()


def load_yaml(text: str, what: str = "YAML", error: type[FormatError] = FormatError) -> object:
    """The YAML document `text` (flat text without PyYAML, else PyYAML as above); a
    document that does not parse raises `error` ``WHAT does not parse: <why>``."""
    flat = load_flat(text)
    if flat:
        return flat
    import yaml  # only here: see the module's docstring

    try:
        _refuse_aliases(text, error)
        return yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise error(f"{what} does not parse: {' '.join(str(exc).split())[:300]}") from None
    except (ValueError, RecursionError) as exc:  # a number past Python's digit limit, or
        raise error(f"{what} does not parse: {why_unreadable(exc)}") from None  # nesting


def load_flat(text: str) -> dict[str, object] | None:
    """The mapping flat YAML `text` holds, or None when it needs a real YAML parser."""
    out: dict[str, object] = {}
    for line in text.split("\n"):
        if not line.strip(" ") or line[0] == "#":
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        key, raw = m.group(1), m.group(2)
        if key in out or key.lower() in _WORDS:
            return None
        value = _value(raw)
        if value is _NO:
            return None
        out[key] = value
    return out


def _value(raw: str | None) -> object:
    if raw is None or raw in _NULLS:
        return None
    if raw[0] == "[" and raw[-1] == "]":  # a flow list of such values, none of them empty
        items = [item.strip(" ") for item in raw[1:-1].split(",")]
        if items == [""]:
            return []
        values = [_scalar(item) for item in items if item not in _NULLS]
        return values if len(values) == len(items) and _NO not in values else _NO
    return _scalar(raw)


def _scalar(raw: str) -> object:
    if _INT.fullmatch(raw):
        return int(raw)
    c = raw[0]
    if c == '"':
        m = _QUOTED.fullmatch(raw)
        return _NO if m is None else m.group(1)
    if "a" <= c.lower() <= "z" or c in "_/.":
        if raw.lower() in _WORDS or raw.endswith(" ") or _PLAIN.fullmatch(raw) is None:
            return _NO
        return raw
    if "0" <= c <= "9" and not raw.startswith("0b") and _HEX.fullmatch(raw):
        return raw  # neither int, float (no '.' or ':') nor timestamp (no '-') in YAML 1.1
    return _NO


@cache
def _loader() -> object:
    """A safe YAML loader (C-accelerated when available) without timestamp resolution."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class NoDateLoader(base):  # type: ignore[misc, valid-type]
        pass

    NoDateLoader.yaml_implicit_resolvers = {
        ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for ch, resolvers in base.yaml_implicit_resolvers.items()
    }
    return NoDateLoader


def _refuse_aliases(text: str, error: type[FormatError]) -> None:
    """Refuse YAML anchors and aliases before anything is built. Only tokens are scanned
    (linear in the text); most texts hold neither & nor *."""
    if "&" not in text and "*" not in text:
        return
    import yaml

    for token in yaml.scan(text, Loader=_loader()):
        if isinstance(token, (yaml.AnchorToken, yaml.AliasToken)):
            kind = "anchor" if isinstance(token, yaml.AnchorToken) else "alias"
            raise error(f"YAML {kind} &/* at line {token.start_mark.line + 1} refused: "
                        "front matter may not use anchors or aliases")
