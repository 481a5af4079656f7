"""The baseline of the load benchmark: a bare Flask app that answers a JSON POST with the
same JSON, under the same gunicorn settings as the pricing service."""
from flask import Flask, Response, request


def create_app() -> Flask:
    app = Flask(__name__)

    @app.post("/echo")
    def echo() -> Response:
        return Response(request.get_data(), mimetype="application/json")

    return app
