#!/usr/bin/env python3
"""Checks that README.md and docs/*.md describe the programs that exist.

    scripts/check_docs.py [--root DIR] [--bin_dir DIR] [--run]

- Every program named `plrank-...` is one the project builds or ships (an
  executable in --bin_dir, an add_executable target, a trainer program, a
  configured or shipped script).
- Every `--flag` (spelt as absl spells them: no hyphen inside; `--no-index`
  is another tool's) is a flag of some program: what the built programs print
  for `--helpfull`, the ABSL_FLAG declarations of the sources (programs not
  built), the argparse flags of the Python programs, the options of the
  shell scripts, or a flag of an outside tool the manual uses (EXTERNAL).
  In a command block, a flag given to a built `plrank-*` program must be one
  of that program's own (`--nofoo` for boolean `--foo`).
- Every relative link resolves to a file or directory of the checkout, and
  a `#fragment` into a Markdown page to one of its headings.
- With --run, every command block marked `<!-- runnable: NAME -->` runs:
  the blocks of one NAME in one page, in order, as one bash script
  (`set -euo pipefail`) in a scratch directory, with --bin_dir first on
  PATH; its whole process group is ended afterwards.

Prints each problem as FILE:LINE: message and exits 1 when there is one.
ctest runs it (tests `docs_check`, `docs_runnable`) and on a scratch tree
with one broken flag, program, link, anchor and runnable block
(`docs_check_detects_errors`) to show that it can fail.
"""

import argparse
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile

# Flags of outside tools that the manual's commands use (mpirun, docker,
# kubectl, cmake, curl, Google Benchmark, ...) and that look like ours:
# hyphenated ones (`--no-index`) are never taken for ours.
EXTERNAL = {
    "oversubscribe", "from", "build", "target", "config", "parallel",
    "version", "help", "mca", "np", "hostfile", "silent", "fail", "rm",
    "tag", "file", "namespace", "output", "kustomize", "selector", "user",
    "env", "publish", "name", "network", "reload", "recursive", "local",
    "plaintext", "prefix", "header", "request", "retry", "insecure",
    "cacert", "cert", "key", "benchmark_filter", "benchmark_repetitions",
    "benchmark_format",
}

# What absl's flag parsing answers in every program, listed or not.
ABSL_BUILTIN = {"help", "helpfull", "helpshort", "helppackage", "version",
                "flagfile", "fromenv", "tryfromenv", "undefok",
                "only_check_args"}

PROGRAM = re.compile(r"(?<![\w.-])plrank-[a-z0-9]+(?:-[a-z0-9]+)*")
# Names that look like programs but are not: a file format tag, file names
# and directories (`plrank-dashboard.json`, `/tmp/plrank-bench-cache`).
NOT_PROGRAMS = {"plrank-history-1"}
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9_]*(?:-[a-z0-9_]+)*\*?)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
RUNNABLE = re.compile(r"^<!--\s*runnable:\s*([\w-]+)\s*-->\s*$")
FENCE = re.compile(r"^\s*```")
ABSL_FLAG = re.compile(r"ABSL_FLAG\(\s*[\w:<>, ]+?,\s*(\w+)\s*,")
# Flags a program parses by hand (`value_of("--cache_dir=")`).
LITERAL_FLAG = re.compile(r'"--([a-z][\w-]*)=?"')
# `<!-- not-flags: learning_rat num_leaves -->`: words a page shows as
# flags on purpose although no program has them (the messages for unknown
# flags quote them).
NOT_FLAGS = re.compile(r"<!--\s*not-flags:([^>]*)-->")
ARGPARSE = re.compile(r"add_argument\(\s*[\"']--([\w-]+)[\"']")
SHELL_OPTION = re.compile(r"^\s*\(?\s*(?:[\"']?--[\w-]+[=*\"']*\s*\|\s*)*"
                          r"[\"']?--([\w-]+)[=*\"']*\s*\)", re.M)
HELP_FLAG = re.compile(r"^\s+--([\w-]+)\b", re.M)

SKIP_DIRS = {".git", "build", "node_modules", "out"}


def source_files(root: pathlib.Path, suffixes):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames
                       if d not in SKIP_DIRS and not d.startswith("build")]
        for name in filenames:
            if name.endswith(suffixes):
                yield pathlib.Path(dirpath) / name


def is_executable(path: pathlib.Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def parses_absl_flags(program: pathlib.Path) -> bool:
    """Whether `program` parses its command line with absl (which answers
    --helpfull and exits). Others are never run: a benchmark that takes its
    own arguments would start its work."""
    try:
        data = program.read_bytes()
    except OSError:
        return False
    if not data.startswith(b"\x7fELF"):
        return False  # a script (plrank-plot, plrank-publish)
    return b"absl_flags_parse" in data or b"ParseCommandLine" in data


def help_flags(program: pathlib.Path):
    """The flags `program --helpfull` lists, or None if it has no such help."""
    if not parses_absl_flags(program):
        return None
    try:
        result = subprocess.run([str(program), "--helpfull"], capture_output=True,
                                text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    flags = set(HELP_FLAG.findall(result.stdout + result.stderr))
    return flags | ABSL_BUILTIN if flags else None


class Knowledge:
    """What exists: programs, every program's flags, and all flags."""

    def __init__(self, root: pathlib.Path, bin_dir):
        self.programs = set()
        self.program_flags = {}  # built absl program -> its flags
        self.all_flags = set(EXTERNAL)
        if bin_dir and bin_dir.is_dir():
            for path in sorted(bin_dir.iterdir()):
                if not path.name.startswith("plrank-") or not is_executable(path):
                    continue
                self.programs.add(path.name)
                flags = help_flags(path)
                if flags is not None:
                    self.program_flags[path.name] = flags
                    self.all_flags |= flags
        for path in source_files(root, ("CMakeLists.txt",)):
            text = path.read_text(encoding="utf-8", errors="replace")
            self.programs |= set(re.findall(r"add_executable\((plrank-[\w-]+)",
                                            text))
            for loop in re.findall(r"foreach\(prog ([^)]*)\)", text):
                if "plrank-${prog}" in text:
                    self.programs |= {f"plrank-{p}" for p in loop.split()}
        for path in source_files(root, (".in", "")):
            if path.name.startswith("plrank-"):
                self.programs.add(path.name.removesuffix(".in"))
        for path in source_files(root, (".cc", ".h")):
            text = path.read_text(encoding="utf-8", errors="replace")
            self.all_flags |= set(ABSL_FLAG.findall(text))
            self.all_flags |= set(LITERAL_FLAG.findall(text))
        for path in source_files(root, (".py", ".py.in")):
            text = path.read_text(encoding="utf-8", errors="replace")
            self.all_flags |= set(ARGPARSE.findall(text))
        for path in list(source_files(root, (".sh",))) + [
                p for p in source_files(root, ("",)) if p.name.startswith("plrank-")]:
            text = path.read_text(encoding="utf-8", errors="replace")
            self.all_flags |= set(SHELL_OPTION.findall(text))
        self.all_flags |= {"no" + f for f in self.all_flags}

    def flag_known(self, flag: str, program=None) -> bool:
        if flag.endswith("*"):  # a family, `--pl_*`
            flags = self.program_flags.get(program, self.all_flags)
            return any(f.startswith(flag[:-1]) for f in flags)
        if program in self.program_flags:
            flags = self.program_flags[program]
            return flag in flags or (flag.startswith("no") and flag[2:] in flags)
        return flag in self.all_flags


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: pathlib.Path):
    found = set()
    counts = {}
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_code = not in_code
            continue
        match = re.match(r"^#{1,6}\s+(.*)$", line)
        if match and not in_code:
            base = slug(match.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def commands(line: str):
    """(program, text) for each plrank-* command of a shell line."""
    for part in re.split(r"\|\||&&|[|;&]|\$\(", line):
        words = part.split()
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # VAR=value prefixes
        if words and words[0] in ("nice", "exec", "env", "time"):
            words = [w for w in words[1:] if not re.match(r"^-n$|^\d+$", w)]
        # The program may come after a launcher: `mpirun -np 2 plrank-train`,
        # `kubectl exec POD -- plrank-client`.
        for index, word in enumerate(words):
            name = pathlib.PurePosixPath(word.strip("\"'")).name
            if name.startswith("plrank-") and not word.startswith("-"):
                yield name, " ".join(words[index:])
                break


def check_page(root, path, knowledge, problems, runnable):
    relative = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    not_flags = {word for found in NOT_FLAGS.findall("\n".join(lines))
                 for word in found.split()}
    in_code = False
    block_name = None
    pending_name = None
    continued = None  # the program of a command continued with a backslash
    for number, line in enumerate(lines, start=1):
        where = f"{relative}:{number}"
        if FENCE.match(line):
            if not in_code:
                in_code = True
                block_name, pending_name = pending_name, None
                if block_name:
                    runnable.setdefault((relative, block_name), []).append([])
            else:
                in_code = False
                block_name = None
                continued = None
            continue
        match = RUNNABLE.match(line)
        if match and not in_code:
            pending_name = match.group(1)
            continue
        if line.strip():
            pending_name = None if not in_code else pending_name
        if in_code and block_name:
            runnable[(relative, block_name)][-1].append(line)
        # Programs.
        for token in PROGRAM.finditer(line):
            name = token.group(0)
            after = line[token.end():token.end() + 2]
            before = line[max(0, token.start() - 5):token.start()]
            if (name in NOT_PROGRAMS or re.match(r"\.[a-z]", after)
                    or before.endswith("/tmp/")):
                continue
            if name not in knowledge.programs:
                problems.append(f"{where}: unknown program {name}")
        # Flags: per program inside command blocks, else anywhere.
        checked = set()
        if in_code:
            pieces = list(commands(line))
            if continued and not pieces:
                pieces = [(continued, line)]
            for program, text in pieces:
                for flag in FLAG.findall(text):
                    checked.add(flag)
                    if flag in not_flags:
                        continue
                    if not knowledge.flag_known(flag, program):
                        problems.append(f"{where}: {program} has no flag --{flag}")
            continued = (pieces[-1][0] if pieces and line.rstrip().endswith("\\")
                         else None)
        for flag in FLAG.findall(line):
            if "-" in flag.rstrip("*"):
                continue  # another tool's (--no-index); ours are absl_style
            if (flag not in checked and flag not in not_flags
                    and not knowledge.flag_known(flag)):
                problems.append(f"{where}: no program has a flag --{flag}")
        # Links.
        if in_code:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            file_part, _, fragment = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            if not resolved.exists():
                problems.append(f"{where}: broken link {target}")
                continue
            if fragment and resolved.suffix == ".md" and resolved.is_file():
                if fragment not in anchors(resolved):
                    problems.append(f"{where}: no heading #{fragment} in "
                                    f"{file_part or relative}")


def run_blocks(root, bin_dir, runnable, problems, timeout):
    for (relative, name), blocks in runnable.items():
        script = "set -euo pipefail\n" + "\n".join(
            "\n".join(block) for block in blocks) + "\n"
        scratch = pathlib.Path(tempfile.mkdtemp(prefix="plrank-docs-"))
        env = dict(os.environ, TMPDIR=str(scratch))
        if bin_dir:
            env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        work = scratch / "cwd"
        work.mkdir()
        process = subprocess.Popen(["bash", "-c", script], cwd=work, env=env,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        try:
            output, _ = process.communicate(timeout=timeout)
            code = process.returncode
        except subprocess.TimeoutExpired:
            code = None
            output = ""
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)  # what the blocks left
            except ProcessLookupError:
                pass
            if code is None:
                output, _ = process.communicate()
        shutil.rmtree(scratch, ignore_errors=True)
        print(f"== runnable {relative} {name} "
              f"({sum(len(b) for b in blocks)} lines)\n{output}", end="")
        if code != 0:
            problems.append(f"{relative}: runnable block '{name}' "
                            + ("timed out" if code is None else f"exited {code}"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(
        pathlib.Path(__file__).resolve().parent.parent),
        help="the checkout whose README.md and docs/ to check")
    parser.add_argument("--source_root", default=None,
                        help="where programs and flags are declared "
                        "(default: --root)")
    parser.add_argument("--bin_dir", default=None,
                        help="the build's bin directory (plrank-* programs)")
    parser.add_argument("--run", action="store_true",
                        help="also run the blocks marked runnable")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds per runnable script")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    source_root = pathlib.Path(args.source_root or root).resolve()
    bin_dir = pathlib.Path(args.bin_dir).resolve() if args.bin_dir else None
    knowledge = Knowledge(source_root, bin_dir)
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    pages = [p for p in pages if p.is_file()]
    if not pages:
        print(f"check_docs: no README.md or docs/*.md under {root}",
              file=sys.stderr)
        return 1
    problems = []
    runnable = {}
    for page in pages:
        check_page(root, page, knowledge, problems, runnable)
    if args.run:
        run_blocks(root, bin_dir, runnable, problems, args.timeout)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_docs: {len(problems)} problem(s) in {len(pages)} pages",
              file=sys.stderr)
        return 1
    print(f"check_docs: {len(pages)} pages, {len(knowledge.programs)} programs "
          f"({len(knowledge.program_flags)} built), every program, flag and "
          f"link exists" + (f"; {len(runnable)} runnable script(s) passed"
                            if args.run else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
