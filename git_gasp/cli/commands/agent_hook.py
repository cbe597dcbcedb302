"""What `git gasp adapt hook` does, without click: the agent hook's fast path (`cli.main`
runs it before click is imported; Claude Code runs it twice on every tool call) and the
click command (`adapt hook`) share it."""

from __future__ import annotations

import sys

AGENTS = ("claude-code", "codex")
OPTIONS = {"--agent": "agent", "--repo": "repo"}
USAGE = ("git gasp adapt hook: reads one hook payload (JSON) on stdin; it is run by the agent "
         "(install it with `git gasp adapt claude-code install`)")


def fast_args(argv: list[str]) -> dict | None:
    """`run`'s keywords when `argv` is ``adapt hook`` with at most ``--agent A`` and
    ``--repo P`` (each once, ``--opt=value`` too), else None (click parses it)."""
    if argv[:2] != ["adapt", "hook"]:
        return None
    kw: dict = {}
    args = iter(argv[2:])
    for arg in args:
        name, eq, value = arg.partition("=")
        key = OPTIONS.get(name)
        if key is None or key in kw:
            return None
        value = value if eq else next(args, None)
        if not value or value.startswith("-"):
            return None  # click says what is missing
        kw[key] = value
    return kw


def run(agent: str | None = None, repo: str | None = None) -> int:
    """Record the hook payload on stdin; always 0 (problems go to the adapter log)."""
    if sys.stdin is None or sys.stdin.isatty():
        sys.stderr.write(USAGE + "\n")
        return 0
    try:
        data = sys.stdin.buffer.read()
    except (OSError, ValueError):
        return 0
    from git_gasp.adapters.live import run_hook

    what = run_hook(data, agent=agent if agent in AGENTS else None, repo=repo)
    if isinstance(what, str) and ", not committed: " in what:  # where the agent shows it
        failed = what.split("; ", 1)[-1]
        sys.stderr.write(f"git gasp: {failed} (the events are recorded; `git gasp doctor` "
                         "says how to commit them)\n")
    return 0
