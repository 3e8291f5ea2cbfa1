// Every console method streams a line; lines come first, then the result.
console.log("log line");
console.info("info", 1, true);
console.warn("warn");
console.error("error");
console.debug("debug");
return 42;
