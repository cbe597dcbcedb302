"""SKILL.md: YAML front matter with required `name` and `description`, then a body."""

from __future__ import annotations

import re

from git_gasp.base.errors import FormatError
from git_gasp.base.record import Record
from git_gasp.base.yamlread import load_yaml

_FRONT = re.compile(r"(?ms)\A---[ \t]*\n(.*?)^---[ \t]*$")


class SkillError(FormatError):
    """A SKILL.md lacks valid front matter."""


class Skill(Record):
    """A parsed SKILL.md: its required fields, the whole front matter and the body."""

    FIELDS = ("name", "description", "meta", "body")

    def __init__(self, name: str, description: str, meta: dict, body: str) -> None:
        self.name, self.description, self.meta, self.body = name, description, meta, body


def parse_skill(data: bytes) -> Skill:
    """Parse SKILL.md bytes (raises SkillError with a one-line reason)."""
    try:
        text = data.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise SkillError(f"not UTF-8 (byte {exc.start})") from None
    match = _FRONT.match(text)
    if match is None:
        raise SkillError("no YAML front matter (--- … ---) at the top")
    meta = load_yaml(match.group(1), "front matter", SkillError)
    if not isinstance(meta, dict):
        raise SkillError("front matter must be a mapping")
    for key in ("name", "description"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise SkillError(f"front matter lacks a `{key}`")
    return Skill(meta["name"], meta["description"], meta, text[match.end() :].lstrip("\n"))
