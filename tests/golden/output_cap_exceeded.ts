/// { "config": { "codeRuntime": { "maxOutputBytes": 64 } } }
// The three lines fit the 64-byte cap (63 bytes), the thrown message does not. The failure's
// own message ("outer output exceeded 64 bytes", 32 bytes as JSON) must fit beside the logs
// it keeps: whole lines while they fit, then the longest fitting prefix of the first line
// that does not, then nothing more.
console.log("abc");
console.log("x".repeat(40));
console.log("never kept");
throw "y".repeat(10);
