"""Any OpenAI-compatible /v1/embeddings endpoint: Ollama, vLLM, TEI, LM Studio, OpenAI."""

import math
import os
import time
from typing import Any

from contextd.errors import ProviderUnavailableError
from contextd.models import Probe

__all__ = ["OpenAICompatible"]

_BATCH = 64


class OpenAICompatible:
    """Embeddings over HTTP; the API key is read from the named environment variable only."""

    def __init__(
        self,
        *,
        model: str,
        api_base: str,
        dimensions: int,
        api_key_env: str = "",
        timeout_s: float = 30.0,
    ) -> None:
        self.model = model
        self.api_base = api_base.rstrip("/")
        self.dimensions = dimensions
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.id = f"openai:{model}:{dimensions}"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            vectors.extend(self._request(texts[start : start + _BATCH]))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._request([text])[0]

    def warm(self) -> None:
        """Nothing to load: the endpoint holds the model."""

    def probe(self, timeout_s: float) -> Probe:
        """One real embedding request, given `timeout_s` at most."""
        started = time.perf_counter()
        try:
            self._request(["contextd status check"], timeout_s=min(timeout_s, self.timeout_s))
        except ProviderUnavailableError as exc:
            return Probe("failed", str(exc))
        return Probe("ok", f"{self.api_base} answered in {time.perf_counter() - started:.2f} s")

    def _request(self, texts: list[str], timeout_s: float | None = None) -> list[list[float]]:
        import httpx  # Deferred: only this provider needs an HTTP client.

        headers = {}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ProviderUnavailableError(
                    f"The environment variable {self.api_key_env} (embeddings.api_key_env) is "
                    "not set; export the API key there."
                )
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self.api_base}/embeddings"
        try:
            response = httpx.post(
                url,
                json={"model": self.model, "input": texts},
                headers=headers,
                timeout=self.timeout_s if timeout_s is None else timeout_s,
            )
        except httpx.HTTPError as exc:
            raise ProviderUnavailableError(
                f"The embedding endpoint {url} did not answer ({type(exc).__name__}); check "
                "embeddings.api_base and that the server runs."
            ) from exc
        if response.status_code != 200:
            raise ProviderUnavailableError(
                f"The embedding endpoint {url} answered HTTP {response.status_code}: "
                f"{response.text[:200]}"
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise ProviderUnavailableError(
                f"{url} did not answer JSON; check embeddings.api_base."
            ) from exc
        return self._parse(payload, len(texts), url)

    def _parse(self, payload: Any, expected: int, url: str) -> list[list[float]]:
        try:
            items = sorted(payload["data"], key=lambda item: item.get("index", 0))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProviderUnavailableError(
                f"{url} did not return OpenAI-style embeddings ({exc})."
            ) from exc
        if len(vectors) != expected:
            raise ProviderUnavailableError(
                f"{url} returned {len(vectors)} vectors for {expected} texts."
            )
        for vector in vectors:
            if len(vector) != self.dimensions:
                raise ProviderUnavailableError(
                    f"{url} returns {len(vector)}-dimension vectors but embeddings.dimensions is "
                    f"{self.dimensions}; run `contextd config set embeddings.dimensions "
                    f"{len(vector)}` then `contextd refresh --force-embeddings`."
                )
        return [_unit(v) for v in vectors]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]
