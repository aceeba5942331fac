"""pytest for the Python package (ctest's python_tests runs it with
PYTHONPATH=build/python and --ember-build build)."""
import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--ember-build", default=os.environ.get("EMBER_BUILD", "build"),
                     help="the CMake build directory (for its examples)")


@pytest.fixture(scope="session")
def build_dir(request):
    return os.path.abspath(request.config.getoption("--ember-build"))


@pytest.fixture(scope="session")
def source_dir():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
