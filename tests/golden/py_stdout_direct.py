# Writing to fds 1 and 2 directly goes nowhere: the protocol has fds of its own.
import os
import sys

os.write(1, b"Content-Length: 5\r\n\r\n{}\n")
os.write(2, b"noise on stderr\n")
sys.__stdout__.write("captured\n")
with open("/dev/stdout", "w") as raw:
    raw.write('{"jsonrpc":"2.0","id":"outer","result":null}\n')
print("still fine")
return os.getcwd() != "/" and os.environ.get("PATH") is None
