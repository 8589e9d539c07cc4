"""Overrides the built-in `ask_question` with a typed picker.

A client-resolved tool: when the model calls it, the call parks until a person answers, and
the answer (`{"pickedIds": [...]}`, checked against the output schema) is the call's one tool
result. No server code runs for it.
"""

from pydantic import BaseModel, ConfigDict, Field

from eve_py import define_client_tool


class Option(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    label: str
    description: str | None = None


class PickerUI(BaseModel):
    """How a client should render the question; other keys pass through to it."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field(description='The picker to show, e.g. "environment".')


class AskQuestionInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(description="The question to show the person.")
    options: list[Option] | None = Field(default=None, description="The choices, when there are any.")
    allow_freeform: bool | None = Field(
        default=None, alias="allowFreeform", description="Whether free text is accepted."
    )
    ui: PickerUI | None = Field(default=None, description="A typed picker for the client to render.")


class Picked(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # At least one, each once: every surface checks an answer against this schema.
    picked_ids: list[str] = Field(
        alias="pickedIds",
        min_length=1,
        json_schema_extra={"uniqueItems": True},
        description="The ids of the options the person picked.",
    )


tool = define_client_tool(
    description="Ask the person a question and wait for their answer before continuing.",
    input_schema=AskQuestionInput,
    output_schema=Picked,
)
