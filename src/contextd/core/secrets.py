"""Spotting credentials in text a user asks to store, without ever repeating them.

A curated set of token formats (each provider's documented prefix and shape), private-key
blocks, passwords inside URLs, and high-entropy values assigned to secret-sounding names.
Plain prose about keys ("rotate the API key monthly") does not match.
"""

import math
import re
from collections import Counter

from msgspec import Struct

__all__ = ["Finding", "find_secrets"]


class Finding(Struct, frozen=True):
    kind: str  # what it looks like, e.g. "GitHub token"
    start: int  # character offsets, so a message can say where without quoting it
    end: int


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
    ]
]

# scheme://user:password@host — the password part only.
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s@/]{3,})@[^\s/]+", re.I)
_SECRET_NAME = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"auth(?:orization)?|credential|private[_-]?key|client[_-]?secret|signing[_-]?key)"
)
# NAME = value / NAME: value / "NAME": "value", where NAME holds a secret-sounding word.
_ASSIGNMENT = re.compile(
    rf"\b[\w.-]*{_SECRET_NAME}[\w.-]*[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{{8,}})", re.I
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
    found: list[Finding] = []
    for kind, pattern in _TOKEN_FORMATS:
        found += [Finding(kind, m.start(), m.end()) for m in pattern.finditer(text)]
    for match in _URL_PASSWORD.finditer(text):
        if not _PLACEHOLDER.match(match.group(1)):
            found.append(Finding("password in a URL", match.start(1), match.end(1)))
    for match in _ASSIGNMENT.finditer(text):
        value = match.group(1)
        if not _PLACEHOLDER.match(value) and _looks_random(value, minimum=8, bits=3.0):
            found.append(Finding("secret assigned to a name", match.start(1), match.end(1)))
    for match in _BLOB.finditer(text):
        if _looks_random(match.group(0), minimum=32, bits=4.3) and not _is_hex_digest(match[0]):
            found.append(Finding("high-entropy string", match.start(), match.end()))
    return _without_overlaps(found)


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
