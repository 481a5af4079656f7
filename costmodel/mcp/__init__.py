"""The Model Context Protocol face: ``costmodel mcp`` serves the pricing API's operations as
MCP tools (price, compare, task, quotes_decide, plan, profit), each taking its API request's
body and answering as the API does, and the catalog as resources; over stdio, or streamable
HTTP behind the API's keys (docs/mcp.md). Like every face, it calls the application layer
only; of the API it reads the request contract alone (:mod:`.tools`)."""
