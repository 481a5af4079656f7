# costmodel command-line image. The pricing service (gunicorn, healthcheck) builds on this.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    COSTMODEL_FIXTURES=/app/fixtures
WORKDIR /app
COPY pyproject.toml README.md ./
COPY costmodel ./costmodel
COPY fixtures ./fixtures
RUN pip install --disable-pip-version-check . \
 && useradd --system --uid 10001 --home-dir /app costmodel
USER costmodel
ENTRYPOINT ["costmodel"]
CMD ["price", "fixtures/scenarios/sample-tco.toml"]
