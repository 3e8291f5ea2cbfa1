// A thrown non-Error value is its own message.
throw "xy";
