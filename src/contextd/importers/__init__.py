"""Importing the memory other tools kept (context-keeper's `.context/` JSON, Kept's Markdown
notes, a folder of ADRs) as records of a project, through the same checks as every write."""

from contextd.importers.adr import adr_folder, read_adrs
from contextd.importers.apply import Importer
from contextd.importers.context_keeper import read_context_keeper
from contextd.importers.entry import SourceEntry, SourceStatus
from contextd.importers.kept import read_kept
from contextd.importers.report import ImportReport

__all__ = [
    "ImportReport",
    "Importer",
    "SourceEntry",
    "SourceStatus",
    "adr_folder",
    "read_adrs",
    "read_context_keeper",
    "read_kept",
]
