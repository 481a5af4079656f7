"""Alembic environment: the URL comes from the Config the caller built (costmodel db)."""
from __future__ import annotations

from alembic import context

from costmodel.store.db import make_engine
from costmodel.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"),
                      target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    # no statement deadline: a migration may rewrite a large table
    engine = make_engine(config.get_main_option("sqlalchemy.url"), deadlines=False)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata,
                          render_as_batch=True)  # SQLite alters tables by copying them
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
