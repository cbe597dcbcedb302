"""Benchmark: start-up time of `git-gasp --version` and of every command's `--help`
against a bare `import click`.

Times, as subprocesses of the same interpreter, interleaved so background load hits
both alike, and with bytecode cached (as after a pip install): (a) baseline
`python -c 'import click'` and (b) the venv's `git-gasp` console script with
`--version`; prints medians, the ratio (b)/(a) and the difference. Then lists, from
`python -X importtime`, every module from dulwich, yaml, orjson or
git_gasp.protocol/store/conformance imported at start-up (there should be none): once
for `import git_gasp.cli.main` and once for a whole `--version` run in-process.
Then times `git-gasp --help`, `git-gasp CMD --help` (the man page) and `git-gasp CMD -h`
(click's help, the command's module loaded) for every command of
`cli.table.COMMANDS` (as ``python -m git_gasp.cli.main``); with ``--baseline PYTHON``
(another checkout's interpreter, e.g. the code before a change) the same runs of that
interpreter are interleaved with these and each row gets the ratio this/baseline.
Never asserts.

    .venv/bin/python bench/bench_startup.py [--quick] [--repeat N] [--baseline PYTHON]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Heavy or layered modules the CLI must load lazily (DESIGN §2).
FORBIDDEN = re.compile(r"^(dulwich|yaml|_yaml|orjson|git_gasp\.(protocol|store|conformance))(\.|$)")
IMPORT_ONLY = "import git_gasp.cli.main"
RUN_VERSION = (
    "import sys\n"
    "from git_gasp.cli.main import main\n"
    "sys.argv = ['git-gasp', '--version']\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
)


def find_script() -> str:
    """The console script next to this interpreter (the venv's), else on PATH."""
    here = Path(sys.executable).with_name("git-gasp")
    if here.exists():
        return str(here)
    found = shutil.which("git-gasp")
    if found is None:
        sys.exit("git-gasp console script not found; `pip install -e .` into this venv")
    return found


def _run(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def time_startup(script: str, repeat: int, env: dict[str, str]) -> dict[str, list[float]]:
    runs = {
        "click": [sys.executable, "-c", "import click"],
        "gasp": [script, "--version"],
    }
    for argv in runs.values():  # warm the page cache and compile the bytecode
        _run(argv, env)
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeat):
        for key, argv in runs.items():
            times[key].append(_run(argv, env))
    return times


def time_help(pythons: dict[str, str], repeat: int, env: dict[str, str]
              ) -> dict[tuple[str, str], list[float]]:
    """(interpreter label, argv text) -> times of ``python -m git_gasp.cli.main ARGS``
    for ``--version``, ``--help`` and every command's ``--help``, interleaved."""
    sys.path.insert(0, str(ROOT))
    from git_gasp.cli.table import COMMANDS

    argvs = [["--version"], ["--help"], *([name, "--help"] for name in COMMANDS),
             *([name, "-h"] for name in COMMANDS)]  # --help shows the man page; -h loads
    # the command's module and prints click's help
    runs = {(label, " ".join(argv)): [python, "-m", "git_gasp.cli.main", *argv]
            for argv in argvs for label, python in pythons.items()}
    with tempfile.TemporaryDirectory() as cwd:
        for argv in runs.values():  # compile the bytecode, warm the page cache
            _run_in(argv, env, cwd)
        times: dict[tuple[str, str], list[float]] = {k: [] for k in runs}
        for _ in range(repeat):
            for key, argv in runs.items():
                times[key].append(_run_in(argv, env, cwd))
    return times


def _run_in(argv: list[str], env: dict[str, str], cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                   cwd=cwd)
    return time.perf_counter() - t0


def report_help(times: dict[tuple[str, str], list[float]], click_s: float) -> None:
    labels = sorted({label for label, _ in times}, key=lambda x: x != "this")
    print()
    print(f"{'python -m git_gasp.cli.main ...':<34}"
          + "".join(f"{label + ' ms':>14}" for label in labels)
          + f"{'vs click':>10}" + (f"{'this/base':>11}" if len(labels) > 1 else ""))
    ratios = []
    for args in dict.fromkeys(a for _, a in times):
        med = {label: statistics.median(times[(label, args)]) for label in labels}
        row = f"{args:<34}" + "".join(f"{med[label] * 1000:>14.1f}" for label in labels)
        row += f"{med['this'] / click_s:>9.2f}x"
        if len(labels) > 1:
            ratios.append(med["this"] / med["baseline"])
            row += f"{ratios[-1]:>10.2f}x"
        print(row)
    if ratios:
        print(f"this/baseline: median {statistics.median(ratios):.2f}x, "
              f"worst {max(ratios):.2f}x")


def imported_modules(code: str, env: dict[str, str]) -> list[tuple[str, int, int]]:
    """(module, self µs, cumulative µs) for every module `code` imports, in order."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    out = []
    for row in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", row)
        if m:
            out.append((m.group(4), int(m.group(1)), int(m.group(2))))
    if proc.returncode != 0:
        print(f"  (the probe exited {proc.returncode}: {proc.stderr.strip()[-300:]})")
    return out


def report_imports(label: str, mods: list[tuple[str, int, int]]) -> None:
    bad = [m for m in mods if FORBIDDEN.match(m[0])]
    ours = [m for m in mods if m[0].startswith("git_gasp")]
    top = next((m for m in mods if m[0] == "git_gasp.cli.main"), None)
    print(f"{label}: {len(mods)} modules imported")
    if top is not None:
        print(f"  git_gasp.cli.main cumulative import time: {top[2] / 1000:.1f} ms")
    print("  git_gasp modules: " + ", ".join(m[0] for m in ours))
    if bad:
        print(f"  FORBIDDEN at start-up ({len(bad)}):")
        for name, self_us, cum_us in bad:
            print(
                f"    {name:<40} self {self_us / 1000:6.1f} ms  cumulative {cum_us / 1000:6.1f} ms"
            )
    else:
        print(
            "  forbidden at start-up (dulwich, yaml, orjson, git_gasp.protocol/store/"
            "conformance): none"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 repetitions instead of 40")
    ap.add_argument("--repeat", type=int, default=None, help="repetitions of each command")
    ap.add_argument("--baseline", default=None, metavar="PYTHON",
                    help="another checkout's interpreter, timed interleaved with this one")
    args = ap.parse_args()
    repeat = args.repeat or (10 if args.quick else 40)
    script = find_script()

    print(f"bench_startup: median of {repeat} interleaved runs each")
    print(
        f"python {platform.python_version()} ({sys.executable}) on {platform.machine()}, "
        f"{os.cpu_count()} CPUs"
    )
    print(f"console script: {script} (bytecode cached under a temporary prefix)")
    # Both commands run with bytecode cached under a private prefix, as after a pip
    # install; an environment with PYTHONDONTWRITEBYTECODE=1 and an editable checkout
    # would otherwise recompile git_gasp on every start but not click.
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        times = time_startup(script, repeat, env)
        imports = [
            ("`import git_gasp.cli.main`", IMPORT_ONLY),
            ("`git-gasp --version` run in-process", RUN_VERSION),
        ]
        probes = [(label, imported_modules(code, env)) for label, code in imports]
        pythons = {"this": sys.executable}
        if args.baseline:
            pythons["baseline"] = args.baseline
        helps = time_help(pythons, repeat, env)
    med = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    print()
    print(f"{'command':<38}{'median ms':>11}{'min ms':>9}{'vs (a)':>9}")
    for label, key in (
        ("(a) python -c 'import click' [baseline]", "click"),
        ("(b) git-gasp --version", "gasp"),
    ):
        print(
            f"{label:<38}{med[key] * 1000:>11.1f}{best[key] * 1000:>9.1f}"
            f"{med[key] / med['click']:>8.2f}x"
        )
    print(
        f"(b)/(a) = {med['gasp'] / med['click']:.2f}x; git-gasp adds "
        f"{(med['gasp'] - med['click']) * 1000:+.1f} ms over importing click"
    )
    report_help(helps, med["click"])
    for label, mods in probes:
        print()
        report_imports(label, mods)


if __name__ == "__main__":
    main()
