"""Python client of the PLRank ranking server (plrank.v1.Ranker over gRPC).

    from plrank_client import RankerClient
    with RankerClient("127.0.0.1:8500", timeout=5.0) as client:
        result = client.rank("web", "q1", [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
        for doc in result.documents:
            print(doc.rank, doc.id, doc.score)

See README.md for the API, errors and the CLI (python3 -m plrank_client).
"""

from .client import RankerClient
from .errors import (AbortedError, AlreadyExistsError, CancelledError,
                     DataLossError, DeadlineExceededError,
                     FailedPreconditionError, InternalError,
                     InvalidArgumentError, NotFoundError, OutOfRangeError,
                     PermissionDeniedError, PlrankError, ResourceExhaustedError,
                     UnauthenticatedError, UnavailableError, UnimplementedError,
                     UnknownError, error_for_code)
from .types import (BatchEntry, DocumentExplanation, EvaluateResult,
                    ExplainResult,
                    FeatureContribution, LabelledQuery, ModelMetadata,
                    ModelStatus, QueryMetrics, RankResult, ReloadResult,
                    Sampling, ScoredDocument, ShadowComparison, ShadowStatus,
                    VersionStatus)

__version__ = "0.1.0"

__all__ = [
    "RankerClient", "PlrankError", "error_for_code",
    "AbortedError", "AlreadyExistsError", "CancelledError", "DataLossError",
    "DeadlineExceededError", "FailedPreconditionError", "InternalError",
    "InvalidArgumentError", "NotFoundError", "OutOfRangeError",
    "PermissionDeniedError", "ResourceExhaustedError", "UnauthenticatedError",
    "UnavailableError", "UnimplementedError", "UnknownError",
    "BatchEntry", "DocumentExplanation", "EvaluateResult", "ExplainResult",
    "FeatureContribution", "LabelledQuery", "ModelMetadata", "ModelStatus",
    "QueryMetrics", "RankResult", "ReloadResult", "Sampling", "ScoredDocument",
    "ShadowComparison", "ShadowStatus", "VersionStatus",
]
