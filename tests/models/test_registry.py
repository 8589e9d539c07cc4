"""Model strings: spellings, keys from the environment, EVE_MODEL precedence, and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eve_py import Agent, ModelConfigurationError, Runtime, load_agent
from eve_py.cli._main import main
from eve_py.models import AnthropicModel, ChatCompletionsModel, resolve_model
from eve_py.models._registry import choose_model_spec
from eve_py.testing import MockModel
from tests.conftest import HITL_APP, REPO

ENV = {"AI_GATEWAY_API_KEY": "gw-key", "ANTHROPIC_API_KEY": "ant-key", "OPENAI_API_KEY": "oai-key"}


@pytest.mark.parametrize(
    ("spec", "kind", "model_id", "url", "name"),
    [
        (
            "anthropic/claude-sonnet-4.6",
            ChatCompletionsModel,
            "anthropic/claude-sonnet-4.6",
            "https://ai-gateway.vercel.sh/v1/chat/completions",
            "anthropic/claude-sonnet-4.6",
        ),
        (
            "gateway:openai/gpt-5",
            ChatCompletionsModel,
            "openai/gpt-5",
            "https://ai-gateway.vercel.sh/v1/chat/completions",
            "openai/gpt-5",
        ),
        (
            "anthropic:claude-sonnet-4-6",
            AnthropicModel,
            "claude-sonnet-4-6",
            "https://api.anthropic.com/v1/messages",
            "anthropic:claude-sonnet-4-6",
        ),
        ("openai:gpt-5", ChatCompletionsModel, "gpt-5", "https://api.openai.com/v1/chat/completions", "openai:gpt-5"),
    ],
)
def test_each_spelling_selects_its_provider(spec: str, kind: type, model_id: str, url: str, name: str) -> None:
    model = resolve_model(spec, env=ENV)

    assert isinstance(model, kind)
    assert isinstance(model, ChatCompletionsModel | AnthropicModel)
    assert (model.model, model.url, model.name) == (model_id, url, name)


def test_base_url_variables_point_each_provider_elsewhere() -> None:
    env = {
        **ENV,
        "AI_GATEWAY_BASE_URL": "http://127.0.0.1:9/v1/",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/openai/v1",
    }

    models: list[Any] = [resolve_model(spec, env=env) for spec in ("a/b", "anthropic:c", "openai:d")]
    urls = [model.url for model in models]

    assert urls == [
        "http://127.0.0.1:9/v1/chat/completions",
        "http://127.0.0.1:9/v1/messages",
        "http://127.0.0.1:9/openai/v1/chat/completions",
    ]


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("anthropic/claude-sonnet-4.6", "AI_GATEWAY_API_KEY"),
        ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
        ("openai:gpt-5", "OPENAI_API_KEY"),
    ],
)
def test_a_missing_key_names_the_variable_and_the_mock_alternative(spec: str, variable: str) -> None:
    with pytest.raises(ModelConfigurationError) as caught:
        resolve_model(spec, env={})

    message = str(caught.value)
    assert f"Model {spec!r}" in message
    assert f"{variable} is not set. Set {variable}" in message
    assert "--model mock" in message


def test_a_local_base_url_needs_no_key() -> None:
    model = resolve_model("openai:llama3.2", env={"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"})

    assert isinstance(model, ChatCompletionsModel)
    assert model.url == "http://127.0.0.1:11434/v1/chat/completions"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("gpt-5", "write 'provider/model' for the Vercel AI Gateway"),
        ("vertex:gemini", "the prefix 'vertex:' is not one of 'anthropic:', 'openai:', 'gateway:'"),
        ("anthropic:", "names no model after 'anthropic:'"),
    ],
)
def test_a_string_no_provider_serves_says_how_to_spell_one(spec: str, fragment: str) -> None:
    with pytest.raises(ModelConfigurationError) as caught:
        resolve_model(spec, env=ENV)

    assert fragment in str(caught.value)


def test_mock_means_the_apps_mock_model() -> None:
    assert isinstance(resolve_model("mock", app_dir=HITL_APP), MockModel)
    with pytest.raises(ModelConfigurationError, match="not loaded from an app folder"):
        resolve_model("mock")


def test_explicit_beats_eve_model_beats_the_agents_own() -> None:
    mock = MockModel(lambda _: "hi")

    assert choose_model_spec(mock, "a/b", env={"EVE_MODEL": "c/d"}) is mock
    assert choose_model_spec(None, "a/b", env={"EVE_MODEL": "c/d"}) == "c/d"
    assert choose_model_spec(None, "a/b", env={"EVE_MODEL": " "}) == "a/b"
    assert choose_model_spec(None, "a/b", env={}) == "a/b"


def test_the_runtime_applies_eve_model_over_the_apps_model_but_not_over_an_explicit_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVE_MODEL", "mock")
    mine = MockModel(lambda _: "mine")

    assert isinstance(Runtime(load_agent(HITL_APP)).model, MockModel), "EVE_MODEL=mock beats the app's string"
    assert Runtime(load_agent(HITL_APP), model=mine).model is mine


def test_the_runtime_raises_the_missing_key_error_when_it_is_built() -> None:
    with pytest.raises(ModelConfigurationError, match="AI_GATEWAY_API_KEY is not set"):
        Runtime(load_agent(HITL_APP))
    assert Runtime(Agent.from_definitions({})) is not None, "no model at all fails only on first use"


# --- the command line ------------------------------------------------------------------------------


def test_cli_without_a_key_exits_2_naming_the_variable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(HITL_APP), "hi", "--store", str(tmp_path / "s.db")])

    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Model 'anthropic/claude-sonnet-4.6' is served through the Vercel AI Gateway")
    assert "AI_GATEWAY_API_KEY" in err and "--model mock" in err
    assert "Traceback" not in err


def test_cli_uses_eve_model_and_model_flag_beats_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EVE_MODEL", "mock")

    assert main(["run", str(HITL_APP), "hi", "--store", str(tmp_path / "s.db")]) == 0
    assert "Try " in capsys.readouterr().out
    assert main(["run", str(HITL_APP), "hi", "--model", "vertex:gemini", "--store", str(tmp_path / "s.db")]) == 2


@pytest.fixture
def provider_process() -> Iterator[int]:
    """The fake provider in its own process, scripted by the HITL app's mock model; yields its port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.models.fake_provider", "--script", f"app:{HITL_APP}"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), line
        yield int(line.split()[1])
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@pytest.mark.parametrize(
    ("spec", "variable", "root"),
    [("anthropic:claude-sonnet-4-6", "ANTHROPIC_BASE_URL", ""), ("openai/gpt-5", "AI_GATEWAY_BASE_URL", "/v1")],
)
def test_cli_run_against_a_local_provider_parks_and_completes_with_an_answers_file(
    spec: str,
    variable: str,
    root: str,
    provider_process: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(variable, f"http://127.0.0.1:{provider_process}{root}")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"value": {"pickedIds": ["tpl_green"]}}]), encoding="utf-8")

    code = main(
        [
            "run",
            str(HITL_APP),
            "help me pick a template",
            "--model",
            spec,
            "--answers",
            str(answers),
            "--store",
            str(tmp_path / "s.db"),
        ]
    )

    out = capsys.readouterr().out
    assert code == 0, out
    assert "agent > Recorded your pick: tpl_green." in out


@pytest.mark.anyio
async def test_a_runtime_closes_the_model_it_built_from_a_string_but_not_one_it_was_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AI_GATEWAY_API_KEY", "test-key")
    built = Runtime(Agent.from_definitions({}), model="openai/gpt-5")
    assert isinstance(built.model, ChatCompletionsModel)
    closed: list[str] = []

    async def record_close() -> None:
        closed.append("closed")

    monkeypatch.setattr(built.model, "aclose", record_close)
    await built.aclose()
    assert closed == ["closed"]

    given = ChatCompletionsModel("openai/gpt-5", api_key="k")
    monkeypatch.setattr(given, "aclose", record_close)
    await Runtime(Agent.from_definitions({}), model=given).aclose()
    assert closed == ["closed"]
