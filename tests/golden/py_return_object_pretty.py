# Non-string results are pretty JSON; dict keys keep insertion order.
return {"zeta": 1, "alpha": [1, 2, {"deep": {"deeper": {"deepest": True}}}], "10": "ten", "big": 2**53}
