"""`kg install-skill`: copy the packaged SKILL.md into an agent's skills directory."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write, read_text


def skill_text() -> str:
    try:
        return resources.files("git_gasp.kg").joinpath("skill/SKILL.md").read_text("utf-8")
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        raise GaspError("the packaged SKILL.md is missing from this installation") from None


def install(target: str | None, *, force: bool = False) -> Path:
    """Write `<dir>/perstate/SKILL.md` (default dir: ~/.claude/skills)."""
    base = Path(target).expanduser() if target else Path.home() / ".claude" / "skills"
    dest = base / "perstate" / "SKILL.md"
    text = skill_text()
    if dest.exists():
        current = read_text(dest, errors="replace")
        if current == text:
            return dest
        if not force:
            raise GaspError(f"{dest} exists and differs; pass --force to overwrite it")
    atomic_write(dest, text.encode("utf-8"), make_parents=True)
    return dest
