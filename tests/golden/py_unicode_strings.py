# Strings cross the protocol intact.
text = "héllo wörld 😀 \u2028 \" \\ \n tab\t"
print(text)
return text
