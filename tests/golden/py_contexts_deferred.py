## { "tools": ["first", "second"],
##   "answers": { "first": { "result": { "value": 1, "additionalContexts": [{ "role": "user", "content": "from first", "source": "first-src" }] } },
##                "second": { "result": { "value": 2, "additionalContexts": [{ "role": "user", "content": [{ "type": "text", "text": "from second" }], "meta": { "k": 1 } }] } } } }
# Sub-call contexts are deferred through the outer result, in dispatch order.
one = await tools.first({})
two = await tools.second({})
return one + two
