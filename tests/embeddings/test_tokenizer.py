"""The model's tokenizer, built from vocab.txt as tokenizer_config.json describes it, gives the
ids tokenizer.json gives; a tokenizer that is not plain BERT is read from tokenizer.json."""

import json
import shutil
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from contextd.embeddings.local import MAX_TOKENS, find_model_dir
from contextd.embeddings.tokenizer import load_tokenizer

TEXTS = [
    "This is a test sentence.",
    "GPU scheduler uses NATS for task transport",
    "Ünïcödé text, emoji 🚀 and 中文 characters mixed in.",
    "ÀÉÎÕÜ ñ ç ß Ø",
    "don't stop-believing: x==y && foo_bar() // see #42",
    "[CLS] [SEP] [MASK] [UNK] [PAD] in running text",
    "\u200bzero\u200dwidth, tab\tand\nnewline, \x00\x07 control",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and 日本語のテキスト and 👍🏽 👨‍👩‍👧",
    "supercalifragilisticexpialidocious" * 5,
    "word " * 400,  # past MAX_TOKENS: truncated alike
    "",
]


def _reference(folder: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


@pytest.fixture(scope="module")
def folder() -> Path:
    found = find_model_dir()
    assert found is not None
    return found


def test_the_vocabulary_tokenizer_gives_the_ids_of_tokenizer_json(folder: Path) -> None:
    built = load_tokenizer(folder, MAX_TOKENS)
    assert not isinstance(built, Tokenizer)  # the packaged model is plain BERT
    reference = _reference(folder)
    for text in TEXTS:
        assert built.encode(text).ids == reference.encode(text).ids, text
    assert len(built.encode(TEXTS[-2]).ids) == MAX_TOKENS


@pytest.mark.parametrize(
    "change",
    [
        {"tokenizer_class": "RobertaTokenizer"},
        {"never_split": ["gpu"]},
        {"do_basic_tokenize": False},
    ],
)
def test_a_tokenizer_that_is_not_plain_bert_is_read_from_tokenizer_json(
    folder: Path, tmp_path: Path, change: dict[str, object]
) -> None:
    for name in ("tokenizer.json", "vocab.txt"):
        shutil.copy(folder / name, tmp_path / name)
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config | change), "utf-8")
    built = load_tokenizer(tmp_path, MAX_TOKENS)
    assert isinstance(built, Tokenizer)
    assert built.encode(TEXTS[2]).ids == _reference(folder).encode(TEXTS[2]).ids


def test_without_a_config_or_a_vocabulary_tokenizer_json_is_read(
    folder: Path, tmp_path: Path
) -> None:
    shutil.copy(folder / "tokenizer.json", tmp_path / "tokenizer.json")
    assert isinstance(load_tokenizer(tmp_path, MAX_TOKENS), Tokenizer)
    (tmp_path / "tokenizer_config.json").write_text("{not json", "utf-8")
    assert isinstance(load_tokenizer(tmp_path, MAX_TOKENS), Tokenizer)


@pytest.mark.parametrize("damaged", ["vocab.txt", "tokenizer.json"])
def test_a_damaged_tokenizer_file_is_one_sentence_naming_the_reinstall(
    folder: Path, tmp_path: Path, damaged: str
) -> None:
    from contextd.embeddings.local import LocalMiniLM
    from contextd.errors import ProviderUnavailableError

    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(folder / name, tmp_path / name)
    (tmp_path / "model.safetensors").symlink_to(folder / "model.safetensors")
    if damaged == "tokenizer.json":
        (tmp_path / "tokenizer_config.json").unlink()  # so that tokenizer.json is the one read
    (tmp_path / damaged).write_bytes(b"\xff\xfe not text \x00" * 8)
    provider = LocalMiniLM(model_dir=tmp_path, cache_dir=tmp_path / "models")
    with pytest.raises(
        ProviderUnavailableError, match="cannot be read.*contextd model install --force"
    ):
        provider.embed_query("anything")
