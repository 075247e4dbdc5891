"""What a user runs first, from the release, Swift hidden: the whole `authsim demo`, every README recipe
as written (with `swift run` left out, as the README says), `doctor` on an .ipa, and `explain` on the
demo's own events. Each from the tarball's bin/ and from the wheel's programs on PATH."""

import os
import re
import shlex
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ["tarball", "wheel"]


def recipes():
    """The `<!-- recipe: NAME expects: A | B -->` blocks of the README (as RecipeTests reads them) and of
    docs/*.md: every command sequence a page gives to be pasted whole."""
    pattern = re.compile(r"<!-- recipe: (\S+) expects: (.*?) -->\n```sh\n(.*?)```", re.S)
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found += [(name, [e.strip() for e in expects.split(" | ")], script) for name, expects, script in pattern.findall(page.read_text())]
    names = [name for name, _, _ in found]
    assert len(names) == len(set(names)), f"two recipes share a name: {names}"
    return found


def environment(variant: str, bundle: Path, shim: Path) -> dict:
    """PATH for one variant: a `swift` that runs `swift run [-q] PRODUCT ARGS` as `PRODUCT ARGS` (the
    README's liberty for the release), then the tarball's bin/ or the wheel's programs (the venv)."""
    shim.mkdir(parents=True, exist_ok=True)
    swift = shim / "swift"
    # `swift build` is left out too (nothing to build); `swift build --show-bin-path` names where the programs are.
    swift.write_text('#!/bin/sh\n'
                     'if [ "$1" = run ]; then shift; while [ "${1#-}" != "$1" ]; do shift; done; exec "$@"; fi\n'
                     'if [ "$1" = build ]; then [ "$2" = --show-bin-path ] && dirname "$(command -v authsim)"; exit 0; fi\n'
                     'echo "swift is not here: the release runs without it" >&2; exit 127\n')
    swift.chmod(0o755)
    env = dict(os.environ)
    programs = [str(bundle / "bin")] if variant == "tarball" else []
    env["PATH"] = os.pathsep.join([str(shim), *programs, env["PATH"]])
    return env


def program(variant: str, bundle: Path, name: str) -> str:
    if variant == "tarball":
        return str(bundle / "bin" / name)
    found = shutil.which(name)
    assert found and str(bundle) not in found, f"the wheel put no {name} on PATH"
    return found


def test_the_whole_demo(bundle: Path, tmp_path: Path):
    """`authsim demo`, every scenario, from a folder that is not the release's: the tarball's and the
    wheel's at once (each mostly waits on the SDK's own timers: one after the other took two minutes)."""
    runs = {}
    for variant in VARIANTS:
        folder = tmp_path / variant
        folder.mkdir()
        # Files, not pipes: a demo writes more than a pipe holds, and neither must wait on the other's reader.
        with open(folder / "out", "w") as out, open(folder / "err", "w") as err:
            runs[variant] = subprocess.Popen([program(variant, bundle, "authsim"), "demo"], stdout=out, stderr=err, text=True, cwd=folder)
    try:
        for variant, process in runs.items():
            status = process.wait(timeout=600)
            stdout, stderr = (tmp_path / variant / "out").read_text(), (tmp_path / variant / "err").read_text()
            summary = re.search(r"(\d+) of (\d+) scenarios ended as they should", stdout)
            assert summary and summary.group(1) == summary.group(2), f"{variant}: " + stdout[-3000:] + stderr[-2000:]
            assert int(summary.group(2)) >= 57, variant
            assert status == 0, f"{variant}: " + stderr[-2000:]
    finally:
        for process in runs.values():
            if process.poll() is None:
                process.kill()


@pytest.mark.parametrize("name,expects,script", recipes(), ids=[r[0] for r in recipes()])
def test_recipe_waits_on_a_fresh_log(name: str, expects: list, script: str):
    """A recipe that waits for a program's line in its log (`until grep … LOG`) gives each start a log of
    its own: `program > LOG &` empties LOG in the background, so a second start into the same LOG can
    let `until grep` read the first start's lines and go on before the program listens (it did, on a
    busy CI machine)."""
    for log in set(re.findall(r"until grep -qs \"[^\"]*\" (\S+);", script)):
        starts = re.findall(r">\s*" + re.escape(log) + r"(?:\s|$)", script)
        assert len(starts) == 1, f"{name}: {len(starts)} programs write {log}; give each start its own log"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name,expects,script", recipes(), ids=[r[0] for r in recipes()])
def test_documented_recipe(name: str, expects: list, script: str, variant: str, bundle: Path, tmp_path: Path):
    """Each recipe as written, from an empty folder, `swift run` running the release's programs."""
    for folder in re.findall(r"(?:mkdir -p|--output) (/tmp/\S+)", script):
        shutil.rmtree(folder, ignore_errors=True)
    run = subprocess.run(["bash", "-c", "exec 2>&1\n" + script], capture_output=True, text=True, cwd=tmp_path,
                         env=environment(variant, bundle, tmp_path / "shim"), timeout=300)
    # The start and the end: a traceback at the end can push what the recipe's first steps printed out of view.
    shown = run.stdout if len(run.stdout) <= 6000 else run.stdout[:2000] + "\n[…]\n" + run.stdout[-4000:]
    for expected in expects:
        assert expected in run.stdout, f"{name} ({variant}): no {expected!r} in\n{shown}"
    for broken in ["Fatal error", "command not found", "swift is not here", ".build/"]:
        assert broken not in run.stdout, f"{name} ({variant}): {broken!r} in\n{shown}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_doctor_reads_an_ipa(variant: str, bundle: Path, tmp_path: Path):
    """sample-app's development build, zipped as Xcode exports it: doctor finds the declared .prod wrong (exit 1)."""
    authsim = program(variant, bundle, "authsim")
    made = subprocess.run([authsim, "sample-app", "--output", str(tmp_path / "Payload" / "MyApp.app"), "--binary", "--profile", "development",
                           "--certs", str(tmp_path / "Certs")], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stdout + made.stderr
    ipa = tmp_path / "MyApp.ipa"
    with zipfile.ZipFile(ipa, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in (tmp_path / "Payload").rglob("*"):
            archive.write(file, file.relative_to(tmp_path))
    checked = subprocess.run([authsim, "doctor", "--app", str(ipa), "--declared-type", "prod"], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "aps-environment = development (sandbox tokens) but the app declares" in checked.stdout, checked.stdout
    empty = tmp_path / "Empty.app"
    empty.mkdir()
    broken = subprocess.run([authsim, "doctor", "--app", str(empty)], capture_output=True, text=True, timeout=60)
    assert broken.returncode == 1 and "has no Info.plist" in broken.stdout, broken.stdout + broken.stderr


def test_explain_reads_the_demos_events(bundle: Path, tmp_path: Path):
    """`authsim demo --json` piped to `authsim explain`: every scenario gets a cause, none 'a flow this explainer knows' not."""
    authsim = str(bundle / "bin" / "authsim")
    events = subprocess.run([authsim, "demo", "--json", "--scenario", "apns-silent-push", "--scenario", "apns-app-uninstalled",
                             "--scenario", "debug-build-declares-prod"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert events.returncode == 0, events.stderr
    explained = subprocess.run([authsim, "explain"], input=events.stdout, capture_output=True, text=True, timeout=60)
    assert explained.returncode == 0, explained.stderr
    assert "does not show a flow" not in explained.stdout, explained.stdout
    assert "apns-app-uninstalled: the push to" in explained.stdout and "stop pushing to this token" in explained.stdout, explained.stdout
    assert "debug-build-declares-prod: the push to" in explained.stdout, explained.stdout


PROGRAMS = {"authsim", "push-receiver", "apns-sender", "redirect-interceptor"}


def documented_commands():
    """Every command the README and docs/*.md give in a sh block that runs one of the release's programs
    (`swift run PROGRAM …` or `PROGRAM …`): (page, line, program, its words)."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```sh\n(.*?)```", page.read_text(), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                try:
                    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
                    lexer.whitespace_split = True
                    lexer.commenters = "#"
                    words = list(lexer)
                except ValueError:
                    continue  # an unfinished quote: a block's python3 -c '…' spanning lines
                command = []
                for word in words + [";"]:
                    if word and set(word) <= set(";&|()<>"):
                        if command[:2] == ["swift", "run"]:
                            command = command[2:]
                            while command and command[0].startswith("-"):
                                command = command[1:]
                        if command and Path(command[0]).name in PROGRAMS:
                            # After a bare `--` the words are another command's (`authsim exec -- swift test`).
                            arguments = command[1:command.index("--")] if "--" in command else command[1:]
                            found.append((page.name, line.strip(), Path(command[0]).name, arguments))
                        command = []
                    else:
                        command.append(word)
    return found


_helps = {}


def help_text(bundle: Path, program: str, path: tuple) -> str:
    if (program, path) not in _helps:
        run = subprocess.run([str(bundle / "bin" / program), *path, "--help"], capture_output=True, text=True, timeout=30)
        _helps[(program, path)] = run.stdout + run.stderr
    return _helps[(program, path)]


def subcommands(text: str) -> dict:
    """The SUBCOMMANDS a help text lists, each with whether it is the default."""
    section = text.split("SUBCOMMANDS:", 1)[1] if "SUBCOMMANDS:" in text else ""
    return {m.group(1): bool(m.group(2)) for m in re.finditer(r"^  (\S+)( \(default\))?", section, re.M)}


def test_every_documented_flag_exists(bundle: Path):
    """Each flag a page gives a program (`--answer-timeout`, `--export-on-exit`) is in that program's, or its
    subcommand's, --help: the docs cannot name a flag that was renamed or never was."""
    commands = documented_commands()
    assert len(commands) >= 40, f"only {len(commands)} documented commands found: the reader broke"
    wrong = []
    for page, line, program, words in commands:
        path = ()
        for word in words:
            listed = subcommands(help_text(bundle, program, path))
            if word in listed:
                path += (word,)
            else:
                break
        texts = [help_text(bundle, program, path)]
        texts += [help_text(bundle, program, path + (name,)) for name, default in subcommands(texts[0]).items() if default]
        for word in words:
            flag = word.split("=", 1)[0]
            if not re.fullmatch(r"--[a-z0-9][a-z0-9-]*", flag) or flag in ("--help", "--version"):
                continue
            if not any(re.search(rf"(^|[\s,\[]){re.escape(flag)}([\s,=<\]]|$)", text, re.M) for text in texts):
                wrong.append(f"{page}: {program} {' '.join(path)} has no {flag}: {line}")
    assert not wrong, "\n".join(wrong)
