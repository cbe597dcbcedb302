"""git-gasp: the Git Agent State Protocol as a git extension and a library."""

__version__ = "0.1.0"
