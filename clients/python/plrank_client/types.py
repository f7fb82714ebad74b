"""Results as small dataclasses, built from the response protos.

Each result keeps the response message it came from in `raw` (excluded from
equality and repr) for fields a future server adds before this package does.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence

from ._stubs import ranker_pb2
from .errors import NotFoundError, UnavailableError


@dataclasses.dataclass(frozen=True)
class ScoredDocument:
    id: str
    score: float
    rank: int           # 1-based, after sorting by descending score
    request_index: int  # 0-based position in the request


@dataclasses.dataclass(frozen=True)
class RankResult:
    model_name: str
    model_version: int  # the version that scored (labels resolved)
    query_id: str
    documents: List[ScoredDocument]  # best first
    raw: Any = dataclasses.field(default=None, repr=False, compare=False)

    def scores_in_request_order(self, num_documents: int) -> List[Optional[float]]:
        """Score of request document i at index i (None if not returned)."""
        scores: List[Optional[float]] = [None] * num_documents
        for document in self.documents:
            if document.request_index < num_documents:
                scores[document.request_index] = document.score
        return scores


@dataclasses.dataclass(frozen=True)
class BatchEntry:
    """One query of rank_batch(): its result, or the error it failed with."""
    result: Optional[RankResult]
    error: Optional[Exception]  # a PlrankError subclass, by gRPC code

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclasses.dataclass(frozen=True)
class FeatureContribution:
    feature: int          # 0-based, as in the request (LETOR's 1 is 0)
    contribution: float


@dataclasses.dataclass(frozen=True)
class DocumentExplanation:
    id: str
    request_index: int    # 0-based position in the request
    score: float          # the served score = bias + all contributions
    # Largest |contribution| first; zeros left out; cut to top_k if set.
    contributions: List[FeatureContribution]

    def as_dict(self) -> Dict[int, float]:
        """feature -> contribution."""
        return {c.feature: c.contribution for c in self.contributions}


@dataclasses.dataclass(frozen=True)
class ExplainResult:
    model_name: str
    model_version: int
    query_id: str
    bias: float           # the model's expected score, same for every document
    documents: List[DocumentExplanation]  # request order
    raw: Any = dataclasses.field(default=None, repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class LabelledQuery:
    """Input of evaluate(): documents (as for rank) and one grade each."""
    query_id: str
    documents: Sequence[Any]
    labels: Sequence[int]


@dataclasses.dataclass(frozen=True)
class QueryMetrics:
    query_id: str
    metrics: Dict[str, float]


@dataclasses.dataclass(frozen=True)
class EvaluateResult:
    model_name: str
    model_version: int
    query_count: int
    document_count: int
    metrics: Dict[str, float]  # server order: ndcg@k..., err, map
    per_query: List[QueryMetrics]
    raw: Any = dataclasses.field(default=None, repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class ModelMetadata:
    objective: str
    num_trees: int
    num_features: int
    num_outputs: int
    has_linear_weights: bool
    created_unix_seconds: int
    checksum: str
    training_metrics: Dict[str, float]
    file_bytes: int


@dataclasses.dataclass(frozen=True)
class VersionStatus:
    version: int
    state: str   # "AVAILABLE", "LOADING", "FAILED", "UNLOADING", "END", ...
    error: str   # why a FAILED version failed
    labels: List[str]
    metadata: Optional[ModelMetadata]
    loaded_unix_seconds: int
    # Why an AVAILABLE version above the default was not promoted to it
    # (incompatible with the serving version); "" otherwise.
    promotion_refused: str = ""


@dataclasses.dataclass(frozen=True)
class ShadowComparison:
    """Running comparison of one (serving, shadow) version pair."""
    serving_version: int
    shadow_version: int  # 0 = the shadow was unresolved (copies failed)
    scored: int
    dropped: int          # the shadow queue was full
    failed: int
    mean_kendall_tau: float
    tau_count: int        # scored requests where tau-b is defined
    top1_agreement: float
    mean_top10_overlap: float
    last_error: str


@dataclasses.dataclass(frozen=True)
class ShadowStatus:
    """Shadow scoring of a model (ModelConfig.shadow_*), as configured."""
    configured_version: int
    configured_label: str
    fraction: float
    shadow_version: int   # the version copies go to; 0 = unresolved
    error: str            # why it is unresolved
    comparisons: List[ShadowComparison]


@dataclasses.dataclass(frozen=True)
class ModelStatus:
    name: str
    versions: List[VersionStatus]
    default_version: int  # 0 = none available
    raw: Any = dataclasses.field(default=None, repr=False, compare=False)
    # From GetModelStatus only, when the model has a shadow configured.
    shadow: Optional[ShadowStatus] = None

    def resolve(self, version: Optional[int] = None,
                label: Optional[str] = None) -> VersionStatus:
        """The version a request with this version/label would name.

        Same rules as the C++ client's ResolveVersion: a pinned version wins
        over a label; neither = the default version. Raises NotFoundError or
        UnavailableError like the server would.
        """
        listing = ", ".join(str(v.version) for v in self.versions) or "none"
        if version:
            for entry in self.versions:
                if entry.version == version:
                    return entry
            raise NotFoundError(
                f"model {self.name} has no version {version} (versions: {listing})")
        if label:
            for entry in self.versions:
                if label in entry.labels:
                    return entry
            raise NotFoundError(f"model {self.name} has no version labelled '{label}'")
        for entry in self.versions:
            if entry.version == self.default_version:
                return entry
        raise UnavailableError(
            f"model {self.name} has no version ready to serve (versions: {listing})")


@dataclasses.dataclass(frozen=True)
class ReloadResult:
    loaded: int
    failed: int
    unloaded: int
    models: List[ModelStatus]
    raw: Any = dataclasses.field(default=None, repr=False, compare=False)


def state_name(state: int) -> str:
    """"AVAILABLE" for VERSION_STATE_AVAILABLE (as the C++ client prints)."""
    try:
        name = ranker_pb2.VersionState.Name(state)
    except ValueError:
        return f"STATE_{state}"
    prefix = "VERSION_STATE_"
    return name[len(prefix):] if name.startswith(prefix) else name


def rank_result(response) -> RankResult:
    return RankResult(
        model_name=response.model_name,
        model_version=response.model_version,
        query_id=response.query_id,
        documents=[ScoredDocument(d.id, d.score, d.rank, d.request_index)
                   for d in response.documents],
        raw=response)


def explain_result(response) -> ExplainResult:
    return ExplainResult(
        model_name=response.model_name,
        model_version=response.model_version,
        query_id=response.query_id,
        bias=response.bias,
        documents=[DocumentExplanation(
            id=d.id, request_index=d.request_index, score=d.score,
            contributions=[FeatureContribution(c.feature, c.contribution)
                           for c in d.contributions])
            for d in response.documents],
        raw=response)


def _metrics(values) -> Dict[str, float]:
    return {m.name: m.value for m in values}


def evaluate_result(response) -> EvaluateResult:
    return EvaluateResult(
        model_name=response.model_name,
        model_version=response.model_version,
        query_count=response.query_count,
        document_count=response.document_count,
        metrics=_metrics(response.metrics),
        per_query=[QueryMetrics(q.query_id, _metrics(q.metrics))
                   for q in response.per_query],
        raw=response)


def _metadata(version) -> Optional[ModelMetadata]:
    if not version.HasField("metadata"):
        return None
    m = version.metadata
    return ModelMetadata(
        objective=m.objective, num_trees=m.num_trees,
        num_features=m.num_features, num_outputs=m.num_outputs,
        has_linear_weights=m.has_linear_weights,
        created_unix_seconds=m.created_unix_seconds, checksum=m.checksum,
        training_metrics=dict(sorted(m.training_metrics.items())),
        file_bytes=m.file_bytes)


def shadow_status(shadow) -> ShadowStatus:
    return ShadowStatus(
        configured_version=shadow.configured_version,
        configured_label=shadow.configured_label,
        fraction=shadow.fraction,
        shadow_version=shadow.shadow_version,
        error=shadow.error,
        comparisons=[ShadowComparison(
            serving_version=c.serving_version, shadow_version=c.shadow_version,
            scored=c.scored, dropped=c.dropped, failed=c.failed,
            mean_kendall_tau=c.mean_kendall_tau, tau_count=c.tau_count,
            top1_agreement=c.top1_agreement,
            mean_top10_overlap=c.mean_top10_overlap, last_error=c.last_error)
            for c in shadow.comparisons])


def model_status(status, shadow=None) -> ModelStatus:
    """`shadow`: the ShadowStatus message of a GetModelStatus answer."""
    return ModelStatus(
        name=status.name,
        versions=[VersionStatus(
            version=v.version, state=state_name(v.state), error=v.error,
            labels=list(v.labels), metadata=_metadata(v),
            loaded_unix_seconds=v.loaded_unix_seconds,
            promotion_refused=v.promotion_refused)
            for v in status.versions],
        default_version=status.default_version,
        raw=status,
        shadow=shadow_status(shadow) if shadow is not None else None)


def reload_result(response) -> ReloadResult:
    return ReloadResult(
        loaded=response.loaded, failed=response.failed,
        unloaded=response.unloaded,
        models=[model_status(m) for m in response.models], raw=response)
