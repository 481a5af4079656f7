"""Persistence: catalog entries, curves, saved scenarios as immutable revisions, API keys.

SQLite by default (a file, nothing to install); PostgreSQL through ``DATABASE_URL`` for
deployments with several workers or hosts. The schema is managed by Alembic migrations
(``costmodel db upgrade``).
"""
