"""The console scripts the wheel puts on PATH: each replaces itself with the bundled binary under the
program's name (``execv`` with ``argv[0]`` = the name: the binary is all four programs; same process,
signals and exit status go straight to the program)."""

from __future__ import annotations

import os
import sys

from . import executable


def _run(name: str) -> None:
    # Where the program was started from (this script, in the environment's bin/): its advice
    # names the programs as the user runs them, not by the bundled binary's inner path.
    os.environ["AUTHSIM_LAUNCHER"] = os.path.abspath(sys.argv[0])
    os.execv(executable(), [name, *sys.argv[1:]])


def authsim() -> None:
    _run("authsim")


def push_receiver() -> None:
    _run("push-receiver")


def apns_sender() -> None:
    _run("apns-sender")


def redirect_interceptor() -> None:
    _run("redirect-interceptor")
