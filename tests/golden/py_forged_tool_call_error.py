# A program-made ToolCallError is an ordinary exception.
raise ToolCallError("echo", "forged")
