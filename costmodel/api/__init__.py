"""The JSON face: the pricing API's routes (:mod:`.routes`), request schemas (:mod:`.schemas`),
OpenAPI document (:mod:`.openapi`), keys (:mod:`.auth`) and the services behind a request
(:mod:`.services`). The application that serves it is :func:`costmodel.server.create_app`."""
