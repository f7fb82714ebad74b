#!/usr/bin/python3
"""Offline checks of deploy/docker/Dockerfile (no Docker engine needed).

  check_dockerfile.py --source_dir=REPO --bin_dir=BUILD/bin [--dockerfile=F]
                      [--self_test] [--configure]

With the real built binaries in --bin_dir:
  * build stage FROM debian:12, runtime FROM debian:12-slim;
  * the build stage COPYs every source directory the top-level CMakeLists.txt
    adds (except those the RUN line turns off), and one RUN line calls
    scripts/build.sh (which must call scripts/setup.sh) building every binary
    the runtime stage copies;
  * every `COPY --from=<build stage>` source is <build dir>/bin/<name> and
    <name> exists in --bin_dir; every context COPY source exists;
  * every shared library `ldd` resolves for those binaries belongs (dpkg -S)
    to a package the runtime stage apt-get installs, or to the base image
    (BASE_IMAGE_PACKAGES); no library is "not found";
  * the runtime stage installs no -dev (or compiler) package;
  * the runtime USER is numeric and non-root (Kubernetes' runAsNonRoot can
    only verify numeric users); EXPOSE has the ports the ENTRYPOINT uses.
--configure recreates the build stage's /src from its COPY lines in a
temporary directory and runs cmake's configure step with the RUN line's -D
options (the packages are those scripts/setup.sh installs here too).
--self_test additionally checks that mutated copies of the Dockerfile (a
runtime package removed, a -dev package added, USER root, a misnamed binary,
build.sh not called) are each rejected.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# Packages every debian:12-slim image has (Priority: required, or needed by
# apt/dpkg), so the runtime stage need not install them.
BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6"}
# Never in a runtime image, whatever their name.
BUILD_ONLY_PACKAGES = {"build-essential", "cmake", "g++", "gcc", "make",
                       "pkg-config", "protobuf-compiler",
                       "protobuf-compiler-grpc"}
# Directories the top-level CMakeLists.txt adds only under an option.
# Subdirectories the top-level CMakeLists.txt adds only under an option:
# option name and its default.
OPTIONAL_SUBDIRS = {"tests": ("PLRANK_BUILD_TESTS", True),
                    "bench": ("PLRANK_BUILD_BENCH", True),
                    "python": ("PLRANK_BUILD_PYTHON_MODULE", True),
                    "fuzz": ("PLRANK_FUZZ", False)}


class Stage:
    def __init__(self, image, name):
        self.image = image
        self.name = name
        self.instructions = []  # (KEYWORD, argument text)


def parse_dockerfile(text, with_args=False):
    """Returns the stages; continuation lines joined, comments dropped."""
    logical = []
    current = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        logical.append(current)
        current = ""
    if current:
        logical.append(current)
    stages = []
    global_args = {}
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        rest = rest.strip()
        if keyword == "FROM":
            words = rest.split()
            words = [w for w in words if not w.startswith("--")]
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        elif keyword == "ARG" and not stages:
            global_args.update(parse_args(rest))
        elif stages:
            stages[-1].instructions.append((keyword, rest))
        else:
            raise ValueError(f"instruction before FROM: {line}")
    return (stages, global_args) if with_args else stages


def parse_args(text):
    """{name: default or None} of one ARG instruction's words."""
    result = {}
    for word in shlex.split(text):
        name, _, default = word.partition("=")
        result[name] = default if "=" in word else None
    return result


def binaries_stage_errors(stages, global_args, from_stage, build, build_dir):
    """Errors of a runtime `COPY --from=<from_stage>` that is not the build
    stage: allowed only for a selector stage `FROM ${ARG} AS <from_stage>`
    whose ARG defaults to the build stage, every other stage it can select
    (FROM scratch) COPYing only into the build directory's bin/."""
    selector = next((s for s in stages if s.name == from_stage), None)
    match = re.fullmatch(r"\$\{?(\w+)\}?", selector.image) if selector else None
    if not match:
        return [f"COPY --from={from_stage}: not the build stage"]
    arg = match.group(1)
    if global_args.get(arg) != build.name:
        return [f"FROM ${{{arg}}} AS {from_stage}: ARG {arg} must default to the "
                f"build stage ({build.name}), so a plain build compiles"]
    errors = []
    for stage in stages:
        if stage in (build, selector, stages[-1]) or stage.image != "scratch":
            continue
        for kw, arg_text in stage.instructions:
            if kw not in ("COPY", "ADD"):
                errors.append(f"stage {stage.name}: {kw} in a prebuilt-binaries stage")
                continue
            _, _, dest = copy_sources(arg_text)
            if build_dir and os.path.normpath(dest) != os.path.normpath(
                    f"/src/{build_dir.removeprefix('/src/')}/bin"):
                errors.append(f"stage {stage.name} copies to {dest}, not the build "
                              f"directory's bin/ ({build_dir}/bin/)")
    return errors


def apt_installed_packages(run_text):
    """Package names given to `apt-get install` in one RUN line."""
    packages = []
    for command in re.split(r"&&|;|\|\|", run_text):
        words = shlex.split(command)
        if len(words) >= 2 and words[0] in ("apt-get", "apt") and "install" in words:
            after = words[words.index("install") + 1:]
            packages += [w.split("=")[0] for w in after if not w.startswith("-")]
    return packages


def dockerignore_errors(source_dir, copied):
    """Context COPY sources that .dockerignore leaves out of the build
    context ("no items matching" at build time). Understands the file's
    form: `**` first, then `!name` lines re-including top-level entries."""
    path = os.path.join(source_dir, ".dockerignore")
    if not os.path.exists(path):
        return []
    lines = [line.strip() for line in open(path)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines or lines[0] != "**":
        return []
    included = {os.path.normpath(line[1:].strip("/")) for line in lines
                if line.startswith("!")}
    errors = []
    for source in sorted(copied):
        top = source.split("/")[0]
        if source != "." and top not in included and source not in included:
            errors.append(f".dockerignore leaves out '{source}', which the "
                          "build stage COPYs (add !{top})")
    return errors


def copy_sources(argument):
    """(from_stage or None, [sources], dest) of a COPY instruction."""
    if argument.startswith("["):
        words = json.loads(argument)
        flags = []
    else:
        words = shlex.split(argument)
        flags = [w for w in words if w.startswith("--")]
        words = [w for w in words if not w.startswith("--")]
    from_stage = None
    for flag in flags:
        if flag.startswith("--from="):
            from_stage = flag[len("--from="):]
    return from_stage, words[:-1], words[-1]


def dpkg_owners(paths):
    """Maps each path (as given) to the package owning it, trying the
    realpath and the /lib <-> /usr/lib aliases of merged-/usr systems."""
    candidates = {}
    for path in paths:
        forms = []
        for form in (path, os.path.realpath(path)):
            forms.append(form)
            if form.startswith("/usr/lib/"):
                forms.append(form[len("/usr"):])
            elif form.startswith("/lib/") or form.startswith("/lib64/"):
                forms.append("/usr" + form)
        candidates[path] = list(dict.fromkeys(forms))
    every_form = sorted({f for forms in candidates.values() for f in forms})
    result = subprocess.run(["dpkg", "-S"] + every_form, capture_output=True,
                            text=True, check=False)
    owner_of_form = {}
    for line in result.stdout.splitlines():
        if line.startswith("diversion ") or ": " not in line:
            continue
        packages, _, form = line.rpartition(": ")
        owner_of_form[form.strip()] = packages.split(",")[0].strip().split(":")[0]
    owners = {}
    for path, forms in candidates.items():
        owners[path] = next((owner_of_form[f] for f in forms if f in owner_of_form), None)
    return owners


def shared_libraries(binary):
    """(resolved paths, missing names) from ldd."""
    result = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        return [], [f"ldd failed: {result.stderr.strip()}"]
    resolved, missing = [], []
    for line in result.stdout.splitlines():
        line = line.strip()
        if "=> not found" in line:
            missing.append(line.split()[0])
        elif "=>" in line:
            target = line.split("=>")[1].split("(")[0].strip()
            if target.startswith("/"):
                resolved.append(target)
        elif line.startswith("/"):
            resolved.append(line.split()[0])  # the dynamic loader
    return resolved, missing


def check(dockerfile_text, source_dir, bin_dir):
    """Returns a list of error strings (empty = pass)."""
    errors = []
    try:
        stages, global_args = parse_dockerfile(dockerfile_text, with_args=True)
    except ValueError as error:
        return [str(error)]
    if len(stages) < 2:
        return [f"expected a build and a runtime stage, found {len(stages)} stage(s)"]
    build, runtime = stages[0], stages[-1]
    if build.image != "debian:12":
        errors.append(f"build stage FROM {build.image}, expected debian:12")
    if runtime.image != "debian:12-slim":
        errors.append(f"runtime stage FROM {runtime.image}, expected debian:12-slim")
    if not build.name:
        errors.append("build stage has no name (FROM debian:12 AS build)")

    # Build stage: the project's build script, and the sources it needs.
    build_runs = [arg for kw, arg in build.instructions if kw == "RUN"]
    build_calls = [r for r in build_runs if re.search(r"(^|[\s/])scripts/build\.sh(\s|$)", r)]
    build_dir = None
    built_targets = set()
    if not build_calls:
        errors.append("no build-stage RUN line calls scripts/build.sh")
    else:
        words = shlex.split(build_calls[0])
        index = next(i for i, w in enumerate(words) if w.endswith("scripts/build.sh"))
        rest = words[index + 1:]
        if rest and not rest[0].startswith("-"):
            build_dir = rest[0]
        if "--" in rest:
            built_targets = set(rest[rest.index("--") + 1:])
        else:
            built_targets = None  # all targets
        disabled = {opt.split("=")[0][2:] for opt in rest
                    if re.fullmatch(r"-D\w+=(OFF|0|FALSE|NO)", opt, re.I)}
        enabled = {opt.split("=")[0][2:] for opt in rest
                   if re.fullmatch(r"-D\w+=(ON|1|TRUE|YES)", opt, re.I)}
        build_script = os.path.join(source_dir, "scripts", "build.sh")
        if not os.path.exists(build_script):
            errors.append(f"{build_script} does not exist")
        elif not re.search(r"^\s*\S*scripts/setup\.sh\b", open(build_script).read(), re.M):
            errors.append("scripts/build.sh does not run scripts/setup.sh")
        copied = set()
        for kw, arg in build.instructions:
            if kw in ("COPY", "ADD"):
                _, sources, _ = copy_sources(arg)
                copied.update(os.path.normpath(s) for s in sources)
        errors.extend(dockerignore_errors(source_dir, copied))
        top = open(os.path.join(source_dir, "CMakeLists.txt")).read()
        needed = {"CMakeLists.txt", "scripts"}
        # Subdirectories and included files of ours (include(cmake/x.cmake));
        # include(GNUInstallDirs) and the like are CMake's own modules.
        for sub in re.findall(r"(?:add_subdirectory|include)\(\s*([\w/.-]+)", top):
            first = sub.split("/")[0]
            if not os.path.isdir(os.path.join(source_dir, first)):
                continue
            option = OPTIONAL_SUBDIRS.get(first)
            if option and (option[0] in disabled or
                           (not option[1] and option[0] not in enabled)):
                continue
            needed.add(first)
        if "." not in copied:
            for item in sorted(needed):
                if item not in copied:
                    errors.append(f"build stage does not COPY '{item}' (the build reads it)")

    # Runtime stage.
    runs = [arg for kw, arg in runtime.instructions if kw == "RUN"]
    installed = set()
    for run in runs:
        installed.update(apt_installed_packages(run))
    for package in sorted(installed):
        if package.endswith("-dev") or package in BUILD_ONLY_PACKAGES:
            errors.append(f"runtime stage installs build-only package {package}")

    binaries = []
    for kw, arg in runtime.instructions:
        if kw not in ("COPY", "ADD"):
            continue
        from_stage, sources, _ = copy_sources(arg)
        if from_stage is None:
            for source in sources:
                path = os.path.join(source_dir, source)
                if not os.path.exists(path):
                    errors.append(f"COPY source {source} does not exist in the source tree")
                elif not os.access(path, os.X_OK):
                    errors.append(f"COPY source {source} is not executable")
            continue
        if from_stage not in (build.name, "0"):
            selector_errors = binaries_stage_errors(stages, global_args, from_stage,
                                                    build, build_dir)
            if selector_errors:
                errors.extend(selector_errors)
                continue
        for source in sources:
            expected_dir = f"{build_dir}/bin/" if build_dir else None
            name = os.path.basename(source)
            if expected_dir and not source.startswith(expected_dir):
                errors.append(f"COPY --from={from_stage} {source}: not in the build "
                              f"directory's bin/ ({expected_dir})")
            if built_targets is not None and name not in built_targets:
                errors.append(f"{name} is copied but scripts/build.sh does not build it")
            binary = os.path.join(bin_dir, name)
            if not os.path.isfile(binary):
                errors.append(f"{name} (COPY --from={from_stage}) is not a build output "
                              f"(missing {binary})")
            else:
                binaries.append(binary)

    libraries = {}
    for binary in binaries:
        resolved, missing = shared_libraries(binary)
        for name in missing:
            errors.append(f"{os.path.basename(binary)}: {name} not found")
        for library in resolved:
            libraries.setdefault(library, set()).add(os.path.basename(binary))
    owners = dpkg_owners(sorted(libraries))
    for library in sorted(libraries):
        owner = owners[library]
        users = ",".join(sorted(libraries[library]))
        if owner is None:
            errors.append(f"{library} (needed by {users}) belongs to no Debian package")
        elif owner not in installed and owner not in BASE_IMAGE_PACKAGES:
            errors.append(f"{library} (needed by {users}) is in package {owner}, which "
                          f"the runtime stage does not install")

    users = [arg for kw, arg in runtime.instructions if kw == "USER"]
    if not users:
        errors.append("runtime stage has no USER (would run as root)")
    else:
        user = users[-1].split(":")[0]
        if not user.isdigit():
            errors.append(f"USER {users[-1]}: use a numeric UID (runAsNonRoot)")
        elif int(user) == 0:
            errors.append("USER is root")

    entrypoints = [arg for kw, arg in runtime.instructions if kw == "ENTRYPOINT"]
    exposed = set()
    for kw, arg in runtime.instructions:
        if kw == "EXPOSE":
            exposed.update(p.split("/")[0] for p in arg.split())
    if not entrypoints:
        errors.append("runtime stage has no ENTRYPOINT")
    else:
        try:
            entry = json.loads(entrypoints[-1])
        except json.JSONDecodeError:
            entry = None
        if not isinstance(entry, list):
            errors.append("ENTRYPOINT must be exec form (JSON array) so signals reach the server")
        else:
            if os.path.basename(entry[0]) != "plrank-server":
                errors.append(f"ENTRYPOINT runs {entry[0]}, expected plrank-server")
            if os.path.join(bin_dir, os.path.basename(entry[0])) not in binaries:
                errors.append(f"ENTRYPOINT {entry[0]} is not copied into the image")
            # plrank-server defaults to loopback: a container must listen on
            # every interface for its published ports to work.
            for flag in ("--host=", "--metrics_host="):
                values = [a[len(flag):] for a in entry if a.startswith(flag)]
                if not values or values[-1] not in ("0.0.0.0", "::"):
                    errors.append(f"ENTRYPOINT needs {flag}0.0.0.0 (the server defaults to 127.0.0.1)")
            for flag in ("--port=", "--metrics_port="):
                ports = [a[len(flag):] for a in entry if a.startswith(flag)]
                if ports and ports[-1] not in exposed:
                    errors.append(f"ENTRYPOINT {flag}{ports[-1]} is not EXPOSEd")
    return errors


def configure_build_context(dockerfile_text, source_dir):
    """Recreates the build stage's /src from its COPY lines and runs the
    configure step of its scripts/build.sh line (cmake -S . -B BUILD -D...),
    proving the copied sources are enough. Returns a list of errors."""
    build = parse_dockerfile(dockerfile_text)[0]
    workdir = "/"
    with tempfile.TemporaryDirectory(prefix="plrank-image-context-") as root:
        cmake_args = None
        for kw, arg in build.instructions:
            if kw == "WORKDIR":
                workdir = os.path.join(workdir, arg)
            elif kw in ("COPY", "ADD"):
                from_stage, sources, dest = copy_sources(arg)
                if from_stage:
                    continue
                dest = os.path.join(workdir, dest)
                for source in sources:
                    src = os.path.join(source_dir, source)
                    target = root + (os.path.join(dest, os.path.basename(source))
                                     if dest.endswith("/") else dest)
                    if os.path.isdir(src):
                        shutil.copytree(src, target, dirs_exist_ok=True,
                                        ignore=shutil.ignore_patterns(
                                            "node_modules", "__pycache__", "build*"))
                    else:
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        shutil.copy2(src, target)
            elif kw == "RUN" and re.search(r"scripts/build\.sh", arg):
                words = shlex.split(arg)
                rest = words[next(i for i, w in enumerate(words)
                                  if w.endswith("scripts/build.sh")) + 1:]
                build_dir = rest[0] if rest and not rest[0].startswith("-") else "build/release"
                options = [w for w in (rest[1:] if build_dir == rest[0] else rest)
                           if w.startswith("-D")]
                cmake_args = ["cmake", "-S", root + workdir,
                              "-B", root + os.path.join(workdir, build_dir),
                              "-DCMAKE_BUILD_TYPE=Release", *options]
        if cmake_args is None:
            return ["no scripts/build.sh RUN line to configure"]
        result = subprocess.run(cmake_args, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            return ["cmake configure of the build stage's copied sources failed:\n" +
                    result.stdout[-2000:] + result.stderr[-3000:]]
    return []


def mutations(text):
    """(description, mutated Dockerfile) pairs that must each fail."""
    cases = []
    def add(description, old, new):
        if old not in text:
            raise SystemExit(f"self-test: cannot apply '{description}' ({old!r} not found)")
        cases.append((description, text.replace(old, new, 1)))
    add("runtime package libgrpc29 removed", "      libgrpc29 \\\n", "")
    add("runtime package libabsl20220623 removed", "      libabsl20220623 \\\n", "")
    add("-dev package in the runtime stage", "      zlib1g \\\n",
        "      zlib1g \\\n      libgrpc++-dev \\\n")
    add("USER root", "USER 10001:10001", "USER root")
    add("USER 0", "USER 10001:10001", "USER 0:0")
    add("misnamed binary", "/src/build/image/bin/plrank-eval ",
        "/src/build/image/bin/plrank-evaluate ")
    add("build.sh not called", "RUN scripts/build.sh", "RUN cmake -S . -B")
    add("source directory not copied", "COPY server /src/server\n", "")
    add("runtime base image not slim", "FROM debian:12-slim", "FROM ubuntu:24.04")
    if "ARG PLRANK_BINARIES=build" in text:
        add("binaries selector defaulting to the prebuilt stage",
            "ARG PLRANK_BINARIES=build", "ARG PLRANK_BINARIES=prebuilt")
        add("prebuilt binaries copied elsewhere",
            "COPY build/image-prebuilt/ /src/build/image/bin/",
            "COPY build/image-prebuilt/ /usr/bin/")
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source_dir", required=True)
    parser.add_argument("--bin_dir", required=True)
    parser.add_argument("--dockerfile")
    parser.add_argument("--self_test", action="store_true")
    parser.add_argument("--configure", action="store_true",
                        help="also cmake-configure the build stage's copied sources")
    args = parser.parse_args()
    dockerfile = args.dockerfile or os.path.join(args.source_dir, "deploy/docker/Dockerfile")
    text = open(dockerfile).read()
    errors = check(text, args.source_dir, args.bin_dir)
    for error in errors:
        print(f"{dockerfile}: {error}")
    if errors:
        print(f"FAIL: {len(errors)} problem(s)")
        return 1
    print(f"OK: {dockerfile}")
    if args.configure:
        errors = configure_build_context(text, args.source_dir)
        for error in errors:
            print(f"{dockerfile}: {error}")
        if errors:
            print("FAIL: the build stage's sources do not configure")
            return 1
        print("OK: the build stage's copied sources configure with its cmake options")
    if args.self_test:
        failed = 0
        for description, mutated in mutations(text):
            found = check(mutated, args.source_dir, args.bin_dir)
            if found:
                print(f"self-test OK, rejected '{description}': {found[0]}")
            else:
                print(f"self-test FAILED: '{description}' was accepted")
                failed += 1
        if failed:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
