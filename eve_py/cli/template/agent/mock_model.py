"""A scripted model for `--model mock`: deterministic and offline.

It reads only the conversation (no state of its own), so a parked session can be continued by
another process. Say "deploy": it asks which environment with the typed picker, calls the
approval-gated `deploy` with the pick, and reports the outcome. Anything else gets a hint.
"""

from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall


def ask_environment() -> MockToolCall:
    return MockToolCall(
        "ask_question",
        {
            "prompt": "Which environment?",
            "options": [
                {"id": "staging", "label": "Staging", "description": "try it out first"},
                {"id": "production", "label": "Production", "description": "what your users see"},
            ],
            "ui": {"kind": "environment"},
        },
    )


def respond(request: MockModelRequest) -> str | MockResponse:
    if "deploy" not in (request.last_user_message or "").lower():
        return 'Ask me to deploy, e.g. "deploy the app".'
    done = {result.name: result for result in request.tool_results_since_last_user_message}

    if "ask_question" not in done:
        return MockResponse(tool_calls=[ask_environment()])
    answer = done["ask_question"].output
    picked = answer.get("pickedIds") if isinstance(answer, dict) else None
    if not isinstance(picked, list) or not picked:
        return "All right, no deploy."
    environment = str(picked[0])

    if "deploy" not in done:
        return MockResponse(
            text=f"I will deploy to {environment} once you approve.",
            tool_calls=[MockToolCall("deploy", {"environment": environment})],
        )
    if done["deploy"].is_error:
        return f"Nothing was deployed. {done['deploy'].output}"
    return f"Deployed to {environment}."


model = MockModel(respond)
