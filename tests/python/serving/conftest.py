"""Fixtures for the serving tests: a repository with the "simple" and "mlp" models and a running server."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serving_util  # noqa: E402


@pytest.fixture(scope="module")
def model_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("models") / "repo"
    repo.mkdir()
    serving_util.write_simple_model(repo)
    serving_util.write_mlp_model(repo)
    return repo


@pytest.fixture(scope="module")
def server(model_repo):
    with serving_util.ServerProcess(model_repo) as s:
        yield s
        s.stop()
