#!/usr/bin/env python3
"""Builds authsim's platform wheel from a release bundle (Scripts/release.sh calls it).

A wheel is a zip file with a fixed layout (PEP 427, PEP 491); this writes it with the standard
library alone, as tools that ship one binary per platform do, so the release needs no build backend:

    authsim/                         the Python package (Python/authsim/), _version.py written here
    authsim/_bundle/bin/…            the authsim binary (all four programs) and its resources, executable bit kept
    authsim/_bundle/{Scenarios,Payloads,README.md,docs,LICENSE,THIRD_PARTY_LICENSES,SHARED_LIBRARIES}
    authsim-<v>.dist-info/           METADATA, WHEEL (Root-Is-Purelib: false, the platform tag),
                                     entry_points.txt (the four programs, the pytest11 plugin), RECORD
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import stat
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = {"authsim": "authsim", "push-receiver": "push_receiver", "apns-sender": "apns_sender",
            "redirect-interceptor": "redirect_interceptor"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True, type=Path, help="the release bundle's folder (bin/, Scenarios/, …)")
    parser.add_argument("--version", required=True, help="authsim's version (Utilities.AuthsimVersion)")
    parser.add_argument("--platform", required=True, help="the platform tag, e.g. manylinux_2_35_x86_64")
    parser.add_argument("--out", required=True, type=Path, help="the folder the wheel goes to")
    args = parser.parse_args()
    if not os.access(args.bundle / "bin" / "authsim", os.X_OK) or (args.bundle / "bin" / "authsim").is_symlink():
        parser.error(f"{args.bundle / 'bin' / 'authsim'} is missing or not an executable file")

    tag = f"py3-none-{args.platform}"
    dist_info = f"authsim-{args.version}.dist-info"
    args.out.mkdir(parents=True, exist_ok=True)
    wheel = args.out / f"authsim-{args.version}-{tag}.whl"
    records: list[str] = []

    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        def add(name: str, data: bytes, executable: bool = False) -> None:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
            archive.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{name},sha256={digest},{len(data)}")

        for source in sorted((HERE / "authsim").rglob("*")):
            if source.is_file() and "__pycache__" not in source.parts and source.name != "_version.py":
                add(f"authsim/{source.relative_to(HERE / 'authsim').as_posix()}", source.read_bytes())
        add("authsim/_version.py", f'__version__ = "{args.version}"\n'.encode())
        # The bundle's links (bin/push-receiver → authsim) stay out: a zip has no links, and the
        # launchers start authsim under each program's name instead.
        for source in sorted(args.bundle.rglob("*")):
            if source.is_file() and not source.is_symlink():
                add(f"authsim/_bundle/{source.relative_to(args.bundle).as_posix()}", source.read_bytes(),
                    executable=bool(source.stat().st_mode & stat.S_IXUSR))

        readme = (HERE / "README.md").read_text()
        add(f"{dist_info}/METADATA", "\n".join([
            "Metadata-Version: 2.1",
            "Name: authsim",
            f"Version: {args.version}",
            "Summary: Firebase phone-auth's push-and-redirect channel on Linux: a local APNs, a drop-in Auth Emulator, a pytest fixture",
            "License: Apache-2.0",
            "Requires-Python: >=3.9",
            "Classifier: Framework :: Pytest",
            "Classifier: Operating System :: POSIX :: Linux",
            "Classifier: License :: OSI Approved :: Apache Software License",
            "Description-Content-Type: text/markdown",
            "",
            readme,
        ]).encode())
        add(f"{dist_info}/WHEEL", "\n".join([
            "Wheel-Version: 1.0",
            "Generator: authsim make_wheel.py",
            "Root-Is-Purelib: false",
            f"Tag: {tag}",
            "",
        ]).encode())
        entry_points = ["[console_scripts]"] + [f"{program} = authsim._launch:{function}" for program, function in PROGRAMS.items()]
        entry_points += ["", "[pytest11]", "authsim = authsim.pytest_plugin", ""]
        add(f"{dist_info}/entry_points.txt", "\n".join(entry_points).encode())
        add(f"{dist_info}/LICENSE", (args.bundle / "LICENSE").read_bytes())
        records.append(f"{dist_info}/RECORD,,")
        add_record = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(2026, 1, 1, 0, 0, 0))
        add_record.compress_type = zipfile.ZIP_DEFLATED
        add_record.external_attr = (0o644 | stat.S_IFREG) << 16
        archive.writestr(add_record, "\n".join(records) + "\n")
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
