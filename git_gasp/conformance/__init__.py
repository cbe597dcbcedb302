"""The seven conformance checks of GASP Part VI and their report.

``checks`` runs them; check 4 walks the history (``history*``, leaving `TipFacts`);
checks 1, 2, 3, 5, 6 and 7 read the log in one pass (``logcheck``) of a resumable
state (``logstate``, rendered by ``logfindings``, snapshots by ``snapshot_check``),
saved per verified log blob (``logstate_cache``). The line index they share with the
guard is ``lineindex`` (keys) and ``index_files`` (on disk); ``committed_log`` and
``index_cache`` are the guard's view of it.
"""
