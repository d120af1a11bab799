"""Settings: where the home is, which project was asked for, and config.toml.

This and contextd.home_folder (which the hooks use before anything else loads) are the only
modules that read environment variables; this is the only one that reads the config file.
"""

import json
import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from msgspec import Struct, field
from msgspec.structs import asdict, fields, replace

from contextd import home_folder
from contextd.agent_dirs import project_dirs
from contextd.clock import parse_span
from contextd.errors import ConfigError, InvalidInputError
from contextd.server_url import url_problem
from contextd.text.grammar import did_you_mean

__all__ = [
    "CONFIG_FILE",
    "DB_FILE",
    "CaptureSettings",
    "ChatSettings",
    "ContextSettings",
    "DaemonSettings",
    "EmbeddingSettings",
    "HookSettings",
    "LifecycleSettings",
    "RefreshSettings",
    "SearchSettings",
    "ServeSettings",
    "ShareSettings",
    "StoreSettings",
    "SyncSettings",
    "Settings",
    "VectorSettings",
    "default_config_text",
    "load_settings",
    "parse_setting",
    "settings_view",
    "toml_value",
    "resolve_home",
]

MAX_CONFIG_BYTES = 1024 * 1024
CONFIG_FILE = "config.toml"
DB_FILE = "contextd.db"


class EmbeddingSettings(Struct, frozen=True):
    """Which provider turns text into vectors (`local`, `hashing`, `openai` or `none`)."""

    provider: str = "local"  # local | hashing | openai | none
    model: str = "all-MiniLM-L6-v2"  # for openai: the endpoint's model name
    api_base: str = "http://localhost:11434/v1"  # openai: the OpenAI-compatible endpoint
    api_key_env: str = ""  # openai: the name of the environment variable holding the API key
    dimensions: int = 384  # the width of the vectors
    timeout_s: float = 30.0  # openai: how long one request may take
    # local model: fp32, or int8 (faster, vectors a little different: after switching,
    # `contextd refresh --force-embeddings`)
    precision: str = "fp32"
    # local model: onnxruntime threads per call (0: chosen by use, two in a resident process,
    # one per call in batches)
    threads: int = 0
    # local model: word pieces of a record read (the rest is cut; it was trained on 128, reads
    # at most 256). 128 takes 2.3-2.5x less CPU than 256 for a ~2,000-character record; on the
    # ADR dev set hybrid search ranks as well, the meaning arm alone a little worse
    max_tokens: int = 128


class SearchSettings(Struct, frozen=True):
    """Weights of the ranking terms; the sum is multiplied by the status factor."""

    # hybrid ranks by both arms fused; fts or semantic by one arm alone (to compare them)
    ranking: str = "hybrid"
    # The arms' raw scores become terms weighed per query by how decisive each arm is
    # (contextd.retrieval.adaptive; the fixed weightings it was chosen over are in
    # benchmarks/fusion_modes.py). The coverage (idf-weighted share of the query's words in
    # the best full-text match) at which both arms are trusted alike:
    coverage_midpoint: float = 0.1
    coverage_steepness: float = 24.0  # how sharply that trust turns around the midpoint
    coverage_exponent: float = 2.0  # the full-text term grows as coverage to this power
    bm25_exponent: float = 3.0  # a candidate's bm25 relative to the best, to this power
    # the semantic arm's weight when full text is decisive: leaving one eval set out chose
    # 0.35 four times of five, and 0.3 costs supersession-dev 0.03 MRR, so one step above it
    # (retrieval-i29.md, "Fusion after the hub penalty")
    semantic_share: float = 0.4
    # standard deviations above the pool's mean cosine that make a full match
    semantic_spread: float = 6.0
    fts_weight: float = 1.0  # the weight of the full-text term
    semantic_weight: float = 1.0  # the weight of the semantic term
    semantic_floor: float = 0.15  # a cosine at or below this is no semantic match
    # A record that matches by meaning alone (no word of the query) is a result only when its
    # match is at least this share of the query's best match: below it, only the priors would
    # rank it. Learnt from the eval sets: about the 2nd percentile of the meaning-only answers
    # that reach the top ten (benchmarks/results/retrieval-i29.md).
    evidence_share: float = 0.03
    # When the best full-text match holds at least this share of the query's words (idf-
    # weighted, as `coverage`), a record that holds none of them is no result at all: on the
    # eval sets no answer found by meaning alone reached the top ten past 0.76.
    full_text_decides: float = 0.9
    # Say nothing when nothing fits: no record near the query in meaning nor holding most of its
    # words (a floor learnt for the local model, contextd.retrieval.floor)
    relevance_floor: bool = True
    priority_weight: float = 0.35  # the weight of a record's priority (1-5)
    recency_weight: float = 0.25  # the weight of how recently a record was verified
    recency_half_life_days: float = 90.0  # the recency term halves every this many days
    project_weight: float = 0.5  # a project's own record over a global one
    # A record of the project's group gets this share of project_weight: its own records all
    # of it, global ones none, so a group's rank between the two (0 < group_match < 1).
    group_match: float = 0.5
    trust_weight: float = 0.2  # the weight of the origin's trust: user > agent > import
    feedback_weight: float = 0.6  # a record learned as the answer to a very similar query
    feedback_similarity: float = 0.8  # a learned answer helps queries at least this alike
    superseded_penalty: float = 0.35  # multiplier for NOT CURRENT records shown on request
    code_stale_factor: float = 0.6  # multiplier: a record whose named code changed since verified
    successor_factor: float = 1.0  # share of a superseded match's score credited to its successor
    # a current record matched both directly and through its history (chosen by leaving one
    # eval set out, retrieval-i29.md)
    chain_bonus: float = 1.0
    # A full-text match whose heading (its title, or a document's first line) holds the
    # query's words gains this much per share of them held (idf-weighted): the words that
    # name what a record is about count above the same words deep in its text (chosen by
    # cross-validation over the ADR dev set's projects, retrieval-i29.md)
    heading_weight: float = 1.5
    # A record's cosine with a query, less this much times how far its vector leans toward the
    # mean of the vectors in the project's reach (beyond the average record's lean): a long,
    # generic record is near every query, and this keeps it from crowding out the record a
    # question is about; only in a reach of 20 records or more (chosen by leaving one eval set
    # out, retrieval-i29.md)
    hub_penalty: float = 0.5
    candidate_pool: int = 50  # candidates taken from each of full text and vectors
    related_factor: float = 0.5  # the score of a linked record relative to its parent
    mmr_balance: float = 0.7  # --mmr: relevance against diversity (1: relevance alone)


class ContextSettings(Struct, frozen=True):
    """How much recall and the briefings may put in front of an agent (tokens, records)."""

    max_context_tokens: int = 6000  # the recall budget
    max_entry_tokens: int = 1000  # a longer passage is cut, with how to read the whole record
    max_memories: int = 40  # the most records recall considers before packing them
    session_budget: int = 2000  # the session-start briefing; 0 turns that hook off
    export_budget: int = 2000  # the briefing `contextd export` writes into agent files


class HookSettings(Struct, frozen=True):
    """The agent hooks: what the per-prompt recall lets through, and the daemon they use."""

    prompt_min_chars: int = 30  # shorter prompts get no recall
    # the cosine a passage needs to be put in front of a prompt (local model; tuned on the
    # eval sets: another provider has another cosine scale)
    prompt_similarity_floor: float = 0.25
    prompt_max_results: int = 3  # the most passages put in front of one prompt
    prompt_budget: int = 700  # tokens per prompt; 0 turns the prompt hook off
    autostart_daemon: bool = True  # session-start (and a command) starts the daemon when none runs


class CaptureSettings(Struct, frozen=True):
    """Capture without being asked: at the end of a turn, a session that changed code and
    recorded nothing is asked once to record what it settled (`stop_prompt`); a session that
    ends without a checkpoint gets one drafted from its commits and records
    (`draft_checkpoints`). With `review`, new records wait for a person's approval. With
    `extractor`, a chat model proposes records from the session's transcript; they always
    wait for review."""

    # end of turn: ask a session that changed code and recorded nothing, once
    stop_prompt: bool = True
    # a session that ends without a checkpoint gets one drafted from its commits
    draft_checkpoints: bool = True
    # off; agent: what agents write waits for `contextd review approve`; all: drafts too
    review: str = "off"
    # "openai": at the end of a turn and of a session, a detached process sends the part of
    # the transcript not read yet (secret-scanned first) to this chat endpoint and queues the
    # records it proposes for review. The key comes from the variable api_key_env names.
    extractor: str = "none"
    api_base: str = "http://localhost:11434/v1"  # extractor: the OpenAI-compatible endpoint
    model: str = ""  # extractor: the endpoint's model name
    api_key_env: str = ""  # extractor: the name of the environment variable holding the key
    timeout_s: float = 60.0  # the whole answer; the hooks never wait for it
    max_transcript_kb: int = 256  # the newest part of a longer unread stretch is sent


class DaemonSettings(Struct, frozen=True):
    """How long the daemon stays without being asked anything (`3h`, `30m`, `1d`; `off`
    keeps it running until stopped). It leaves at once, whatever this says, when its home or
    its store file is deleted or replaced."""

    idle_exit: str = "3h"  # exits after this long unasked (90s, 30m, 1d; "off": never)

    @property
    def idle_exit_s(self) -> int:
        """The idle time in seconds; 0 for never."""
        return parse_span(self.idle_exit) or 0


class RefreshSettings(Struct, frozen=True):
    """How alike two records must be (cosine) to be refused as a duplicate or reported, and
    (their words, besides the cosine) to be refused as a duplicate or merged by `refresh`."""

    duplicate_threshold: float = 0.9  # at or above: refused as a restatement (unless --force)
    similar_threshold: float = 0.65  # at or above: reported as similar (refresh: clusters)
    # a looser match that, with a change cue, flags a likely replacement (a replacement
    # changes the very words)
    replacement_threshold: float = 0.4
    # a duplicate's words (refused, or merged by refresh): this alike, with the same
    # negations, numbers and names
    merge_text_similarity: float = 0.9
    # none, or openai: `refresh --summarize` sends clusters to the [chat] endpoint, which
    # proposes one record a cluster
    summarizer: str = "none"


class ChatSettings(Struct, frozen=True):
    """An OpenAI-compatible chat endpoint (/v1/chat/completions: Ollama, vLLM, LM Studio,
    OpenAI), for the features that ask a model (the refresh summarizer); the API key is read
    from the environment variable named here, never from this file."""

    api_base: str = "http://localhost:11434/v1"  # the OpenAI-compatible endpoint
    model: str = ""  # the endpoint's model name (required to use it)
    api_key_env: str = ""  # the name of the environment variable holding the API key
    timeout_s: float = 60.0  # the whole answer, at most
    max_reply_kb: int = 64  # a longer answer is refused unread


class SyncSettings(Struct, frozen=True):
    """How long a deletion keeps travelling between machines before `refresh` forgets it; the
    most a bundle may hold (a file, stdin, or what a `remote pull` reads) and how long a whole
    remote operation (connecting and transferring) may take; and how often the daemon pulls the
    configured remotes on its own (`off` by default)."""

    tombstone_retention_days: int = 365  # deletions older than this are forgotten by `refresh`
    max_bundle_mb: int = 256  # the most a bundle (a file, stdin, `remote pull`) may hold
    remote_timeout_s: float = 600.0  # the most a whole `remote` operation may take
    pull_every: str = "off"  # the daemon pulls every remote this often ("30m"); see `status`

    @property
    def pull_every_s(self) -> int:
        """The pull interval in seconds; 0 for never."""
        return parse_span(self.pull_every) or 0


class VectorSettings(Struct, frozen=True):
    """Where vectors are searched. SQLite always keeps the authoritative copy; `qdrant` adds
    a Qdrant collection rebuilt from it (a server at `url`, else a local folder at `path`)."""

    backend: str = "sqlite"  # sqlite (an exact scan in memory) or qdrant
    url: str = ""  # a Qdrant server (http://localhost:6333); empty: local mode in `path`
    path: str = ""  # local mode folder; empty: <home>/qdrant
    collection: str = "contextd"  # the Qdrant collection
    api_key_env: str = ""  # environment variable holding the server's API key
    timeout_s: float = 5.0  # how long one Qdrant request may take


class ShareSettings(Struct, frozen=True):
    """Which records of a shared project live in the repository (`contextd share`): kinds, and
    memory categories, separated by spaces. Others, and any record written with --private,
    stay in this store only."""

    records: str = "decision constraint pipeline convention gotcha"  # kinds, memory categories


class StoreSettings(Struct, frozen=True):
    """Where the records live: empty `url` keeps them in the home's SQLite file; a
    postgresql:// URL puts every surface on that team server (its password comes from
    PGPASSWORD or ~/.pgpass, never from this file). On a server the developer is the login
    role; `developer` tells apart people who share one role (it follows the role's name)."""

    # postgresql://USER@HOST:PORT/DB?sslmode=verify-full (never a password); empty: the
    # home's SQLite file
    url: str = ""
    developer: str = ""  # a home's sessions' name; on a server, added to the login role
    connect_timeout_s: float = 5.0  # seconds connecting to the server may take (fractions count)
    pool_size: int = 8  # connections a long-lived process (daemon, MCP server, web view) keeps


class ServeSettings(Struct, frozen=True):
    """`contextd serve`, MCP over HTTP: the largest request body it reads, how many requests
    a token may make a minute (counted in the store, so every serve process on it counts
    together), how many requests one process answers at once (one more gets a 503 at once)
    and how many of them one token and one developer may hold (one more gets a 429), how long
    a client may take to send a request's headers, and the browser origins allowed to call it
    (space-separated; none by default: agents send no Origin).
    `requests_per_minute = 0` counts nothing (no limit, and no write per request)."""

    max_body_kb: int = 1024  # the largest request body it reads
    # requests a token may make a minute, counted in the store (every serve process on it
    # together); 0 counts nothing: no limit, and no write per request
    requests_per_minute: int = 600
    max_in_flight: int = 64  # requests one process answers at once (one more gets a 503)
    # of those, how many one token may hold (one more gets a 429 while other tokens are served)
    max_in_flight_per_token: int = 8
    # of those, how many one developer's tokens together may hold (one more gets a 429)
    max_in_flight_per_developer: int = 16
    header_timeout_s: float = 10.0  # how long a client may take to send a request's headers
    # browser origins allowed to call it, space-separated (none: agents send no Origin)
    allowed_origins: str = ""


class LifecycleSettings(Struct, frozen=True):
    """When an active record counts as stale: not verified for this many days, or (when
    `code_staleness` is on) the code it names changed in git since it was verified."""

    stale_days: int = 90  # an active record not verified for this many days is stale
    # session start reads the new commits and marks the records whose named code changed
    code_staleness: bool = True
    code_first_commits: int = 1000  # the first such check at session start reads at most these


class Settings(Struct, frozen=True):
    """Everything a command runs with: the home, the project asked for, config.toml."""

    home: Path
    cwd: Path
    project: str | None = None
    # The project folders the agent that started us names (CLAUDE_PROJECT_DIR and the like).
    agent_dirs: tuple[str, ...] = ()
    search: SearchSettings = field(default_factory=SearchSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    embeddings: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    refresh: RefreshSettings = field(default_factory=RefreshSettings)
    chat: ChatSettings = field(default_factory=ChatSettings)
    hooks: HookSettings = field(default_factory=HookSettings)
    capture: CaptureSettings = field(default_factory=CaptureSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    vectors: VectorSettings = field(default_factory=VectorSettings)
    share: ShareSettings = field(default_factory=ShareSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    # Where the local model is installed when not in this home: a scratch store (`eval`)
    # uses the model of the home it was made beside.
    models_from: Path | None = None

    @property
    def model_home(self) -> Path:
        """The home whose models/ folder holds the local model and its built graphs."""
        return self.models_from or self.home

    @property
    def db_path(self) -> Path:
        return self.home / DB_FILE

    @property
    def store_location(self) -> str:
        """Where the records are, as a person reads it: the SQLite file, or the server's URL
        (never a password)."""
        if self.on_server:
            from contextd.server_url import redact

            return redact(self.store.url)
        return str(self.db_path)

    @property
    def on_server(self) -> bool:
        """Whether the records live on a team server rather than in the home."""
        return bool(self.store.url)

    @property
    def developer(self) -> str:
        """[store] developer: in a home's store the name its sessions carry ('' by default);
        on a team server it follows the login role's name (see App.developer)."""
        return self.store.developer

    @property
    def config_path(self) -> Path:
        return self.home / CONFIG_FILE


_SECTIONS: dict[str, type[Any]] = {
    "embeddings": EmbeddingSettings,
    "search": SearchSettings,
    "context": ContextSettings,
    "lifecycle": LifecycleSettings,
    "refresh": RefreshSettings,
    "chat": ChatSettings,
    "hooks": HookSettings,
    "capture": CaptureSettings,
    "daemon": DaemonSettings,
    "sync": SyncSettings,
    "vectors": VectorSettings,
    "share": ShareSettings,
    "store": StoreSettings,
    "serve": ServeSettings,
}


_CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("capture", "review"): ("off", "agent", "all"),
    ("capture", "extractor"): ("none", "openai"),
    ("embeddings", "provider"): ("local", "hashing", "openai", "none"),
    ("embeddings", "precision"): ("fp32", "int8"),
    ("search", "ranking"): ("hybrid", "fts", "semantic"),
    ("vectors", "backend"): ("sqlite", "qdrant"),
    ("refresh", "summarizer"): ("none", "openai"),
}


# Settings that hold the NAME of an environment variable (the key stays in the environment).
_VARIABLE_NAMES = {
    ("embeddings", "api_key_env"),
    ("vectors", "api_key_env"),
    ("chat", "api_key_env"),
    ("capture", "api_key_env"),
}
# Settings that hold a length of time (`30m`, `3h`, `off`).
_SPANS = {("daemon", "idle_exit"), ("sync", "pull_every")}
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

_POSITIVE = {
    ("embeddings", "dimensions"),
    ("embeddings", "timeout_s"),
    ("vectors", "timeout_s"),
    ("chat", "timeout_s"),
    ("chat", "max_reply_kb"),
    ("capture", "timeout_s"),
    ("capture", "max_transcript_kb"),
    ("store", "connect_timeout_s"),
    ("store", "pool_size"),
    ("sync", "max_bundle_mb"),
    ("sync", "remote_timeout_s"),
    ("search", "recency_half_life_days"),
    ("search", "candidate_pool"),
    ("search", "semantic_spread"),
    ("context", "max_context_tokens"),
    ("context", "max_entry_tokens"),
    ("context", "max_memories"),
    ("hooks", "prompt_max_results"),
    ("context", "export_budget"),
    ("serve", "max_body_kb"),
    ("serve", "max_in_flight"),
    ("serve", "max_in_flight_per_token"),
    ("serve", "max_in_flight_per_developer"),
    ("serve", "header_timeout_s"),
}


def resolve_home(home: str | Path | None = None) -> Path:
    """The store's folder: the argument, else $CONTEXTD_HOME, else ~/.contextd."""
    return Path(home_folder.resolve_home(home))


def load_settings(
    home: str | Path | None = None,
    project: str | None = None,
    cwd: Path | None = None,
    *,
    refuse_secrets: bool = False,
) -> Settings:
    """Build Settings from arguments, the environment and config.toml (if present); with
    `refuse_secrets`, a config.toml holding what looks like a credential is refused too (the
    scanner costs a hook's start, so the hooks do not ask for it).

    Raises:
        ConfigError: the home is another user's or closed to this one, config.toml is not
            valid TOML, holds an unknown key (or, asked, a credential) or a known key has a
            wrong type.
    """
    resolved_home = resolve_home(home)
    problem = home_folder.unusable(resolved_home)
    if problem:
        raise ConfigError(problem)
    settings = Settings(
        home=resolved_home,
        cwd=(cwd or Path.cwd()).absolute(),
        project=project or os.environ.get("CONTEXTD_PROJECT") or None,
        agent_dirs=project_dirs(os.environ),
    )
    path = resolved_home / CONFIG_FILE
    if not path.is_file():
        return settings
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{path} is over {MAX_CONFIG_BYTES // 1024} KB, too large to be contextd's "
                "settings; fix or remove the file."
            )
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix or remove the file.") from exc
    except RecursionError:  # tables or arrays nested thousands deep
        raise ConfigError(
            f"{path} nests too deeply to be settings; fix or remove the file."
        ) from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from exc
    data = _without_retired(data)
    _refuse_unknown(path, data)
    sections = {
        name: _section(path, name, cls, data.get(name, {})) for name, cls in _SECTIONS.items()
    }
    if refuse_secrets:  # after each setting's own check, whose advice is more precise
        _refuse_credentials(path, data)
    return replace(settings, **sections)


# Settings earlier versions had and this one does without: a file that still sets one is read
# as if it did not, rather than refused (nothing the user chose is lost: each had one value
# that shipped, which is now the only behaviour).
_RETIRED = {"search": {"fusion", "zscore_spread", "rrf_k", "bm25_half"}}


def _without_retired(data: dict[str, Any]) -> dict[str, Any]:
    return {
        name: (
            {k: v for k, v in table.items() if k not in _RETIRED.get(name, ())}
            if isinstance(table, dict)
            else table
        )
        for name, table in data.items()
    }


def _refuse_unknown(path: Path, data: dict[str, Any]) -> None:
    """A section or key contextd does not know is a typo or a value in the wrong place (a key
    pasted as `api_key`): refused by its name, never its value."""
    for name, table in data.items():
        cls = _SECTIONS.get(name)
        if cls is None:
            hint = (
                did_you_mean(name, list(_SECTIONS)) or f" The sections are {', '.join(_SECTIONS)}."
            )
            raise ConfigError(f"[{name[:60]}] in {path} is not a section contextd knows.{hint}")
        known = [f.name for f in fields(cls)]
        for key in table if isinstance(table, dict) else ():
            if key not in known:
                hint = did_you_mean(key, known) or " `contextd config` lists every setting."
                raise ConfigError(
                    f"{name}.{key[:60]} in {path} is not a setting contextd knows.{hint}"
                )


def _refuse_credentials(path: Path, data: dict[str, Any]) -> None:
    """Refuse a config holding what looks like a credential, named by where it is, never
    quoted."""
    from contextd.credentials.scan import find_secrets

    for section, table in data.items():
        for key, value in table.items() if isinstance(table, dict) else ():
            found = find_secrets(value) if isinstance(value, str) else []
            if found:
                raise ConfigError(
                    f"{path} holds what looks like a credential ({found[0].kind}) in "
                    f"{section}.{key}; contextd keeps no secrets in its settings: remove it, "
                    "and give an API key in the environment variable that api_key_env names."
                )


def _section(path: Path, name: str, cls: type[Any], table: object) -> Any:
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] in {path} must be a table of settings.")
    values: dict[str, Any] = {}
    for item in fields(cls):
        if item.name not in table:
            continue
        value = table[item.name]
        expected = type(item.default)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not expected:
            raise ConfigError(
                f"{name}.{item.name} in {path} must be a {expected.__name__}, got {value!r}."
            )
        _check_choice(name, item.name, value)
        values[item.name] = value
    return cls(**values)


def _check_choice(section: str, name: str, value: object) -> None:
    choices = _CHOICES.get((section, name))
    if choices and value not in choices:
        raise ConfigError(f"{section}.{name} must be one of {', '.join(choices)}; got {value!r}.")
    if (section, name) in _VARIABLE_NAMES and value and not _VARIABLE_NAME.fullmatch(str(value)):
        # Never quote it: whoever typed a key here has just pasted the secret itself.
        raise ConfigError(
            f"{section}.{name} takes the name of an environment variable (such as "
            "OPENAI_API_KEY), not the key itself; put the key in that variable."
        )
    if (section, name) in _SPANS:
        _check_span(section, name, str(value))
    if (section, name) == ("store", "url") and value:
        problem = url_problem(str(value))
        if problem:
            raise ConfigError(problem)
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{section}.{name} must be a finite number; got {value!r}.")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if (section, name) in _POSITIVE and value <= 0:
            raise ConfigError(f"{section}.{name} must be greater than 0; got {value!r}.")
        if value < 0:
            raise ConfigError(f"{section}.{name} cannot be negative; got {value!r}.")


def _check_span(section: str, name: str, value: str) -> None:
    if parse_span(value) is None:
        raise ConfigError(
            f'{section}.{name} takes a length of time, such as "90s", "30m", "3h" or "1d", '
            f'or "off"; got {value!r}.'
        )


_TYPE_WORDS = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}


def parse_setting(key: str, raw: str) -> tuple[str, str, str | int | float | bool]:
    """Check a `section.name` key and convert the typed-in value to the setting's type.

    Raises:
        InvalidInputError: the key is unknown (with the names it was probably meant to be) or
            the value is not of the setting's type.
        ConfigError: the value is of its type but does not fit the setting.
    """
    section, _, name = key.partition(".")
    cls = _SECTIONS.get(section)
    known = {f.name: f for f in fields(cls)} if cls else {}
    if name not in known:
        every = [f"{s}.{f.name}" for s, c in _SECTIONS.items() for f in fields(c)]
        hint = did_you_mean(key, every) or " `contextd config` lists every setting."
        raise InvalidInputError(f"Unknown setting {key!r}.{hint}")
    expected: type[Any] = type(known[name].default)
    value: str | int | float | bool
    try:
        if expected is bool:
            if raw.lower() not in ("true", "false"):
                raise ValueError(raw)
            value = raw.lower() == "true"
        else:
            value = expected(raw)
    except ValueError:
        raise InvalidInputError(
            f"{key} takes {_TYPE_WORDS.get(expected, expected.__name__)}; {raw!r} is not one."
        ) from None
    _check_choice(section, name, value)
    return section, name, value


def toml_value(value: object) -> str:
    """A setting's value as TOML writes it: true/false, numbers as they are, strings and
    lists of them in double quotes (JSON's escapes are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def settings_view(settings: Settings) -> dict[str, Any]:
    """Every section's effective values, for `contextd config`."""
    return {name: asdict(getattr(settings, name)) for name in _SECTIONS}


def default_config_text() -> str:
    """The config.toml that `init` writes: every known key at its default, commented."""
    lines = ["# contextd settings. Every key is optional; shown here at its default.", ""]
    for name, cls in _SECTIONS.items():
        lines.append(f"[{name}]")
        for item in fields(cls):
            lines.append(f"# {item.name} = {toml_value(item.default)}")
        lines.append("")
    return "\n".join(lines)
