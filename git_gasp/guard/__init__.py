"""The pre-commit guard that git's hooks run: the staged append-only files against
HEAD and every merged parent (``commit_guard``), and the per-blob index of the
committed log it reads them against (``committed_log``, saved under the git dir by
``committed_log_cache`` in the format of ``conformance.saved.index_files``, one home
with the checks' saved log state). The git hook installer lives in ``githooks/``,
``doctor`` in ``doctor/``, agent hook payloads in ``adapters/payloads.py``, the hook
script templates in the top-level ``hooks/``."""
