"""How each agent's CLI starts a session with a first prompt (`git gasp resume`).

Each `Launch` says the program, and for an interactive session (the default) and a
non-interactive one (runs the prompt and exits) the words before the caller's own
arguments and the flag the prompt follows (none: the prompt is the last positional
word). Read from each CLI's ``--help`` at the versions ``table.py`` records: Claude Code
``claude PROMPT`` / ``claude -p PROMPT``; Codex ``codex PROMPT`` / ``codex exec
PROMPT``; Gemini CLI and Qwen Code ``-i PROMPT`` / ``-p PROMPT``; Copilot CLI
``copilot -i PROMPT`` / ``-p PROMPT``; OpenCode ``opencode --prompt PROMPT`` /
``opencode run PROMPT``. Droid (``droid PROMPT`` / ``droid exec PROMPT``) and Cursor's
``cursor-agent`` (``PROMPT`` / ``-p PROMPT``) as their documentation says (no CLI here).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    """The words before the caller's arguments (`head`) and before the prompt (`flag`)."""

    head: tuple[str, ...] = ()
    flag: tuple[str, ...] = ()


@dataclass(frozen=True)
class Launch:
    """How one agent's CLI is started with a first prompt."""

    program: str
    interactive: Mode
    batch: Mode  # non-interactive: the prompt runs and the program exits

    def argv(self, prompt: str, *, interactive: bool = True,
             extra: tuple[str, ...] = ()) -> list[str]:
        """The command line starting a session with `prompt` (`extra`: the caller's own
        arguments for the agent, before the prompt)."""
        mode = self.interactive if interactive else self.batch
        return [self.program, *mode.head, *extra, *mode.flag, prompt]


LAUNCHES: dict[str, Launch] = {
    "claude-code": Launch("claude", Mode(), Mode(flag=("-p",))),
    "codex": Launch("codex", Mode(), Mode(head=("exec",))),
    "gemini": Launch("gemini", Mode(flag=("-i",)), Mode(flag=("-p",))),
    "qwen-code": Launch("qwen", Mode(flag=("-i",)), Mode(flag=("-p",))),
    "copilot": Launch("copilot", Mode(flag=("-i",)), Mode(flag=("-p",))),
    "opencode": Launch("opencode", Mode(flag=("--prompt",)), Mode(head=("run",))),
    "droid": Launch("droid", Mode(), Mode(head=("exec",))),
    "cursor": Launch("cursor-agent", Mode(), Mode(flag=("-p",))),
}
