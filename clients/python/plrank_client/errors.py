"""Typed errors: one exception class per gRPC status code.

Every failed call raises a subclass of `PlrankError` chosen by the gRPC code
the server (or the gRPC runtime, for deadlines and connection failures)
returned. The server's message is kept unchanged in `details`; it says what
to fix (see proto/plrank/v1/ranker.proto for what each code means there).
"""

from __future__ import annotations

from typing import Optional

import grpc


class PlrankError(Exception):
    """A failed call. `code` is the grpc.StatusCode, `details` the message."""

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, details: str, *, code: Optional[grpc.StatusCode] = None,
                 method: str = "", target: str = ""):
        if code is not None:
            self.code = code
        self.details = details
        self.method = method
        self.target = target
        super().__init__(f"{self.code_name}: {details}" if details else self.code_name)

    @property
    def code_name(self) -> str:
        """"NOT_FOUND", "INVALID_ARGUMENT", ... (as the C++ client prints)."""
        return self.code.name


class CancelledError(PlrankError):
    code = grpc.StatusCode.CANCELLED


class UnknownError(PlrankError):
    code = grpc.StatusCode.UNKNOWN


class InvalidArgumentError(PlrankError):
    """Malformed request: wrong feature count, inf values, empty query, ..."""
    code = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceededError(PlrankError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFoundError(PlrankError):
    """Unknown model, version or label."""
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExistsError(PlrankError):
    code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDeniedError(PlrankError):
    code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhaustedError(PlrankError):
    """More documents or queries than the server's limits (or message size)."""
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPreconditionError(PlrankError):
    """The pinned or labelled version exists but failed to load."""
    code = grpc.StatusCode.FAILED_PRECONDITION


class AbortedError(PlrankError):
    code = grpc.StatusCode.ABORTED


class OutOfRangeError(PlrankError):
    code = grpc.StatusCode.OUT_OF_RANGE


class UnimplementedError(PlrankError):
    code = grpc.StatusCode.UNIMPLEMENTED


class InternalError(PlrankError):
    code = grpc.StatusCode.INTERNAL


class UnavailableError(PlrankError):
    """Server unreachable, shutting down, or no model version ready yet."""
    code = grpc.StatusCode.UNAVAILABLE


class DataLossError(PlrankError):
    code = grpc.StatusCode.DATA_LOSS


class UnauthenticatedError(PlrankError):
    code = grpc.StatusCode.UNAUTHENTICATED


_BY_CODE = {cls.code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
    NotFoundError, AlreadyExistsError, PermissionDeniedError,
    ResourceExhaustedError, FailedPreconditionError, AbortedError,
    OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
    DataLossError, UnauthenticatedError)}


def error_for_code(code: grpc.StatusCode, details: str, *, method: str = "",
                   target: str = "") -> PlrankError:
    """The exception instance for `code` (PlrankError for unlisted codes)."""
    cls = _BY_CODE.get(code, PlrankError)
    return cls(details, code=code, method=method, target=target)


def from_rpc_error(error: grpc.RpcError, *, method: str = "",
                   target: str = "") -> PlrankError:
    """Converts what a grpc stub raised; keeps the server's message."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    return error_for_code(code or grpc.StatusCode.UNKNOWN, details or "",
                          method=method, target=target)
