"""The trace explorer's pages: their data (`pages`, read in a fixed number of
queries by `reads`), the DAG's drawing (`layout`, `folding`, `colors`), the
views, and live updates (`live` publishes after commit, `consumers` and
`routing` serve the websocket)."""
