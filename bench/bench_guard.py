"""Benchmark the pre-commit guard at repository scale: `git commit` with the hook vs
without, measured round-robin in one run.

Run: ``.venv/bin/python bench/bench_guard.py [--files F] [--events N] [--append K]
[--commits C] [--runs R] [--baseline DIR] [--quick]``

Builds with ``git fast-import``, then packs with ``git gc --aggressive`` (the way a
real repository arrives), an agent repository (``git gasp init``, hooks installed with
``git gasp install-hooks``) tracking F files (default 20,000) in nested directories
beside the agent's files, whose log holds N conformant events (default 100,000, as
goal.created + ops pairs). It then times committing K appended events (default 20):
the same change committed by ``git commit`` with the guard and by ``git commit
--no-verify``, alternating, reset between runs. A second repository is built the same
way but its log reached that size over C commits (default 2,000; 0 skips it): a guard
that walked the history would grow with C.

The guard caches an index of the committed log per blob (under .git/gasp): the first
guarded commit ("cold") builds it; the medians are over the later ones. Also printed:
the hook alone (``git gasp hook pre-commit`` on the staged change), the floor any
hook in Python pays (the hook's interpreter running ``git gasp --version``), and the
hook alone split into the interpreter's start, the hook's imports and the guard's
work. Prints medians and ratios; asserts only that the guarded commits succeed.

The hook runs as after a pip install: from a fresh virtualenv (in the temp dir) that
finds git_gasp in a checkout and its dependencies in this interpreter's site-packages,
with bytecode cached (no editable-install finder, no recompiling on every start: either
would add tens of milliseconds to each hook). ``--baseline DIR``: also time the guard
of the checkout DIR (e.g. the code before a change) in the same round-robin, its hook
swapped in before each of its commits, so both meet the same machine load.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from installed import interpreter  # noqa: E402

from tests.testing.events import goal_pair  # noqa: E402

LOG = "state/events.jsonl"
WHEN = 1767225600  # 2026-01-01T00:00:00Z
HOOKS = ("pre-commit", "pre-merge-commit")


def git(cwd: pathlib.Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def tree_paths(files: int) -> list[bytes]:
    """`files` paths in a project-like tree: src/<pkg>/<module>/<file> and docs/."""
    paths = []
    for n in range(files):
        pkg, rest = divmod(n, 400)
        mod, leaf = divmod(rest, 20)
        top = b"docs" if pkg % 10 == 9 else b"src"
        paths.append(b"%s/pkg%03d/mod%02d/file%02d.%s"
                     % (top, pkg, mod, leaf, b"md" if top == b"docs" else b"py"))
    return paths


def make_repo(base: pathlib.Path, gasp: list[str], name: str, files: int, events: int,
              commits: int) -> pathlib.Path:
    """An agent repo with `files` tracked files and a log of `events` events, then
    `commits` - 1 more commits touching another file, packed by `git gc --aggressive`."""
    subprocess.run([*gasp, "init", name, "--agent-id", "bench"], cwd=base, check=True,
                   capture_output=True)
    repo = base / name
    parent = git(repo, "rev-parse", "HEAD").strip()
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    w = proc.stdin.write
    data = b"".join(goal_pair(i) for i in range(events // 2))
    w(b"commit refs/heads/main\ncommitter b <b@b> %d +0000\ndata 11\nthe project\n"
      b"from %s\n" % (WHEN, parent))
    for i, path in enumerate(tree_paths(files)):
        body = b"# %s\n\n%s" % (path, b"line %d of a source file\n" % i * (4 + i % 13))
        w(b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(body), body))
    w(b"M 100644 inline %s\ndata %d\n" % (LOG.encode(), len(data)))
    w(data)
    w(b"\n")
    for i in range(1, commits):
        note = b"%d\n" % i
        w(b"commit refs/heads/main\ncommitter b <b@b> %d +0000\ndata 5\nnote\n"
          b"M 100644 inline notes.txt\ndata %d\n%s\n" % (WHEN + i, len(note), note))
    proc.stdin.close()
    if proc.wait():
        raise SystemExit("git fast-import failed")
    git(repo, "gc", "-q", "--aggressive", "--prune=now")
    git(repo, "reset", "-q", "--hard", "main")
    return repo


def install_hooks(repo: pathlib.Path, gasp: list[str]) -> dict[str, bytes]:
    """`git gasp install-hooks` with this CLI; the hook files it wrote."""
    proc = subprocess.run([*gasp, "install-hooks"], cwd=repo, capture_output=True)
    if proc.returncode:
        raise SystemExit(f"install-hooks failed: {proc.stderr.decode(errors='replace')}")
    hooks = repo / ".git" / "hooks"
    assert not list(hooks.glob("*.legacy")), "install-hooks chained a hook"
    return {name: (hooks / name).read_bytes() for name in HOOKS}


class Timer:
    """Commits of the same appended lines in one repo, each reset afterwards."""

    def __init__(self, repo: pathlib.Path, extra: bytes,
                 variants: dict[str, tuple[list[str], dict[str, bytes]]]) -> None:
        self.repo, self.extra, self.variants = repo, extra, variants
        self.head = git(repo, "rev-parse", "HEAD").strip().decode()

    def stage(self) -> None:
        with open(self.repo / LOG, "ab") as f:
            f.write(self.extra)
        git(self.repo, "add", LOG)

    def use(self, variant: str) -> None:
        for name, data in self.variants[variant][1].items():
            (self.repo / ".git" / "hooks" / name).write_bytes(data)

    def commit(self, variant: str | None) -> float:
        """One `git commit` with `variant`'s guard (None: --no-verify)."""
        if variant is not None:
            self.use(variant)
        self.stage()
        args = ["commit", "-q", "-m", "bench"] + ([] if variant else ["--no-verify"])
        start = time.perf_counter()
        proc = subprocess.run(["git", *args], cwd=self.repo, capture_output=True)
        took = time.perf_counter() - start
        if proc.returncode:
            raise SystemExit(f"commit failed: {proc.stderr.decode(errors='replace')}")
        git(self.repo, "reset", "-q", "--hard", self.head)
        return took

    def hook_alone(self, variant: str) -> float:
        self.stage()
        start = time.perf_counter()
        proc = subprocess.run([*self.variants[variant][0], "hook", "pre-commit"],
                              cwd=self.repo, capture_output=True)
        took = time.perf_counter() - start
        if proc.returncode:
            raise SystemExit(f"hook failed: {proc.stderr.decode(errors='replace')}")
        git(self.repo, "reset", "-q", "--hard", self.head)
        return took

    def drop_cache(self) -> None:
        for old in (self.repo / ".git" / "gasp").glob("guard-*.facts"):
            old.unlink()


# What the hook's interpreter does before the guard works, step by step: start (with
# the venv's site), import what the hook imports (a checkout without the click-free
# hook imports the click CLI), and the CLI with click (`--version`).
STEPS = {"start": ["-c", "pass"],
         "imports": ["-c", "try:\n import git_gasp.cli.commands.githook_run, git_gasp.guard.warm\n"
                     "except ImportError:\n try:\n"  # a checkout before the githook_ names
                     "  import git_gasp.cli.commands.hook_run,"  # layout: keep
                     " git_gasp.guard.warm\n"
                     " except ImportError:\n"  # one before the click-free hook
                     "  import git_gasp.cli.main, git_gasp.cli.commands.hooks\n"  # layout: keep
                     "import git_gasp.guard.commit_guard, git_gasp.guard.rejection"],
         "version": ["-m", "git_gasp.cli.main", "--version"]}


def floors(clis: dict[str, list[str]], runs: int) -> dict[str, dict[str, float]]:
    """Per CLI and `STEPS` entry: its interpreter doing just that, round-robin."""
    times = {name: {step: [] for step in STEPS} for name in clis}
    for _ in range(runs):
        for name, gasp in clis.items():
            for step, args in STEPS.items():
                start = time.perf_counter()
                subprocess.run([gasp[0], "-P", *args], capture_output=True, check=True)
                times[name][step].append(time.perf_counter() - start)
    return {name: {step: statistics.median(found) for step, found in steps.items()}
            for name, steps in times.items()}


def measure(timer: Timer, runs: int) -> dict[str, dict[str, float]]:
    """Per variant: medians of plain and guarded commits, the hook alone, the cold run."""
    timer.commit(None)  # warm the page cache and git's index stat data
    for variant in timer.variants:  # compile and cache each variant's bytecode
        timer.hook_alone(variant)
    cold = {}
    for variant in timer.variants:
        timer.drop_cache()
        cold[variant] = timer.commit(variant)
    plain: list[float] = []
    guarded: dict[str, list[float]] = {v: [] for v in timer.variants}
    alone: dict[str, list[float]] = {v: [] for v in timer.variants}
    for _ in range(runs):  # round-robin: noise hits every side alike
        plain.append(timer.commit(None))
        for variant in timer.variants:
            guarded[variant].append(timer.commit(variant))
            alone[variant].append(timer.hook_alone(variant))
    return {v: {"plain": statistics.median(plain), "guarded": statistics.median(guarded[v]),
                "alone": statistics.median(alone[v]), "cold": cold[v]} for v in timer.variants}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--append", type=int, default=20)
    ap.add_argument("--commits", type=int, default=2_000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--baseline", type=pathlib.Path,
                    help="another checkout whose guard is timed in the same run")
    ap.add_argument("--quick", action="store_true", help="2,000 files, 10,000 events")
    args = ap.parse_args()
    if args.quick:
        args.files, args.events, args.commits, args.runs = 2_000, 10_000, 200, 5
    with tempfile.TemporaryDirectory() as tmp:
        base = pathlib.Path(tmp)
        home = base / "home"
        home.mkdir()
        os.environ.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b",
                          GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
                          GIT_COMMITTER_EMAIL="b@b", PYTHONPYCACHEPREFIX=str(base / "pyc"))
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
        sources = {"this": HERE}
        if args.baseline is not None:
            sources["baseline"] = args.baseline.resolve()
        clis = {name: interpreter(base, f"venv-{name}", src) for name, src in sources.items()}
        extra = b"".join(goal_pair(10**7 + i) for i in range(args.append // 2))
        histories = [("1 commit", 1)]
        if args.commits > 1:
            histories.append((f"{args.commits:,} commits", args.commits))
        rows = []
        for label, commits in histories:
            start = time.perf_counter()
            repo = make_repo(base, clis["this"], f"r{commits}", args.files, args.events,
                             commits)
            built = time.perf_counter() - start
            variants = {name: (cli, install_hooks(repo, cli)) for name, cli in clis.items()}
            size = (repo / LOG).stat().st_size
            tracked = git(repo, "ls-files", "-z").count(b"\0")
            n_commits = int(git(repo, "rev-list", "--count", "HEAD"))
            print(f"built {label}: {tracked:,} tracked files, {n_commits:,} commits, "
                  f"log {size / 1e6:.1f} MB, in {built:.0f} s", flush=True)
            rows.append((label, measure(Timer(repo, extra, variants), args.runs)))
        starts = floors(clis, args.runs)
        print(f"log: {args.events:,} events; commit appends {args.append} events; "
              f"median of {args.runs} runs, round-robin")
        for name, src in sources.items():
            print(f"  {name}: git_gasp from {src}")
        print(f"{'history':>16} {'code':>9} {'no hook s':>10} {'guard s':>8} {'ratio':>6} "
              f"{'cold s':>7} {'ratio':>6} {'hook alone s':>13}")
        for label, found in rows:
            for name, m in found.items():
                print(f"{label:>16} {name:>9} {m['plain']:>10.3f} {m['guarded']:>8.3f} "
                      f"{m['guarded'] / m['plain']:>6.2f} {m['cold']:>7.3f} "
                      f"{m['cold'] / m['plain']:>6.2f} {m['alone']:>13.3f}")
        for name, value in starts.items():
            print(f"floor ({name}): the hook's interpreter running `git gasp --version`: "
                  f"{value['version']:.3f} s")
        for name, value in starts.items():
            alone = rows[0][1][name]["alone"]
            print(f"hook alone ({name}, {rows[0][0]}) = interpreter start "
                  f"{value['start']:.3f} s + the hook's imports "
                  f"{value['imports'] - value['start']:.3f} s + the guard's work "
                  f"{alone - value['imports']:.3f} s")
        if len(rows) > 1:
            for name in clis:
                flat = rows[1][1][name]["guarded"] / rows[0][1][name]["guarded"]
                print(f"guard time ({name}), long history / short history: {flat:.2f} "
                      "(~1: the guard never walks the history)")


if __name__ == "__main__":
    main()
