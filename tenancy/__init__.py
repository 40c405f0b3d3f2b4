"""Who owns the data: projects, members and roles, API keys and how a request proves one."""
