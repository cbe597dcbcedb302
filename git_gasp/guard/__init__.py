"""The pre-commit guard that git's hooks run: the staged append-only files against
HEAD and every merged parent (``commit_guard``), and the per-blob index of the
committed log it reads them against (``conformance.committed_log``, cached by
``conformance.index_cache``: one home with the checks' saved log state).
The git hook installer and ``doctor`` live in ``githooks/``, agent hook payloads in
``adapters/payloads.py``, the hook script templates in the top-level ``hooks/``."""
