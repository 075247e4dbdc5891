"""The release's tests run where the Swift toolchain is hidden (Tests/Release/run.sh: bwrap with
/opt/swift masked and a clean environment): what a CI image without Swift sees."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def bundle() -> Path:
    """The unpacked release tarball (AUTHSIM_BUNDLE)."""
    root = os.environ.get("AUTHSIM_BUNDLE")
    if not root:
        pytest.fail("AUTHSIM_BUNDLE must name the unpacked release tarball (Tests/Release/run.sh sets it)")
    return Path(root)


@pytest.fixture(scope="session")
def version() -> str:
    return os.environ["AUTHSIM_VERSION"]


def pytest_sessionstart(session):
    # The point of these tests: no Swift anywhere this process or its children can reach.
    assert shutil.which("swift") is None, "swift is on PATH: run through Tests/Release/run.sh"
    assert not Path("/opt/swift/usr/bin/swift").exists(), "the toolchain is visible: run through Tests/Release/run.sh"
    assert subprocess.run(["sh", "-c", "ls /opt/swift/usr 2>/dev/null"], capture_output=True).stdout == b""
