"""The drainer: ``python -m git_gasp.adapters.drain [--report] DIR`` records what the
agent hooks queued in the git dir of DIR (``live.drain_pending``), then exits.

The agent hook (``hook_entry.py``) starts it detached on most events and waits for it,
with ``--report``, at ``Stop`` and ``SessionEnd``: then a boundary commit that failed is
said on stderr, where the agent shows hook output. It always exits 0; what goes wrong
is in ``<gitdir>/gasp/adapter.log``.
"""

from __future__ import annotations

import sys

from git_gasp.adapters.live import LOCK_WAIT_S, drain_pending


def report(failures: list) -> str:
    """What the person is told of boundary commits that failed (one line each)."""
    return "".join(f"git gasp: {c} (the events are recorded; `git gasp doctor` says how "
                   "to commit them)\n" for c in failures)


def main(argv: list[str] | None = None) -> int:
    """Drain the queue of the directory named last in `argv`; always 0."""
    args = sys.argv[1:] if argv is None else argv
    cut = args.index("--") if "--" in args else len(args)
    opts, places = args[:cut], args[cut + 1:]
    if cut == len(args):  # no "--": options are what starts with it
        opts, places = [a for a in args if a.startswith("--")], [
            a for a in args if not a.startswith("--")]
    tell = opts == ["--report"]
    if len(places) != 1:
        sys.stderr.write("usage: python -m git_gasp.adapters.drain [--report] DIR\n")
        return 0
    result = drain_pending(places[0], lock_wait_s=LOCK_WAIT_S if tell else 0.0)
    if tell and result.not_committed:
        sys.stderr.write(report(result.not_committed))
        sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
