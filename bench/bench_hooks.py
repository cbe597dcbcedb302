"""Per-hook lifting work in a long live session: incremental vs the whole session again.

A live session's hooks each add one or two records. Before lifting was incremental,
every hook ran the lifting rules over the whole session so far (``lift(records[:n])``)
and rewrote the whole record list as its progress file; now a hook resumes the rules
from their saved state (``Lifter(state).feed(rec)``, the state JSON round-tripped as
the progress file does). This times both, per hook, at several session lengths, in the
same run; the baseline is the old per-hook cost at the smallest length. Seeded,
deterministic records (a test run every 25 calls, an edit + commit every 50).

Run: ``.venv/bin/python bench/bench_hooks.py [--quick]``. Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from git_gasp.adapters.lifting import Lifter, lift
from git_gasp.adapters.records import TOOL_RESULT, TOOL_USE, USER_PROMPT, Record


def session(n_calls: int) -> list[Record]:
    recs = [Record(USER_PROMPT, "p1", None, None, {"text": "a long session"})]
    for i in range(n_calls):
        if i % 50 == 49:
            name, inp, out = "Bash", {"command": f"git commit -qm 'c{i}'"}, f"[main {i:07x}] c{i}"
        elif i % 50 == 48:
            name, inp, out = "Edit", {"file_path": f"f{i}.py"}, "ok"
        elif i % 25 == 0:
            name, inp, out = "Bash", {"command": "pytest -q"}, "3 passed in 0.1s"
        else:
            name, inp, out = "Bash", {"command": f"cat file{i}.txt"}, f"line {i}\n" * 5
        key = f"toolu_{i:06d}"
        recs.append(Record(TOOL_USE, key, None, None, {"tool_use_id": key, "name": name,
                                                       "input": inp}))
        recs.append(Record(TOOL_RESULT, f"result:{key}", key, None, {
            "tool_use_id": key, "output": out, "is_error": False, "exit_code": 0}))
    return recs


def old_hook(records: list[Record]) -> float:
    """What one hook did before: lift the whole session, rewrite every record."""
    t = time.perf_counter()
    lift(records)
    json.dumps([{"kind": r.kind, "key": r.key, "parent": r.parent, "ts_ms": r.ts_ms,
                 "data": r.data, "line": r.line} for r in records])
    return time.perf_counter() - t


def new_hook(state: dict, rec: Record) -> tuple[float, dict]:
    """What one hook does now: resume the rules from their state, feed one record."""
    t = time.perf_counter()
    lifter = Lifter(json.loads(json.dumps(state)))
    lifter.feed(rec)
    state = lifter.to_json()
    json.dumps(state)
    return time.perf_counter() - t, state


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    lengths = (200, 1000, 4000) if args.quick else (200, 2000, 10000, 20000)
    samples = 5 if args.quick else 9
    recs = session(max(lengths) // 2 + samples)
    rows = []
    for n in lengths:
        old = statistics.median(old_hook(recs[:n]) for _ in range(samples))
        state = Lifter(None)
        for rec in recs[:n]:
            state.feed(rec)
        st = state.to_json()
        times = []
        for rec in recs[n:n + samples]:
            dt, st = new_hook(st, rec)
            times.append(dt)
        rows.append((n, old, statistics.median(times), len(json.dumps(st))))
    base = rows[0][1]
    print(f"{'records':>8} {'old/hook':>11} {'x base':>8} {'new/hook':>11} {'x base':>8} "
          f"{'old/new':>9} {'state B':>8}")
    for n, old, new, size in rows:
        print(f"{n:>8} {old * 1e3:>9.3f}ms {old / base:>7.1f}x {new * 1e3:>9.3f}ms "
              f"{new / base:>7.3f}x {old / new:>8.0f}x {size:>8}")


if __name__ == "__main__":
    main()
