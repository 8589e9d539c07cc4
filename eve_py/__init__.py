"""eve-py: a Python agent runtime built around human-in-the-loop tools.

Authoring (`define_tool`, `define_client_tool`, `disable_tool`, `define_agent`), loading
(`compile_app`, `load_agent`, `resolve_tool`), resolvers (`Resolve`, `Elicit`, ...), running
(`Runtime`, `InputResponse`) and the error root `EveError`. Stores live in `eve_py.sessions`,
the mock model in `eve_py.testing`. `__version__` is the installed distribution's version.
"""

from eve_py._moved import install as _install_moved
from eve_py._version import version as _version
from eve_py.agent import Agent, load_agent
from eve_py.authoring import (
    AgentDefinition,
    ApprovalContext,
    DisabledTool,
    Root,
    ToolContext,
    ToolDefinition,
    define_agent,
    define_client_tool,
    define_tool,
    disable_tool,
)
from eve_py.compiler import Diagnostic, Manifest, compile_app
from eve_py.errors import (
    CompileError,
    EditNotAllowedError,
    EveError,
    InputResponseError,
    InvalidAnswerError,
    InvalidMessageError,
    LinkExpiredError,
    LinkInvalidError,
    ModelConfigurationError,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    NotAnApproverError,
    PairingError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    SessionConflictError,
    SessionEndedError,
    SessionError,
    SessionNotFoundError,
    SessionNotWaitingError,
    SessionStateError,
    StoreSchemaError,
    ToolDefinitionError,
    ToolError,
    ToolResolutionError,
    UnknownRequestError,
)
from eve_py.harness import Runtime, Session, check_pairing
from eve_py.models import Model
from eve_py.protocol import Event, InputOption, InputRequest, InputResponse, TurnResult
from eve_py.resolvers import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)
from eve_py.tools import ResolvedTool, resolve_tool

__all__ = (
    "AcceptedElicitation",
    "Agent",
    "AgentDefinition",
    "ApprovalContext",
    "CancelledElicitation",
    "CompileError",
    "DeclinedElicitation",
    "Diagnostic",
    "DisabledTool",
    "EditNotAllowedError",
    "Elicit",
    "ElicitationResult",
    "EveError",
    "Event",
    "InputOption",
    "InputRequest",
    "InputResponse",
    "InputResponseError",
    "InvalidAnswerError",
    "InvalidMessageError",
    "LinkExpiredError",
    "LinkInvalidError",
    "Manifest",
    "Model",
    "ModelConfigurationError",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "NotAnApproverError",
    "PairingError",
    "RequestAlreadyAnsweredError",
    "RequestExpiredError",
    "Resolve",
    "ResolvedTool",
    "Root",
    "Runtime",
    "Session",
    "SessionConflictError",
    "SessionEndedError",
    "SessionError",
    "SessionNotFoundError",
    "SessionNotWaitingError",
    "SessionStateError",
    "StoreSchemaError",
    "ToolContext",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolResolutionError",
    "TurnResult",
    "UnknownRequestError",
    "check_pairing",
    "compile_app",
    "define_agent",
    "define_client_tool",
    "define_tool",
    "disable_tool",
    "load_agent",
    "resolve_tool",
)


__version__ = _version()

_install_moved()
