/// { "config": { "codeRuntime": { "maxOutputBytes": 11 } } }
// ["abc"] (7 bytes) + "xy" (4 bytes) = 11: exactly at the cap, so the exception is reported.
console.log("abc");
throw "xy";
