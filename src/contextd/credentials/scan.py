"""Spotting credentials in text a user asks to store, without ever repeating them.

A curated set of token formats (each provider's documented prefix and shape), private-key
blocks, passwords inside URLs, opaque Bearer tokens, values assigned to secret-sounding names
(short ones too when the name says password), passwords told in prose ("the password is
Summer2024!"), and high-entropy strings. Invisible characters (zero-width spaces, soft
hyphens) are read through, and a token of a known format broken by spaces is joined again.
Plain prose about keys ("rotate the API key monthly") does not match, nor do the credential
lookalikes of technical prose (`lookalikes.py`: digests, links, mail addresses, public keys,
words after "tokens:").
"""

import math
import re
from collections import Counter

from msgspec import Struct

from contextd.credentials.lookalikes import lookalike_spans, ordinary_value, wordlike

__all__ = ["CONTEXTD_TOKEN", "Finding", "find_secrets"]


class Finding(Struct, frozen=True):
    kind: str  # what it looks like, e.g. "GitHub token"
    start: int  # character offsets, so a message can say where without quoting it
    end: int


# A bearer token of `contextd serve` (contextd.core.workspace.tokens makes them): its public
# part, then its secret.
CONTEXTD_TOKEN = re.compile(r"\bctd_([a-z0-9]{12})_([A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])")
_TOKEN_FORMATS: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(pattern))
    for kind, pattern in [
        ("private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})"),
        ("GitLab token", r"\bgl(?:pat|dt|ptt|rt|cbt|soat|ffct)-[A-Za-z0-9_-]{20,}"),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("Slack webhook URL", r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"),
        ("AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_-]{20,}"),
        ("Anthropic API key", r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}"),
        (
            "OpenAI API key",
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ"
            r"[A-Za-z0-9_-]{20,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
        ),
        ("Azure storage account key", r"AccountKey=[A-Za-z0-9+/]{80,}={0,2}"),
        ("Azure connection secret", r"SharedAccessKey=[A-Za-z0-9+/]{40,}={0,2}"),
        ("Stripe secret key", r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}"),
        ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
        ("JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        (
            "Discord webhook URL",
            r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}",
        ),
        ("NATS nkey seed", r"\bS[ACNOUX][A-Z2-7]{56}\b"),
        ("Telegram bot token", r"(?<!\d)\d{6,12}:AA[A-Za-z0-9_-]{30,40}(?![A-Za-z0-9_-])"),
        ("contextd token", CONTEXTD_TOKEN.pattern),
    ]
]

# scheme://user:password@host (the user may be empty: redis://:pw@host), the password only.
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]{0,30}://[^\s:/@]*:([^\s@/]{2,})@[^\s/]+", re.I)
_BEARER = re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=-]{20,})")
# Characters that show nothing but split a token so no pattern sees it whole.
_INVISIBLE = dict.fromkeys(
    map(ord, "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff")
)
# The prefix of a known token format followed by chunks split by single spaces.
_SPLIT_TOKEN = re.compile(
    r"\b(?:gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AKIA|ASIA|AIza|GOCSPX-|sk-ant-|"
    r"sk-(?:proj|svcacct|admin)-|[sr]k_live_|npm_|pypi-AgE|eyJ)[A-Za-z0-9_.-]*"
    r"(?: [A-Za-z0-9_.-]+){1,8}"
)
# NAME = value where the name ends in a password word: a short value is a password too.
_PASSWORD_ASSIGNMENT = re.compile(
    r"\b([\w.-]{0,64}?)(password|passwd|passphrase|pass|pwd|secret)[\"']?\s*[:=]\s*[\"']?"
    r"([^\s\"',;]{6,})",
    re.I,
)
# An emoji shortcode after "pass :" (`:white_check_mark:`) is no password.
_SHORTCODE = re.compile(r":[a-z0-9_+-]{2,40}:")
# "the password (for prod) is Summer2024!": a password told in a sentence.
_PASSWORD_PROSE = re.compile(
    r"\b(?:password|passwd|passphrase|pwd)(?:\s+(?:for|of|on|to)\s+[\w.-]+)?"
    r"\s+(?:is|was|=|:|is set to|was set to)\s*[:\"']?\s*(\S{6,})",
    re.I,
)
_ALGORITHM = re.compile(r"^(?:sha|md|bcrypt|argon|scrypt|pbkdf|aes|rsa|utf|base|hs|rs|es)\d", re.I)
_SECRET_NAME = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"auth(?:orization)?|credential|private[_-]?key|client[_-]?secret|signing[_-]?key)"
)
# NAME = value / NAME: value / "NAME": "value", where NAME holds a secret-sounding word.
_ASSIGNMENT = re.compile(
    rf"\b[\w.-]{{0,64}}{_SECRET_NAME}[\w.-]{{0,64}}[\"']?\s*[:=]\s*[\"']?([^\s\"',;&]{{8,}})", re.I
)
# Long unbroken runs of key material anywhere in the text.
_BLOB = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
_PLACEHOLDER = re.compile(
    r"^(?:<.*>|\$\{?\w+\}?|\{\{.*\}\}|%\w+%|x{4,}|\*{3,}|\.{3,}|changeme|example\w*|"
    r"your[\w-]*|dummy\w*|redacted|none|null|true|false|os\.environ.*|env\(.*|"
    r"pass(?:word|wd)?|secret|token|pwd|user(?:name)?|admin|root|test|guest|postgres|foo|bar)$",
    re.I,
)


def find_secrets(text: str) -> list[Finding]:
    """Every span of `text` that looks like a credential (empty for ordinary prose)."""
    visible = text.translate(_INVISIBLE)
    if len(visible) == len(text):
        return _without_overlaps(_find(text))
    # Read through invisible characters, then report spans of the text as it was given.
    positions = [i for i, c in enumerate(text) if ord(c) not in _INVISIBLE] + [len(text)]
    return _without_overlaps(
        [Finding(f.kind, positions[f.start], positions[f.end - 1] + 1) for f in _find(visible)]
    )


def _find(text: str) -> list[Finding]:
    """Every candidate span, most specific kinds first (they win an overlap)."""
    found: list[Finding] = []
    for kind, pattern in _TOKEN_FORMATS:
        found += [Finding(kind, m.start(), m.end()) for m in pattern.finditer(text)]
    found += _split_tokens(text)
    found += _credentials(text)
    found += _passwords(text)
    found += _outside_lookalikes(
        text,
        [
            Finding("high-entropy string", m.start(), m.end())
            for m in _BLOB.finditer(text)
            if _random_blob(m[0])
        ],
    )
    return found


def _outside_lookalikes(text: str, blobs: list[Finding]) -> list[Finding]:
    """The runs of key material that are not part of a digest, an address, a link or a public
    key."""
    if not blobs:
        return blobs
    spans = lookalike_spans(text)
    return [b for b in blobs if not any(lo <= b.start and b.end <= hi for lo, hi in spans)]


def _credentials(text: str) -> list[Finding]:
    """Passwords in URLs, Bearer tokens, random values assigned to secret-sounding names."""
    found = [
        Finding("password in a URL", m.start(1), m.end(1))
        for m in _URL_PASSWORD.finditer(text)
        if not _PLACEHOLDER.match(m[1])
    ]
    found += [
        Finding("Bearer token", m.start(1), m.end(1))
        for m in _BEARER.finditer(text)
        if not _PLACEHOLDER.match(m[1]) and _looks_random(m[1], minimum=20, bits=3.0)
    ]
    found += [
        Finding("secret assigned to a name", m.start(1), m.end(1))
        for m in _ASSIGNMENT.finditer(text)
        if not _PLACEHOLDER.match(m[1])
        and _looks_random(m[1], minimum=8, bits=3.0)
        and not ordinary_value(m[1])
    ]
    return found


def _passwords(text: str) -> list[Finding]:
    """Short passwords: assigned to a name that says password, or told in a sentence."""
    found = [
        Finding("password assigned to a name", m.start(3), m.end(3))
        for m in _PASSWORD_ASSIGNMENT.finditer(text)
        if _names_a_password(m[1], m[2])
        and not _shortcode(text, m.start(3), m.end(3))
        and _could_be_password(m[3])
        and not _words_not_password(m[2], m[3])
    ]
    for match in _PASSWORD_PROSE.finditer(text):
        value = match[1].rstrip(".,;:)]}\"'")
        if (
            _could_be_password(value)
            and any(c.isdigit() for c in value)
            and not ordinary_value(value, letters_only=True, most_words=2)
        ):
            start = match.start(1)
            found.append(Finding("password in a sentence", start, start + len(value)))
    return found


def _shortcode(text: str, start: int, end: int) -> bool:
    """Whether the value at start:end is an emoji shortcode (`pass :white_check_mark:`), its
    opening colon taken for the one after a name."""
    value = text[start:end] if text[start] == ":" else text[start - 1 : end]
    return value.startswith(":") and _SHORTCODE.fullmatch(value) is not None


def _words_not_password(word: str, value: str) -> bool:
    """`password: Mandatory`, `secret: cloud-platform-team`: words after the name, not a
    password. A digit makes one, and after a password word a chain of three words or more may be
    a passphrase (`correct-horse-battery-staple`)."""
    most = 0 if word.lower() == "secret" else 2
    return ordinary_value(value, letters_only=True, most_words=most)


def _split_tokens(text: str) -> list[Finding]:
    """A token of a known format broken by spaces (`ghp_abc def…`), joined again: the fewest
    chunks that together make a whole token of the format."""
    found: list[Finding] = []
    for match in _SPLIT_TOKEN.finditer(text):
        chunks = match[0].split(" ")
        for count in range(2, len(chunks) + 1):
            last = chunks[count - 1].rstrip(".,;:")
            joined = "".join(chunks[: count - 1]) + last
            kind = next((k for k, p in _TOKEN_FORMATS if p.fullmatch(joined)), None)
            if kind is not None and _looks_random(joined, minimum=16, bits=3.0):
                length = sum(len(c) + 1 for c in chunks[: count - 1]) + len(last)
                found.append(Finding(kind, match.start(), match.start() + length))
                break
    return found


def _names_a_password(before: str, word: str) -> bool:
    """`db_password`, `PASSWORD`, `dbPassword`: the name ends in the password word (not
    `bypass`, `compass`)."""
    return not before or before[-1] in "_.-" or (before[-1].islower() and word[0].isupper())


def _could_be_password(value: str) -> bool:
    """Not a placeholder, a plain word, or an algorithm name: mixes letters with digits or
    symbols, or cases."""
    if _PLACEHOLDER.match(value) or _ALGORITHM.match(value) or len(value) < 6:
        return False
    if not any(c.isalpha() for c in value) or not any(c.islower() for c in value):
        return False
    return any(not c.isalpha() for c in value) or not (value.islower() or value.isupper())


def _random_blob(value: str) -> bool:
    """A long run of key material; a path (`/tmp/pytest-of-root/…`) is judged part by part."""
    if value.startswith(("/", "./", "~/")) or "//" in value:
        return any(_random_blob(part) for part in value.split("/") if len(part) >= 32)
    return (
        _looks_random(value, minimum=32, bits=4.3)
        and not _is_hex_digest(value)
        and not wordlike(value)
    )


def _looks_random(value: str, *, minimum: int, bits: float) -> bool:
    """Long enough, mixes character classes, and has high Shannon entropy per character."""
    if len(value) < minimum or value.isalpha() and value.islower():
        return False
    classes = sum(
        [
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        ]
    )
    if classes < 2:
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= bits


def _is_hex_digest(value: str) -> bool:
    """Commit ids and checksums are not secrets."""
    return len(value) in (32, 40, 56, 64, 96, 128) and all(
        c in "0123456789abcdefABCDEF" for c in value
    )


def _without_overlaps(found: list[Finding]) -> list[Finding]:
    """One finding per span; `found` lists the most specific kinds first, and those win."""
    kept: list[Finding] = []
    for finding in found:
        if not any(k.start < finding.end and finding.start < k.end for k in kept):
            kept.append(finding)
    return sorted(kept, key=lambda f: f.start)
