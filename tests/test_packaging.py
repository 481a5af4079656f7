"""The wheel carries what the code needs: every package, every fixture and template.

pyproject lists its packages (the top-level fixtures/ and templates/ install as
costmodel.fixtures and costmodel.templates), so a new package folder or data file must be
named there; these checks fail when one is not, without building a wheel.
"""
from __future__ import annotations

import tomllib

from conftest import ROOT

from costmodel.resources import fixtures_dir, templates_dir

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"]


def _folder(package: str):
    mapped = SETUPTOOLS.get("package-dir", {})
    return ROOT / mapped[package] if package in mapped else ROOT / package.replace(".", "/")


def test_every_package_folder_is_listed():
    code = ROOT / "costmodel"
    folders = {code} | {p for p in code.rglob("*") if p.is_dir() and p.name != "__pycache__"
                        and any(p.glob("*.py"))}
    # alembic's migrations are package data of costmodel.store, not packages
    folders = {p for p in folders if "migrations" not in p.relative_to(code).parts}
    listed = {_folder(name) for name in SETUPTOOLS["packages"]}
    assert folders - listed == set(), "add these to [tool.setuptools] packages"
    assert all(p.is_dir() for p in listed)


def test_every_data_file_is_packaged():
    for package in ("costmodel.fixtures", "costmodel.templates"):
        folder = _folder(package)
        files = {p for p in folder.rglob("*") if p.is_file() and p.name != "__init__.py"
                 and "__pycache__" not in p.parts}
        packaged = {p for pattern in SETUPTOOLS["package-data"][package]
                    for p in folder.glob(pattern) if p.is_file()}
        assert files - packaged == set(), f"add globs for these to package-data {package!r}"


def test_resources_find_the_packaged_folders(monkeypatch):
    monkeypatch.delenv("COSTMODEL_FIXTURES", raising=False)
    assert (fixtures_dir() / "catalog" / "accelerators.toml").is_file()
    assert (fixtures_dir() / "scenarios" / "published").is_dir()
    assert (templates_dir() / "docs.html").is_file()


def test_fixtures_override(monkeypatch, tmp_path):
    from costmodel.sources.catalog import Catalog
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "electricity.toml").write_text(
        '[here]\nprice = { value = 0.1, unit = "USD/kWh", source = "test" }\n', encoding="utf-8")
    monkeypatch.setenv("COSTMODEL_FIXTURES", str(tmp_path))
    assert fixtures_dir() == tmp_path
    assert Catalog.load().keys("electricity") == ["here"]
