"""The pre-commit guard: the staged append-only files against HEAD and every merged
parent, and the per-blob index of the committed log it reads them against."""
