"""The console scripts the wheel puts on PATH: each replaces itself with the bundled binary
(``execv``: same process ID, signals and exit status go straight to the program)."""

from __future__ import annotations

import os
import sys

from . import executable


def _run(name: str) -> None:
    path = executable(name)
    os.execv(path, [path, *sys.argv[1:]])


def authsim() -> None:
    _run("authsim")


def push_receiver() -> None:
    _run("push-receiver")


def apns_sender() -> None:
    _run("apns-sender")


def redirect_interceptor() -> None:
    _run("redirect-interceptor")
