"""Text that has the shape of a credential but is not one.

Technical prose is full of long, random-looking strings that hide nothing: a digest shown with
its algorithm (`SHA-256=…`, an integrity `sha384-…`), the path of a link (a document's id in a
Google Docs address), a mail address, a public certificate or SSH key, a slug made of words.
And after a secret-sounding name ("API tokens:", "password:") there is often just more prose.
The secret scan asks this module before it calls such text a secret; known token formats,
private keys and passwords in URLs are never excused.
"""

import re
from urllib.parse import unquote

__all__ = ["lookalike_spans", "ordinary_value", "wordlike"]

_ALGORITHM = (
    r"(?:sha-?(?:1|224|256|384|512)(?:[/_-](?:224|256))?|sha3[-_]?(?:224|256|384|512)|md5|"
    r"blake2[bs]?(?:-?\d+)?|blake3|ripemd-?160|crc-?32c?|xxh(?:3|32|64|128)|sm3)"
)
# SHA-256=value, sha512-value (subresource integrity), SHA256:value (an SSH fingerprint),
# sha-256=:value: (RFC 9530): a digest named by its algorithm.
_DIGEST = re.compile(rf"\b{_ALGORITHM}(?:=:|[=:-])[A-Za-z0-9+/_=-]{{8,}}", re.I)
# "digest": "…", fingerprint = …: a value a name calls a digest.
_NAMED_DIGEST = re.compile(
    r"\b(?:digest|checksum|fingerprint|integrity|etag|hash)[\"']?\s*[:=]\s*[\"']?"
    r"[A-Za-z0-9+/_=-]{16,}",
    re.I,
)
# A whole address, not the `pw@host` end of `user:pw@host`.
_MAIL = re.compile(
    r"(?<![\w.%+:/-])[A-Za-z0-9][\w.%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.){1,16}[A-Za-z]{2,24}"
    r"(?![\w-])"
)
# A link: its host and path, and its fragment (`#narrow/stream/…`); not the user:password
# before the host, nor the query, whose values may be credentials (`?sig=…`).
_LINK_END = r"[^\s<>\"'`()\[\]{}|\\^,"
_LINK = re.compile(
    r"(?P<path>(?:\b[a-z][a-z0-9+.-]{0,30}://[^\s/?#@<>\"'`]{1,255}|"
    r"\b(?:[a-z0-9-]{1,63}\.){1,16}[a-z]{2,24})"
    rf"(?:/{_LINK_END}?#]*)?)(?:\?{_LINK_END}#]*)?(?P<fragment>#{_LINK_END}]*)?",
    re.I,
)
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*(?:CERTIFICATE(?: REQUEST)?|PUBLIC KEY(?: BLOCK)?|X509 CRL))"
    r"-----.*?-----END \1-----",
    re.S,
)
# A NATS public key (server, cluster, operator, account, user, curve); its seed starts with S.
_NATS_PUBLIC_KEY = re.compile(r"\b[ACNOUX][A-Z2-7]{55}\b")
_SSH_PUBLIC_KEY = re.compile(
    r"\b(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp(?:256|384|521)|"
    r"sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)\s+AAAA[A-Za-z0-9+/]+={0,3}"
)
_SHAPES = (_DIGEST, _NAMED_DIGEST, _MAIL, _PUBLIC_BLOCK, _SSH_PUBLIC_KEY, _NATS_PUBLIC_KEY)
# A compiler's mangled symbol name: Rust's v0 (`_RINvNtC3std3mem8align_of…`), the Itanium ABI
# of C++ and older Rust (`_ZN3std2io5stdio6_print17h…E`), Swift's (`$sSS14validatingUTF8…`,
# also as a @_silgen_name). Told apart by the names inside, each after its length.
_MANGLED = re.compile(r"(?:(?<![\w$])(?:_R|_Z|_?\$[sS])|(?<=@_silgen_name\(\"))[\w$.]{8,}")
_LENGTH_PREFIXED = re.compile(r"(?<!\d)(\d{1,3})(?=[A-Za-z_])")

# A part of a name: letters (any script) with a number after them, or a number.
_PART = re.compile(r"([^\W\d_]+)(\d*)|\d+")
# What joins the words of a slug or an identifier inside a run of key material.
_JOINERS = re.compile(r"[-_./=]+")
# Two-letter capitalised words that open humps in names (`PyUnicode`, `IsEmpty`, `ToString`).
_SHORT_WORDS = frozenset(
    "An As At Be By Db Do Go Id If In Io Is It Js My No Of Ok On Or Os Py Qa Re To Ui Un Up "
    "Vm We".split()
)
_TRAILING = ".,;:!?)]}>"
_CODE = re.compile(r"[()\[\]<>{}]")  # `Optional[Union[…]]`: words in code, not a passphrase


def lookalike_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` shows digests, mail addresses, public certificates and keys, and links
    (their hosts, paths and fragments: document, archive and commit ids are not key material)."""
    spans = [m.span() for shape in _SHAPES for m in shape.finditer(text)]
    spans += [m.span() for m in _MANGLED.finditer(text) if _mangled(m[0])]
    for match in _LINK.finditer(text):
        spans.append(match.span("path"))
        if match["fragment"]:
            spans.append(match.span("fragment"))
    return spans


def ordinary_value(value: str, *, letters_only: bool = False, most_words: int = 0) -> bool:
    """What follows a secret-sounding name but is prose or code: words (`per-environment`,
    `settings.GITHUB_TOKEN`, `Iterator[bytes]`), a path of words, a link without a password,
    query or random path, an address, a digest. With `letters_only` a digit makes it a secret;
    with `most_words` a longer chain of words may be a passphrase."""
    value = unquote(value.rstrip(_TRAILING))
    if _MAIL.fullmatch(value) or _DIGEST.fullmatch(value):
        return True
    if "://" in value:  # a link named as a secret may hold one in its path (a webhook's)
        rest = value.split("://", 1)[1]
        parts = rest.split("/")[1:]
        return not any(c in rest for c in "@?=") and all(len(p) < 16 or wordlike(p) for p in parts)
    words = [w for w in re.split(r"[^\w]+|_", value) if w]
    if letters_only and not all(w.isalpha() for w in words):
        return False
    if most_words and len(words) > most_words and not _CODE.search(value):
        return False
    return bool(words) and all(_reads_as_words(w) for w in words)


def _mangled(symbol: str) -> bool:
    """Whether a symbol holds at least two names that read as words (`3std`, `8align_of`,
    `12Discriminant`), each after its length, of eight letters or more together: random key
    material that starts like a mangled name does not."""
    letters = names = 0
    for match in _LENGTH_PREFIXED.finditer(symbol):
        length = int(match[1])
        name = symbol[match.end() : match.end() + length]
        words = [word for word in name.split("_") if word]
        if (
            length >= 3
            and len(name) == length
            and name[0].isalpha()
            and all(_reads_as_words(word) for word in words)
        ):
            letters, names = letters + length, names + 1
    return names >= 2 and letters >= 8


def wordlike(value: str) -> bool:
    """A run of key material made of words, however joined and cased:
    `ADR024-web-app-selection-2`, `BOSHJobEphemeralDiskPredictWillFill`, `test_remote0`.
    Random key material almost never splits into such humps."""
    parts = [p for p in _JOINERS.split(value) if p]
    return any(not p.isdigit() for p in parts) and all(_reads_as_words(p) for p in parts)


def _reads_as_words(part: str) -> bool:
    """`deploy`, `GitHub`, `OAuth2`, `HTTPServer`, `ADR024`, `PyUnicode`, `André`, `2024`, `O`:
    each hump (capitals, then small letters) reads as a word."""
    match = _PART.fullmatch(part)
    if match is None:
        return False
    letters = match[1] or ""
    if len(letters) == 1:
        return True
    start = 0
    while start < len(letters):
        middle = start
        while middle < len(letters) and letters[middle].isupper():
            middle += 1
        end = middle
        while end < len(letters) and not letters[end].isupper():
            end += 1
        if not _hump_of_a_word(letters[start:end], middle - start) and not _acronym_then_word(
            letters[start:end], middle - start
        ):
            return False
        start = end
    return True


def _acronym_then_word(hump: str, capitals: int) -> bool:
    """`NSXMLParser`, `UTF8String`: an acronym of two to six capitals, then a capitalised
    word (its last capital opens the word)."""
    if not 3 <= capitals <= 7 or capitals == len(hump):
        return False
    acronym, word = hump[: capitals - 1], hump[capitals - 1 :]
    return _hump_of_a_word(acronym, len(acronym)) and _hump_of_a_word(word, 1)


def _hump_of_a_word(hump: str, capitals: int) -> bool:
    """Not a lone capital, not `Xk` (unless a short word such as `Py`) nor `XYz`, though one
    small letter may open a name (`iOS`); a long hump has vowels between its consonants, as
    words do (`ZDCUBZITECZS` and `ltbtnr` do not)."""
    small = len(hump) - capitals
    if small == 0 and capitals < 2:
        return False
    if small == 1 and (capitals > 1 or hump not in _SHORT_WORDS):
        return capitals == 0
    if len(hump) < 6 or not hump.isascii():
        return True
    runs = re.split(r"[aeiouyAEIOUY]", hump)
    return len(runs) > 1 and max(len(run) for run in runs) <= 5
