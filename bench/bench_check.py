"""Benchmark the whole `git gasp check` command on packed, realistic agent repositories.

    .venv/bin/python bench/bench_check.py [--only NAME] [--repeat N] [--base-repeat N]
                                          [--sample K] [--base-timeout S]
                                          [--quick] [--repos DIR] [--dev-install]
                                          [--against DIR]

On each repository built by bench/repos.py (default /work/benchrepos/<name>; with
``--quick`` a tenth-size set is built in a temp dir), working on a private copy, it
times round-robin (medians of --repeat, all in one run):

  (a) the reference checker's method (bench/baselines.py): rev-list + one `git show`
      per commit, prefix compare, for the log alone and for every append-only file
      (``--sample K``: on every K-th pair of consecutive versions only, its time scaled
      to all pairs: on big a full run takes hours, each `git show` rebuilding a version
      of up to 100 MB through up to 50 deltas);
  (b) bench/catfile_prefix.py: every version of the append-only files through ONE
      `git cat-file --batch`, compared by prefix with its parent's (a subprocess;
      ``--base-timeout S`` stops it after S seconds, its time then a lower bound);
  (c) cold `git gasp check --no-cache`: the command as a subprocess, installed as pip
      leaves it (bench/installed.py: a fresh venv, no editable-install finder;
      ``--dev-install``: this venv's own `git-gasp`);
  (d) a cached re-check: after a warm `git gasp check`, ONE new commit appending ~20
      conformant events, made (1) with our hooks installed (`git gasp install-hooks`,
      `git commit`) and (2) with a plain `git commit --no-verify`, then `git gasp check`
      is timed; the commit is reset away before the next round.

``--against DIR``: the checkout DIR (e.g. ``git archive main`` unpacked: the code before
a change) is timed too, installed-like (``installed.interpreter``), its (c) right after
ours in each round and its (d) rounds interleaved with ours on copies of their own
(the two share no cache), and this/that ratios are printed.

It prints absolute seconds and the ratios against the targets of issue #11: cold vs
(a) >= 20x, cold vs (b) >= 2.5x, cold / re-check >= 50x on `big`; then a per-check
breakdown of a cold check run in-process (load, parse, fold and each of the seven
checks with timers), and once the top `python -X importtime` offenders of `git gasp
check`. It asserts nothing about time (it does report a check that fails).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import repos  # noqa: E402
from baselines import LOG, RefResult, append_only_paths, reference_check  # noqa: E402
from installed import installed_bin, interpreter  # noqa: E402

from git_gasp.protocol.envelope import serialize  # noqa: E402

BIN = Path(sys.executable).parent
TARGETS = {"ref": 20.0, "catfile": 2.5, "recheck": 50.0}
NEW_EVENTS = 20


def env_for(home: Path, bin_dir: Path = BIN) -> dict[str, str]:
    """Hermetic git (no user or system config), `bin_dir`'s git-gasp first on PATH."""
    env = repos.git_env()
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"})
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def must(proc: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    if proc.returncode:
        out = (proc.stdout + proc.stderr).decode(errors="replace").strip()[-1500:]
        print(f"  WARNING: {what} exited {proc.returncode}:\n{out}", flush=True)
    return proc


def new_events(n: int) -> bytes:
    """~NEW_EVENTS conformant events of a new run (round n), in canonical bytes."""
    events, _ = repos.Stream(repos.Gen(9_000 + n, 0.6)).take(NEW_EVENTS)
    return b"".join(serialize(e) for e in events)


# --- (a)-(c): cold ---------------------------------------------------------------------


def sampled_reference(root: Path, paths: list[str], every: int) -> list[RefResult]:
    """The reference method on every `every`-th pair of consecutive listed commits
    (both versions shown and compared), its time scaled to all the pairs: for a history
    whose full run would take too long (big: each `git show` rebuilds a 100 MB version
    through up to 50 deltas)."""
    out = []
    for path in paths:
        t0 = time.perf_counter()
        listed = subprocess.run(["git", "rev-list", "--reverse", "--full-history", "HEAD", "--",
                                 path], cwd=root, capture_output=True,
                                check=True).stdout.split()
        t_list = time.perf_counter() - t0
        picks = range(1, len(listed), every)
        bad = []
        t0 = time.perf_counter()
        for i in picks:
            old, new = (subprocess.run(["git", "show", f"{sha.decode()}:{path}"], cwd=root,
                                       capture_output=True).stdout
                        for sha in (listed[i - 1], listed[i]))
            if not new.startswith(old):
                bad.append(listed[i].decode())
        # Each pick shows two versions; a full run shows each version once.
        scale = len(listed) / max(2 * len(picks), 1)
        out.append(RefResult(path, len(listed), bad,
                             t_list + (time.perf_counter() - t0) * scale))
    return out


def time_cold(root: Path, env: dict[str, str], repeat: int, base_repeat: int,
              sample: int = 1, base_timeout: float | None = None,
              against: list[str] | None = None) -> dict[str, list[float]]:
    """(a) and (b) in the first `base_repeat` rounds, (c) in every round; with `sample`
    > 1, (a) is `sampled_reference`; (b) is stopped after `base_timeout` seconds (its
    time then a lower bound)."""
    paths = append_only_paths(root)
    times: dict[str, list[float]] = {"ref_log": [], "ref_all": [], "catfile": [], "cold": [],
                                     "cold_against": []}
    found: dict[str, object] = {}

    def cold_against() -> None:
        if against is not None:
            t, proc = timed(lambda: run([*against, "check", "--no-cache"], root, env))
            must(proc, "--against: git gasp check --no-cache")
            times["cold_against"].append(t)
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        for i in range(repeat):
            if i >= base_repeat:
                t, proc = timed(lambda: run(["git", "gasp", "check", "--no-cache"], root, env))
                times["cold"].append(t)
                cold_against()
                continue
            if sample > 1:
                res = sampled_reference(root, paths, sample)
                t = sum(r.seconds for r in res)
            else:
                t, res = timed(lambda: reference_check(root, paths))
            by_path = {r.path: r for r in res}
            times["ref_all"].append(t)
            times["ref_log"].append(by_path[LOG].seconds)  # the log's share of that run
            argv = [sys.executable, str(HERE / "catfile_prefix.py"), str(root)]
            t0 = time.perf_counter()
            try:
                proc = subprocess.run(argv, cwd=root, env=env, capture_output=True,
                                      timeout=base_timeout)
                found["catfile_rc"] = proc.returncode
            except subprocess.TimeoutExpired:
                found["catfile_rc"] = "stopped"
            times["catfile"].append(time.perf_counter() - t0)
            t, proc = timed(lambda: run(["git", "gasp", "check", "--no-cache"], root, env))
            times["cold"].append(t)
            cold_against()
            if i == 0:
                must(proc, "git gasp check --no-cache")
                found["ref"] = by_path
                found["cold_out"] = proc.stdout.decode(errors="replace")
    finally:
        os.environ.clear()
        os.environ.update(old)
    return times | {"_found": found}  # type: ignore[operator]


# --- (d): one new commit, then a cached check ------------------------------------------


def time_recheck(hooked: Path, plain: Path, env: dict[str, str], repeat: int,
                 against: tuple[list[str], Path, Path] | None = None
                 ) -> dict[str, list[float]]:
    """Commit ~20 events with the hook / with --no-verify, then time `git gasp check`;
    with `against` (its CLI argv and its own hooked and plain copies), the same for it,
    round by round."""
    variants = [("", ["git", "gasp"], hooked, plain)]
    if against is not None:
        variants.append(("_against", *against))
    times: dict[str, list[float]] = {}
    for suffix, cli, hooked_root, plain_root in variants:
        must(run([*cli, "install-hooks"], hooked_root, env), "git gasp install-hooks")
        for root in (hooked_root, plain_root):
            must(run([*cli, "check"], root, env), "warm-up git gasp check")
        for key in ("commit_hook", "check_hook", "commit_plain", "check_plain"):
            times[key + suffix] = []
    for i in range(repeat):
        for suffix, cli, hooked_root, plain_root in variants:
            for key, root, extra in (("hook", hooked_root, []),
                                     ("plain", plain_root, ["--no-verify"])):
                data = new_events(i * 2 + (key == "plain"))
                with open(root / LOG, "ab") as fh:
                    fh.write(data)
                must(run(["git", "add", LOG], root, env), "git add")
                commit = ["git", "commit", "-q", *extra, "-m", f"run {i}: {NEW_EVENTS} events"]
                t, proc = timed(lambda argv=commit, cwd=root: run(argv, cwd, env))
                must(proc, f"git commit {' '.join(extra)}")
                times[f"commit_{key}{suffix}"].append(t)
                t, proc = timed(lambda cwd=root, c=cli: run([*c, "check"], cwd, env))
                must(proc, "cached git gasp check")
                times[f"check_{key}{suffix}"].append(t)
                must(run(["git", "reset", "-q", "--hard", "HEAD~1"], root, env), "git reset")
                # The user's state before the next round: HEAD checked (cache warm).
                must(run([*cli, "check"], root, env), "git gasp check after reset")
    return times


# --- in-process breakdown ----------------------------------------------------------------


def breakdown(root: Path, env: dict[str, str]) -> list[tuple[str, float]]:
    """Seconds of each stage of a cold check, in process (imports excluded: a check of a
    fresh `git gasp init` repo runs first, untimed)."""
    from git_gasp.conformance import checks
    from git_gasp.store.agent import load_agent

    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        tiny = root.parent / "tiny-agent"
        if not tiny.exists():
            tiny.mkdir()
            must(run(["git", "init", "-q", "-b", "main"], tiny, env), "git init")
            must(run(["git", "gasp", "init"], tiny, env), "git gasp init")
        checks.run_all(load_agent(tiny), use_cache=False)
        rows = []
        t, repo = timed(lambda: load_agent(root))
        rows.append(("load_agent (manifest + log bytes)", t))
        t, _ = timed(lambda: repo.parsed)
        rows.append(("parse_log", t))
        t, _ = timed(lambda: repo.folded)
        rows.append(("fold", t))
        stages = [
            ("1 envelope round-trip", lambda: checks.check_envelope(repo)),
            ("2 replay", lambda: checks.check_replay(repo)),
            ("3 vocabulary", lambda: checks.check_vocabulary(repo)),
            ("4 append-only in git (no cache)",
             lambda: checks.check_append_only(repo, use_cache=False)),
            ("5 causation integrity", lambda: checks.check_causation(repo)),
            ("6 restore", lambda: checks.check_restore(repo)),
            ("7 domain/ops consistency", lambda: checks.check_pairing(repo)),
        ]
        for label, fn in stages:
            t, res = timed(fn)
            rows.append((label + ("" if res.passed else "  FAILED"), t))
        return rows
    finally:
        os.environ.clear()
        os.environ.update(old)


def importtime(root: Path, env: dict[str, str], top: int = 12) -> list[str]:
    """The slowest imports of a `git gasp check --no-cache` run (self and cumulative)."""
    code = ("import sys\nfrom git_gasp.cli.main import main\n"
            f"sys.argv = ['git-gasp', 'check', '--no-cache', {str(root)!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n")
    run([sys.executable, "-c", code], root, env)  # compile the bytecode first
    proc = run([sys.executable, "-X", "importtime", "-c", code], root, env)
    mods = []
    for row in proc.stderr.decode(errors="replace").splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", row)
        if m:
            mods.append((m.group(4), int(m.group(1)), int(m.group(2)), len(m.group(3)) // 2))
    total = sum(m[1] for m in mods)
    out = [f"python -X importtime of `git gasp check --no-cache` (in-process): {len(mods)} "
           f"modules, {total / 1000:.0f} ms of imports in all"]
    out.append("  top by self time:")
    for name, self_us, cum_us, _ in sorted(mods, key=lambda m: -m[1])[:top]:
        out.append(f"    {name:<44} self {self_us / 1000:6.1f} ms   cumulative "
                   f"{cum_us / 1000:6.1f} ms")
    heads = [m for m in mods if m[3] == 0]
    out.append("  top-level imports by cumulative time:")
    for name, _, cum_us, _ in sorted(heads, key=lambda m: -m[2])[:top]:
        out.append(f"    {name:<44} {cum_us / 1000:6.1f} ms")
    return out


# --- report --------------------------------------------------------------------------------


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def verdict(ratio: float, target: float) -> str:
    return f"{'meets' if ratio >= target else 'MISSES'} >= {target:g}x"


def bench_repo(name: str, src: Path, work: Path, env: dict[str, str], repeat: int,
               base_repeat: int, with_imports: bool, sample: int = 1,
               base_timeout: float | None = None, against: list[str] | None = None) -> None:
    desc = repos.describe(name, src)
    print(f"\n== {name}: {desc['commits']} commits ({desc['merges']} merges), "
          f"{desc['events']:,} events, log {desc['log_bytes'] / 1e6:.1f} MB, facts "
          f"{desc['facts'][0]} + {desc['facts'][1]}, journal {desc['journal_lines']:,} lines, "
          f"{desc['packs']} pack(s) {desc['pack_kib'] / 1024:.1f} MiB, "
          f"{desc['loose_objects']} loose", flush=True)
    hows = ("cold", "hooked", "plain") + (("hooked-against", "plain-against") if against
                                           else ())
    copies = [work / f"{name}-{how}" for how in hows]
    for dst in copies:
        shutil.copytree(src, dst, symlinks=True)
    cold_copy, hooked, plain = copies[:3]
    times = time_cold(cold_copy, env, repeat, base_repeat, sample, base_timeout, against)
    found = times.pop("_found")
    ref = found["ref"]
    rel = time_recheck(hooked, plain, env, repeat,
                       (against, copies[3], copies[4]) if against else None)
    m = {k: med(v) for k, v in (times | rel).items() if v}
    print(f"(medians of {repeat} round-robin runs, (a) and (b) of {min(base_repeat, repeat)}; "
          "seconds)")
    listed = {p: r.listed for p, r in ref.items()}
    falsely = sum(len(r.violations) for r in ref.values())
    how = (f"; SAMPLED: 1 pair of consecutive versions in {sample} shown and compared, "
           "the time scaled to all" if sample > 1 else "")
    print(f"  (a) reference method, log alone       {m['ref_log']:9.3f}   "
          f"({listed.get(LOG, 0)} `git show`{how})")
    print(f"  (a) reference method, all {len(ref)} files     {m['ref_all']:9.3f}   "
          f"({sum(listed.values())} `git show`"
          + (f"; it reports {falsely} violations, wrongly, on a branchy history)"
             if falsely else ")"))
    rc = found["catfile_rc"]
    print(f"  (b) catfile_prefix.py                 {m['catfile']:9.3f}"
          + ("" if rc == 0 else f"   (STOPPED after --base-timeout {base_timeout:g} s: a lower "
             "bound)" if rc == "stopped" else f"   (exit {rc}: it reports violations)"))
    print(f"  (c) git gasp check --no-cache (cold)  {m['cold']:9.3f}")
    print(f"  (d) +1 commit of {NEW_EVENTS} events, then `git gasp check` (cache warm):")
    for key, label in (("hook", "hooks installed"), ("plain", "--no-verify    ")):
        print(f"        {label}: commit {m['commit_' + key]:7.3f}   check {m['check_' + key]:7.3f}")
    r_log, r_all = m["ref_log"] / m["cold"], m["ref_all"] / m["cold"]
    r_cat = m["catfile"] / m["cold"]
    print(f"  ratios: (a log)/(c) = {r_log:6.1f}x  [{verdict(r_log, TARGETS['ref'])}]   "
          f"(a all)/(c) = {r_all:6.1f}x")
    print(f"          (b)/(c)     = {'>=' if rc == 'stopped' else ''}{r_cat:6.2f}x  "
          f"[{verdict(r_cat, TARGETS['catfile'])}]")
    for key, label in (("check_hook", "hooks"), ("check_plain", "--no-verify")):
        ratio = m["cold"] / m[key]
        tail = f"  [{verdict(ratio, TARGETS['recheck'])} on big]" if name == "big" else ""
        print(f"          (c)/(d {label}) = {ratio:6.1f}x{tail}")
    if against:
        ratio = m["cold"] / m["cold_against"]
        print(f"  --against: (c) {m['cold_against']:.3f} s, this/that {ratio:.2f}x;"
              " (d) check after a commit:")
        for key, label in (("hook", "hooks installed"), ("plain", "--no-verify    ")):
            this, that = m["check_" + key], m["check_" + key + "_against"]
            print(f"        {label}: {that:7.3f} -> {this:7.3f} s, this/that {this / that:.2f}x")
        print(f"      (a log)/(c), (b)/(c) of --against: {m['ref_log'] / m['cold_against']:.1f}x, "
              f"{m['catfile'] / m['cold_against']:.2f}x")
    print("  cold check in-process, per stage:")
    rows = breakdown(cold_copy, env)
    total = sum(t for _, t in rows)
    for label, t in rows:
        print(f"    {label:<40} {t:8.3f} s  {100 * t / total:5.1f} %")
    print(f"    {'total in-process':<40} {total:8.3f} s   (the subprocess adds "
          f"{m['cold'] - total:+.3f} s: interpreter, imports, output)")
    if with_imports:
        for line in importtime(cold_copy, env):
            print("  " + line)
    for dst in copies:
        shutil.rmtree(dst, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=repos.NAMES, action="append", help="only repo NAME")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs of each (default 3)")
    ap.add_argument("--base-repeat", type=int, default=None,
                    help="runs of the slow baselines (a) and (b) (default: --repeat)")
    ap.add_argument("--sample", type=int, default=1, metavar="K",
                    help="(a) on every K-th pair of versions only, scaled to all (big)")
    ap.add_argument("--base-timeout", type=float, default=None, metavar="S",
                    help="stop (b) after S seconds and report that as a lower bound")
    ap.add_argument("--quick", action="store_true",
                    help="build tenth-size repos in a temp dir; 2 runs each")
    ap.add_argument("--repos", type=Path, default=Path("/work/benchrepos"),
                    help="where bench/repos.py built them")
    ap.add_argument("--dev-install", action="store_true",
                    help="time this venv's git-gasp (an editable install's finder adds "
                         "~20 ms a start) instead of an installed-like one")
    ap.add_argument("--against", type=Path, default=None, metavar="DIR",
                    help="also time the checkout DIR (e.g. main's code), interleaved")
    args = ap.parse_args()
    repeat = args.repeat or (2 if args.quick else 3)
    names = args.only or list(repos.NAMES)
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    print(f"bench_check: median of {repeat}; python {platform.python_version()} on "
          f"{platform.machine()}, {os.cpu_count()} CPUs; {git_version.strip()}")
    with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        work = Path(tmp)
        (work / "home").mkdir()
        bin_dir = BIN if args.dev_install else installed_bin(work, HERE.parent)
        env = env_for(work / "home", bin_dir)
        print(f"git-gasp: {'this venv' if args.dev_install else 'installed-like'} "
              f"({bin_dir / 'git-gasp'})")
        against = (interpreter(work, "venv-against", args.against.resolve())
                   if args.against is not None else None)
        first = True
        for name in names:
            src = args.repos / name
            if args.quick:
                src = work / "built" / name
                t, _ = timed(lambda n=name, dst=src: repos.build(n, dst, quick=True))
                print(f"built {name} (--quick) in {t:.1f} s", flush=True)
            elif not (src / ".git").is_dir():
                print(f"\n== {name}: {src} not built (bench/repos.py --out {args.repos}); "
                      "skipped")
                continue
            bench_repo(name, src, work, env, repeat, args.base_repeat or repeat,
                       with_imports=first, sample=args.sample, base_timeout=args.base_timeout,
                       against=against)
            first = False


if __name__ == "__main__":
    main()
