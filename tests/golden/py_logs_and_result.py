# print, sys.stdout/sys.stderr and logging stream lines; lines come first, then the result.
import logging
import sys

print("log line")
print("info", 1, True, sep=" | ")
logging.info("info via logging")
logging.warning("warn")
logging.getLogger("app").error("error %s", 7)
logging.debug("debug")
print("to stderr", file=sys.stderr)
sys.stdout.write("partial ")
sys.stdout.write("line\nsecond\n")
print({"a": [1, None]}, end="!\n")
return 42
