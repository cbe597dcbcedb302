"""Benchmark `git gasp kg` search/info/view on generated Perstate graphs.

    .venv/bin/python bench/bench_kg.py [--sizes 1000,10000,100000] [--dir DIR] [--runs 5]

For each size it writes a Perstate-format graph (N entities, 3 relations each,
committed via `git fast-import` + `update-index --index-info`), then times the installed
`git gasp kg` commands as a user runs them (`--worktree`, so no network sync):
search cold (builds the index), search warm, info, view. At every size it also
times, in the same run and alternating with ours, what Perstate's scripts do
for the same query: `grep -rliE QUERY entities/` (and the `find | xargs grep`
variant) over the same tree, and prints the ratio. Reported figures are medians.
Not a test: nothing here asserts a wall-clock time.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "agent memory graph insight evaluation harness benchmark latency throughput cache index "
    "search merge branch commit rebase worktree session policy reward model dataset token "
    "context window retrieval embedding vector ranking recall precision schema ontology "
    "entity relation provenance history snapshot fold reducer event log append durable lease"
).split()
TYPES = ["domain", "concept", "technology", "framework", "person", "insight"]
RELS = ["depends-on", "enables", "part-of", "evolves-from", "applies-to", "contradicts"]
RARE = "zephyrine"  # planted in ~1 in 1000 entity bodies
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV.update(
    # an installed wheel ships byte-compiled modules; give this editable checkout the same
    # (in a private cache dir, so nothing is written into the source tree)
    PYTHONPYCACHEPREFIX=tempfile.mkdtemp(prefix="kg-bench-pycache-"),
    GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
    GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com",
    PERSTATE_HOME=tempfile.mkdtemp(prefix="perstate-bench-home-"),
)


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def generate(root: Path, n: int, seed: int = 7) -> None:
    """Write the graph's blobs with `git fast-import` (one pack), build the tree through the
    index (`update-index --index-info`, linear where one fast-import commit of 100k
    directories is not), commit it, and check it out."""
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=ENV)
    for k, v in (("core.untrackedCache", "true"), ("index.version", "4"),
                 ("checkout.workers", "0"), ("gc.auto", "0")):
        subprocess.run(["git", "-C", str(root), "config", k, v], check=True)
    marks_file = root / ".git" / "bench-marks"
    fi = subprocess.Popen(["git", "-C", str(root), "fast-import", "--quiet",
                           f"--export-marks={marks_file}"], stdin=subprocess.PIPE, env=ENV)
    assert fi.stdin is not None
    w = fi.stdin.write
    files: list[tuple[str, int]] = []
    mark = 0

    def blob(text: str) -> int:
        nonlocal mark
        mark += 1
        data = text.encode()
        w(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)) + data + b"\n")
        return mark

    for i in range(n):
        eid = f"entity-{i:06d}"
        day = 1 + i % 28
        body = " ".join(sentence(rng, 12) for _ in range(3))
        if i % 1000 == 17:
            body += f" The {RARE} effect shows up here."
        ent = (
            f"---\nid: {eid}\nlabel: Entity {i} {rng.choice(WORDS).title()}\n"
            f"type: {TYPES[i % len(TYPES)]}\naliases: [e{i}, {rng.choice(WORDS)} {i}]\n"
            f"created_at: 2026-01-{day:02d}\nupdated_at: 2026-02-{day:02d}\n"
            f'sources: ["bench:{i}"]\n---\n\n## Overview\n\n{body}\n'
        )
        files.append((f"entities/{eid}/entity.md", blob(ent)))
        for k in range(3):
            t = rng.randrange(n)
            rtype = RELS[(i + k) % len(RELS)]
            valid = "null" if (i + k) % 10 else f"2026-03-{day:02d}"
            rel = (
                f"---\nfrom: {eid}\nto: entity-{t:06d}\ntype: {rtype}\n"
                f"created_at: 2026-01-{day:02d}\nupdated_at: 2026-02-{day:02d}\n"
                f'valid_until: {valid}\nsources: []\n---\n\n## Insight\n\n{sentence(rng, 14)}\n'
            )
            files.append((f"entities/{eid}/{rtype}/entity-{t:06d}.md", blob(rel)))
    w(b"done\n")
    fi.stdin.close()
    if fi.wait() != 0:
        raise SystemExit("git fast-import failed")
    shas = {}
    for line in marks_file.read_text().splitlines():
        m, sha = line.split()
        shas[int(m[1:])] = sha
    marks_file.unlink()
    info = "".join(f"100644 {shas[m]}\t{path}\n" for path, m in files)
    git = ["git", "-C", str(root)]
    subprocess.run([*git, "update-index", "--index-info"], input=info.encode(), check=True,
                   env=ENV)
    tree = subprocess.run([*git, "write-tree"], capture_output=True, check=True,
                          env=ENV).stdout.decode().strip()
    commit = subprocess.run([*git, "commit-tree", tree, "-m", "bench graph"],
                            capture_output=True, check=True, env=ENV).stdout.decode().strip()
    subprocess.run([*git, "update-ref", "refs/heads/main", commit], check=True, env=ENV)
    subprocess.run([*git, "checkout-index", "-a", "-f"], check=True, env=ENV)
    subprocess.run([*git, "update-index", "-q", "--refresh"], check=False, env=ENV)


def timed(cmd: list[str], cwd: Path, shell: bool = False) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd if not shell else cmd[0], cwd=cwd, env=ENV, shell=shell,
                          capture_output=True)
    dt = time.perf_counter() - t0
    if proc.returncode not in (0, 1, 123):  # grep: 1 = no match; xargs: 123
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode(errors='replace')[-500:]}")
    return dt, proc.stdout


def median_of(fn, runs: int) -> float:
    return statistics.median(fn() for _ in range(runs))


def gasp_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("git-gasp")
    return [str(exe)] if exe.exists() else ["git", "gasp"]


def bench_size(base: Path, n: int, runs: int) -> dict[str, float]:
    root = base / f"graph-{n}"
    t0 = time.perf_counter()
    if not (root / "entities").is_dir():
        generate(root, n)
    gen = time.perf_counter() - t0
    g = gasp_cmd()
    wt = ["--worktree", str(root)]
    res: dict[str, float] = {"generate": gen}
    shutil.rmtree(root / ".git" / "perstate-index", ignore_errors=True)  # measure a cold build
    res["search_cold"], _ = timed([*g, "kg", "search", RARE, *wt], root)
    out = subprocess.run([*g, "kg", "search", RARE, "--json", "--limit", "1000", *wt], cwd=root,
                         env=ENV, capture_output=True, check=True).stdout
    import json

    ours_hits = {r["path"] for r in json.loads(out)["results"]}
    grep_hits = set(subprocess.run(["grep", "-rliE", RARE, "entities/"], cwd=root,
                                   capture_output=True, text=True).stdout.split())
    assert ours_hits == grep_hits, (len(ours_hits), len(grep_hits))

    ours, grep, findx = [], [], []
    for _ in range(runs):  # alternate so both see the same cache state
        ours.append(timed([*g, "kg", "search", RARE, *wt], root)[0])
        grep.append(timed(["grep", "-rliE", RARE, "entities/"], root)[0])
        findx.append(timed(
            [f"find entities/ -name '*.md' -print0 | xargs -0 grep -liE {RARE}"], root,
            shell=True)[0])
    res["search_warm"] = statistics.median(ours)
    res["grep_rliE"] = statistics.median(grep)
    res["find_xargs_grep"] = statistics.median(findx)
    res["search_common_word"] = median_of(
        lambda: timed([*g, "kg", "search", "harness", *wt], root)[0], runs)
    res["search_regex_hop2"] = median_of(
        lambda: timed([*g, "kg", "search", "lat.ncy thr", "--hop", "2", *wt], root)[0], runs)
    res["info"] = median_of(lambda: timed([*g, "kg", "info", *wt], root)[0], runs)
    view_out = base / f"view-{n}.html"
    res["view"] = median_of(
        lambda: timed([*g, "kg", "view", "--no-open", "--output", str(view_out), *wt], root)[0],
        max(1, min(runs, 3)))
    res["view_mb"] = view_out.stat().st_size / 1e6
    res["hits"] = float(len(ours_hits))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--dir", help="keep graphs here (reused across runs)")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="kg-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"git gasp kg benchmark: {base}  (medians of {args.runs} runs; seconds)")
    print(f"{'entities':>9} {'files':>8} {'gen':>7} {'cold':>7} {'search':>7} {'grep':>7} "
          f"{'find|x':>7} {'ratio':>6} {'r-min':>6} {'common':>7} {'hop2':>7} {'info':>7} "
          f"{'view':>7} {'MB':>6}")
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            r = bench_size(base, n, args.runs)
            ratio = r["grep_rliE"] / r["search_warm"]
            rmin = min(r["grep_rliE"], r["find_xargs_grep"]) / r["search_warm"]
            print(f"{n:>9} {n * 4:>8} {r['generate']:>7.2f} {r['search_cold']:>7.3f} "
                  f"{r['search_warm']:>7.3f} {r['grep_rliE']:>7.3f} {r['find_xargs_grep']:>7.3f} "
                  f"{ratio:>5.1f}x {rmin:>5.1f}x {r['search_common_word']:>7.3f} "
                  f"{r['search_regex_hop2']:>7.3f} {r['info']:>7.3f} {r['view']:>7.3f} "
                  f"{r['view_mb']:>6.1f}", flush=True)
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(ENV["PERSTATE_HOME"], ignore_errors=True)
        shutil.rmtree(ENV["PYTHONPYCACHEPREFIX"], ignore_errors=True)
    print("search = warm `git gasp kg search` (index cached); cold = first run, builds the "
          "index; grep = `grep -rliE Q entities/`; find|x = `find … | xargs -0 grep -liE Q`; "
          "ratio = grep / search; r-min = the faster of grep and find|x / search; common = a "
          "word in most files; hop2 = a regex with --hop 2")


if __name__ == "__main__":
    main()
