"""The SDK's copy of the server's node vocabulary (provenance/vocabulary.py):
the fuse decisions and the default policy, the one place the SDK spells them.
The SDK imports nothing of the server, so this is a copy;
tests/denoiseflow/test_vocabulary_copy.py holds it equal to the server's.
"""

ACCEPT, DOWNWEIGHT, BLOCK = "accept", "downweight", "block"

# The contract's version-0 policy: what applies until the dashboard says otherwise.
DEFAULT_PROFILE = {
    "accept": 0.8, "block": 0.5, "by_agent_type": {}, "by_step": {},
    "max_rounds": 5, "max_retries": 2, "escalate_after": 3,
}
