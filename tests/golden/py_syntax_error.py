# A syntax error fails as `exception` with its position, before anything runs.
print("never")
x = = 1
