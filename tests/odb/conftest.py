"""`odb_impl`: one test body run under each object-reader implementation (dulwich's
``functest_builder`` pattern), the process's choice (`odb.policy`) set for the test."""

from __future__ import annotations

import pytest

from git_gasp.odb import policy


@pytest.fixture(params=policy.CHOICES)
def odb_impl(request, monkeypatch) -> str:
    monkeypatch.setattr(policy, "_chosen", request.param)
    return request.param
