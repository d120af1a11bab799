"""The store on a PostgreSQL server with pgvector: one store for a whole team.

database.py opens it (a pool, one connection per thread, one writer at a time), connection.py
runs the storage modules' portable SQL on it, dialect.py says what they cannot, schema.py
migrates it, terms.py gives full text FTS5's terms, vectors.py searches pgvector's index.
Nothing here is imported unless [store] url names a server.
"""
