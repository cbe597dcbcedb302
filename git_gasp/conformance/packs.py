"""The vocabulary a repository declares: the baseline plus `.agent/packs/*.json`.

Apart from the checks (`conformance/checks.py`, which re-exports it) because what
records an event (the agent hook, `runtime/state.py`) needs the vocabulary and none of
the checks.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.conformance.report import CheckResult
from git_gasp.protocol.jsonstrict import JsonError, loads_slow
from git_gasp.protocol.vocab import PackError, Vocabulary, parse_pack
from git_gasp.store.agentfs import AgentFileError, read_regular


def load_vocabulary(root: str | os.PathLike, res: CheckResult | None = None) -> Vocabulary:
    """The baseline plus .agent/packs/*.json; a pack that does not parse is a failure."""
    packs = []
    base = str(Path(root, ".agent", "packs"))
    if Path(base).is_dir() and not Path(base).is_symlink():
        for name in sorted(os.listdir(base)):
            if not name.endswith(".json"):
                continue
            rel = f".agent/packs/{name}"
            try:
                packs.append(parse_pack(loads_slow(read_regular(root, rel)), name[:-5]))
            except (AgentFileError, JsonError, PackError) as exc:
                if res is not None:
                    res.fail(f"pack does not parse: {exc}", path=rel)
    elif Path(base).exists() and res is not None:
        res.fail("must be a directory of *.json packs", path=".agent/packs")
    return Vocabulary.with_packs(packs)
