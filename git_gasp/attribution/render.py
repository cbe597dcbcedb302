"""`git gasp blame`'s human output: git blame's default layout (abbreviated commit, the
path when the file was renamed, author, date, line number, the line), with one more
column: the short ids of the line's patch and goal, or what a Git AI note or an
imported Agent Trace record says of it. Bytes out; names are decoded nowhere."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from git_gasp.attribution.blame import Row
from git_gasp.protocol.summary import printable


def _date(epoch: int, tz: bytes) -> bytes:
    """`git blame`'s default date: ``2026-01-01 12:00:00 +0100`` in the author's zone."""
    try:
        sign = -1 if tz[:1] == b"-" else 1
        offset = sign * (int(tz[1:3]) * 60 + int(tz[3:5]))
    except ValueError:
        offset, tz = 0, b"+0000"
    when = datetime.fromtimestamp(epoch, timezone(timedelta(minutes=offset)))
    return when.strftime("%Y-%m-%d %H:%M:%S ").encode() + tz


def why_column(row: Row, short: Callable[[str], str]) -> str:
    """The extra column: ``patch_...ab12cd goal_...ef34gh`` (an ancestor in the patch's
    change is marked ``~``, a commit a rebase or squash made of the patch's ``=``),
    ``git-ai:TOOL/MODEL``, ``trace:MODEL``, or empty."""
    if row.why is not None:
        text = short(row.why.patch) + ("" if row.pinned else "~")
        text += "=" if row.rewritten is not None else ""
        return text + (" " + short(row.why.goal) if row.why.goal else "")
    ai = row.ai
    if ai is None:
        return ""
    label = "git-ai" if ai.get("source") == "git-ai" else "trace"
    if ai.get("type") == "human":
        return f"{label}:human"
    keys = ("tool", "model") if label == "git-ai" else ("model",)
    what = "/".join(str(ai[k]) for k in keys if ai.get(k)) or str(ai.get("tool") or "ai")
    return f"{label}:{what}"


def render(rows: list[Row], final: bytes | None, short: Callable[[str], str],
           abbrev: int = 8) -> list[bytes]:
    """The lines `git gasp blame` prints (each without its newline): a path column when
    some line comes from a name other than `final` (the file's path from the top of the
    work tree; None: unknown), as git blame shows one after a rename."""
    if not rows:
        return []
    names = {r.src.orig_path for r in rows}
    show_path = len(names) > 1 or (final is not None and names != {final})
    path_w = max(len(n) for n in names) if show_path else 0
    whys: dict[tuple, bytes] = {}  # what a column says, once per commit and patch
    for r in rows:
        key = _key(r)
        if key not in whys:
            whys[key] = printable(why_column(r, short)).encode()
    why_w = max(len(w) for w in whys.values())
    commits = {r.src.commit: r.info for r in rows}
    authors = {c: b"Not Committed Yet" if i.uncommitted else i.get(b"author")
               for c, i in commits.items()}
    author_w = max(len(a) for a in authors.values())
    line_w = len(str(max(r.src.line for r in rows)))
    heads = {}  # commit -> "SHA (AUTHOR DATE": the same on each of its lines
    for c, info in commits.items():
        sha = c.encode()
        mark = b"^" + sha[: abbrev - 1] if info.boundary else sha[:abbrev]
        date = _date(info.int_field(b"author-time"), info.get(b"author-tz", b"+0000"))
        heads[c] = (mark, b" (" + authors[c].ljust(author_w) + b" " + date + b" ")
    out = []
    for r in rows:
        mark, tail = heads[r.src.commit]
        parts = [mark]
        if show_path:
            parts.append(r.src.orig_path.ljust(path_w))
        if why_w:
            parts.append(whys[_key(r)].ljust(why_w))
        out.append(b" ".join(parts) + tail + str(r.src.line).rjust(line_w).encode() + b") "
                   + r.src.content)
    return out


def _key(r: Row) -> tuple:
    """What the extra column depends on."""
    return (r.src.commit, r.why.patch if r.why else None, r.pinned, r.rewritten is not None,
            _ai_key(r.ai))


def _ai_key(ai: dict | None):
    return None if ai is None else (ai.get("source"), ai.get("type"), ai.get("tool"),
                                    ai.get("model"))
