"""What the tests share and import: events as agents send them, the member the
pages sign in as, the browser and how a page signs in, the servers run as child
processes (`manage.py serve`, a PostgreSQL of a test's own), the loopback
webhook receiver. Fixtures stay in conftest.py files; they use these."""
