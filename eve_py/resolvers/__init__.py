"""Resolver dependency injection: `Annotated[T, Resolve(fn)]` parameters, elicitation by parking."""

from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers._markers import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)
from eve_py.resolvers._solver import Question, question_digest

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
