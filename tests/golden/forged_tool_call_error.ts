// A program-made ToolCallError is an ordinary exception.
throw new ToolCallError("echo", "forged");
