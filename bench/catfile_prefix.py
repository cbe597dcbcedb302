"""Baseline: the naive fast append-only check through ONE `git cat-file --batch` process.

    python bench/catfile_prefix.py [REPO]      exit 0: every version extends its parent's

`git rev-list` the commits touching the append-only files (state/events.jsonl, every
facts.jsonl and JOURNAL.md in HEAD), stream each commit's version of each through one
`git cat-file --batch`, and require it to start with its (first, rewritten) parent's.
"""
import subprocess
import sys

repo = sys.argv[1] if len(sys.argv) > 1 else "."
git = ["git", "-C", repo]
paths = [p for p in subprocess.run([*git, "ls-files", "-z"], capture_output=True,
                                   check=True).stdout.decode().split("\0")
         if p == "state/events.jsonl" or p.rsplit("/", 1)[-1] in ("facts.jsonl", "JOURNAL.md")]
rows = subprocess.run([*git, "rev-list", "--reverse", "--parents", "HEAD", "--", *paths],
                      capture_output=True, check=True, text=True).stdout.split("\n")
rows = [row.split() for row in rows if row]
children = {}
for _, *parents in rows:
    key = parents[0] if parents else None
    children[key] = children.get(key, 0) + 1
cat = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
versions, bad = {}, 0
for commit, *parents in rows:
    parent = parents[0] if parents else None
    for path in paths:
        cat.stdin.write(f"{commit}:{path}\n".encode())
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        data = None if header[-1] == b"missing" else cat.stdout.read(int(header[2]) + 1)[:-1]
        old = versions.get((parent, path))
        if old is not None and (data is None or not data.startswith(old)):
            bad += 1
            print(f"{commit} {path}: does not extend {parent}", file=sys.stderr)
        if children.get(commit):  # a later commit's first parent: keep for it
            versions[commit, path] = data
    children[parent] -= 1
    if not children[parent]:  # the last child of `parent`: drop its versions
        for path in paths:
            versions.pop((parent, path), None)
sys.exit(1 if bad else 0)
