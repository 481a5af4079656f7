"""SQLAlchemy 2.0 typed models."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = ["Base", "CatalogEntry", "CurveRecord", "SavedScenario", "ScenarioRevision",
           "ApiKey", "utcnow", "MAX_ID"]

# ids, revision numbers and offsets are positive 32-bit integers: the Integer column of every
# backend holds them, so a larger one is refused before it reaches the database
MAX_ID = 2**31 - 1


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar = {dict[str, Any]: JSON, list[Any]: JSON}


class CatalogEntry(Base):
    """An accelerator, published operating point, electricity price or system preset.

    ``data`` holds plain values (quantities as ``{value, unit}``), ``provenance`` the source
    of each value by dotted key, exactly as the catalog files carry them.
    """
    __tablename__ = "catalog_entries"
    __table_args__ = (UniqueConstraint("kind", "key", name="uq_catalog_kind_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32), index=True)
    key: Mapped[str] = mapped_column(String(200))
    data: Mapped[dict[str, Any]]
    provenance: Mapped[dict[str, Any]]
    origin: Mapped[str] = mapped_column(String(40))  # "fixtures" or "api:<key name>"
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CurveRecord(Base):
    """A throughput-interactivity curve: its key and points (costmodel curve CSV text)."""
    __tablename__ = "curves"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    curve_id: Mapped[str] = mapped_column(String(400), unique=True)
    hardware: Mapped[str] = mapped_column(String(100), index=True)
    model: Mapped[str] = mapped_column(String(200), index=True)
    points: Mapped[int] = mapped_column(Integer)
    csv: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text, default="")
    origin: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SavedScenario(Base):
    """A named scenario; its content lives in immutable revisions 1, 2, ..."""
    __tablename__ = "scenarios"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    latest_revision: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revisions: Mapped[list[ScenarioRevision]] = relationship(
        back_populates="scenario", order_by="ScenarioRevision.number")


class ScenarioRevision(Base):
    """What was saved and priced at one time: never updated, only added."""
    __tablename__ = "scenario_revisions"
    __table_args__ = (UniqueConstraint("scenario_id", "number", name="uq_revision_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenarios.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64), index=True)
    data: Mapped[dict[str, Any]]  # the scenario as given
    result: Mapped[dict[str, Any]]  # the full result with disclosure, as computed then
    engine_version: Mapped[str] = mapped_column(String(40))
    created_by: Mapped[str] = mapped_column(String(100))  # the key's name, for display
    # the key that wrote it (names are not unique); NULL for revisions saved before 0002
    created_by_key_id: Mapped[int | None] = mapped_column(
        ForeignKey("api_keys.id", name="fk_scenario_revisions_created_by_key_id"),
        nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    scenario: Mapped[SavedScenario] = relationship(back_populates="revisions")


class ApiKey(Base):
    """An API key: only a hash of the secret is stored; ``prefix`` finds the row."""
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    role: Mapped[str] = mapped_column(String(16))
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # the pages' sessions of this key carry the generation they were signed in at; signing
    # out moves it on, which ends every session of the key (costmodel.web.session)
    session_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
