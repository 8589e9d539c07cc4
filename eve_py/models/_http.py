"""The HTTP side of a model provider: one POST with retries, and errors that carry no secrets.

`ProviderHTTP.post` yields a 2xx response whose body is still unread (so a stream can be read
as it arrives); every other outcome is retried per the `RetryPolicy` or raised as
`ModelHTTPError` / `ModelConnectionError`.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from types import TracebackType
from typing import Self

import httpx

from eve_py._json import JsonObject, JsonValue
from eve_py.errors import ModelConfigurationError, ModelConnectionError, ModelError, ModelHTTPError
from eve_py.models._base import DeltaListener, ModelRequest, ModelResponse
from eve_py.models._retry import RetryPolicy, retry_after_seconds
from eve_py.models._sse import is_event_stream

__all__ = ("DEFAULT_TIMEOUT", "READ_TIMEOUT_ENV", "RETRY_LOGGER", "HTTPModel", "ProviderHTTP", "decode_object")

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=30.0)
"""Seconds: to connect, of silence while reading (between chunks), to send, to get a pooled connection."""

READ_TIMEOUT_ENV = "EVE_MODEL_READ_TIMEOUT_S"
"""Sets the read timeout (seconds of silence from a provider that accepted the request) of every
model that makes its own HTTP client and was given no `read_timeout_s`."""


def _seconds(value: float | None) -> str:
    return "ever" if value is None else f"{value:g} s"


def read_timeout(read_timeout_s: float | None) -> float:
    """The read timeout in seconds: `read_timeout_s`, else `EVE_MODEL_READ_TIMEOUT_S`, else 300.

    Raises:
        ModelConfigurationError: A value that is not a positive number of seconds.
    """
    raw: object = read_timeout_s if read_timeout_s is not None else os.environ.get(READ_TIMEOUT_ENV)
    if raw is None or raw == "":
        return float(DEFAULT_TIMEOUT.read or 300.0)
    try:
        seconds = float(raw)  # type: ignore[arg-type]
    except ValueError:
        seconds = -1.0
    if not math.isfinite(seconds) or seconds <= 0:
        where = "read_timeout_s" if read_timeout_s is not None else READ_TIMEOUT_ENV
        raise ModelConfigurationError(f"{where} must be a positive number of seconds, got {raw!r}")
    return seconds


RETRY_LOGGER = logging.getLogger("eve_py.models.retry")
"""Says (at INFO) each retry before its wait, and that a provider is slow to answer: `eve-py
chat`/`run` show these as status lines."""

WAIT_NOTICE_S = (5.0, 15.0)
"""Seconds before the first "waiting for the provider" line, and between later ones."""

_waits_noticed = 0
"""How many `noticing_waits()` blocks are open: the CLI's, where a person watches a terminal."""


@contextmanager
def noticing_waits() -> Iterator[None]:
    """While inside, a request that waits `WAIT_NOTICE_S` for its answer says so (INFO, `RETRY_LOGGER`)."""
    global _waits_noticed
    _waits_noticed += 1
    try:
        yield
    finally:
        _waits_noticed -= 1


def _notice_waiting(provider: str, read_timeout_s: float | None) -> Callable[[], None]:
    """Start saying that a request waits for its answer (inside `noticing_waits` only); returns what stops it.

    A timer thread, because the wait is a single `await` this module cannot interleave with; a
    server never starts one.
    """
    if not _waits_noticed:
        return _nothing
    first, every = WAIT_NOTICE_S
    limit = f"; the read timeout is {read_timeout_s:g} s" if read_timeout_s is not None else ""
    stopped = threading.Event()

    def notice() -> None:
        waited = first
        while not stopped.wait(first if waited == first else every):
            RETRY_LOGGER.info("waiting for %s to answer (%g s so far%s)", provider, waited, limit)
            waited += every

    threading.Thread(target=notice, name=f"eve-py: waiting for {provider}", daemon=True).start()
    return stopped.set


def _nothing() -> None:
    return None


_BODY_EXCERPT = 1000
"""Most characters of an error body kept in `ModelHTTPError.body`."""


class ProviderHTTP:
    """POSTs JSON to one provider, with retries; owns its `httpx.AsyncClient` unless given one.

    Args:
        provider: The provider's label for errors (`"gateway"`, `"openai"`, `"anthropic"`).
        client: The client to send with; None creates one on first use (closed by `aclose`).
        retry: When and how long to retry.
        secrets: Strings that must never appear in an error (the API key).
        key_hint: Where the key comes from, for 401/403 messages (e.g. "AI_GATEWAY_API_KEY").
        read_timeout_s: Seconds of silence after which a request fails (`read_timeout`); for the
            client this object makes (a given client keeps its own timeouts).

    Raises:
        ModelConfigurationError: `read_timeout_s` (or `EVE_MODEL_READ_TIMEOUT_S`) is not a positive number.
    """

    def __init__(
        self,
        *,
        provider: str,
        client: httpx.AsyncClient | None,
        retry: RetryPolicy,
        secrets: Sequence[str] = (),
        key_hint: str | None = None,
        read_timeout_s: float | None = None,
    ) -> None:
        self.provider = provider
        self.timeout = httpx.Timeout(DEFAULT_TIMEOUT.connect, read=read_timeout(read_timeout_s), write=30.0, pool=30.0)
        self.retry = retry
        self._client = client
        self._owns_client = client is None
        self._secrets = [secret for secret in secrets if secret]
        self._key_hint = key_hint

    @property
    def client(self) -> httpx.AsyncClient:
        """The client requests go through (created on first use when none was given)."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout)
        return self._client

    async def aclose(self) -> None:
        """Close the client if this object created it; an injected client is left open."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by `[redacted]`."""
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return text

    @asynccontextmanager
    async def post(
        self, url: str, *, headers: Mapping[str, str], body: JsonObject, read_body: bool = False
    ) -> AsyncIterator[httpx.Response]:
        """POST `body` as JSON and yield the first 2xx response.

        With `read_body`, the body is read inside the retry loop, so a connection that breaks
        while the body arrives is retried like one that broke before; otherwise (streams) it is
        yielded unread and never retried once it started.

        Raises:
            ModelHTTPError: A status that is not retried, or a retryable one once the retry
                budget is spent.
            ModelConnectionError: The provider could not be reached, after retries.
        """
        policy = self.retry
        started = policy.clock()
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        request_headers = {"content-type": "application/json", **headers}
        attempt = 0
        while True:
            attempt += 1
            error: ModelError
            wait: float | None = None
            sent = await self._attempt(url, request_headers, content, read_body=read_body)
            if isinstance(sent, httpx.TransportError):
                error = self._unreachable(url, sent, attempt)
            elif sent.is_success:
                try:
                    yield sent
                finally:
                    await sent.aclose()
                return
            else:
                error = await self._http_error(sent, attempt)
                if not policy.is_retryable(sent.status_code):
                    raise error
                wait = retry_after_seconds(sent.headers)
            if attempt >= policy.max_attempts:
                raise error
            delay = policy.backoff(attempt) if wait is None else wait
            if policy.clock() - started + delay > policy.budget_s:
                raise error
            RETRY_LOGGER.info(
                "%s; trying again in %.1f s (attempt %d of %d)",
                str(error).removesuffix(_attempts(attempt)),
                delay,
                attempt + 1,
                policy.max_attempts,
            )
            await policy.sleep(delay)

    async def _attempt(
        self, url: str, headers: Mapping[str, str], content: bytes, *, read_body: bool
    ) -> httpx.Response | httpx.TransportError:
        """One POST: its response (a 2xx's body read, with `read_body`), or the transport error that broke it.

        Raises:
            ModelConnectionError: The base URL is malformed (no retry helps).
        """
        stop_notice = _notice_waiting(self.provider, self.client.timeout.read)
        try:
            response = await self.client.send(
                self.client.build_request("POST", url, headers=headers, content=content), stream=True
            )
            if response.is_success and read_body:
                try:
                    await response.aread()
                except httpx.TransportError as exc:
                    await response.aclose()
                    return exc
            return response
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ModelConnectionError(
                f"Cannot send to {self.provider} at {_shown(url)!r}: {self.redact(str(exc))} (check the base URL)",
                provider=self.provider,
            ) from exc
        except httpx.TransportError as exc:
            return exc
        finally:
            stop_notice()  # the wait is over, however it ended (cancelled too)

    def _unreachable(self, url: str, exc: httpx.TransportError, attempt: int) -> ModelConnectionError:
        timeouts = self.client.timeout
        if isinstance(exc, httpx.ReadTimeout):
            message = (
                f"{self.provider} at {_shown(url)} took the request but sent nothing for {_seconds(timeouts.read)} "
                f"(read timeout; {READ_TIMEOUT_ENV} or read_timeout_s sets it)"
            )
        elif isinstance(exc, httpx.ConnectTimeout):
            message = (
                f"Could not connect to {self.provider} at {_shown(url)} within {_seconds(timeouts.connect)} "
                "(connect timeout)"
            )
        else:
            detail = self.redact(str(exc)) or "no detail"
            message = f"Could not reach {self.provider} at {_shown(url)}: {type(exc).__name__}: {detail}"
        return ModelConnectionError(message + _attempts(attempt), provider=self.provider)

    async def _http_error(self, response: httpx.Response, attempt: int) -> ModelHTTPError:
        try:
            raw = await response.aread()
        except httpx.TransportError:
            raw = b""
        finally:
            await response.aclose()
        text = self.redact(raw.decode("utf-8", errors="replace"))
        detail = _provider_message(text) or response.reason_phrase or "no details"
        message = f"{self.provider} answered HTTP {response.status_code}: {detail}"
        if response.status_code in (401, 403) and self._key_hint:
            message += f" (check the API key in {self._key_hint})"
        return ModelHTTPError(
            message + _attempts(attempt),
            status=response.status_code,
            provider=self.provider,
            body=text[:_BODY_EXCERPT],
        )


def _attempts(attempt: int) -> str:
    return f" (after {attempt} attempts)" if attempt > 1 else ""


def _provider_message(text: str) -> str | None:
    """The `error.message` of an OpenAI- or Anthropic-style error body, if there is one."""
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:200] or None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        kind = error.get("type")
        if isinstance(message, str):
            return f"{kind}: {message}" if isinstance(kind, str) and kind else message
    if isinstance(error, str):
        return error
    message = data.get("message")
    return message if isinstance(message, str) else None


def decode_object(raw: bytes | str, *, provider: str, what: str) -> JsonObject:
    """Parse a JSON object sent by a provider.

    Raises:
        ModelError: `raw` is not JSON, or not an object.
    """
    try:
        data: JsonValue = json.loads(raw)
    except ValueError as exc:
        raise ModelError(f"{provider} sent {what} that is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelError(f"{provider} sent {what} that is not a JSON object: {str(raw)[:200]}")
    return data


def _shown(url: str) -> str:
    """`url` without credentials or query (either may hold a key), for error messages."""
    try:
        return str(httpx.URL(url).copy_with(userinfo=b"", query=None))
    except Exception:
        return url.split("?", 1)[0].rsplit("@", 1)[-1]


class HTTPModel:
    """What the HTTP models share: one request's round trip, their label, the client's lifetime.

    Subclasses say how a request becomes a body (`build_body`) and how an answer becomes a
    `ModelResponse` (`_parse` for JSON, `_read_stream` for server-sent events).
    """

    url: str
    stream: bool | None
    """True/False forces streaming on/off; None streams when someone listens for deltas."""
    _name: str
    _http: ProviderHTTP
    _headers: dict[str, str]

    def build_body(self, request: ModelRequest, *, stream: bool) -> JsonObject:
        """The JSON body sent for `request`."""
        raise NotImplementedError

    def _parse(self, raw: bytes) -> ModelResponse:
        raise NotImplementedError

    async def _read_stream(self, response: httpx.Response, on_delta: DeltaListener | None) -> ModelResponse:
        raise NotImplementedError

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one step and return its text and tool calls.

        Raises:
            ModelHTTPError: The provider answered with an error status (after retries for 408,
                429 and 5xx).
            ModelConnectionError: The provider could not be reached, or a stream broke off.
            ModelError: The answer could not be understood, or the stream reported an error.
        """
        stream = self.stream if self.stream is not None else request.on_delta is not None
        headers = {**self._headers, "accept": "text/event-stream" if stream else "application/json"}
        body = self.build_body(request, stream=stream)
        async with self._http.post(self.url, headers=headers, body=body, read_body=not stream) as response:
            if stream and is_event_stream(response):
                return await self._read_stream(response, request.on_delta)
            return self._parse(await response.aread())

    @property
    def name(self) -> str:
        """The model's label, e.g. `"anthropic/claude-sonnet-4.6"` or `"anthropic:claude-sonnet-4-6"`."""
        return self._name

    async def aclose(self) -> None:
        """Close the HTTP client if this model created it."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
