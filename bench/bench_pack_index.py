"""How `odb.pack_index.PackIndex` finds objects: by binary search of the mapped index, or
through the whole id -> offset map (built after `_MAP_AFTER` lookups), for N lookups;
and (``--validate``) what validating an index as git's ``load_idx`` does costs.

Run: ``.venv/bin/python bench/bench_pack_index.py [GIT_COMMON_DIR]`` (default: this
checkout's repository; its largest pack index). Best of 3; ratios against binary search.

``bench/bench_pack_index.py --validate [N [REV]]`` builds a repository of N blobs
(default 1,000,000) packed by ``git fast-import`` in a temporary directory, then times
(CPU time, best of 7) this checkout's `PackIndex` against REV's (default ``main``; its
``git_gasp/odb/pack_index.py`` loaded beside this one): opening the index (mapped and,
here, validated as git's ``load_idx`` validates it), 100,000 lookups (here, each offset
bounded by the pack), and what the index's own trailing SHA-1 would cost (what ``git
verify-pack`` checks, which git does not when it reads).
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


def _build(where: str, n: int) -> str:
    """A bare repository under `where` holding `n` small distinct blobs in one pack."""
    repo = os.path.join(where, "big.git")
    subprocess.run(["git", "init", "-q", "--bare", repo], check=True)
    stream = b"".join(b"blob\ndata %d\n%s\n" % (len(b"%d" % i), b"%d" % i) for i in range(n))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=stream, check=True)
    return repo


def _best(fn, rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def _module_at(rev: str):
    """`odb.pack_index` as revision `rev` of this checkout has it."""
    import types

    source = subprocess.run(["git", "show", f"{rev}:git_gasp/odb/pack_index.py"],
                            capture_output=True, text=True, check=True).stdout
    module = types.ModuleType(f"pack_index_{rev}")
    exec(compile(source, f"{rev}:git_gasp/odb/pack_index.py", "exec"), module.__dict__)
    return module


def _own_checksum(idx: str) -> bool:
    """The index's last 20 bytes are the SHA-1 of the rest (``git verify-pack``)."""
    import hashlib

    with open(idx, "rb") as f:
        data = f.read()
    return hashlib.sha1(data[:-20]).digest() == data[-20:]


def validate_main(n: int, rev: str) -> None:
    import tempfile

    old = _module_at(rev)
    with tempfile.TemporaryDirectory(prefix="bench-idx-") as tmp:
        repo = _build(tmp, n)
        (idx,) = glob.glob(os.path.join(repo, "objects", "pack", "*.idx"))
        index = pack_index.PackIndex(idx)
        sample = random.Random(1).sample(list(index._id_map()), min(n, 100_000))
        index.close()

        def opened(module) -> None:
            for _ in range(100):
                module.PackIndex(idx).close()

        def lookups(module) -> None:
            index = module.PackIndex(idx)
            index.pack_size = os.path.getsize(idx[:-4] + ".pack")
            for sha in sample:
                index.object_offset(sha)
            index.close()

        print(f"{idx}: {n:,} objects, {os.path.getsize(idx) / 2**20:.1f} MiB; "
              f"CPU ms, best of 7; {rev} / this checkout")
        for what, fn in (("open, x100", opened), (f"{len(sample):,} lookups", lookups)):
            before, now = _best(lambda fn=fn: fn(old)), _best(lambda fn=fn: fn(pack_index))
            print(f"  {what:>16}: {before * 1e3:9.2f} / {now * 1e3:9.2f} ({now / before:5.2f}x)")
        checksum = _best(lambda: _own_checksum(idx))
        print(f"  the index's own SHA-1, not checked: {checksum * 1e3:.2f}")


def main() -> None:
    if sys.argv[1:2] == ["--validate"]:
        validate_main(int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000,
                      sys.argv[3] if len(sys.argv) > 3 else "main")
        return
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
