"""Initial schema: catalog entries, curves, scenarios with revisions, API keys.

Revision ID: 0001
Revises:
Create Date: 2026-11-30 12:19:53.359807
"""
import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('api_keys',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('secret_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('prefix')
    )
    op.create_table('catalog_entries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('data', sa.JSON(), nullable=False),
    sa.Column('provenance', sa.JSON(), nullable=False),
    sa.Column('origin', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('kind', 'key', name='uq_catalog_kind_key')
    )
    with op.batch_alter_table('catalog_entries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_catalog_entries_kind'), ['kind'], unique=False)

    op.create_table('curves',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('curve_id', sa.String(length=400), nullable=False),
    sa.Column('hardware', sa.String(length=100), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('points', sa.Integer(), nullable=False),
    sa.Column('csv', sa.Text(), nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('origin', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('curve_id')
    )
    with op.batch_alter_table('curves', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_curves_hardware'), ['hardware'], unique=False)
        batch_op.create_index(batch_op.f('ix_curves_model'), ['model'], unique=False)

    op.create_table('scenarios',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('latest_revision', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('scenario_revisions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('scenario_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('data', sa.JSON(), nullable=False),
    sa.Column('result', sa.JSON(), nullable=False),
    sa.Column('engine_version', sa.String(length=40), nullable=False),
    sa.Column('created_by', sa.String(length=100), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['scenario_id'], ['scenarios.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('scenario_id', 'number', name='uq_revision_number')
    )
    with op.batch_alter_table('scenario_revisions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_scenario_revisions_content_hash'),
                              ['content_hash'], unique=False)
        batch_op.create_index(batch_op.f('ix_scenario_revisions_scenario_id'),
                              ['scenario_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('scenario_revisions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_scenario_revisions_scenario_id'))
        batch_op.drop_index(batch_op.f('ix_scenario_revisions_content_hash'))

    op.drop_table('scenario_revisions')
    op.drop_table('scenarios')
    with op.batch_alter_table('curves', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_curves_model'))
        batch_op.drop_index(batch_op.f('ix_curves_hardware'))

    op.drop_table('curves')
    with op.batch_alter_table('catalog_entries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_catalog_entries_kind'))

    op.drop_table('catalog_entries')
    op.drop_table('api_keys')
