# costmodel pricing service: gunicorn on a slim Python base, as a non-root user.
#   docker build -t costmodel .
#   docker run -p 127.0.0.1:8000:8000 -e DATABASE_URL=postgresql://user:pass@db:5432/costmodel costmodel
# Run it behind nginx with deploy/nginx.conf (or another proxy that buffers whole requests and
# times out slow ones), never with port 8000 open to clients: each gunicorn thread reads one
# request at the client's pace, and 64 connections sending a byte a second stop this image's
# 8 threads from answering, while behind nginx every normal request is answered in a few ms
# (docs/operations.md#behind-a-reverse-proxy; bench/slowclients.py). gunicorn trusts X-Forwarded-Proto
# only from FORWARDED_ALLOW_IPS (default 127.0.0.1,::1): set it to the proxy's address when the
# proxy runs in another container or host, never to '*'.
# Without DATABASE_URL the service keeps a SQLite file in /data (mount a volume there).
# Limits (docs/pricing-tools.md#limits): -e REDIS_URL=redis://redis:6379/0 shares the per-key rate and the
# heavy-analysis slots across workers and hosts; without it each worker counts on its own.
# Several hosts (docs/operations.md#several-hosts): every container with --env-file deploy/costmodel.env
# (one DATABASE_URL, REDIS_URL and COSTMODEL_SECRET_KEY for all), nginx in front with one
# upstream `server` line a container. gunicorn runs deploy/gunicorn.conf.py, as every host does.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATABASE_URL=sqlite:////data/costmodel.db \
    WEB_CONCURRENCY=2 GUNICORN_THREADS=4 FORWARDED_ALLOW_IPS=127.0.0.1,::1 \
    COSTMODEL_BIND=0.0.0.0:8000
# Built from a scratch folder that is then removed: the wheel carries fixtures/ and templates/
# (as costmodel.fixtures and costmodel.templates), and no source copy is left in /app, where
# gunicorn (which puts its working directory first on sys.path) would import it instead.
WORKDIR /app
COPY pyproject.toml README.md /tmp/src/
COPY costmodel /tmp/src/costmodel
COPY fixtures /tmp/src/fixtures
COPY templates /tmp/src/templates
COPY deploy/gunicorn.conf.py /etc/costmodel/gunicorn.conf.py
RUN pip install /tmp/src && rm -rf /tmp/src \
 && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin costmodel \
 && mkdir -p /data && chown costmodel /data
USER costmodel
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"]
# migrate and seed (both idempotent), then serve; keys: docker exec ... costmodel keys create
CMD ["sh", "-c", "costmodel db upgrade && costmodel db seed && exec gunicorn -c /etc/costmodel/gunicorn.conf.py --access-logfile -"]
