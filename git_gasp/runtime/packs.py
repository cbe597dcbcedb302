"""The runtime's own vocabulary pack, `.agent/packs/gasp-runtime.json`.

Behaviours and `record_node` may create node kinds outside the baseline; declaring
them here (the reference pack shape, DESIGN §3) keeps check 3 green.
"""

from __future__ import annotations

import json
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write, read_text
from git_gasp.conformance.packs import load_vocabulary
from git_gasp.protocol.vocab import BASE_NODE_KINDS, BASE_RELATIONS, Vocabulary

PACK_REL = ".agent/packs/gasp-runtime.json"


def _empty() -> dict:
    return {"id": "gasp-runtime", "name": "gasp-runtime", "version": "1",
            "object_types": {}, "relation_types": {}, "policies": [], "prompts": [],
            "settings": {}}


def declare(root: Path, kind: str, required_props: list[str], description: str,
            relations: dict[str, str]) -> Vocabulary:
    """Add `kind` (and `relations`: rel -> description) to the runtime pack; return the
    repo's vocabulary afterwards. Baseline kinds and relations are not restated."""
    path = Path(root) / PACK_REL
    try:
        doc = json.loads(read_text(path, root=root)) if path.exists() else _empty()
    except (OSError, ValueError) as exc:
        raise GaspError(f"{PACK_REL} cannot be read: {exc}") from None
    if not isinstance(doc, dict):
        raise GaspError(f"{PACK_REL} is not a pack object")
    objects = doc.setdefault("object_types", {})
    rels = doc.setdefault("relation_types", {})
    if kind not in BASE_NODE_KINDS:
        objects[kind] = {"kind": kind, "required_props": list(required_props),
                         "description": description}
    for rel, text in relations.items():
        if rel not in BASE_RELATIONS:
            rels[rel] = {"rel": rel, "from_kinds": [kind], "to_kinds": [], "description": text}
    atomic_write(path, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8"),
                 root=Path(root), make_parents=True)
    return load_vocabulary(Path(root))
