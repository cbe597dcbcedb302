"""The base layer: mechanics every other layer uses, each written once.

``errors`` (the one-line error types), ``git`` (the one git runner), ``files``
(atomic writes that never follow a link, and a file lock), ``ids`` (ids and clocks).
"""
