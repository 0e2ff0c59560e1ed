"""Client for an OpenAI-compatible chat server (vLLM): structured JSON answers, clear errors when it is down."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from comic_narrator.backends.balancer import AllUnreachable, Balancer, Unreachable
from comic_narrator.config import LlmConfig
from comic_narrator.errors import ServerError


@dataclass(frozen=True)
class JsonAnswer:
    """A structured answer and what the server counted for it (0 where it reports no usage)."""

    content: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


START_HINT = "start it with `comic-narrator gpu up` (or `vllm serve MODEL --host 127.0.0.1`), or use --vision local"


class OpenAIChatClient:
    """Talks to ``{base_url}/chat/completions`` and ``{base_url}/models`` of one server, or of several that serve
    the same model: each request goes to the one with the fewest in flight, at most ``concurrency`` per server.
    Constructing it does no I/O."""

    def __init__(self, config: LlmConfig) -> None:
        self.config = config
        self._balancer = Balancer(config.base_urls, config.concurrency)
        self.base_urls = self._balancer.urls
        self.base_url = self.base_urls[0]
        self.model: str | None = config.model

    @property
    def slots(self) -> int:
        """Requests in flight at once across all the servers at most."""
        return self._balancer.capacity

    # ------------------------------------------------------------------------------------------ transport

    def _request(self, method: str, path: str, body: dict[str, Any] | None, timeout_s: float) -> tuple[str, Any]:
        """(the server that answered, its parsed answer)."""
        try:
            return self._balancer.call(
                lambda base_url: (base_url, self._request_at(base_url, method, path, body, timeout_s))
            )
        except AllUnreachable as exc:
            raise self._unreachable(exc) from exc

    @staticmethod
    def _unreachable(exc: AllUnreachable) -> ServerError:
        where = "the LLM server" if len(exc.failures) == 1 else "any of the LLM servers"
        return ServerError(f"cannot reach {where} ({exc.reasons}); {START_HINT}", path=exc.urls)

    def _request_at(self, base_url: str, method: str, path: str, body: dict[str, Any] | None, timeout_s: float) -> Any:
        url = f"{base_url}{path}"
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        token = os.environ.get(self.config.api_key_env)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace").strip().replace("\n", " ")
            raise ServerError(f"LLM server answered HTTP {exc.code} for {path}: {detail}", path=url) from exc
        except (urllib.error.URLError, ConnectionError) as exc:
            # Not reached (refused, reset, no route): another server takes the request.
            raise Unreachable(getattr(exc, "reason", exc)) from exc
        except TimeoutError as exc:
            raise ServerError(f"the LLM server did not answer within {timeout_s:g} s", path=url) from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            snippet = raw[:120].decode("utf-8", "replace")
            raise ServerError(f"the LLM server answered something that is not JSON: {snippet!r}", path=url) from exc

    # ------------------------------------------------------------------------------------------ API

    def resolve_model(self) -> str:
        """The configured model, else the first one the server lists (vLLM serves one). With several servers each
        one that answers is asked, and they must agree: pages read by two models would not match."""
        if self.model:
            return self.model
        try:
            listings = self._balancer.each(
                lambda url: self._request_at(url, "GET", "/models", None, timeout_s=10.0), skip_unreachable=True
            )
        except AllUnreachable as exc:
            raise self._unreachable(exc) from exc
        served: list[tuple[str, str]] = []
        for base_url, listing in listings:  # a server that is down is left out: it is rested until it is back
            try:
                served.append((base_url, str(listing["data"][0]["id"])))
            except (KeyError, IndexError, TypeError) as exc:
                raise ServerError("the LLM server lists no models at /models", path=base_url) from exc
        first_url, model = served[0]
        for base_url, other in served[1:]:
            if other != model:
                raise ServerError(
                    f"this LLM server serves {other!r} but {first_url} serves {model!r}; every --llm-url must "
                    "serve the same model (or name one with --llm-model)",
                    path=base_url,
                )
        self.model = model
        return self.model

    def chat_json(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], schema_name: str, max_tokens: int | None = None
    ) -> dict[str, Any]:
        """One chat completion constrained to ``schema`` (vLLM structured outputs); returns the parsed object."""
        return self.chat_json_answer(messages, schema, schema_name, max_tokens).content

    def chat_json_answer(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], schema_name: str, max_tokens: int | None = None
    ) -> JsonAnswer:
        """As chat_json, with the server's token counts. ``max_tokens`` lowers the configured cap for this request
        (never raises it)."""
        cap = self.config.max_tokens if max_tokens is None else min(max_tokens, self.config.max_tokens)
        body: dict[str, Any] = {
            "model": self.resolve_model(),
            "messages": messages,
            "temperature": 0.0,
            "max_tokens": cap,
            # `guided_json` is silently ignored by current vLLM; response_format is the supported spelling.
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            },
        }
        if self.config.disable_thinking:
            body["chat_template_kwargs"] = {"enable_thinking": False}
        server, answer = self._request("POST", "/chat/completions", body, timeout_s=self.config.timeout_s)
        try:
            choice = answer["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ServerError("the LLM server's answer has no choices[0].message.content", path=server) from exc
        finish = choice.get("finish_reason")
        if not content:
            raise ServerError(
                f"the LLM answered with empty content (a reasoning model with thinking on? finish_reason={finish!r})",
                path=server,
            )
        try:
            # strict=False: vLLM's JSON grammars admit raw control characters (a tab, a newline) inside a string,
            # which a strict parser refuses although the object is whole; the reader's checks judge the text.
            parsed = json.loads(content, strict=False)
        except ValueError as exc:
            if finish == "length":
                raise ServerError(
                    f"the LLM's answer was cut off at max_tokens={cap} before its JSON ended (finish_reason="
                    f"'length'): {content[:80]!r}...",
                    path=server,
                ) from exc
            raise ServerError(
                f"the LLM's content is not JSON (finish_reason={finish!r}): {content[:120]!r}", path=server
            ) from exc
        if not isinstance(parsed, dict):
            raise ServerError("the LLM's JSON is not an object", path=server)
        usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        return JsonAnswer(
            content=parsed,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=str(finish),
        )
