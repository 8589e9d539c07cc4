"""Resolver dependency injection: `Annotated[T, Resolve(fn)]` parameters, elicitation by parking."""

from eve_py.resolvers.markers import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)
from eve_py.resolvers.solver import Question, RecordedOutcome, question_digest

__all__ = (
    "AcceptedElicitation",
    "CancelledElicitation",
    "DeclinedElicitation",
    "Elicit",
    "ElicitationResult",
    "Question",
    "RecordedOutcome",
    "Resolve",
    "question_digest",
)
