"""Client for an OpenAI-compatible chat server (vLLM): structured JSON answers, clear errors when it is down."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from comic_narrator.config import LlmConfig
from comic_narrator.errors import ServerError

START_HINT = "start it with `comic-narrator gpu up` (or `vllm serve MODEL --host 127.0.0.1`), or use --vision local"


class OpenAIChatClient:
    """Talks to ``{base_url}/chat/completions`` and ``{base_url}/models``. Constructing it does no I/O."""

    def __init__(self, config: LlmConfig) -> None:
        self.config = config
        self.base_url = config.base_url.rstrip("/")
        self.model: str | None = config.model

    # ------------------------------------------------------------------------------------------ transport

    def _request(self, method: str, path: str, body: dict[str, Any] | None, timeout_s: float) -> Any:
        url = f"{self.base_url}{path}"
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
            reason = getattr(exc, "reason", exc)
            raise ServerError(f"cannot reach the LLM server ({reason}); {START_HINT}", path=url) from exc
        except TimeoutError as exc:
            raise ServerError(f"the LLM server did not answer within {timeout_s:.0f} s", path=url) from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            snippet = raw[:120].decode("utf-8", "replace")
            raise ServerError(f"the LLM server answered something that is not JSON: {snippet!r}", path=url) from exc

    # ------------------------------------------------------------------------------------------ API

    def resolve_model(self) -> str:
        """The configured model, else the first one the server lists (vLLM serves one)."""
        if self.model:
            return self.model
        listing = self._request("GET", "/models", None, timeout_s=10.0)
        try:
            self.model = str(listing["data"][0]["id"])
        except (KeyError, IndexError, TypeError) as exc:
            raise ServerError("the LLM server lists no models at /models", path=self.base_url) from exc
        return self.model

    def chat_json(self, messages: list[dict[str, Any]], schema: dict[str, Any], schema_name: str) -> dict[str, Any]:
        """One chat completion constrained to ``schema`` (vLLM structured outputs); returns the parsed object."""
        body: dict[str, Any] = {
            "model": self.resolve_model(),
            "messages": messages,
            "temperature": 0.0,
            "max_tokens": self.config.max_tokens,
            # `guided_json` is silently ignored by current vLLM; response_format is the supported spelling.
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            },
        }
        if self.config.disable_thinking:
            body["chat_template_kwargs"] = {"enable_thinking": False}
        answer = self._request("POST", "/chat/completions", body, timeout_s=self.config.timeout_s)
        try:
            choice = answer["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ServerError("the LLM server's answer has no choices[0].message.content", path=self.base_url) from exc
        if not content:
            raise ServerError(
                "the LLM answered with empty content (a reasoning model with thinking on? finish_reason="
                f"{choice.get('finish_reason')!r})",
                path=self.base_url,
            )
        try:
            parsed = json.loads(content)
        except ValueError as exc:
            raise ServerError(
                f"the LLM's content is not JSON (finish_reason={choice.get('finish_reason')!r}): {content[:120]!r}",
                path=self.base_url,
            ) from exc
        if not isinstance(parsed, dict):
            raise ServerError("the LLM's JSON is not an object", path=self.base_url)
        return parsed
