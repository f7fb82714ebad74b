"""plrank-client-py: the Python twin of the C++ plrank-client.

    python3 -m plrank_client --target=HOST:PORT --model=NAME
        [--version=N | --label=L] rank|evaluate|status|list|reload [--data=FILE]

Same flags and the same output as plrank-client (docs/cli.md), except the
LETOR reader options the small Python reader does not offer
(--duplicate_features, --allow_noncontiguous_queries, LightGBM .query files).
The one line that differs by design is rank's timing line. Exit status: 0 ok,
1 a call (or reading the data) failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import secrets
import stat
import sys
import time
from typing import List, Optional, Sequence, TextIO

import grpc

from .client import RankerClient
from .errors import (InvalidArgumentError, PlrankError,
                     error_for_code)
from .formatting import (format_model_list, format_model_status, format_score,
                         format_shadow_status)
from .letor import LetorError, LetorFile, read_letor

PROGRAM = "plrank-client-py"
COMMANDS = ("rank", "rank-batch", "explain", "evaluate", "status", "list",
            "reload")
_BOOL_FLAGS = ("per_query",)


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would exit itself
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROGRAM, allow_abbrev=False,
                description="Client of a running plrank-server.",
                epilog="commands: rank (--data, --top, --scores_out), "
                       "rank-batch (the same with --batch_size queries per "
                       "RankBatch call), explain (--data, --contributions_out, "
                       "--top_features), evaluate (--data, --eval_at, "
                       "--per_query), status, list, reload")
    p.add_argument("command", help="one of " + ", ".join(COMMANDS))
    p.add_argument("--target", default="", help="server address, HOST:PORT")
    p.add_argument("--model", default="",
                   help="model name (rank, rank-batch, explain, evaluate, status)")
    p.add_argument("--version", "--model_version", dest="version", type=int,
                   default=0, help="pin this model version (0 = not pinned)")
    p.add_argument("--label", default="",
                   help="use the version with this label (ignored with --version)")
    p.add_argument("--data", default="", help="LETOR file (rank, evaluate)")
    p.add_argument("--num_features", type=int, default=0,
                   help="feature count of --data (0 = the served model's)")
    p.add_argument("--top", type=int, default=5,
                   help="rank: documents printed per query")
    p.add_argument("--scores_out", default="",
                   help="rank: write one score per input line, in input order")
    p.add_argument("--batch_size", type=int, default=100,
                   help="rank-batch: queries per RankBatch call (one round trip)")
    p.add_argument("--contributions_out", default="",
                   help="explain: write one line per input line, in input "
                        "order: bias:<value> <feature>:<contribution> ...")
    p.add_argument("--top_features", type=int, default=0,
                   help="explain: keep the K features of largest "
                        "|contribution| per document (0 = all non-zero)")
    p.add_argument("--eval_at", default="1,3,5,10", help="evaluate: NDCG cut-offs")
    p.add_argument("--per_query", action="store_true",
                   help="evaluate: also print per-query metrics")
    p.add_argument("--noper_query", dest="per_query", action="store_false",
                   help=argparse.SUPPRESS)
    p.add_argument("--empty_query_ndcg", default="one", choices=("one", "skip", "zero"),
                   help="evaluate: NDCG/MAP of a query without relevant "
                        "documents: one (default), zero, or skip (left out "
                        "of the means)")
    p.add_argument("--deadline_seconds", type=float, default=30.0,
                   help="deadline of each call")
    p.add_argument("--evaluate_deadline_seconds", type=float, default=600.0,
                   help="deadline of a whole evaluate call")
    p.add_argument("--tls_root_cert", default="",
                   help="PEM root certificates: connect with TLS")
    p.add_argument("--tls_cert", default="", help="PEM client certificate (mTLS)")
    p.add_argument("--tls_key", default="", help="PEM client private key")
    return p


def _absl_bools(argv: Sequence[str]) -> List[str]:
    """--per_query=true/false (absl spelling) -> --per_query / --noper_query."""
    out = []
    for arg in argv:
        name, _, value = arg.lstrip("-").partition("=")
        if arg.startswith("-") and name in _BOOL_FLAGS and "=" in arg:
            truth = value.lower()
            if truth not in ("true", "false", "1", "0", "yes", "no", "t", "f", "y", "n"):
                raise UsageError(f"--{name}: '{value}' is not a boolean")
            arg = f"--{'' if truth in ('true', '1', 'yes', 't', 'y') else 'no'}{name}"
        out.append(arg)
    return out


def _cutoffs(text: str) -> List[int]:
    cutoffs = []
    for part in filter(None, text.split(",")):
        if not part.isdigit() or int(part) == 0:
            raise UsageError(f"--eval_at: '{part}' is not a positive integer")
        cutoffs.append(int(part))
    return cutoffs


class LocalFileError(Exception):
    """A problem with this machine's files (--data, --scores_out), reported
    as such and not as the server's answer, as the C++ client does."""


def _read_data_for_model(client: RankerClient, args) -> LetorFile:
    """Reads --data at the served model's width, as the C++ client does."""
    if not args.data:
        raise InvalidArgumentError("--data=FILE (a LETOR file) is required")
    # A missing or unreadable local file fails before any RPC.
    try:
        with open(args.data, "rb"):
            pass
    except OSError as error:
        raise LocalFileError(
            f"{args.data}: cannot open: {os.strerror(error.errno)}") from None
    width = args.num_features
    if width == 0:
        # GetModelMetadata is not an admin RPC: this works from any host.
        metadata = client.metadata(args.model, version=args.version or None,
                                   label=args.label or None)
        width = metadata.num_features
        if width <= 0:
            raise error_for_code(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"the server reports no feature count for model {args.model} "
                f"version {metadata.model_version}; pass --num_features")
    try:
        return read_letor(args.data, width)
    except LetorError as error:
        raise LocalFileError(str(error)) from None


_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
               (stat.S_ISSOCK, "a socket"))


def _refuse_stream_target(path: str, mode: Optional[int]) -> None:
    """Refuses an existing target that is neither a regular file nor a
    stream, in the words of core/data/stream_output.cc's
    CheckStreamOutputTarget (plrank-eval's and plrank-client's check)."""
    if mode is None or stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or \
            stat.S_ISCHR(mode) or stat.S_ISSOCK(mode):
        return
    kind = next((name for test, name in _FILE_KINDS if test(mode)),
                "a special file")
    raise LocalFileError(
        f"{path}: exists and is {kind}, not a file or a pipe; refusing to "
        "write there (give a file path, or - for standard output)")


def _check_stream_target(path: str) -> None:
    """Before the work, as the C++ tools do: a target that cannot be
    written fails now, not after ranking every query."""
    if path in ("-", "/dev/stdout"):
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # absent: creating the file tells what is wrong
    _refuse_stream_target(path, mode)


def _write_lines(path: str, lines: List[str]) -> None:
    """Writes as the C++ tools' score output (core/data/stream_output.h):
    - (or /dev/stdout), a pipe, a character device or a socket is written
    as it is; a regular file atomically (temp file beside it, fsync, rename,
    directory fsync); anything else is refused."""
    text = "".join(line + "\n" for line in lines)
    if path in ("-", "/dev/stdout"):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # absent: creating the file tells what is wrong
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or
                             stat.S_ISSOCK(mode)):
        with open(path, "w", encoding="ascii") as stream:
            stream.write(text)
        return
    _refuse_stream_target(path, mode)
    temp = f"{path}.tmp.{os.getpid()}.{secrets.token_hex(8)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    # Locked until renamed, as the C++ writer does: the C++ tools remove the
    # unlocked temporaries of a target, which killed writers left.
    lock = os.dup(fd)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pass
    try:
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    finally:
        os.close(lock)
    directory = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _rank_one(client: RankerClient, args, queries, top_k):
    """rank: one Rank call per query, as a list of results."""
    query = queries[0]
    try:
        return [client.rank(args.model, query.query_id, query.rows,
                            version=args.version or None,
                            label=args.label or None, top_k=top_k,
                            ids=query.ids)]
    except PlrankError as error:
        raise error_for_code(error.code,
                             f"query {query.query_id}: {error.details}") from None


def _rank_batch(client: RankerClient, args, queries, top_k):
    """rank-batch: one RankBatch call for these queries; a failed query
    fails the command with its own message, as the C++ client does."""
    entries = client.rank_batch(
        args.model, [(q.query_id, q.rows, q.ids) for q in queries],
        version=args.version or None, label=args.label or None, top_k=top_k)
    results = []
    for query, entry in zip(queries, entries):
        if entry.error is not None:
            raise error_for_code(entry.error.code,
                                 f"query {query.query_id}: {entry.error.details}")
        results.append(entry.result)
    if len(results) != len(queries):
        raise error_for_code(grpc.StatusCode.INTERNAL,
                             f"the server answered {len(results)} of "
                             f"{len(queries)} queries")
    return results


def run_rank(client: RankerClient, args, out: TextIO, batch: int = 1) -> None:
    if args.scores_out:
        _check_stream_target(args.scores_out)
    data = _read_data_for_model(client, args)
    want_scores = bool(args.scores_out)
    # Every document's score is needed only for --scores_out.
    top_k = 0 if want_scores else args.top
    rank_queries = _rank_one if batch == 1 else _rank_batch
    scores: List[float] = []
    start = time.monotonic()
    for begin in range(0, len(data.queries), batch):
        queries = data.queries[begin:begin + batch]
        for query, result in zip(queries,
                                 rank_queries(client, args, queries, top_k)):
            count = len(query.rows)
            if want_scores:
                ordered = result.scores_in_request_order(count)
                if None in ordered or len(result.documents) != count:
                    raise error_for_code(
                        grpc.StatusCode.INTERNAL,
                        f"query {query.query_id}: the server returned "
                        f"{len(result.documents)} of {count} documents")
                scores.extend(ordered)
            out.write(f"query {query.query_id}: {count} documents "
                      f"({result.model_name} v{result.model_version})\n")
            for document in result.documents[:args.top]:
                label = query.labels[min(document.request_index, count - 1)]
                out.write(f"  {document.rank:3d}  id {document.id:<8} score "
                          f"{document.score:12.6f}  label {label}\n")
    out.write(f"ranked {len(data.queries)} queries, {data.num_documents} "
              f"documents in {time.monotonic() - start:.3f} s\n")
    if want_scores:
        _write_lines(args.scores_out, [format_score(s) for s in scores])
        out.write(f"wrote {len(scores)} scores to {args.scores_out}\n")


def _explanation_line(bias: float, document) -> str:
    # Features numbered as in the LETOR file (the wire's are 0-based).
    return " ".join(["bias:" + format_score(bias)] + [
        f"{c.feature + 1}:{format_score(c.contribution)}"
        for c in document.contributions])


def run_explain(client: RankerClient, args, out: TextIO) -> None:
    if not args.contributions_out:
        raise InvalidArgumentError(
            "--contributions_out=FILE is required (one line per document)")
    data = _read_data_for_model(client, args)
    lines: List[str] = []
    start = time.monotonic()
    for query in data.queries:
        try:
            result = client.explain(args.model, query.query_id, query.rows,
                                    version=args.version or None,
                                    label=args.label or None,
                                    top_k=args.top_features, ids=query.ids)
        except PlrankError as error:
            raise error_for_code(error.code,
                                 f"query {query.query_id}: {error.details}") from None
        count = len(query.rows)
        if len(result.documents) != count:
            raise error_for_code(
                grpc.StatusCode.INTERNAL,
                f"query {query.query_id}: the server explained "
                f"{len(result.documents)} of {count} documents")
        query_lines = [""] * count
        for document in result.documents:
            if document.request_index >= count:
                raise error_for_code(
                    grpc.StatusCode.INTERNAL,
                    f"query {query.query_id}: request_index "
                    f"{document.request_index} out of range")
            query_lines[document.request_index] = _explanation_line(
                result.bias, document)
        lines.extend(query_lines)
        out.write(f"query {query.query_id}: {count} documents explained "
                  f"({result.model_name} v{result.model_version}), "
                  f"bias {result.bias:.6f}\n")
    out.write(f"explained {len(data.queries)} queries, {data.num_documents} "
              f"documents in {time.monotonic() - start:.3f} s\n")
    _write_lines(args.contributions_out, lines)
    out.write(f"wrote {len(lines)} explanations to {args.contributions_out}\n")


def run_evaluate(client: RankerClient, args, out: TextIO) -> None:
    data = _read_data_for_model(client, args)
    result = client.evaluate(
        args.model,
        [(q.query_id, q.rows, q.labels) for q in data.queries],
        ks=args.cutoffs, per_query=args.per_query,
        empty_query_ndcg=args.empty_query_ndcg,
        version=args.version or None, label=args.label or None)
    out.write(f"{args.data}: {result.query_count} queries, "
              f"{result.document_count} documents "
              f"({result.model_name} v{result.model_version})\n")
    out.write(f"{'metric':<10} {'value':>10}\n")
    for name, value in result.metrics.items():
        out.write(f"{name:<10} {value:10.6f}\n")
    for query in result.per_query:
        values = " ".join(f"{n}={v:.6f}" for n, v in query.metrics.items())
        out.write(f"query {query.query_id}: {values}\n")


def run_reload(client: RankerClient, out: TextIO) -> None:
    result = client.reload()
    out.write(f"reloaded: {result.loaded} loaded, {result.failed} failed, "
              f"{result.unloaded} unloaded\n")
    for model in result.models:
        out.write(format_model_status(model))


def _validated(argv: Sequence[str]):
    args = _parser().parse_args(_absl_bools(argv))
    if args.command not in COMMANDS:
        raise UsageError(f"unknown command '{args.command}' "
                         f"(one of {', '.join(COMMANDS)})")
    if args.command in ("rank", "rank-batch", "explain", "evaluate",
                        "status") and not args.model:
        raise UsageError("--model=NAME is required")
    if args.version < 0:
        raise UsageError("--version must be a positive integer")
    if args.top < 0:
        raise UsageError("--top must be >= 0")
    if args.top_features < 0:
        raise UsageError("--top_features must be >= 0")
    if args.num_features < 0:
        raise UsageError("--num_features must be >= 0")
    if args.batch_size <= 0:
        raise UsageError("--batch_size must be positive")
    args.cutoffs = _cutoffs(args.eval_at)
    if not args.target:
        raise UsageError("--target=HOST:PORT is required")
    if not (args.deadline_seconds > 0 and args.evaluate_deadline_seconds > 0):
        raise UsageError("deadlines must be positive")
    return args


def _asks_program_version(argv: Sequence[str]) -> bool:
    """A bare --version with no value after it, as every C++ program takes
    it (--version=N and --version N still pin a model version)."""
    for i, arg in enumerate(argv):
        if arg == "--version":
            following = argv[i + 1] if i + 1 < len(argv) else ""
            return not following.lstrip("-").isdigit()
    return False


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if _asks_program_version(argv):
        from . import __version__
        out.write(f"{PROGRAM} {__version__}\n")
        return 0
    try:
        args = _validated(argv)
        client = RankerClient(
            args.target, timeout=args.deadline_seconds,
            evaluate_timeout=args.evaluate_deadline_seconds,
            tls_root_cert_file=args.tls_root_cert or None,
            tls_cert_file=args.tls_cert or None, tls_key_file=args.tls_key or None)
    except (UsageError, ValueError, OSError) as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 2
    try:
        with client:
            if args.command == "rank":
                run_rank(client, args, out)
            elif args.command == "rank-batch":
                run_rank(client, args, out, batch=args.batch_size)
            elif args.command == "explain":
                run_explain(client, args, out)
            elif args.command == "evaluate":
                run_evaluate(client, args, out)
            elif args.command == "status":
                status = client.status(args.model)
                out.write(format_model_status(status))
                if status.shadow is not None:
                    out.write(format_shadow_status(status.shadow))
            elif args.command == "list":
                out.write(format_model_list(client.list_models()))
            else:
                run_reload(client, out)
    except PlrankError as error:
        # Keep the server's message; say which server and what the code means.
        details = f": {error.details}" if error.details else ""
        print(f"{PROGRAM}: error: {args.command} ({args.target}): "
              f"{error.code_name}{details}", file=sys.stderr)
        return 1
    except LocalFileError as error:
        print(f"{PROGRAM}: error: {args.command}: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # e.g. --scores_out not writable: local too
        print(f"{PROGRAM}: error: {args.command}: {error}", file=sys.stderr)
        return 1
    out.flush()
    return 0
