"""Embedding providers: the registry that turns config into a provider, and why it chose it.

A provider's module (and the protocol they share, in embeddings.base) is imported only when
config names it: none at all for `none`, which the prompt hook uses when no daemon answers."""

from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from contextd.config import EmbeddingSettings
from contextd.errors import ConfigError

if TYPE_CHECKING:
    from contextd.embeddings.base import EmbeddingProvider

__all__ = ["PROVIDERS", "ProviderChoice", "select_provider"]

PROVIDERS = ("local", "hashing", "openai", "none")


class ProviderChoice(Struct, frozen=True):
    """The provider in use and, when it is not the one config names, why."""

    provider: "EmbeddingProvider | None"  # None: vectors are off, retrieval is full-text only
    note: str | None  # why the configured provider is not the one in use, if so


def select_provider(settings: EmbeddingSettings, home: Path | None = None) -> ProviderChoice:
    """The provider config asks for; `local` without its model falls back to hashing. The local
    model is read from `home` first (see model_files), and keeps the graphs it builds in
    `home`/models (None: neither).

    Raises:
        ConfigError: an unknown provider name, a non-positive width, or a length the local
            model cannot read.
    """
    name = settings.provider
    if settings.dimensions <= 0:
        raise ConfigError("embeddings.dimensions must be the vector width, greater than 0.")
    if name == "none":
        return ProviderChoice(None, None)
    if name == "hashing":
        from contextd.embeddings.hashing import HashingEmbedder

        return ProviderChoice(HashingEmbedder(settings.dimensions), None)
    if name == "local":
        from contextd.embeddings.hashing import HashingEmbedder
        from contextd.embeddings.local import MAX_TOKENS, LocalMiniLM
        from contextd.embeddings.model_files import INSTALL_HINT, find_model

        if not 1 <= settings.max_tokens <= MAX_TOKENS:
            raise ConfigError(
                f"embeddings.max_tokens must be 1 to {MAX_TOKENS} (the word pieces the local "
                f"model reads of a record), not {settings.max_tokens}."
            )
        found = find_model(home)
        if found is None:
            return ProviderChoice(
                HashingEmbedder(),
                f"the local model is not installed, so vectors come from feature hashing; "
                f"`{INSTALL_HINT}` installs it",
            )
        model = LocalMiniLM(
            found,
            precision=settings.precision,
            threads=settings.threads,
            cache_dir=None if home is None else home / "models",
            max_tokens=settings.max_tokens,
        )
        return ProviderChoice(model, None)
    if name == "openai":
        from contextd.embeddings.openai import OpenAICompatible

        return ProviderChoice(
            OpenAICompatible(
                model=settings.model,
                api_base=settings.api_base,
                dimensions=settings.dimensions,
                api_key_env=settings.api_key_env,
                timeout_s=settings.timeout_s,
            ),
            None,
        )
    raise ConfigError(
        f"Unknown embeddings.provider {name!r}; choose one of {', '.join(PROVIDERS)}."
    )
