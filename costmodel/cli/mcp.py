"""``costmodel mcp``: the Model Context Protocol face, over stdio or streamable HTTP."""
from __future__ import annotations

import click

from .common import fail, service_database

__all__ = ["mcp"]


@click.command()
@click.option("--http", "over_http", is_flag=True,
              help="Serve streamable HTTP (every request needs an API key) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --http.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535),
              help="With --http.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME", help=(
    "With --http on a loopback host: a Host a reverse proxy passes on (the public name, "
    "e.g. costmodel.example.com), allowed beside the loopback ones; repeat for more. Also "
    "$COSTMODEL_MCP_ALLOWED_HOSTS, comma-separated."))
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
@click.option("--no-seed", is_flag=True, help="Do not load fixtures/ into the database.")
def mcp(over_http: bool, host: str, port: int, allowed_hosts: tuple[str, ...],
        url: str | None, no_seed: bool) -> None:
    """Serve the pricing tools and the catalog over the Model Context Protocol.

    stdio (the default) is for a client that starts this command itself (its own process,
    as the command line: no key). --http serves http://HOST:PORT/mcp, where every request
    carries an API key (Authorization: Bearer <key>, viewer role or above). Migrates and
    seeds the database first, as `costmodel serve` does.
    """
    import os

    import anyio

    from ..app.database import database_url, prepare
    from ..mcp.server import http_app, serve_stdio
    from ..sources.catalog import fixtures_dir
    url = database_url(url)
    prepare(url, None if no_seed else fixtures_dir())
    with service_database(url) as services:
        if not over_http:
            anyio.run(serve_stdio, services)
            return
        import uvicorn
        click.echo(f"costmodel MCP (streamable HTTP) on http://{host}:{port}/mcp; every "
                   f"request needs a key: costmodel keys create --name agent --role viewer",
                   err=True)
        try:
            named = [*allowed_hosts, *filter(None, (
                h.strip() for h in os.environ.get("COSTMODEL_MCP_ALLOWED_HOSTS", "").split(",")))]
            uvicorn.run(http_app(services, host=host, allowed_hosts=named), host=host, port=port,
                        log_level="warning")
        except OSError as exc:
            fail(f"--port: cannot listen on {host}:{port}: {exc.strerror or exc}")
