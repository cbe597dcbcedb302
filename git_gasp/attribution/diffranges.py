"""The lines each commit added, from its diff (`git diff-tree --stdin -p -U0 --root -M`,
one process for every commit): path (bytes, as in the commit) -> [(start, end)],
1-indexed, inclusive, as the lines are numbered in that commit. A merge's own diff is
empty (git shows none without -m); binary files and deletions add no line."""

from __future__ import annotations

from git_gasp.attribution.porcelain import unquote_path
from git_gasp.base import git

_ALL = "0123456789abcdef"


def _hunk(header: bytes) -> tuple[int, int, int] | None:
    """(old count, new start, new count) of ``@@ -a[,b] +c[,d] @@``."""
    try:
        old, new = header.split(b" ")[1:3]
        old_n = int(old.split(b",")[1]) if b"," in old else 1
        start, _, count = new[1:].partition(b",")
        return old_n, int(start), int(count) if count else 1
    except (ValueError, IndexError):
        return None


def _new_path(raw: bytes) -> bytes | None:
    path = unquote_path(raw.rstrip(b"\t"))
    if path == b"/dev/null":
        return None
    return path[2:] if path.startswith(b"b/") else path


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _walk(data: bytes):
    """`git diff-tree --stdin -p -U0` output as ("commit", sha) for each commit's header
    and ("hunk", commit, path, start, [added lines]) for each hunk that adds lines."""
    commit: str | None = None
    path: bytes | None = None
    old_left = new_left = 0
    start, added = 0, []
    for line in data.split(b"\n"):
        if old_left or new_left:  # inside a hunk: its lines, whatever they look like
            if line.startswith(b"-"):
                old_left -= 1
            elif line.startswith(b"+"):
                new_left -= 1
                added.append(line[1:])
                if not new_left and path is not None and commit is not None:
                    yield ("hunk", commit, path, start, added)
            continue
        if len(line) in (40, 64) and all(c in _ALL for c in line.decode("latin-1")):
            commit, path = line.decode("ascii"), None
            yield ("commit", commit)
        elif line.startswith(b"diff --git "):
            path = None
        elif line.startswith(b"+++ "):
            path = _new_path(line[4:])
        elif line.startswith(b"@@ ") and commit is not None:
            hunk = _hunk(line)
            if hunk is not None:
                old_left, start, new_left = hunk
                added = []


def parse_added_lines(data: bytes) -> dict[str, dict[bytes, list[tuple[int, bytes]]]]:
    """`git diff-tree --stdin -p -U0` output read as commit -> path -> the lines it added
    ((number in that commit, bytes without the newline), in file order)."""
    out: dict[str, dict[bytes, list[tuple[int, bytes]]]] = {}
    for item in _walk(data):
        if item[0] == "commit":
            out.setdefault(item[1], {})
        else:
            _, commit, path, start, added = item
            out[commit].setdefault(path, []).extend(enumerate(added, start))
    return out


def parse_diffs(data: bytes) -> dict[str, dict[bytes, list[tuple[int, int]]]]:
    """`git diff-tree --stdin -p -U0` output read as commit -> path -> added ranges."""
    return {c: {p: _merge([(n, n) for n, _ in lines]) for p, lines in files.items()}
            for c, files in parse_added_lines(data).items()}


def diff_commits(cwd: str, commits: list[str]) -> bytes:
    """The zero-context patches of `commits` (full ids), one `git diff-tree` process:
    what `parse_diffs`, `parse_added_lines` and `git patch-id` read."""
    return git.run(cwd, "diff-tree", "--stdin", "-r", "-p", "-U0", "--root", "-M",
                   "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/",
                   "--dst-prefix=b/", input=("\n".join(commits) + "\n").encode()).stdout


def added_ranges(cwd: str, commits: list[str]) -> dict[str, dict[bytes, list[tuple[int, int]]]]:
    """The lines each of `commits` (full ids) added, by path."""
    if not commits:
        return {}
    found = parse_diffs(diff_commits(cwd, commits))
    return {c: found.get(c, {}) for c in commits}


def resolve(cwd: str, revs: list[str]) -> dict[str, str | None]:
    """Each of `revs` as the full id of the commit it names (None when it names none),
    from one `git cat-file --batch-check`."""
    if not revs:
        return {}
    ok = [r for r in revs if r and "\n" not in r and not r.startswith("-")]
    proc = git.run(cwd, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                   input="".join(f"{r}^{{commit}}\n" for r in ok).encode(), check=False)
    answers = proc.stdout.decode("utf-8", "replace").splitlines()
    out: dict[str, str | None] = dict.fromkeys(revs)
    for rev, answer in zip(ok, answers, strict=False):
        sha, _, kind = answer.partition(" ")
        out[rev] = sha if kind == "commit" else None
    return out
