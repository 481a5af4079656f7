"""Sessions that end, and revisions that name their key: ``api_keys.session_generation``
(signing out of the pages moves it on) and ``scenario_revisions.created_by_key_id`` (the key
that wrote a revision; NULL for revisions saved before this migration).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 09:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

FK = "fk_scenario_revisions_created_by_key_id"


def upgrade() -> None:
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.add_column(sa.Column('session_generation', sa.Integer(), nullable=False,
                                      server_default='0'))
    # SQLite: batch mode copies the table to add the foreign key (rows kept, ids too)
    with op.batch_alter_table('scenario_revisions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('created_by_key_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(FK, 'api_keys', ['created_by_key_id'], ['id'])


def downgrade() -> None:
    with op.batch_alter_table('scenario_revisions', schema=None) as batch_op:
        batch_op.drop_constraint(FK, type_='foreignkey')
        batch_op.drop_column('created_by_key_id')
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_column('session_generation')
