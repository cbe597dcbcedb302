"""The pack prover reads loose roots through odb's bounded inflation.

A pack's REF_DELTA may name a loose object as its base; the prover then inflates that
loose root to prove appends. A loose object that lies about its size (a zlib bomb)
must be refused there in bounded memory, as odb's own reader refuses it.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zlib

from tests.odb.test_differential import _repo

SCRIPT = """
import resource, sys
from git_gasp.conformance.history.prover import PackProver
from git_gasp.odb.packs import READ_ERRORS, PackFiles
files = PackFiles.for_objects_dir(sys.argv[1])
prover = PackProver(files)
found = prover._node_of(sys.argv[2].encode())
print("length", found[1].length if found else None)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    prover._lines(found[0])
    print("read")
except READ_ERRORS as exc:
    print("refused", str(exc).replace(" ", "_"))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_a_loose_root_that_lies_about_its_size_is_refused_in_bounded_memory(tmp_path):
    repo = _repo(tmp_path, "r")
    z = zlib.compressobj(9)
    stream = z.compress(b"blob 10\0") + b"".join(
        z.compress(b"\n" * (1 << 20)) for _ in range(128))
    stream += z.flush()  # 128 MiB of newlines behind a header declaring 10 bytes
    sha = hashlib.sha1(b"blob 10\0" + b"\n" * 10).hexdigest()
    path = repo / "objects" / sha[:2] / sha[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(stream)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(repo / "objects"), sha],
                          capture_output=True, check=True)
    out = proc.stdout.decode().split()
    assert out[:2] == ["length", "10"], out
    assert out[2] == "refused" and "declares" in out[3], out
    assert int(out[4]) < 32 << 10, f"peak RSS grew by {out[4]} KiB reading a 128 MiB bomb"
