"""People in projects: members and their roles, invitations by link, and the
accounts' sessions (sign out everywhere, the idle timeout)."""
