/// { "description": "   " }
// A blank description is refused before the program runs.
console.log("never");
