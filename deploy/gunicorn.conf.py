# gunicorn settings of one costmodel host: `gunicorn -c /etc/costmodel/gunicorn.conf.py`.
# Every host of a deployment runs this file with the environment of deploy/costmodel.env
# (the same on every host but COSTMODEL_BIND); nginx (deploy/nginx.conf) balances across them.
# tests/http/test_hosts.py and bench/hosts.py start their hosts with this very file.
import os

wsgi_app = "costmodel.server:create_app()"
# this host's address: the one nginx's upstream names (never open to clients directly)
bind = os.environ.get("COSTMODEL_BIND", "127.0.0.1:8000")
# processes x threads: 2 workers a core, 4 threads each (docs/operations.md#several-hosts: sizing).
# Each worker holds at most COSTMODEL_DB_POOL_SIZE + COSTMODEL_DB_MAX_OVERFLOW (4 + 2)
# PostgreSQL connections.
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# the longest a request may run (a heavy analysis at its limits takes seconds); nginx gives
# up after 60 s too (proxy_read_timeout)
timeout = 60
graceful_timeout = 30
keepalive = 2
# nginx is the only client; trust its X-Forwarded-* from its address only (never '*')
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
accesslog = None  # nginx logs every request; gunicorn logs its errors
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "warning")
# no control socket (a file in the user's home per master: several hosts on one machine
# would share it)
control_socket_disable = True


# ---- metrics (docs/operations.md#metrics-logs-and-traces) -----------------------------------------
# Every worker writes its counts to files in PROMETHEUS_MULTIPROC_DIR, and /metrics sums them
# (prometheus_client's multiprocess mode): a folder of this master's own (one per host: two
# hosts sharing one would each sum both), set before any worker imports prometheus_client,
# emptied of an earlier run's files; a temporary folder when the variable is not set.
_metrics_folder = None


def on_starting(server):
    global _metrics_folder
    if os.environ.get("COSTMODEL_METRICS", "on").strip().lower() in ("off", "0", "false", "no"):
        return
    from costmodel.http.metrics import prepare_folder
    folder, made = prepare_folder(os.environ)
    _metrics_folder = folder if made else None


def child_exit(server, worker):
    # a worker gone (its requests done, killed, or timed out): its counts stay in the sums,
    # its share of the live gauges (heavy analyses running) leaves them
    from costmodel.http.metrics import worker_exited
    worker_exited(worker.pid)


def on_exit(server):
    if _metrics_folder is not None:
        from costmodel.http.metrics import remove_folder
        remove_folder(_metrics_folder)


# ---- logs: COSTMODEL_LOG_FORMAT=json makes gunicorn's own lines JSON too -------------------------
if os.environ.get("COSTMODEL_LOG_FORMAT", "").strip().lower() == "json":
    logconfig_dict = {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"json": {"()": "costmodel.http.logs.JSONFormatter"}},
        # (gunicorn merges this over its own defaults, whose root names "console")
        "handlers": {name: {"class": "logging.StreamHandler", "formatter": "json",
                            "stream": "ext://sys.stderr"} for name in ("console", "error_console")},
        "root": {"level": "WARNING", "handlers": []},
        "loggers": {"gunicorn.error": {"level": loglevel.upper(), "handlers": ["error_console"],
                                       "propagate": False, "qualname": "gunicorn.error"}},
    }
