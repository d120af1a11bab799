"""Any OpenAI-compatible chat endpoint (/v1/chat/completions: Ollama, vLLM, LM Studio,
OpenAI), asked for one JSON object.

What it answers is untrusted: the reply is read to at most `chat.max_reply_kb` and within
`chat.timeout_s` in all, must be the endpoint's JSON shape, and its message must be one JSON
object; anything else is refused in one sentence (BadReplyError; an endpoint that cannot be
reached or used, ProviderUnavailableError), with none of the reply's text in it. The caller
checks the object's fields. The API key is read from the environment variable that
`chat.api_key_env` names, as the embeddings' `openai` provider reads its.
"""

import json
import os
import re
import time
from typing import Any

from contextd.config import ChatSettings
from contextd.errors import BadReplyError, ConfigError, ProviderUnavailableError

__all__ = ["ChatClient"]

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class ChatClient:
    """One endpoint; `ask_json` is one request and one answer."""

    def __init__(self, settings: ChatSettings) -> None:
        self._settings = settings
        self.url = settings.api_base.rstrip("/") + "/chat/completions"

    def ask_json(self, system: str, user: str) -> dict[str, Any]:
        """The model's answer to `user` (with `system` as its instructions), as a JSON object.

        Raises:
            ConfigError: no model is named.
            ProviderUnavailableError: the key is missing, the endpoint cannot be reached,
                answers an HTTP error or not in time.
            BadReplyError: its answer is too long or not one JSON object.
        """
        if not self._settings.model:
            raise ConfigError(
                f"chat.model is empty: set it to the model the endpoint at "
                f"{self._settings.api_base} serves."
            )
        request = {
            "model": self._settings.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        return self._message_object(self._post(request))

    def _headers(self) -> dict[str, str]:
        name = self._settings.api_key_env
        if not name:
            return {}
        key = os.environ.get(name)
        if not key:
            raise ProviderUnavailableError(
                f"The environment variable {name} (chat.api_key_env) is not set; export the "
                "API key there."
            )
        return {"Authorization": f"Bearer {key}"}

    def _post(self, request: dict[str, Any]) -> bytes:
        import httpx  # Deferred: only the features that ask a model need an HTTP client.

        limit = self._settings.max_reply_kb * 1024
        deadline = time.monotonic() + self._settings.timeout_s
        headers = self._headers()
        try:
            with httpx.stream(
                "POST", self.url, json=request, headers=headers, timeout=self._settings.timeout_s
            ) as response:
                if response.status_code != 200:
                    raise ProviderUnavailableError(
                        f"The chat endpoint {self.url} answered HTTP {response.status_code}; "
                        "check chat.api_base, chat.model and the key."
                    )
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > limit:
                        raise BadReplyError(
                            f"The chat endpoint {self.url} answered more than "
                            f"{self._settings.max_reply_kb} KB (chat.max_reply_kb); refused."
                        )
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout("the whole answer took too long")
        except httpx.TimeoutException as exc:
            raise ProviderUnavailableError(
                f"The chat endpoint {self.url} did not answer within "
                f"{self._settings.timeout_s:g} s (chat.timeout_s)."
            ) from exc
        except httpx.HTTPError as exc:
            raise ProviderUnavailableError(
                f"The chat endpoint {self.url} could not be reached ({type(exc).__name__}); "
                "check chat.api_base and that the server runs."
            ) from exc
        return bytes(body)

    def _message_object(self, body: bytes) -> dict[str, Any]:
        refused = BadReplyError(
            f"The chat endpoint {self.url} did not answer an OpenAI-style chat completion "
            "holding one JSON object."
        )
        try:
            payload = json.loads(body)
            content = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError, RecursionError):
            raise refused from None
        if not isinstance(content, str):
            raise refused
        fenced = _FENCE.match(content)
        try:
            found = json.loads(fenced.group(1) if fenced else content)
        except (ValueError, RecursionError):
            raise refused from None
        if not isinstance(found, dict):
            raise refused
        return found
