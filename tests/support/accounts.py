"""The project member the page tests sign in as."""

MEMBER_USERNAME, MEMBER_PASSWORD = "mia", "pw-mia-12345"
