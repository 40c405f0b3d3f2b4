from django.apps import AppConfig


class PolicyConfig(AppConfig):
    name = "policy"
    verbose_name = "Fuse policy"

    def ready(self):
        from policy import store
        from provenance.health import round_limit

        # The health check judges rounds by the policy's default profile.
        round_limit.set_round_limit_source(store.max_rounds)
