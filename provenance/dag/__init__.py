"""The DAG as stored: its walks (`walks`: recursive-CTE root cause, impact,
cycles) and the API's reads of traces and nodes (`reading`)."""
