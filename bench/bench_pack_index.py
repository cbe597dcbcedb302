"""How `odb.pack_index.PackIndex` finds objects: by binary search of the mapped index, or
through the whole id -> offset map (built after `_MAP_AFTER` lookups), for N lookups.

Run: ``.venv/bin/python bench/bench_pack_index.py [GIT_COMMON_DIR]`` (default: this
checkout's repository; its largest pack index). Best of 3; ratios against binary search.
"""

from __future__ import annotations

import glob
import os
import random
import subprocess
import sys
import time

import git_gasp.odb.pack_index as pack_index


def timed(idx: str, map_after: int, sample: list[bytes]) -> float:
    pack_index._MAP_AFTER = map_after
    index = pack_index.PackIndex(idx)
    try:
        start = time.perf_counter()
        for sha in sample:
            index.object_offset(sha)
        return time.perf_counter() - start
    finally:
        index.close()


def main() -> None:
    common = sys.argv[1] if len(sys.argv) > 1 else subprocess.run(
        ["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True,
        check=True).stdout.strip()
    idx = max(glob.glob(os.path.join(common, "objects", "pack", "*.idx")), key=os.path.getsize)
    index = pack_index.PackIndex(idx)
    ids = list(index._id_map())
    index.close()
    rng = random.Random(1)
    print(f"{idx}: {len(ids):,} objects; best of 3, ms")
    for n in (100, 256, 1_000, 10_000, 100_000):
        sample = [rng.choice(ids) for _ in range(n)]
        search = min(timed(idx, 1 << 62, sample) for _ in range(3))
        whole = min(timed(idx, 0, sample) for _ in range(3))
        now = min(timed(idx, 256, sample) for _ in range(3))
        print(f"  {n:>7,} lookups: binary search {search * 1e3:8.2f}   map first "
              f"{whole * 1e3:8.2f} ({whole / search:5.2f}x)   map after 256 {now * 1e3:8.2f} "
              f"({now / search:5.2f}x)")


if __name__ == "__main__":
    main()
