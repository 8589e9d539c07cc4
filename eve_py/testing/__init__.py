"""Test helpers: `MockModel`, the one sanctioned fake model."""

from eve_py.testing._mock_model import (
    MockModel,
    MockModelRequest,
    MockResponse,
    MockTool,
    MockToolCall,
    MockToolResult,
    Responder,
)

__all__ = (
    "MockModel",
    "MockModelRequest",
    "MockResponse",
    "MockTool",
    "MockToolCall",
    "MockToolResult",
    "Responder",
)
