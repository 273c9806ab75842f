"""The LTI tool against Open edX's own LTI 1.3 platform code (lti-consumer-xblock): a package, so that its
conftest.py never shadows tests/conftest.py as the module `conftest` the service tests import."""
