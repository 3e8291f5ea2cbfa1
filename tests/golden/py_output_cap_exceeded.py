## { "config": { "codeRuntime": { "maxOutputBytes": 11 } } }
# ["abc"] (7 bytes) + "xyz" (5 bytes) = 12: over the cap.
print("abc")
return "xyz"
