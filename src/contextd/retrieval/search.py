"""Hybrid retrieval: FTS5 and vector candidates in the project's scope, fused and ranked."""

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from msgspec import Struct
from msgspec.structs import replace

from contextd.clock import now
from contextd.config import SearchSettings
from contextd.models import (
    Reach,
    Record,
    ScoreTerms,
    SearchHit,
    SearchQuery,
    SearchResult,
    Status,
)
from contextd.retrieval.adaptive import adaptive_terms, lexical_trust
from contextd.retrieval.floor import floor_for
from contextd.retrieval.fusion import dot, mmr, scale_by_best
from contextd.retrieval.heading import heading_shares
from contextd.retrieval.path_scope import records_naming
from contextd.retrieval.scoring import score_record
from contextd.storage import code_changes, feedback, groups
from contextd.storage import records as rows
from contextd.storage.connection import Connection
from contextd.storage.filters import RecordFilter
from contextd.storage.fts import LexicalMatches, lexical_matches
from contextd.storage.store import Database

if TYPE_CHECKING:  # full-text recall (the hook without its daemon) never loads the vector half
    from contextd.retrieval.semantic import Meaning, SemanticSearch

__all__ = ["Retriever"]

_VECTORS_OFF = "vectors are off (embeddings.provider = none)"
_WORDS = re.compile(r"\w+")
_ANSWER_MARGIN = 0.01  # how far a learned answer scores above the best other candidate


class _Candidate(Struct, frozen=True):
    """A record in the running: its head, its score so far and the terms behind it."""

    head: rows.RecordHead
    score: float
    terms: ScoreTerms
    via: str | None = None


class _Gathered(NamedTuple):
    """What both arms found for one query."""

    found: LexicalMatches
    heads: dict[str, rows.RecordHead]  # of the full-text matches
    meaning: "Meaning | None"  # None when the vector arm is off

    @property
    def cosines(self) -> dict[str, float]:
        return self.meaning.cosines if self.meaning is not None else {}


def _relevance(candidate: _Candidate) -> float:
    """How well a candidate matches the query itself: its match terms, before any prior or
    status factor."""
    terms = candidate.terms
    return terms.fts + terms.semantic + terms.feedback


def _best_first(candidates: list[_Candidate]) -> list[_Candidate]:
    return sorted(candidates, key=lambda c: (c.score, c.head.id), reverse=True)


class _Scorer:
    """score_record for one query: its project's reach, its moment, and its best match."""

    def __init__(self, weights: SearchSettings, reach: Reach, strongest: float) -> None:
        self._weights = weights
        self._reach = reach
        self._strongest = strongest
        self._moment = datetime.now(UTC)

    def terms(
        self,
        head: rows.RecordHead,
        fts: float,
        semantic: float,
        feedback: float,
        share_of: float | None = None,
    ) -> ScoreTerms:
        """The head's terms; the priors count by its match (or `share_of`, a match given
        as weighted terms) beside the query's best. Without words to match (a filtered
        listing) the priors alone order the records."""
        weights = self._weights
        if share_of is None:
            share_of = (
                weights.fts_weight * fts
                + weights.semantic_weight * semantic
                + weights.feedback_weight * feedback
            )
        share = share_of / self._strongest if self._strongest > 0 else 1.0
        return score_record(
            head,
            fts=fts,
            semantic=semantic,
            reach=self._reach,
            weights=weights,
            moment=self._moment,
            feedback=feedback,
            match_share=share,
        )


class Retriever:
    """Runs the retrieval pipeline for one store, with the vector half when a provider is on."""

    def __init__(
        self, db: Database, semantic: "SemanticSearch | None", weights: SearchSettings
    ) -> None:
        self._db = db
        self._semantic = semantic
        self._weights = weights

    def search(
        self, query: SearchQuery, project_id: str | None, checkout: str | None = None
    ) -> SearchResult:
        """Best records for `query` among those the project sees (its own, its group's, the
        global ones: ranked in that order, all else equal), best first; of its shared
        records, those the `checkout` holds.

        Superseded records are always matched; unless asked for, each one hands its match to
        the current end of its supersede chain, so a question worded like an old fact finds
        the fact that replaced it.
        """
        wanted = _scope(query, project_id, checkout)
        reach = groups.reach(self._db.connection(), project_id)
        if not query.text.strip():
            return self._filtered(query, wanted, reach)
        scope = (
            replace(wanted, statuses=(*wanted.statuses, Status.SUPERSEDED))
            if (Status.SUPERSEDED not in wanted.statuses)
            else wanted
        )
        conn = self._db.connection()
        gathered = self._gather(query, scope, reach)
        answers = _answers_to(conn, query.text, project_id)
        if not answers and not query.path and self._nothing_fits(gathered):
            return SearchResult((), None)
        named = records_naming(conn, query.path, scope) if query.path else set()
        ranked = self._score(gathered, answers, named, scope, reach)
        ranked = self._forward_superseded(ranked, wanted, reach)
        ranked = self._order(ranked, query, gathered.meaning, answers, named)
        hits = self._materialise(ranked[: query.limit], gathered.cosines, reach)
        if query.expand_related:
            hits += self._linked(hits, wanted, reach)
        meaning = gathered.meaning
        if meaning is not None:
            return SearchResult(tuple(hits), meaning.degraded)
        return SearchResult(tuple(hits), None if self._weights.ranking == "fts" else _VECTORS_OFF)

    def _gather(self, query: SearchQuery, scope: RecordFilter, reach: Reach) -> "_Gathered":
        """Both arms' candidates: full text here while the vectors are searched on another
        thread, and the heads of every full-text match."""
        pool = max(self._weights.candidate_pool, query.limit)
        conn = self._db.connection()
        arms = self._weights.ranking
        semantic = None if arms == "fts" else self._semantic
        soon = semantic.search_soon(query.text, reach, pool) if semantic else None
        try:
            found = lexical_matches(conn, query.text, scope, pool)
            if arms == "semantic":
                found = LexicalMatches([], 0.0, {})
            # Read while the vector arm may still run: every full-text match can be ranked.
            lexical_ids = [rid for rid, _ in found.hits]
            heads = rows.heads_in_scope(conn, lexical_ids, scope)
            meaning = (
                semantic.meaning(query.text, reach, pool, lexical_ids, soon) if semantic else None
            )
        finally:
            # Even when this fails: the caller may close the store next, and closing a
            # connection the other thread is reading through crashes the process.
            if soon is not None:
                soon.exception()  # waits until it is done (its failure, if any, is meaning's)
        return _Gathered(found, heads, meaning)

    def _score(
        self,
        gathered: "_Gathered",
        answers: list[str],
        named: set[str],
        scope: RecordFilter,
        reach: Reach,
    ) -> list[_Candidate]:
        """Every candidate with evidence that it matches, fused and scored, best first."""
        conn = self._db.connection()
        found, meaning = gathered.found, gathered.meaning
        lexical = dict(found.hits)
        # The answers learned for this very query count in full, with vectors or without.
        learned = (meaning.learned if meaning else {}) | dict.fromkeys(answers, 1.0)
        fts, sem = self._fuse(lexical, found.coverage, meaning.relevance if meaning else {})
        fts = self._with_headings(conn, found, fts, scope)
        heads = dict(gathered.heads)
        rankable = self._rankable(lexical, sem, learned) + sorted(named - lexical.keys())
        heads |= rows.heads_in_scope(conn, [rid for rid in rankable if rid not in heads], scope)
        # Every word of the query found in one record: a record holding none is no answer.
        by_meaning = found.coverage < self._weights.full_text_decides
        return self._rank(heads, lexical, fts, sem, learned, reach, named, by_meaning)

    def _order(
        self,
        ranked: list[_Candidate],
        query: SearchQuery,
        meaning: "Meaning | None",
        answers: list[str],
        named: set[str],
    ) -> list[_Candidate]:
        """What the query asks of the ranking: only hits near enough, diversity, the records
        about its file first, and before them what was learned as its very answer."""
        if query.least_similarity is not None:
            whole = meaning is not None and meaning.degraded is None  # every record has a vector
            cosines = meaning.cosines if meaning is not None and whole else None
            ranked = self._near_enough(ranked, query.least_similarity, cosines)
        ranked = _answers_first(ranked, answers)
        if query.diversify and meaning and meaning.vector is not None:
            ranked = self._diversify(ranked, query.limit)
        if named:  # records about the file asked for come first, each group by its score
            ranked.sort(key=lambda c: c.head.id not in named and c.via not in named)
        if answers:  # and before them, what was learned as this very query's answer
            learned_here = set(answers)
            ranked.sort(key=lambda c: c.head.id not in learned_here and c.via not in learned_here)
        return ranked

    def _filtered(self, query: SearchQuery, wanted: RecordFilter, reach: Reach) -> SearchResult:
        """No words to match: the records the filters let through, ranked as a score ranks
        them without a query (priority, recency, trust, project), those about the file asked
        for first, with their linked records."""
        conn = self._db.connection()
        pool = max(self._weights.candidate_pool, query.limit)
        named = records_naming(conn, query.path, wanted) if query.path else set()
        heads = rows.heads_by_priority(conn, wanted, pool)
        heads |= rows.heads_in_scope(conn, [rid for rid in named if rid not in heads], wanted)
        ranked = self._rank(heads, {}, {}, {}, {}, reach, set(heads))
        if named:
            ranked.sort(key=lambda c: c.head.id not in named)
        hits = self._materialise(ranked[: query.limit], {}, reach)
        if query.expand_related:
            hits += self._linked(hits, wanted, reach)
        return SearchResult(tuple(hits), None)

    def learn(self, query: str, record: Record, project_id: str | None) -> None:
        """Store a (query, record) pair; without vectors it is kept but cannot match yet."""
        embedded = self._semantic.feedback_vector(query) if self._semantic else None
        provider, vector = embedded if embedded else (None, None)
        with self._db.transaction() as conn:
            feedback.add_feedback(conn, project_id, record.id, query, provider, vector, now())

    def _nothing_fits(self, gathered: "_Gathered") -> bool:
        """Whether no record is near enough the query to be an answer (retrieval/floor.py):
        judged only by both arms of a model the floor was learnt for."""
        meaning = gathered.meaning
        if not self._weights.relevance_floor or meaning is None or meaning.degraded:
            return False
        assert self._semantic is not None  # a meaning comes from it
        floor = floor_for(self._semantic.provider_id)
        best = meaning.nearest_start
        return floor is not None and floor.silences(best, gathered.found.coverage)

    def _fuse(
        self, lexical: dict[str, float], coverage: float, cosines: dict[str, float]
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Each arm's raw scores as 0..1 terms, each weighed by how decisive it is here."""
        return adaptive_terms(lexical, coverage, cosines, self._weights)

    def _with_headings(
        self,
        conn: Connection,
        found: LexicalMatches,
        fts: dict[str, float],
        scope: RecordFilter,
    ) -> dict[str, float]:
        """Each full-text term plus `heading_weight` times the share of the query the record's
        heading holds (retrieval/heading.py), trusted as far as the full-text arm is."""
        weight = self._weights.heading_weight
        if weight <= 0 or not fts:
            return fts
        shares = heading_shares(found.idf, rows.titles_in_scope(conn, list(fts), scope))
        lift = weight * lexical_trust(found.coverage, self._weights)
        return {rid: term + lift * shares.get(rid, 0.0) for rid, term in fts.items()}

    def _rankable(
        self, lexical: dict[str, float], sem: dict[str, float], learned: dict[str, float]
    ) -> list[str]:
        """The candidates `_rank` can keep: a full-text match, or a positive meaning or
        feedback term (the same products it checks); the rest need not be read."""
        weights = self._weights
        return [
            rid
            for rid in lexical.keys() | sem.keys() | learned.keys()
            if rid in lexical
            or weights.semantic_weight * sem.get(rid, 0.0) > 0
            or weights.feedback_weight * learned.get(rid, 0.0) > 0
        ]

    def _rank(
        self,
        heads: dict[str, rows.RecordHead],
        lexical: dict[str, float],
        fts: dict[str, float],
        sem: dict[str, float],
        learned: dict[str, float],
        reach: Reach,
        named: set[str],
        by_meaning: bool = True,
    ) -> list[_Candidate]:
        """Every candidate with evidence that it matches, scored; the priors count in
        proportion to how well each matches beside the best (see score_record).

        Evidence is a full-text match, a file asked for, a learned answer, or (when
        `by_meaning`) a meaning term that is a fair share of the best match."""
        changed = code_changes.current_changes(self._db.connection(), list(heads))
        weights = self._weights
        match = {
            rid: weights.fts_weight * fts.get(rid, 0.0)
            + weights.semantic_weight * sem.get(rid, 0.0)
            + weights.feedback_weight * learned.get(rid, 0.0)
            for rid in heads
        }
        strongest = max(match.values(), default=0.0)
        ranked = []
        scorer = _Scorer(weights, reach, strongest)
        for rid, head in heads.items():
            terms = scorer.terms(head, fts.get(rid, 0.0), sem.get(rid, 0.0), learned.get(rid, 0.0))
            if rid in changed:  # the code it names changed since it was verified
                terms = replace(
                    terms, status_multiplier=terms.status_multiplier * weights.code_stale_factor
                )
            # A full-text match is kept even when it scores under the pool's mean; a match by
            # meaning alone only when it is a fair share of the best match (see the setting).
            meant = (
                by_meaning
                and terms.semantic > 0
                and match[rid] >= weights.evidence_share * strongest
            )
            if rid in lexical or rid in named or meant or terms.feedback > 0:
                ranked.append(_Candidate(head, terms.total, terms))
        return _best_first(ranked)

    def _forward_superseded(
        self, ranked: list[_Candidate], wanted: RecordFilter, reach: Reach
    ) -> list[_Candidate]:
        """Credit a superseded match to its chain's current record when the question is about
        that chain, then keep what was asked.

        A question is about a chain when the chain's current record matches it itself, or when
        one of its old records is the best match of all: then a question worded like an old
        fact finds the fact that replaced it. An old record that merely matches something else
        the question says is left out, so a long old record that touches many topics does not
        carry its successor into questions about none of them. The current record then matches
        as its best-matching member plus `chain_bonus` times the next best (the whole history
        is about the query), and its own priors count on that match.
        """
        conn = self._db.connection()
        best = {c.head.id: c for c in ranked if c.head.status in wanted.statuses}
        direct = {c.head.id: c for c in ranked if c.head.status is Status.ACTIVE}
        leader = max(ranked, key=_relevance, default=None)
        ends: dict[str, rows.RecordHead] = {}
        for candidate in ranked:
            if candidate.head.status is not Status.SUPERSEDED:
                continue
            end = rows.chain_end(conn, candidate.head.superseded_by)
            if end is not None and end.status is Status.ACTIVE:
                ends[candidate.head.id] = end
        asked = set(direct)
        if leader is not None and leader.head.id in ends:
            asked.add(ends[leader.head.id].id)
        factor = self._weights.successor_factor
        members: dict[str, list[tuple[float, _Candidate | None]]] = {}
        for rid, candidate in direct.items():
            members[rid] = [(_relevance(candidate), None)]
        for candidate in ranked:
            end = ends.get(candidate.head.id)
            if end is not None and end.id in asked:
                members.setdefault(end.id, []).append((_relevance(candidate) * factor, candidate))
        allowed = rows.heads_in_scope(conn, [rid for rid in members if rid not in direct], wanted)
        strongest = max((r for found in members.values() for r, _ in found), default=0.0)
        scorer = _Scorer(self._weights, reach, strongest)
        for rid, found in members.items():
            if len(found) == 1 and found[0][1] is None:
                continue  # matched directly only: scored as it is
            head = direct[rid].head if rid in direct else allowed.get(rid)
            if head is None:
                continue
            found.sort(key=lambda item: item[0], reverse=True)
            (top, source), second = found[0], (found[1][0] if len(found) > 1 else 0.0)
            evidence = (direct[rid] if source is None else source).terms
            chained = top + self._weights.chain_bonus * second
            priors = scorer.terms(head, 0.0, 0.0, 0.0, share_of=chained)
            terms = replace(
                priors,
                fts=evidence.fts,
                semantic=evidence.semantic,
                feedback=evidence.feedback,
                status_multiplier=factor if source is not None else priors.status_multiplier,
            )
            if source is None:
                terms = replace(terms, status_multiplier=direct[rid].terms.status_multiplier)
            score = terms.total + self._weights.chain_bonus * second
            via = None if source is None else source.head.id
            best[rid] = _Candidate(head, score, terms, via=via)
        return _best_first(list(best.values()))

    def _near_enough(
        self, ranked: list[_Candidate], least: float, cosines: dict[str, float] | None
    ) -> list[_Candidate]:
        """The candidates at least `least` near the query in meaning (a superseded match's
        cosine counts for the record it was forwarded to). Without vectors there is no
        absolute scale: those whose full-text term is near the best one's (half its bm25,
        compared as adaptive fusion raises it), so priority and recency cannot carry a record
        whose words barely match."""
        if cosines is not None:
            return [
                c
                for c in ranked
                if max(cosines.get(c.head.id, 0.0), cosines.get(c.via or "", 0.0)) >= least
            ]
        best = max((c.terms.fts for c in ranked), default=0.0)
        near = 0.5**self._weights.bm25_exponent * best
        return [c for c in ranked if c.terms.fts >= near and c.terms.fts > 0]

    def _diversify(self, ranked: list[_Candidate], limit: int) -> list[_Candidate]:
        assert self._semantic is not None  # there is a query vector
        vectors_by_id = self._semantic.vectors_of([c.head.id for c in ranked])
        # Relevance on the cosine's 0..1 scale, so mmr_balance weighs like against like.
        relevance = scale_by_best({c.head.id: c.score for c in ranked})
        return mmr(
            ranked,
            lambda c: relevance[c.head.id],
            lambda a, b: dot(vectors_by_id.get(a.head.id), vectors_by_id.get(b.head.id)),
            limit,
            self._weights.mmr_balance,
        )

    def _materialise(
        self, ranked: list[_Candidate], cosines: dict[str, float], reach: Reach
    ) -> list[SearchHit]:
        """Full records for the few candidates that are returned."""
        conn = self._db.connection()
        ids = [c.head.id for c in ranked]
        records = rows.records_in_scope(
            conn, ids, RecordFilter(None, statuses=(), every_project=True)
        )
        changed = code_changes.current_changes(conn, ids)
        return [
            SearchHit(
                records[c.head.id],
                c.score,
                c.terms,
                via=c.via,
                similarity=max(cosines.get(c.head.id, 0.0), cosines.get(c.via or "", 0.0)),
                code_change=changed.get(c.head.id),
                tier=reach.tier(records[c.head.id].project_id) or "",
            )
            for c in ranked
            if c.head.id in records
        ]

    def _linked(self, hits: list[SearchHit], scope: RecordFilter, reach: Reach) -> list[SearchHit]:
        shown = {h.record.id for h in hits}
        wanted: dict[str, SearchHit] = {}
        for hit in hits:
            for rid in hit.record.related_to:
                if rid not in shown and rid not in wanted:
                    wanted[rid] = hit
        conn = self._db.connection()
        found = rows.records_in_scope(conn, list(wanted), scope)
        # A link to a record superseded since (or before links followed supersession) reaches
        # its chain's current record.
        successors: dict[str, SearchHit] = {}
        for rid in [rid for rid in wanted if rid not in found]:
            end = rows.chain_end(conn, rid)
            if end is not None and end.id not in shown | wanted.keys() | successors.keys():
                successors[end.id] = wanted[rid]
        if successors:
            wanted |= successors
            found |= rows.records_in_scope(conn, list(successors), scope)
        linked = []
        for rid, parent in wanted.items():
            if rid in found:
                linked.append(
                    SearchHit(
                        found[rid],
                        parent.score * self._weights.related_factor,
                        parent.terms,
                        linked_from=parent.record.id,
                        tier=reach.tier(found[rid].project_id) or "",
                    )
                )
        return linked


def _query_key(text: str) -> str:
    """A query as its words: case, spacing and punctuation do not make another query."""
    return " ".join(_WORDS.findall(text.casefold()))


def _answers_to(conn: Connection, text: str, project_id: str | None) -> list[str]:
    """The records learned as the answer to this very query, the latest learned first."""
    key = _query_key(text)
    if not key:
        return []
    found = [
        rid for rid, query in feedback.learned_queries(conn, project_id) if _query_key(query) == key
    ]
    return list(dict.fromkeys(found))


def _answers_first(ranked: list[_Candidate], answers: list[str]) -> list[_Candidate]:
    """The learned answers to this very query ahead of every other candidate, the latest
    learned first: each one's feedback term grows just enough to score above the rest, so
    its score and `--explain` say what put it first."""
    order = {rid: at for at, rid in enumerate(answers)}

    def place(candidate: _Candidate) -> int | None:
        found = order.get(candidate.head.id)
        return order.get(candidate.via or "") if found is None else found

    chosen = sorted((c for c in ranked if place(c) is not None), key=lambda c: place(c) or 0)
    if not chosen:
        return ranked
    rest = [c for c in ranked if place(c) is None]
    floor = rest[0].score if rest else 0.0
    lifted: list[_Candidate] = []
    for candidate in reversed(chosen):  # the last of them just above the rest, and so on up
        score = max(candidate.score, floor + _ANSWER_MARGIN)
        extra = (score - candidate.score) / (candidate.terms.status_multiplier or 1.0)
        terms = replace(candidate.terms, feedback=candidate.terms.feedback + extra)
        lifted.insert(0, replace(candidate, score=score, terms=terms))
        floor = score
    return lifted + rest


def _scope(query: SearchQuery, project_id: str | None, checkout: str | None) -> RecordFilter:
    statuses = [Status.ACTIVE]
    if query.include_superseded:
        statuses.append(Status.SUPERSEDED)
    if query.include_archived:
        statuses.append(Status.ARCHIVED)
    return RecordFilter(
        project_id,
        kinds=query.kinds,
        statuses=tuple(statuses),
        tags=query.tags,
        category=query.category,
        since=query.since,
        before=query.before,
        checkout=checkout,
        dates_by=query.dates_by,
    )
