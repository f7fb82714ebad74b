#!/usr/bin/python3
"""ctest deploy_publish: plrank-publish with the real binaries.

  test_publish.py --bin_dir=BUILD/bin [--publish=deploy/docker/plrank-publish]

On tiny generated data (plrank-datagen): a publish creates exactly
<base>/<model>/<version>/model.pb (readable by others, nothing else left in
the model directory); failures (train error, existing version, quality gate,
SIGTERM mid-training) leave no directory behind and never touch an existing
version; a real plrank-server (port 0) on the base path serves the published
version and picks up a version published while it runs.
"""

import argparse
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAILURES = []


def expect(condition, message):
    print(("ok    " if condition else "FAIL  ") + message, flush=True)
    if not condition:
        FAILURES.append(message)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def model_dir_entries(model_dir):
    return sorted(os.listdir(model_dir)) if os.path.isdir(model_dir) else []


class Publisher:
    def __init__(self, script, bin_dir, base, data):
        self.script, self.bin_dir, self.base, self.data = script, bin_dir, base, data

    def command(self, *extra, train=None, trees=3):
        train_args = train or [f"--train={self.data}.train", f"--trees={trees}",
                               "--leaves=4", "--min_data_in_leaf=5", "--quiet",
                               "--num_threads=1"]
        return [self.script, f"--base_path={self.base}", "--model=web",
                f"--bin_dir={self.bin_dir}", *extra, "--", *train_args]

    def run(self, *extra, **kwargs):
        result = subprocess.run(self.command(*extra, **kwargs), capture_output=True,
                                text=True, timeout=60, check=False)
        sys.stdout.write(result.stderr)
        return result


class Server:
    """plrank-server on 127.0.0.1, any port; always stopped by stop()."""

    def __init__(self, bin_dir, base, work):
        self.bin_dir = bin_dir
        self.out = open(os.path.join(work, "server.out"), "w+")
        self.err = open(os.path.join(work, "server.err"), "w+")
        self.process = subprocess.Popen(
            [os.path.join(bin_dir, "plrank-server"), f"--model_base_path={base}",
             "--host=127.0.0.1", "--port=0", "--metrics_port=-1",
             "--poll_interval_seconds=0.2", "--drain_seconds=1"],
            stdout=self.out, stderr=self.err)
        self.target = None
        deadline = time.time() + 15
        while time.time() < deadline and self.process.poll() is None:
            self.out.seek(0)
            match = re.search(r"listening on (\S+:\d+)", self.out.read())
            if match:
                self.target = match.group(1)
                break
            time.sleep(0.05)

    def status(self):
        result = subprocess.run(
            [os.path.join(self.bin_dir, "plrank-client"), f"--target={self.target}",
             "--model=web", "--deadline_seconds=5", "status"],
            capture_output=True, text=True, timeout=20, check=False)
        return result.stdout if result.returncode == 0 else ""

    def wait_for_default(self, version, seconds=15):
        deadline = time.time() + seconds
        text = ""
        while time.time() < deadline:
            text = self.status()
            if re.search(rf"default version {version}\b", text) and \
               re.search(rf"version {version}\s+AVAILABLE", text):
                return text
            time.sleep(0.1)
        print(text)
        return None

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.err.seek(0)
        log = self.err.read()
        self.out.close()
        self.err.close()
        return log


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin_dir", required=True)
    parser.add_argument("--publish", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "plrank-publish"))
    args = parser.parse_args()
    bin_dir = os.path.abspath(args.bin_dir)

    with tempfile.TemporaryDirectory(prefix="plrank-publish-test-") as work:
        data = os.path.join(work, "data")
        subprocess.run([os.path.join(bin_dir, "plrank-datagen"), "--queries=30",
                        "--features=12", "--mean_docs=15", f"--out_prefix={data}"],
                       check=True, capture_output=True)
        base = os.path.join(work, "models")
        os.mkdir(base)
        model_dir = os.path.join(base, "web")
        publisher = Publisher(args.publish, bin_dir, base, data)

        # 1. explicit version, validated on held-out data with a quality gate.
        result = publisher.run("--version=5", f"--eval_data={data}.test", "--min_ndcg=0.01")
        expect(result.returncode == 0, "publish --version=5 succeeds")
        expect(result.stdout.strip() == os.path.join(model_dir, "5"),
               "prints the published directory")
        v5 = os.path.join(model_dir, "5", "model.pb")
        expect(os.path.isfile(v5) and os.path.getsize(v5) > 0, "5/model.pb exists")
        expect(model_dir_entries(model_dir) == ["5"], "only 5/ in the model directory")
        expect(oct(os.stat(os.path.dirname(v5)).st_mode & 0o777) == "0o755" and
               oct(os.stat(v5).st_mode & 0o777) == "0o644",
               "version directory 0755, model.pb 0644 (server may be another user)")
        v5_digest = digest(v5)

        # 2. default version = unix seconds.
        before = int(time.time())
        result = publisher.run()
        after = int(time.time())
        published = os.path.basename(result.stdout.strip())
        expect(result.returncode == 0 and published.isdigit() and
               before <= int(published) <= after, f"default version is unix time ({published})")
        seconds_version = int(published) if published.isdigit() else 0

        # 3. failures leave nothing behind.
        result = publisher.run("--version=6", train=[f"--train={work}/missing.txt", "--quiet"])
        expect(result.returncode != 0, "failing plrank-train fails the publish")
        expect("6" not in model_dir_entries(model_dir) and
               not any(e.startswith(".") for e in model_dir_entries(model_dir)),
               "failed train leaves no version and no temporary directory")

        result = publisher.run("--version=5", trees=5)
        expect(result.returncode != 0 and "already exists" in result.stderr,
               "publishing an existing version fails")
        expect(digest(v5) == v5_digest, "existing version untouched")

        result = publisher.run("--version=7", f"--eval_data={data}.test", "--min_ndcg=1.01")
        expect(result.returncode != 0 and "7" not in model_dir_entries(model_dir),
               "quality gate failure publishes nothing")

        # --launcher: plrank-train runs under the given command (mpirun for
        # distributed training); a failing launcher publishes nothing.
        launcher = os.path.join(work, "launcher.sh")
        with open(launcher, "w") as f:
            f.write('#!/bin/sh\necho "launcher ran $#" >&2\nexec "$@"\n')
        os.chmod(launcher, 0o755)
        result = publisher.run("--version=10", f"--launcher={launcher} ")
        expect(result.returncode == 0 and "launcher ran" in result.stderr and
               "10" in model_dir_entries(model_dir),
               "--launcher runs plrank-train under the launcher and publishes")
        result = publisher.run("--version=11", "--launcher=false")
        expect(result.returncode != 0 and "11" not in model_dir_entries(model_dir),
               "a failing --launcher publishes nothing")
        shutil.rmtree(os.path.join(model_dir, "10"), ignore_errors=True)

        result = publisher.run("--version=07")
        expect(result.returncode != 0, "version with a leading zero refused")
        result = publisher.run("--version=8", train=[f"--train={data}.train",
                                                     f"--model_out={work}/x.pb"])
        expect(result.returncode != 0, "--model_out in the train arguments refused")

        # SIGTERM in the middle of a long training.
        process = subprocess.Popen(publisher.command("--version=9", trees=1000000),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while time.time() < deadline and not any(
                e.startswith(".publish-") for e in model_dir_entries(model_dir)):
            time.sleep(0.02)
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        expect(process.returncode != 0, f"SIGTERM stops the publish (exit {process.returncode})")
        time.sleep(0.2)
        expect(sorted(model_dir_entries(model_dir)) == sorted(["5", str(seconds_version)]),
               f"nothing left after SIGTERM: {model_dir_entries(model_dir)}")

        # SIGKILL (no trap runs): the directory stays while its trainer
        # lives, and the next run after that removes it.
        process = subprocess.Popen(publisher.command("--version=13", trees=1000000),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
        deadline = time.time() + 10
        while time.time() < deadline and not [
                e for e in model_dir_entries(model_dir) if e.startswith(".publish-")]:
            time.sleep(0.02)
        killed = [e for e in model_dir_entries(model_dir) if e.startswith(".publish-")]
        expect(len(killed) == 1, f"a run in progress has its directory: {killed}")

        def trainer_running(directory):
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        argv = f.read().split(b"\0")
                except OSError:
                    continue
                if (argv and argv[0].endswith(b"plrank-train") and
                        any(directory.encode() in a for a in argv)):
                    return True
            return False

        deadline = time.time() + 10
        while killed and time.time() < deadline and not trainer_running(killed[0]):
            time.sleep(0.02)
        process.kill()
        process.wait()
        if killed:
            stale = os.path.join(model_dir, killed[0])
            result = publisher.run("--version=14")
            expect(result.returncode == 0 and os.path.isdir(stale),
                   "the directory of a run whose trainer lives is kept")
            os.killpg(process.pid, signal.SIGKILL)  # the orphaned trainer
            deadline = time.time() + 20
            while time.time() < deadline and subprocess.run(
                    ["flock", "-n", stale, "true"]).returncode != 0:
                time.sleep(0.05)
            result = publisher.run("--version=15")
            expect(result.returncode == 0 and not os.path.exists(stale) and
                   "left by a killed run" in result.stderr,
                   f"a killed run's directory is removed by the next run: "
                   f"{model_dir_entries(model_dir)}")
        for version in ("14", "15"):
            shutil.rmtree(os.path.join(model_dir, version), ignore_errors=True)

        # 4. a real server serves the published versions, and a new one.
        server = Server(bin_dir, base, work)
        try:
            expect(server.target is not None, f"plrank-server started ({server.target})")
            if server.target:
                expect(server.wait_for_default(seconds_version) is not None,
                       f"server serves version {seconds_version} as default")
                newer = seconds_version + 1
                result = publisher.run(f"--version={newer}")
                expect(result.returncode == 0, f"publish {newer} while serving")
                expect(server.wait_for_default(newer) is not None,
                       f"server picks up version {newer}")
        finally:
            log = server.stop()
        expect("version_load_failed" not in log, "server never saw a partial version")
        if "version_load_failed" in log:
            print(log)

    if FAILURES:
        print(f"FAILED: {len(FAILURES)} check(s)")
        return 1
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
