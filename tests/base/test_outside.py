"""TOML from outside fails as one `FormatError` line, however the parser fails."""

from __future__ import annotations

import pytest

from git_gasp.base.errors import FormatError
from git_gasp.base.outside import load_toml

HUGE = "9" * 5000


@pytest.mark.parametrize("text", ["a = " + HUGE, "a = " + "[" * 5000 + "]" * 5000,
                                  "a = 1\na = 2", "\udcff"])
def test_toml_from_outside_fails_as_one_format_error(text):
    with pytest.raises(FormatError, match="^config does not parse: "):
        load_toml(text.encode("utf-8", "surrogateescape"), "config")
