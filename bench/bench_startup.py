"""Benchmark: start-up time of `git-gasp --version` against a bare `import click`.

Times, as subprocesses of the same interpreter, interleaved so background load hits
both alike, and with bytecode cached (as after a pip install): (a) baseline
`python -c 'import click'` and (b) the venv's `git-gasp` console script with
`--version`; prints medians, the ratio (b)/(a) and the difference. Then lists, from
`python -X importtime`, every module from dulwich, yaml, orjson or
git_gasp.protocol/store/conformance imported at start-up (there should be none): once
for `import git_gasp.cli.main` and once for a whole `--version` run in-process.
Never asserts.

    .venv/bin/python bench/bench_startup.py [--quick] [--repeat N]
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
    for label, mods in probes:
        print()
        report_imports(label, mods)


if __name__ == "__main__":
    main()
