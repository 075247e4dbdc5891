"""authsim: Firebase phone-auth's push-and-redirect channel on Linux, without a Swift toolchain.

The wheel carries authsim's executables (``authsim``, ``push-receiver``, ``apns-sender``,
``redirect-interceptor``) and puts them on PATH; :mod:`authsim.client` is a typed client for the
inspector's API, and :mod:`authsim.pytest_plugin` the ``authsim`` fixture.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    from ._version import __version__  # written into the wheel by make_wheel.py
except ImportError:  # the source tree
    __version__ = "0+source"

__all__ = ["__version__", "bundle_dir", "executable"]

PROGRAMS = ("authsim", "push-receiver", "apns-sender", "redirect-interceptor")


def bundle_dir() -> Path:
    """Where the release bundle lives inside the installed package (bin/, Scenarios/, Payloads/)."""
    return Path(__file__).resolve().parent / "_bundle"


def executable() -> str:
    """The path of the bundled binary. It is all four programs: started with ``argv[0]`` set to
    ``push-receiver``, ``apns-sender`` or ``redirect-interceptor``, it is that program."""
    path = bundle_dir() / "bin" / "authsim"
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{path} is missing or not executable: reinstall the authsim wheel")
    return str(path)
