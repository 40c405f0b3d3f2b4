"""The SDK's version: the distribution's, and the one its requests announce."""

__version__ = "0.2.0"
USER_AGENT = f"denoiseflow/{__version__}"  # every request the SDK makes says which SDK made it
