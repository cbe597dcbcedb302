"""Benchmark: redaction time per byte on adversarial text against benign text.

Inputs, each at 100 KB and 1 MB (seeded, deterministic):

  benign      the shipped real sessions (Claude Code transcript and hook payloads,
              Codex rollout and hook payloads), their raw JSON lines repeated
  ab-         "ab-ab-ab-…"            (the shape that took 21 s for 21 KB before)
  a.          "a.a.a.…"
  x=          "x=x=x=…"
  base64      one random base64 run
  hex         one random hex run
  words       "password token secret …" repeated (every word a detector's anchor)
and two dense-secret inputs, where every few bytes is a secret to replace (their cost
is per secret replaced: linear, but not held to the 3x target):

  token:      "token: token: …"        (an assignment every 7 bytes)
  flags       "mysql -pmysql -p…"      (a password flag every 8 bytes)

Each input is redacted with a fresh ``Redactor().text``, the sizes and kinds
round-robin, ``--repeat`` times; the figure is the median. Printed: ns per byte,
the ratio of 1 MB to 100 KB per byte (linear time: target <= 1.5x) and of each
adversarial input to benign text of the same size (target <= 3x), beside the
absolute times. Then the hook's path for the issue's 39 KB ``ab-ab-…`` PostToolUse
payload: cut to its stored size and redacted. Never asserts.

    .venv/bin/python bench/bench_redact.py [--quick] [--repeat R]
"""

from __future__ import annotations

import argparse
import base64
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_gasp.adapters.payloads import trim_payload  # noqa: E402
from git_gasp.redact.redactor import Redactor  # noqa: E402

SEED = 20261201
SAMPLES = ROOT / "tests" / "adapters" / "data"
SIZES = (100_000, 1_000_000)
TARGET_SIZE_RATIO = 1.5
TARGET_KIND_RATIO = 3.0
UNITS = {"ab-": "ab-", "a.": "a.", "x=": "x=", "words": "password token secret ",
         "token:": "token: ", "flags": "mysql -p"}
ADVERSARIAL = ("ab-", "a.", "x=", "base64", "hex", "words")
DENSE = ("token:", "flags")
KINDS = ("benign", *ADVERSARIAL, *DENSE)


def _benign_source() -> str:
    lines: list[str] = []
    for path in sorted(SAMPLES.glob("*/*.jsonl")):
        lines += [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return "\n".join(lines) + "\n"


def make_input(kind: str, size: int, benign: str) -> str:
    rng = random.Random(f"{SEED}:{kind}:{size}")
    if kind == "benign":
        return (benign * (size // len(benign) + 1))[:size]
    if kind == "base64":
        return base64.b64encode(rng.randbytes(size * 3 // 4 + 3)).decode()[:size]
    if kind == "hex":
        return rng.randbytes(size // 2 + 1).hex()[:size]
    unit = UNITS[kind]
    return (unit * (size // len(unit) + 1))[:size]


def _time(text: str) -> float:
    t0 = time.perf_counter()
    Redactor().text(text)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10 KB and 100 KB, one round")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    sizes = (10_000, 100_000) if args.quick else SIZES
    repeat = 1 if args.quick else args.repeat
    benign = _benign_source()
    inputs = {(k, n): make_input(k, n, benign) for k in KINDS for n in sizes}
    times: dict[tuple[str, int], list[float]] = {key: [] for key in inputs}
    for _ in range(repeat):  # round-robin, so background load hits every input alike
        for key, text in inputs.items():
            times[key].append(_time(text))
    med = {key: statistics.median(v) for key, v in times.items()}
    small, big = sizes
    print(f"bench_redact: Python {platform.python_version()}, median of {repeat}, "
          f"sizes {small:,} and {big:,} characters")
    print(f"{'input':8} {'time @small':>12} {'time @big':>11} {'ns/B small':>11} "
          f"{'ns/B big':>9} {'big/small':>10} {'vs benign':>10}")
    worst_size, worst_kind, worst_dense = 0.0, 0.0, 0.0
    for kind in KINDS:
        ts, tb = med[(kind, small)], med[(kind, big)]
        per_s, per_b = ts / small * 1e9, tb / big * 1e9
        size_ratio = per_b / per_s
        kind_ratio = tb / med[("benign", big)]
        worst_size = max(worst_size, size_ratio)
        against = max(kind_ratio, ts / med[("benign", small)])
        if kind in ADVERSARIAL:
            worst_kind = max(worst_kind, against)
        elif kind in DENSE:
            worst_dense = max(worst_dense, against)
        print(f"{kind:8} {ts * 1e3:10.1f}ms {tb * 1e3:9.1f}ms {per_s:11.0f} {per_b:9.0f} "
              f"{size_ratio:9.2f}x {kind_ratio:9.2f}x")
    print(f"worst per-byte ratio big/small: {worst_size:.2f}x (target <= {TARGET_SIZE_RATIO}x)")
    print(f"worst adversarial/benign:      {worst_kind:.2f}x (target <= {TARGET_KIND_RATIO}x)")
    print(f"worst dense-secret/benign:     {worst_dense:.2f}x (cost per secret replaced)")
    # The cases: Redactor().text('-'.join(['ab'] * 7000)) and the hook's path for
    # a 39 KB PostToolUse payload of ab-ab-… (cut to its stored size, then redacted).
    t = statistics.median(_time("-".join(["ab"] * 7000)) for _ in range(max(repeat, 3)))
    payload = {"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash",
               "tool_input": {"command": "echo " + "ab-" * 13_000},
               "tool_response": {"stdout": "ab-" * 13_000, "stderr": ""}}
    hook_times = []
    for _ in range(max(repeat, 3)):
        t0 = time.perf_counter()
        Redactor().value(trim_payload(payload))
        hook_times.append(time.perf_counter() - t0)
    print(f"'-'.join(['ab'] * 7000): {t * 1e3:.1f} ms (21 s before); 39 KB ab-ab- PostToolUse "
          f"payload, trimmed and redacted: {statistics.median(hook_times) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
