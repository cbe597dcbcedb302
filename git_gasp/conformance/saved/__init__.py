"""Saved indexes under the git dir: the line index shared by the checks and the guard
(``lineindex`` keys, ``index_files`` on disk), the checks' saved log states
(``logstate_cache``), the log's count `status` keeps (``counts``) and the guard's
committed-log index (``committed_log``, ``index_cache``)."""
