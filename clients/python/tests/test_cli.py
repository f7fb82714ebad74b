"""python3 -m plrank_client prints what the C++ plrank-client prints."""

from __future__ import annotations

import os
import re
import stat
import threading
import subprocess
import sys

import pytest

from conftest import parse_metrics

# The one line that differs by design: wall time of the rank command.
_TIMING = re.compile(
    r"^((?:ranked|explained) \d+ queries, \d+ documents in )[\d.]+ s$", re.M)


def run_cli(command, args):
    result = subprocess.run(command + args, capture_output=True, text=True,
                            timeout=60)
    return result.returncode, _TIMING.sub(r"\1T s", result.stdout), result.stderr


def python_cli(env):
    return [sys.executable, "-m", "plrank_client", f"--target={env.target}"]


def cpp_cli(env):
    return [env.binary("plrank-client"), f"--target={env.target}"]


def both(env, args):
    py = run_cli(python_cli(env), args)
    cc = run_cli(cpp_cli(env), args)
    return py, cc


@pytest.mark.parametrize("args", [
    ["--model=demo", "status"],
    ["list"],
    ["reload"],
    ["--model=demo", "rank", "--top=3"],
    ["--model=demo", "--version=1", "rank", "--top=0"],
    ["--model=demo", "rank-batch", "--top=3", "--batch_size=2"],
    ["--model=demo", "--version=1", "rank-batch", "--top=2"],
    ["--model=demo", "--label=stable", "evaluate"],
    ["--model=demo", "evaluate", "--eval_at=2,4", "--per_query",
     "--empty_query_ndcg=skip"],
    ["--model=demo", "--version=2", "evaluate", "--empty_query_ndcg=zero"],
], ids=lambda args: " ".join(args))
def test_output_equals_cpp_client(env, args):
    if "rank" in args or "rank-batch" in args or "evaluate" in args:
        args = args + [f"--data={env.data}"]
    (py_rc, py_out, py_err), (cc_rc, cc_out, cc_err) = both(env, args)
    assert cc_rc == 0, cc_err
    assert py_rc == 0, py_err
    assert py_out == cc_out
    assert py_out.strip()


def test_rank_scores_out_is_byte_identical(env, tmp_path):
    for version in (1, 2):
        py_file, cc_file = tmp_path / f"py{version}", tmp_path / f"cc{version}"
        py = run_cli(python_cli(env), ["--model=demo", f"--version={version}", "rank",
                                       f"--data={env.data}", f"--scores_out={py_file}"])
        cc = run_cli(cpp_cli(env), ["--model=demo", f"--version={version}", "rank",
                                    f"--data={env.data}", f"--scores_out={cc_file}"])
        assert py[0] == 0 and cc[0] == 0, py[2] + cc[2]
        assert py[1].replace(str(py_file), "F") == cc[1].replace(str(cc_file), "F")
        expected = env.eval_scores[version].read_bytes()
        assert py_file.read_bytes() == cc_file.read_bytes() == expected


def test_rank_batch_scores_out_equals_rank(env, tmp_path):
    rank_file, batch_file = tmp_path / "rank", tmp_path / "batch"
    rank = run_cli(python_cli(env), ["--model=demo", "rank", f"--data={env.data}",
                                     f"--scores_out={rank_file}"])
    batch = run_cli(python_cli(env), ["--model=demo", "rank-batch", "--batch_size=3",
                                      f"--data={env.data}",
                                      f"--scores_out={batch_file}"])
    assert rank[0] == 0 and batch[0] == 0, rank[2] + batch[2]
    assert rank_file.read_bytes() == batch_file.read_bytes()
    assert rank_file.read_bytes()


@pytest.mark.parametrize("top_features", [0, 2])
def test_explain_file_is_byte_identical_to_cpp(env, tmp_path, top_features):
    py_file, cc_file = tmp_path / "py", tmp_path / "cc"
    common = ["--model=demo", "explain", f"--data={env.data}",
              f"--top_features={top_features}"]
    py = run_cli(python_cli(env), common + [f"--contributions_out={py_file}"])
    cc = run_cli(cpp_cli(env), common + [f"--contributions_out={cc_file}"])
    assert py[0] == 0 and cc[0] == 0, py[2] + cc[2]
    assert py[1].replace(str(py_file), "F") == cc[1].replace(str(cc_file), "F")
    lines = py_file.read_text().splitlines()
    assert py_file.read_bytes() == cc_file.read_bytes()
    # One line per input line; each starts with the bias.
    with open(env.data) as data:
        assert len(lines) == sum(1 for line in data if line.strip())
    assert all(line.startswith("bias:") for line in lines)
    if top_features:
        assert all(len(line.split()) <= 1 + top_features for line in lines)


def test_explain_needs_contributions_out(env):
    (py_rc, _, py_err), (cc_rc, _, cc_err) = both(
        env, ["--model=demo", "explain", f"--data={env.data}"])
    assert py_rc == cc_rc == 1
    assert "--contributions_out=FILE is required" in py_err
    assert py_err.split(": error: ", 1)[1] == cc_err.split(": error: ", 1)[1]


def test_evaluate_prints_plrank_eval_metrics(env):
    rc, out, err = run_cli(python_cli(env), ["--model=demo", "--version=2",
                                             "evaluate", f"--data={env.data}"])
    assert rc == 0, err
    assert parse_metrics(out) == env.eval_metrics[2]


@pytest.mark.parametrize("convention", ["one", "zero", "skip"])
def test_empty_query_conventions_match_plrank_eval(env, tmp_path, convention):
    # Query b has no relevant document: it counts 1, 0, or not at all.
    data = tmp_path / "empty_query.txt"
    data.write_text("2 qid:a 1:0.9 2:0.5\n0 qid:a 1:0.1 2:0.2\n"
                    "1 qid:a 1:0.4 2:0.7\n0 qid:b 1:0.3\n0 qid:b 1:0.8\n")
    flag = f"--empty_query_ndcg={convention}"
    rc, out, err = run_cli(python_cli(env), ["--model=demo", "--version=2",
                                             "evaluate", f"--data={data}", flag])
    assert rc == 0, err
    model = env.model_base / "demo" / "2" / "model.pb"
    expected = run_cli([env.binary("plrank-eval"), f"--model={model}",
                        f"--data={data}", flag], [])
    assert expected[0] == 0, expected[2]
    assert parse_metrics(out) == parse_metrics(expected[1])


@pytest.mark.parametrize("args", [
    ["--model=nope", "status"],
    ["--model=demo", "--label=gone", "rank"],
    ["--model=demo", "--version=3", "evaluate"],
], ids=lambda args: " ".join(args))
def test_errors_equal_cpp_client(env, args):
    args = args + [f"--data={env.data}"]
    (py_rc, py_out, py_err), (cc_rc, _, cc_err) = both(env, args)
    assert py_rc == cc_rc == 1
    assert py_out == ""
    py_message = py_err.strip().split(": error: ", 1)
    cc_message = cc_err.strip().split(": error: ", 1)
    assert py_message[0] == "plrank-client-py"
    assert py_message[1] == cc_message[1]


def test_scores_out_writes_pipes_and_refuses_directories(env, tmp_path):
    target = tmp_path / "scores.dir"
    target.mkdir()
    args = ["--model=demo", "rank", f"--data={env.data}", f"--scores_out={target}"]
    (py_rc, _, py_err), (cc_rc, _, cc_err) = both(env, args)
    assert py_rc == cc_rc == 1
    # The words of plrank-eval --scores_out (CheckStreamOutputTarget).
    assert f"{target}: exists and is a directory, not a file or a pipe" in py_err
    assert py_err.split(": error: ", 1)[1] == cc_err.split(": error: ", 1)[1]
    fifo = tmp_path / "scores.fifo"
    os.mkfifo(fifo)
    outputs = []
    for cli in (python_cli(env), cpp_cli(env)):
        read = []
        reader = threading.Thread(target=lambda: read.append(fifo.read_text()))
        reader.start()
        rc, _, err = run_cli(cli, ["--model=demo", "rank", f"--data={env.data}",
                                   f"--scores_out={fifo}"])
        reader.join(timeout=60)
        assert rc == 0, err
        outputs.append(read[0])
    assert outputs[0] == outputs[1] and outputs[0].endswith("\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_bad_data_file_names_file_and_line(env, tmp_path):
    bad = tmp_path / "bad.txt"
    lines = env.data.read_text().splitlines()
    lines[4] += " 3:abc"
    bad.write_text("\n".join(lines) + "\n")
    rc, out, err = run_cli(python_cli(env), ["--model=demo", "rank", f"--data={bad}"])
    assert rc == 1
    # A local file's error, not the server's: no "(target): CODE" prefix.
    assert f"error: rank: {bad}:5: " in err and "INVALID_ARGUMENT" not in err
    missing = tmp_path / "missing.txt"
    rc, _, err = run_cli(python_cli(env), ["--model=demo", "rank", f"--data={missing}"])
    assert rc == 1
    assert f"error: rank: {missing}: cannot open: No such file or directory" in err
    # Wider than the served model: refused with the line, like the C++ client.
    wide = tmp_path / "wide.txt"
    wide.write_text("1 qid:1 1:0.5 9:1\n")
    rc, _, err = run_cli(python_cli(env), ["--model=demo", "rank", f"--data={wide}"])
    assert rc == 1 and f"{wide}:1: feature index 9 above --num_features=8" in err


@pytest.mark.parametrize("args", [
    ["status"],                               # no --model
    ["--model=demo", "frobnicate"],           # unknown command
    ["--model=demo", "evaluate", "--eval_at=0"],
    ["--model=demo", "evaluate", "--empty_query_ndcg=none"],
    ["--model=demo", "--version=-1", "status"],
    ["--model=demo", "rank-batch", "--batch_size=0"],
], ids=lambda args: " ".join(args))
def test_usage_errors_exit_2(env, args):
    rc, _, err = run_cli(python_cli(env), args)
    assert rc == 2
    assert err.startswith("plrank-client-py: error: ")


def test_wrapper_script(env):
    wrapper = env.bin_dir / "plrank-client-py"
    if not wrapper.exists():
        pytest.skip(f"{wrapper} not built (CMake generates it)")
    rc, out, err = run_cli([str(wrapper), f"--target={env.target}"],
                           ["--model=demo", "status"])
    assert rc == 0, err
    assert out == run_cli(cpp_cli(env), ["--model=demo", "status"])[1]
