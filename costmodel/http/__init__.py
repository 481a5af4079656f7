"""The HTTP plumbing both faces share (the JSON API and the web pages): problem responses
(:mod:`.errors`), request limits (:mod:`.limits`) and security headers (:mod:`.security`).
It imports no face; :mod:`costmodel.server` installs it."""
