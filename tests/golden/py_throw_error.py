# An uncaught exception fails the run with its line and the captured output.
import logging

print("step 1")
logging.warning("step 2")


def fail(what):
    raise ValueError(f"boom: {what}")


fail("here")
