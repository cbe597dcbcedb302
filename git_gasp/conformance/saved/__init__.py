"""Saved indexes under the git dir: the line index shared by the checks and the guard
(``lineindex`` keys, ``index_files`` on disk), the checks' saved log states
(``logstate_cache``) and the log's count `status` keeps (``counts``). The guard's
committed-log index, saved in the ``index_files`` format, is the guard's own
(``guard.committed_log``, ``guard.committed_log_cache``)."""
