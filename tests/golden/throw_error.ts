// An uncaught Error fails the run with its position and the captured output.
console.log("step 1");
console.warn("step 2");
throw new Error("boom");
